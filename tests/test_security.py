"""Security properties: what the model, a tool or another session cannot do.

Each class backs a section of SECURITY.md. The model cannot set context
fields or injected parameters, nor reach a tool by a name that is not
exactly registered; the scope is never rendered, serialized, pickled or
logged by toolctx; what a tool returns is JSON and never a context or a
result; decoded arguments get the checks argument text gets; metadata
and state snapshots are read-only; sessions never see each other's
state, also under concurrency; results only receive what their own call
published, and nothing after it finished; the error messages the model
reads are toolctx's; timeouts interrupt only what SECURITY.md says.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib
import io
import json
import logging
import operator
import pickle
import sys
import threading
import time
import uuid

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import attrs
import pytest

from typing_extensions import TypedDict

from doubles import PassThrough
from toolctx import (
    ContextKey,
    ContextThreadPoolExecutor,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolResult,
    bind_context,
    current_context,
    execution_context,
    publish,
    set_state,
    tool,
    use_context,
)
from toolctx.exceptions import (
    ArgumentError,
    InvalidToolNameError,
    SchemaError,
    ScopeError,
    ToolArgumentsError,
    ToolctxError,
    ToolDenied,
)
from toolctx.interceptors import (
    AuditLog,
    AuditRecord,
    Authorization,
    ContextLogFilter,
    JsonLinesAuditSink,
    LoggerAuditSink,
    MemoryAuditSink,
    PermissionDenied,
)
from toolctx.providers import mcp
from toolctx.sessions import (
    InMemorySessionStore,
    SQLiteSessionStore,
    session_to_dict,
)


SECRET = f"scope-secret-{uuid.uuid4().hex}"
"""Unique to this run: it can only appear where the scope was rendered."""

PROVIDERS = ("openai", "anthropic", "gemini", "mcp")
JOIN_TIMEOUT = 30.0  # a bound on hangs, not a timing assertion
TAGS: ContextKey[list[str]] = ContextKey("tests.test_security.tags", list[str])
"""A typed value of a mutable type: stored as given, never copied."""


@attrs.frozen
class Scope:
    """A host's scope: every rendering of it shows the secret."""

    tenant_id: str = "acme"
    token: str = SECRET
    permissions: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return f"Scope with token {self.token}"


class ListHandler(logging.Handler):
    """Keep every record it handles."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep *record*."""
        self.records.append(record)


def assert_no_secret(*things: object) -> None:
    """No repr, str or JSON text of *things* contains the secret."""
    for thing in things:
        assert SECRET not in repr(thing)
        assert SECRET not in str(thing)
        assert SECRET not in json.dumps(thing, default=repr)


def host_metadata() -> dict[str, Any]:
    """Fresh host metadata, nested."""
    return {"channel": "web", "cfg": {"limits": [1, 2]}}


def host_state() -> dict[str, Any]:
    """Fresh session state, nested."""
    return {"cart": {"items": ["apple"]}, "tags": {"a"}}


def host_context() -> ExecutionContext:
    """The host's template: user, session, metadata, state and a scope."""
    return ExecutionContext(
        user_id="ada",
        session_id="s-ada",
        agent_id="planner",
        metadata=host_metadata(),
        state=host_state(),
        scope=Scope(),
    )


def _nothing() -> None:
    """Do nothing: the body of tools that only need a name."""


def context_fields(ctx: ExecutionContext) -> dict[str, object]:
    """The fields of *ctx* a model might try to set."""
    return {
        "user_id": ctx.user_id,
        "session_id": ctx.session_id,
        "agent_id": ctx.agent_id,
        "turn": ctx.turn,
        "metadata": dict(ctx.metadata),
        "scope": id(ctx.scope),
    }


# -- the model cannot set the context -----------------------------------------


@dataclasses.dataclass
class Profile:
    """A nested argument with fields named like context fields."""

    user_id: str
    scope: str = "none"
    metadata: dict[str, str] = dataclasses.field(default_factory=dict)


class Claims(TypedDict, total=False):
    """Another nested argument shaped like a context."""

    session_id: str
    invocation_id: str
    state: dict[str, Any]


@pytest.fixture(name="seen")
def _seen() -> list[ExecutionContext]:
    return []


@pytest.fixture(name="dispatcher")
def _dispatcher(seen: list[ExecutionContext]) -> Dispatcher:
    registry = Registry()

    @registry.tool
    def note(text: str, ctx: ExecutionContext) -> str:
        """Take a note."""
        seen.append(ctx)
        return text

    @registry.tool
    def lookalike(
        user_id: str,
        session_id: str = "",
        scope: str = "",
        metadata: dict[str, str] | None = None,
        *,
        here: Annotated[ExecutionContext, "injected"],
    ) -> dict[str, Any]:
        """Parameters named like context fields are plain arguments."""
        seen.append(here)
        seen.append(execution_context())
        return {"user_id": user_id, "scope": scope, "session_id": session_id}

    @registry.tool
    def nested(profile: Profile, claims: Claims, extra: dict[str, Any]) -> str:
        """Nested values shaped like a context."""
        seen.append(execution_context())
        return profile.user_id

    return Dispatcher(registry)


class TestModelCannotSetContext:
    """Arguments never reach the context or an injected parameter."""

    def test_injected_parameter_name_is_unexpected(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext]
    ) -> None:
        """The name of an ExecutionContext parameter is an unknown argument."""
        forged = {"user_id": "root", "scope": "admin", "invocation_id": "x"}
        result = dispatcher.dispatch(
            ToolCall("note", json.dumps({"text": "hi", "ctx": forged})),
            host_context(),
        )
        assert result.is_error
        assert isinstance(result.exception, ToolArgumentsError)
        assert "ctx: unexpected argument (allowed: text)" in (
            result.error or ""
        )
        assert seen == []

    @pytest.mark.parametrize(
        "name",
        [
            "invocation_id",
            "session_id",
            "turn",
            "user_id",
            "agent_id",
            "tool_name",
            "tool_call_id",
            "parent_invocation_id",
            "metadata",
            "state",
            "prior_results",
            "values",
            "scope",
            "_recorder",
        ],
    )
    def test_context_field_names_are_unexpected(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext], name: str
    ) -> None:
        """A top-level argument named like any context field is refused."""
        args = {"text": "hi", name: {"user_id": "root"}}
        result = dispatcher.dispatch(
            ToolCall("note", json.dumps(args)), host_context()
        )
        assert result.is_error
        assert f"{name}: unexpected argument" in (result.error or "")
        assert seen == []

    def test_parameters_named_like_context_fields(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext]
    ) -> None:
        """Such parameters get the model's values; the context keeps the host's."""
        host = host_context()
        args = {
            "user_id": "root",
            "session_id": "s-other",
            "scope": "admin",
            "metadata": {"channel": "forged"},
        }
        result = dispatcher.dispatch(
            ToolCall("lookalike", json.dumps(args)), host
        )
        assert not result.is_error, result.error
        assert result.output == {
            "user_id": "root",
            "scope": "admin",
            "session_id": "s-other",
        }
        injected, current = seen
        assert injected is current
        assert context_fields(injected) == context_fields(host)
        assert (
            "here"
            not in (
                dispatcher.registry["lookalike"]
                .definition()
                .parameters["properties"]
            )
        )

    def test_injected_parameter_cannot_be_passed_at_all(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext]
    ) -> None:
        """An Annotated context parameter is refused as an argument too."""
        result = dispatcher.dispatch(
            ToolCall("lookalike", {"user_id": "u", "here": {}}), host_context()
        )
        assert result.is_error
        assert "here: unexpected argument" in (result.error or "")
        assert seen == []

    def test_nested_values_stay_in_the_arguments(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext]
    ) -> None:
        """Context-shaped values inside arguments never reach the context."""
        host = host_context()
        forged = {
            "user_id": "root",
            "session_id": "s-other",
            "scope": "admin",
            "metadata": {"channel": "forged"},
            "state": {"cart": "forged"},
        }
        args = {
            "profile": {
                "user_id": "root",
                "scope": "admin",
                "metadata": {"channel": "forged"},
            },
            "claims": {
                "session_id": "s-other",
                "invocation_id": "i-forged",
                "state": {"cart": "forged"},
            },
            "extra": {"context": forged, "ctx": forged, **forged},
        }
        result = dispatcher.dispatch(
            ToolCall("nested", json.dumps(args)), host
        )
        assert not result.is_error, result.error
        [ctx] = seen
        assert context_fields(ctx) == context_fields(host)
        assert ctx.state == host.state
        assert ctx.invocation_id == result.invocation_id != "i-forged"

    def test_nested_unknown_context_keys_are_refused(
        self, dispatcher: Dispatcher
    ) -> None:
        """A closed nested object refuses extra context-named keys."""
        args = {
            "profile": {"user_id": "u", "session_id": "s-other"},
            "claims": {"user_id": "root"},
            "extra": {},
        }
        result = dispatcher.dispatch(ToolCall("nested", args), host_context())
        assert result.is_error
        error = result.error or ""
        assert "profile.session_id: unexpected property" in error
        assert "claims.user_id: unexpected property" in error

    @pytest.mark.parametrize(
        "annotation",
        [
            "list[ExecutionContext]",
            "dict[str, ExecutionContext]",
            "Holder",
            "Session",
            "ToolResult",
        ],
    )
    def test_context_types_cannot_be_arguments(self, annotation: str) -> None:
        """A context, session or result nested in a parameter type is refused.

        So the model can never build an ExecutionContext (with a scope),
        a Session or a ToolResult from its arguments.
        """
        namespace: dict[str, Any] = {
            "ExecutionContext": ExecutionContext,
            "Session": Session,
            "ToolResult": ToolResult,
            "Holder": _Holder,
        }
        exec(  # noqa: S102 - a fixed test source
            f"def forge(value: {annotation}) -> None:\n    '''Forge.'''\n",
            namespace,
        )
        with pytest.raises(SchemaError):
            tool(namespace["forge"])

    def test_mcp_meta_does_not_reach_the_context(
        self, dispatcher: Dispatcher, seen: list[ExecutionContext]
    ) -> None:
        """Fields of an MCP request other than name and arguments are ignored."""
        host = host_context()
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "note",
                "arguments": {"text": "hi"},
                "_meta": {"user_id": "root", "progressToken": "t"},
                "user_id": "root",
                "context": {"scope": "admin"},
            },
        }
        [call] = mcp.parse_calls(request)
        result = dispatcher.dispatch(call, host)
        assert not result.is_error, result.error
        [ctx] = seen
        assert context_fields(ctx) == context_fields(host)

    @pytest.mark.parametrize(
        ("name", "valid"),
        [
            ("note\n", False),
            ("note ", False),
            (" note", False),
            ("note\x00", False),
            ("NOTE", True),
            ("not", True),
        ],
    )
    def test_tool_names_are_matched_exactly(
        self,
        dispatcher: Dispatcher,
        seen: list[ExecutionContext],
        name: str,
        valid: bool,
    ) -> None:
        """Only the exact registered name runs a tool; near misses are unknown.

        Registration checks names whole, so no registered name can hold
        a trailing newline or a space either.
        """
        result = dispatcher.dispatch(
            ToolCall(name, '{"text": "hi"}'), host_context()
        )
        assert result.is_error
        assert (result.error or "").startswith(f"Unknown tool {name!r}.")
        assert seen == []
        named = tool(name=name)
        if valid:
            assert named(_nothing).name == name
        else:
            with pytest.raises(InvalidToolNameError):
                named(_nothing)

    def test_plain_tools_get_context_named_arguments_as_arguments(
        self,
    ) -> None:
        """A tool with execute(args) finds such keys in args, not its context."""
        seen: list[tuple[dict[str, Any], dict[str, object]]] = []

        class Plain:
            """A plain tool that records its arguments and context."""

            definition = tool(name="plain")(_nothing).definition

            def execute(self, args: Mapping[str, Any]) -> str:
                seen.append((dict(args), context_fields(execution_context())))
                return "ok"

        registry = Registry()
        registry.register(Plain())
        host = host_context()
        forged = {"user_id": "root", "session_id": "s-other", "scope": "x"}
        result = Dispatcher(registry).dispatch(
            ToolCall("plain", json.dumps(forged)), host
        )
        assert result.output == "ok", result.error
        [(args, fields)] = seen
        assert args == forged
        assert fields == context_fields(host)

    @pytest.mark.parametrize("runner", ["dispatch", "adispatch"])
    def test_interceptors_cannot_change_the_invocation_id(
        self, seen: list[ExecutionContext], runner: str
    ) -> None:
        """A before that changes invocation_id is a host error; no tool runs."""
        registry = Registry()

        @registry.tool
        def note(ctx: ExecutionContext) -> str:
            """Record the context."""
            seen.append(ctx)
            return ctx.invocation_id

        class Forger:
            """An interceptor giving the call another invocation id."""

            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                return attrs.evolve(context, invocation_id="forged")

            def after(
                self,
                call: ToolCall,
                context: ExecutionContext,
                result: ToolResult,
            ) -> ToolResult:
                return result

        dispatcher = Dispatcher(registry, interceptors=[Forger()])
        call = ToolCall("note", "{}")
        run: Callable[[], object] = (
            partial(dispatcher.dispatch, call)
            if runner == "dispatch"
            else partial(asyncio.run, dispatcher.adispatch(call))
        )
        with pytest.raises(ToolctxError, match="changed the invocation_id"):
            run()
        assert seen == []


@dataclasses.dataclass
class _Holder:
    """A dataclass with a context field."""

    ctx: ExecutionContext


# -- the scope is never rendered --------------------------------------------


def _registry() -> Registry:
    """Tools that succeed, fail in several ways, publish and log."""
    registry = Registry()
    log = logging.getLogger("tests.test_security.tools")

    @registry.tool
    def ok(text: str) -> dict[str, Any]:
        """Succeed, publish, change state and log."""
        ctx = execution_context()
        publish("billed", 1)
        set_state("last", text)
        log.info("ok ran for %s", ctx.user_id)
        return {"text": text, "user": ctx.user_id}

    @registry.tool
    def boom() -> None:
        """Raise an exception whose message does not mention the scope."""
        log.warning("about to fail")
        msg = "disk full"
        raise ValueError(msg)

    @registry.tool
    async def aboom() -> None:
        """Raise from async code."""
        msg = "remote refused"
        raise ConnectionError(msg)

    @registry.tool
    def wrong_scope() -> str:
        """Ask for the scope as the wrong type."""
        return str(execution_context().scope_as(int))

    @registry.tool(requires=["admin"])
    def admin_only() -> str:
        """Needs a permission the caller lacks."""
        return "never"

    return registry


def _policy(ctx: ExecutionContext) -> frozenset[str]:
    """A policy reading the scope."""
    return ctx.scope_as(Scope).permissions


FAILING_CALLS = [
    ToolCall("boom", "{}", id="c1"),
    ToolCall("aboom", "{}", id="c2"),
    ToolCall("wrong_scope", "{}", id="c3"),
    ToolCall("admin_only", "{}", id="c4"),
    ToolCall("ok", '{"text": 1}', id="c5"),
    ToolCall("ok", "{not json", id="c6"),
    ToolCall("missing", "{}", id="c7"),
]


def _renderings(result: ToolResult) -> Iterator[object]:
    """Every message each provider module builds for *result*."""
    for name in PROVIDERS:
        try:
            module = importlib.import_module(f"toolctx.providers.{name}")
        except ImportError:  # pragma: no cover - a provider that is gone
            continue
        for attr in getattr(module, "__all__", ()):
            if "result" not in attr:
                continue
            render: Callable[[Any], object] = getattr(module, attr)
            arg: object = [result] if attr.startswith("results") else result
            yield render(arg)


class TestScopeNeverRendered:
    """toolctx never puts the scope into text, data, logs or messages."""

    def test_context_renderings(self) -> None:
        """repr, str, to_dict, JSON, pickle and derived contexts hide the scope.

        The repr says only that a scope is set, not even its type; data
        and pickles come back without one until the receiving side
        attaches its own.
        """
        ctx = host_context()
        derived = [
            ctx,
            ctx.child(agent_id="researcher"),
            ctx.with_metadata(extra="x"),
        ]
        mine = Scope(token="the-receivers-own")
        for item in derived:
            assert item.scope is not None
            assert_no_secret(item, item.to_dict(), json.dumps(item.to_dict()))
            assert "scope=<set>" in repr(item)
            assert type(item.scope).__name__ not in repr(item)
            assert "scope" not in item.to_dict()
            assert ExecutionContext.from_dict(item.to_dict()).scope is None
            attached = ExecutionContext.from_dict(item.to_dict(), scope=mine)
            assert attached.scope is mine
            data = pickle.dumps(item)
            assert SECRET.encode() not in data
            assert type(item.scope).__name__.encode() not in data
            back = pickle.loads(data)
            assert back == item
            assert back.scope is None
            assert attrs.evolve(back, scope=mine).scope is mine
            assert copy.copy(item).scope is item.scope
            assert copy.deepcopy(item).scope is item.scope

    def test_a_pickled_call_context_cannot_write_to_the_call(self) -> None:
        """An unpickled copy of a running call's context is not that call.

        publish() and set_state() under it raise, and the call's result
        keeps only what the call itself wrote.
        """
        registry = Registry()
        pickles: list[bytes] = []

        @registry.tool
        def grab(ctx: ExecutionContext) -> str:
            """Pickle the running call's context, then publish."""
            pickles.append(pickle.dumps(ctx))
            publish("mine", 1)
            return "ok"

        session = Session("s1", scope=Scope())
        result = Dispatcher(registry).dispatch(ToolCall("grab"), session)
        back = pickle.loads(pickles[0])
        assert back.invocation_id == result.invocation_id
        assert back.scope is None
        with use_context(back):
            for write in (publish, set_state):
                with pytest.raises(ToolctxError, match="no dispatched call"):
                    write("forged", 1)
        assert dict(result.metadata) == {"mine": 1}
        assert result.state_changes == {}
        assert session.state == {}

    def test_dispatched_context_renderings(self) -> None:
        """The context a tool sees renders without its scope too."""
        registry = Registry()
        rendered: list[object] = []

        @registry.tool
        def show(ctx: ExecutionContext) -> str:
            """Render the context."""
            rendered.extend([ctx, ctx.to_dict(), repr(execution_context())])
            return repr(ctx)

        result = Dispatcher(registry).dispatch(
            ToolCall("show", "{}"), host_context()
        )
        assert not result.is_error, result.error
        assert rendered
        assert_no_secret(result, result.output, *rendered)

    def test_session_renderings_and_stores(self, tmp_path: Path) -> None:
        """Sessions and both session stores never write the scope."""
        session = Session("s1", user_id="ada", state={"n": 1}, scope=Scope())
        assert_no_secret(session, session_to_dict(session))
        memory = InMemorySessionStore()
        memory.save(Scope(), session)
        loaded = memory.load(Scope(), "s1")
        assert loaded is not None
        assert_no_secret(loaded, session_to_dict(loaded))
        path = tmp_path / "sessions.db"
        with SQLiteSessionStore(path) as store:
            store.save(Scope(), session)
        data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
        assert b"s1" in data or b"ada" in data
        assert SECRET.encode() not in data

    @pytest.mark.parametrize("detail", [True, False])
    def test_error_results(self, detail: bool) -> None:
        """No error result, or any provider message for it, shows the scope."""
        registry = _registry()
        dispatcher = Dispatcher(
            registry,
            interceptors=[Authorization(registry, _policy)],
            include_exception_messages=detail,
        )
        results = [
            dispatcher.dispatch(call, host_context()) for call in FAILING_CALLS
        ]
        results.append(
            asyncio.run(dispatcher.adispatch(FAILING_CALLS[0], host_context()))
        )
        for result in results:
            assert result.is_error
            assert result.error
            assert_no_secret(result, result.error, *_renderings(result))
        assert isinstance(results[2].exception, ScopeError)
        assert isinstance(results[3].exception, PermissionDenied)

    def test_exception_messages_reach_the_model_only_when_enabled(
        self,
    ) -> None:
        """A tool's own exception text is shown only with the default True."""
        registry = Registry()

        @registry.tool
        def careless() -> None:
            """Put the scope into an exception message (a tool bug)."""
            raise RuntimeError(str(execution_context().scope))

        call = ToolCall("careless", "{}", id="c1")
        shown = Dispatcher(registry).dispatch(call, host_context())
        hidden = Dispatcher(
            registry, include_exception_messages=False
        ).dispatch(call, host_context())
        assert SECRET in (shown.error or "")  # why SECURITY.md warns
        assert hidden.error == "Tool 'careless' failed."
        assert_no_secret(hidden.error, *_renderings(hidden))
        assert SECRET in str(hidden.exception)  # host-only, kept

    def test_successful_results_and_provider_messages(self) -> None:
        """A successful result and its provider messages hide the scope."""
        result = Dispatcher(_registry()).dispatch(
            ToolCall("ok", '{"text": "hi"}', id="c1"), host_context()
        )
        assert not result.is_error, result.error
        assert_no_secret(result, result.output, *_renderings(result))

    def test_log_records(self) -> None:
        """Records passed through ContextLogFilter carry no scope."""
        handler = ListHandler()
        records = handler.records
        handler.addFilter(ContextLogFilter())
        handler.setFormatter(
            logging.Formatter(
                "%(message)s %(toolctx_invocation_id)s %(toolctx_user_id)s "
                "%(toolctx_session_id)s %(toolctx_tool_name)s"
            )
        )
        log = logging.getLogger("tests.test_security.tools")
        log.addHandler(handler)
        old_level = log.level
        log.setLevel(logging.INFO)
        try:
            dispatcher = Dispatcher(_registry())
            dispatcher.dispatch(
                ToolCall("ok", '{"text": "x"}'), host_context()
            )
            dispatcher.dispatch(ToolCall("boom", "{}"), host_context())
            asyncio.run(
                dispatcher.adispatch(
                    ToolCall("ok", '{"text": "y"}'), host_context()
                )
            )
        finally:
            log.removeHandler(handler)
            log.setLevel(old_level)
        assert len(records) == 3
        for record in records:
            assert record.toolctx_user_id == "ada"  # type: ignore[attr-defined]
            assert_no_secret(handler.format(record), vars(record))

    @pytest.mark.parametrize("include_arguments", [True, False])
    def test_audit_records(self, include_arguments: bool) -> None:
        """Audit records, JSON lines and audit log lines carry no scope."""
        registry = _registry()
        memory = MemoryAuditSink()
        stream = io.StringIO()
        audit_logger = logging.getLogger(f"tests.audit.{uuid.uuid4().hex}")
        handler = ListHandler()
        logged = handler.records
        audit_logger.addHandler(handler)
        audit_logger.propagate = False
        audit_logger.setLevel(logging.INFO)
        sinks: list[Callable[[AuditRecord], object]] = [
            memory,
            JsonLinesAuditSink(stream),
            LoggerAuditSink(audit_logger),
        ]
        dispatcher = Dispatcher(
            registry,
            interceptors=[
                *(
                    AuditLog(s, include_arguments=include_arguments)
                    for s in sinks
                ),
                Authorization(registry, _policy),
            ],
        )
        calls = [ToolCall("ok", '{"text": "hi"}'), *FAILING_CALLS]
        for call in calls:
            dispatcher.dispatch(call, host_context())
        assert len(memory.records) == len(calls) == len(logged)
        assert {r.outcome for r in memory.records} == {"ok", "error", "denied"}
        assert (memory.records[0].arguments is not None) is include_arguments
        for record in memory.records:
            assert_no_secret(record, record.to_dict())
        assert_no_secret(stream.getvalue())
        for line in logged:
            assert_no_secret(line.getMessage(), vars(line))

    def test_trace_spans(self) -> None:
        """OpenTelemetry spans (attributes, events, status) carry no scope."""
        pytest.importorskip("opentelemetry.sdk")
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        from toolctx.otel import OpenTelemetryInterceptor

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        registry = _registry()
        tracing = OpenTelemetryInterceptor(
            tracer_provider=provider,
            registry=registry,
            record_arguments=True,
            record_output=True,
            propagate_traceparent=True,
        )
        dispatcher = Dispatcher(
            registry, interceptors=[tracing, Authorization(registry, _policy)]
        )
        calls = [ToolCall("ok", '{"text": "hi"}', id="c0"), *FAILING_CALLS]
        try:
            for call in calls:
                dispatcher.dispatch(call, host_context())
        finally:
            provider.shutdown()
        spans = exporter.get_finished_spans()
        assert len(spans) == len(calls)
        for span in spans:
            assert_no_secret(
                span.to_json(),
                dict(span.attributes or {}),
                [dict(e.attributes or {}) for e in span.events],
                span.status.description,
            )


# -- what a tool returns ---------------------------------------------------------


HOST_ONLY_KINDS = ("context", "nested", "prior_results", "session")


def _host_only(kind: str, ctx: ExecutionContext) -> Any:
    """A host-only object of *kind*, made from *ctx* (or nested in data)."""
    if kind == "context":
        return ctx
    if kind == "nested":
        return {"sub": [ctx.child(agent_id="researcher")]}
    if kind == "prior_results":
        return list(ctx.prior_results)
    return Session("s-returned", state={"token": SECRET}, scope=Scope())


@tool
def hand_over(kind: str, ctx: ExecutionContext) -> Any:
    """Return a host-only object (a module-level tool: workers import it)."""
    return _host_only(kind, ctx)


@tool
def hand_over_stream(kind: str, ctx: ExecutionContext) -> Iterator[Any]:
    """Yield a chunk, then a host-only object."""
    yield "first"
    yield _host_only(kind, ctx)


def _turn_template() -> ExecutionContext:
    """The host's template, with an earlier result that published a secret."""
    earlier = ToolResult(
        name="ok", call_id="c0", output="fine", metadata={"billed": SECRET}
    )
    return attrs.evolve(host_context(), prior_results=(earlier,))


def _returned(path: str, kind: str) -> ToolResult:
    """The result of a call whose tool returns a *kind* object, via *path*."""
    arguments = json.dumps({"kind": kind})
    registry = Registry([hand_over, hand_over_stream])
    name = "hand_over_stream" if path.endswith("stream") else "hand_over"
    call = ToolCall(name, arguments, "c1")
    if path.startswith("executor"):
        with ThreadPoolExecutor(max_workers=1) as pool:
            remote = Dispatcher(registry, executor=pool)
            return remote.dispatch(call, _turn_template())
    interceptors = [PassThrough()] if path == "intercepted" else []
    dispatcher = Dispatcher(registry, interceptors=interceptors)
    if path == "adispatch":
        return asyncio.run(dispatcher.adispatch(call, _turn_template()))
    if path == "stream":
        last = list(dispatcher.stream(call, _turn_template()))[-1]
        assert isinstance(last, ToolResult)
        return last
    return dispatcher.dispatch(call, _turn_template())


class TestOutputIsChecked:
    """What a tool returns becomes JSON data, and host-only objects never do."""

    @pytest.mark.parametrize("kind", HOST_ONLY_KINDS)
    @pytest.mark.parametrize(
        "path",
        [
            "dispatch",
            "intercepted",
            "adispatch",
            "stream",
            "executor",
            "executor_stream",
        ],
    )
    def test_host_only_objects_are_never_output(
        self, path: str, kind: str
    ) -> None:
        """A returned context, result or session is an error result.

        Wherever it sits in the output, on every path: its scope, its
        published metadata or its state can never reach the model.
        """
        result = _returned(path, kind)
        assert result.is_error
        assert "A tool may not return" in (result.error or "")
        assert isinstance(result.exception, TypeError)
        assert result.output in (None, ["first"])
        assert_no_secret(result, result.error, *_renderings(result))

    @pytest.mark.parametrize("detail", [True, False])
    def test_what_has_no_json_form_reads_as_a_tool_failure(
        self, detail: bool
    ) -> None:
        """Refused output is reported like an exception the tool raised."""
        registry = Registry([hand_over])
        dispatcher = Dispatcher(registry, include_exception_messages=detail)
        result = dispatcher.dispatch(
            ToolCall("hand_over", '{"kind": "context"}'), host_context()
        )
        error = result.error or ""
        if detail:
            assert error.startswith(
                "Tool 'hand_over' failed: NotJSONError: A tool may not "
                "return ExecutionContext objects"
            )
        else:
            assert error == "Tool 'hand_over' failed."
        assert_no_secret(error)

    def test_a_returned_scope_is_not_refused(self) -> None:
        """Why SECURITY.md warns: a tool that returns the scope sends it.

        The scope here is an attrs class, so it has a JSON form (a dict of
        its fields). Only code the host writes can prevent that.
        """
        registry = Registry()

        @registry.tool
        def careless(ctx: ExecutionContext) -> Any:
            """Return the scope itself (a tool bug)."""
            return ctx.scope

        result = Dispatcher(registry).dispatch(
            ToolCall("careless"), host_context()
        )
        assert not result.is_error, result.error
        assert result.output["token"] == SECRET

    @pytest.mark.parametrize("template", ["context", "session"])
    def test_later_calls_cannot_change_earlier_results(
        self, template: str
    ) -> None:
        """Earlier results reach later calls as read-only copies.

        A call cannot rewrite the output, published metadata or state
        changes the host renders and records for an earlier call.
        """
        registry = _registry()
        refused: list[type[BaseException]] = []

        @registry.tool
        def rewrite(ctx: ExecutionContext) -> None:
            """Try to change what the host has for call one."""
            earlier: Any = ctx.prior_results[0]
            for attempt in (
                partial(operator.setitem, earlier.output, "text", "forged"),
                partial(operator.setitem, earlier.metadata, "billed", 0),
                partial(operator.setitem, earlier.state_changes, "k", "v"),
            ):
                try:
                    attempt()
                except (TypeError, AttributeError) as exc:
                    refused.append(type(exc))

        context: ExecutionContext | Session = (
            host_context()
            if template == "context"
            else Session("s1", user_id="ada")
        )
        first, _ = Dispatcher(registry).dispatch_all(
            [ToolCall("ok", '{"text": "hi"}'), ToolCall("rewrite", "{}")],
            context,
        )
        assert refused == [TypeError] * 3
        assert first.output == {"text": "hi", "user": "ada"}
        assert first.metadata == {"billed": 1}
        assert first.state_changes == {"last": "hi"}


# -- decoded arguments --------------------------------------------------------------


def _taker() -> Registry:
    """A tool that takes anything: only the data checks can refuse."""
    registry = Registry()

    @registry.tool
    def take(x: Any) -> str:
        """Take any value."""
        return "taken"

    return registry


class TestDecodedArguments:
    """Decoded arguments get the checks argument text gets, but the size."""

    @pytest.mark.parametrize(
        "value",
        [
            float("nan"),
            float("inf"),
            float("-inf"),
            "\ud800",
            {"key \udfff": 1},
            [[[[[[[[[[1]]]]]]]]]],
            10**4300,
            -(10**4300),
            {1: "not a string key"},
        ],
        ids=[
            "nan",
            "infinity",
            "-infinity",
            "surrogate",
            "surrogate-key",
            "deep",
            "4301-digits",
            "-4301-digits",
            "int-key",
        ],
    )
    @pytest.mark.parametrize("runner", ["dispatch", "adispatch"])
    def test_refused(self, value: object, runner: str) -> None:
        """What argument text could not carry is refused as data too."""
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "take", "arguments": {"x": value}},
        }
        [call] = mcp.parse_calls(request)
        dispatcher = Dispatcher(_taker(), max_argument_depth=8)
        if runner == "dispatch":
            result = dispatcher.dispatch(call)
        else:
            result = asyncio.run(dispatcher.adispatch(call))
        assert result.is_error
        assert "The arguments for tool 'take' are not valid JSON (" in (
            result.error or ""
        )

    def test_the_largest_values_still_pass(self) -> None:
        """4,300 digits, the depth limit itself and valid text are fine."""
        dispatcher = Dispatcher(_taker(), max_argument_depth=8)
        for value in (10**4299, [[[[[[[1]]]]]]], "\U0001f600 ok"):
            result = dispatcher.dispatch(ToolCall("take", {"x": value}))
            assert result.output == "taken", result.error

    def test_the_size_limit_is_for_text(self) -> None:
        """max_argument_size measures text; a decoded mapping is not measured.

        Which is why SECURITY.md asks hosts to bound request sizes in
        their HTTP layer.
        """
        dispatcher = Dispatcher(_taker(), max_argument_size=50)
        arguments = {"x": "a" * 100}
        decoded = dispatcher.dispatch(ToolCall("take", arguments))
        text = dispatcher.dispatch(ToolCall("take", json.dumps(arguments)))
        assert decoded.output == "taken", decoded.error
        assert text.is_error
        assert "are too large" in (text.error or "")


# -- error messages -------------------------------------------------------------


class TestErrorMessages:
    """What the model reads for a failed call is a message toolctx built."""

    def test_unknown_tool_lists_at_most_30_names(self) -> None:
        """The first 30 registered names, then how many more there are."""
        registry = Registry()
        names = [f"t{i:02d}" for i in range(35)]
        for name in names:
            registry.register(tool(name=name)(_nothing))
        result = Dispatcher(registry).dispatch(ToolCall("missing"))
        assert result.error == (
            "Unknown tool 'missing'. Available tools: "
            + ", ".join(names[:30])
            + " and 5 more. Call one of them by its exact name."
        )

    @pytest.mark.parametrize("detail", [True, False])
    def test_what_the_model_reads_when_a_tool_raises(
        self, detail: bool
    ) -> None:
        """A tool's own exception text only with the default; refusals always.

        A ToolDenied reason and a ToolArgumentsError a tool raises are
        messages for the model, shown whatever include_exception_messages
        says; any other exception shows its type and message only with the
        default True.
        """
        registry = Registry()

        @registry.tool
        def guarded() -> None:
            """Refuse from inside the tool."""
            msg = "ask the owner to share the folder"
            raise ToolDenied(msg)

        @registry.tool
        def picky(n: int) -> None:
            """Refuse an argument the schema allows."""
            raise ToolArgumentsError([ArgumentError("n", "must be even")])

        @registry.tool
        def broken() -> None:
            """Fail with an internal message."""
            raise RuntimeError(SECRET)

        dispatcher = Dispatcher(registry, include_exception_messages=detail)
        denied = dispatcher.dispatch(ToolCall("guarded"))
        invalid = dispatcher.dispatch(ToolCall("picky", '{"n": 3}'))
        failed = dispatcher.dispatch(ToolCall("broken"))
        assert denied.error == (
            "Call to tool 'guarded' was denied: ask the owner to share the "
            "folder"
        )
        assert invalid.error == (
            "Invalid arguments for tool 'picky': n: must be even"
        )
        assert failed.error == (
            f"Tool 'broken' failed: RuntimeError: {SECRET}"
            if detail
            else "Tool 'broken' failed."
        )
        assert isinstance(failed.exception, RuntimeError)


# -- failing calls ---------------------------------------------------------------


class _Halt(BaseException):
    """Neither an Exception nor SystemExit: like KeyboardInterrupt."""


class TestFailingCalls:
    """Tool exceptions are results; only interrupt-like ones propagate."""

    @pytest.mark.parametrize(
        "exc_type", [KeyboardInterrupt, GeneratorExit, _Halt]
    )
    @pytest.mark.parametrize("runner", ["dispatch", "adispatch"])
    def test_what_propagates(
        self, exc_type: type[BaseException], runner: str
    ) -> None:
        """Interrupt-like exceptions propagate, leaving nothing bound.

        SystemExit, by contrast, is an error result, and the dispatcher
        serves the next call.
        """
        registry = Registry()

        @registry.tool
        def stop(kind: str) -> None:
            """Raise what the test asks for."""
            if kind == "exit":
                raise SystemExit(2)
            raise exc_type

        dispatcher = Dispatcher(registry)

        def run(call: ToolCall) -> ToolResult:
            if runner == "dispatch":
                return dispatcher.dispatch(call)
            return asyncio.run(dispatcher.adispatch(call))

        with pytest.raises(exc_type):
            run(ToolCall("stop", '{"kind": "interrupt"}'))
        assert current_context() is None
        result = run(ToolCall("stop", '{"kind": "exit"}'))
        assert result.error == "Tool 'stop' failed: SystemExit: 2"


# -- timeouts -----------------------------------------------------------------------


class TestTimeouts:
    """Timeouts interrupt adispatch only, and not a sync tool run inline."""

    def test_what_no_timeout_interrupts(self) -> None:
        """dispatch() and an inline sync tool run to their end.

        Past the timeout their tool declares; under adispatch, the async
        tool with the same timeout is cut off.
        """
        registry = Registry()

        @registry.tool(timeout=0.01)
        async def nap() -> str:
            """Sleep past the timeout."""
            await asyncio.sleep(0.2)
            return "woke"

        @registry.tool(timeout=0.01, inline=True)
        def busy() -> str:
            """Block the event loop past the timeout."""
            time.sleep(0.2)
            return "done"

        dispatcher = Dispatcher(registry)
        assert dispatcher.dispatch(ToolCall("nap")).output == "woke"
        assert dispatcher.dispatch(ToolCall("busy")).output == "done"
        inline = asyncio.run(dispatcher.adispatch(ToolCall("busy")))
        assert inline.output == "done", inline.error
        cut = asyncio.run(dispatcher.adispatch(ToolCall("nap")))
        assert cut.is_error
        assert "timed out after 0.01 seconds" in (cut.error or "")


# -- snapshots are read-only ---------------------------------------------------


def _mutation_attempts(
    ctx: ExecutionContext,
) -> dict[str, type[BaseException]]:
    """Try every way to change metadata and state; return what each raised."""
    attempts: dict[str, Callable[[], object]] = {}
    for name in ("metadata", "state"):
        top: Any = getattr(ctx, name)
        first = next(iter(top))
        attempts.update(
            {
                f"{name}[k] = v": partial(operator.setitem, top, "k", "v"),
                f"del {name}[k]": partial(operator.delitem, top, first),
                f"{name}.update": partial(top.update, k="v"),
                f"{name}.pop": partial(top.pop, first),
                f"{name}.popitem": top.popitem,
                f"{name}.clear": top.clear,
                f"{name}.setdefault": partial(top.setdefault, "k", "v"),
                f"{name} |= ...": partial(top.__ior__, {"k": "v"}),
            }
        )
    cfg: Any = ctx.metadata["cfg"]
    cart: Any = ctx.state["cart"]
    tags: Any = ctx.state["tags"]
    attempts.update(
        {
            "metadata.cfg[k] = v": partial(operator.setitem, cfg, "k", 1),
            "metadata.cfg.update": partial(cfg.update, k=1),
            "metadata.cfg.limits[0] = v": partial(
                operator.setitem, cfg["limits"], 0, 9
            ),
            "metadata.cfg.limits.append": lambda: cfg["limits"].append(9),
            "state.cart.items.append": lambda: cart["items"].append("x"),
            "state.cart[k] = v": partial(operator.setitem, cart, "k", 1),
            "state.tags.add": lambda: tags.add("b"),
            "ctx.user_id = v": partial(setattr, ctx, "user_id", "root"),
            "ctx.metadata = v": partial(setattr, ctx, "metadata", {}),
        }
    )
    raised: dict[str, type[BaseException]] = {}
    for label, attempt in attempts.items():
        try:
            attempt()
        except Exception as exc:
            raised[label] = type(exc)
    return raised


class TestReadOnlySnapshots:
    """Tools cannot change metadata or state, at any depth."""

    def test_every_mutation_raises_and_nothing_changes(self) -> None:
        """Each attempt raises; the next call sees the original values."""
        registry = Registry()
        raised: list[dict[str, type[BaseException]]] = []
        snapshots: list[tuple[dict[str, Any], dict[str, Any]]] = []

        @registry.tool
        def vandal(ctx: ExecutionContext) -> None:
            """Try to change everything."""
            raised.append(_mutation_attempts(ctx))

        @registry.tool
        def reader(ctx: ExecutionContext) -> None:
            """Record what a later call sees."""
            snapshots.append((_plain(ctx.metadata), _plain(ctx.state)))

        host = host_context()
        session = Session("s1", metadata=host_metadata(), state=host_state())
        dispatcher = Dispatcher(registry)
        for template in (host, session):
            dispatcher.dispatch_all(
                [ToolCall("vandal"), ToolCall("reader")], template
            )
            dispatcher.dispatch(ToolCall("reader"), template)
        assert snapshots == [(host_metadata(), host_state())] * 4
        assert session.state == host_state()
        assert session.metadata == host_metadata()
        for attempts in raised:
            assert len(attempts) == 25, sorted(attempts)
            for label, exc in attempts.items():
                expected_exc = (
                    AttributeError
                    if label.endswith((".append", ".add"))
                    else attrs.exceptions.FrozenInstanceError
                    if label.startswith("ctx.")
                    else TypeError
                )
                assert issubclass(exc, expected_exc), (label, exc)

    def test_the_hosts_own_objects_are_copied(self) -> None:
        """The dicts the host passed in are not the ones tools see."""
        cfg: dict[str, Any] = {"limits": [1, 2]}
        ctx = ExecutionContext(metadata={"cfg": cfg}, state={"cfg": cfg})
        assert ctx.metadata["cfg"] is not cfg
        assert ctx.state["cfg"] is not cfg
        cfg["limits"].append(3)
        assert (
            _plain(ctx.metadata)
            == _plain(ctx.state)
            == {"cfg": {"limits": [1, 2]}}
        )

    def test_state_changes_go_through_set_state_only(self) -> None:
        """A session's state changes only by set_state of successful calls."""
        registry = Registry()

        @registry.tool
        def change(fail: bool) -> None:
            """Change state, maybe fail afterwards."""
            set_state("k", "v")
            if fail:
                msg = "failed after set_state"
                raise RuntimeError(msg)

        session = Session("s1", state={"k": "original"})
        dispatcher = Dispatcher(registry)
        failed = dispatcher.dispatch(
            ToolCall("change", {"fail": True}), session
        )
        assert failed.is_error
        assert failed.state_changes == {}
        assert session.state == {"k": "original"}
        dispatcher.dispatch(ToolCall("change", {"fail": False}), session)
        assert session.state == {"k": "v"}

    def test_what_is_not_copied(self) -> None:
        """Typed values, other objects and written values are shared as given.

        SECURITY.md lists them: a typed value, an object of another type
        inside metadata (a bytearray) and the values passed to publish()
        and set_state() are the very objects, not copies; only the next
        snapshot of the session's state is a read-only copy.
        """
        registry = Registry()
        seen: list[tuple[object, object]] = []
        tags = ["a"]
        buffer = bytearray(b"raw")
        published = {"n": 1}
        changed = ["x"]

        @registry.tool
        def share(ctx: ExecutionContext) -> None:
            """Look at what the host passed; publish and change state."""
            value = ctx.get(TAGS)
            seen.append((value, ctx.metadata["buffer"]))
            publish("p", published)
            set_state("c", changed)

        session = Session(
            "s1", metadata={"buffer": buffer}, values={TAGS.name: tags}
        )
        result = Dispatcher(registry).dispatch(ToolCall("share"), session)
        assert not result.is_error, result.error
        [(seen_tags, seen_buffer)] = seen
        assert seen_tags is tags
        assert seen_buffer is buffer
        assert result.metadata["p"] is published
        assert result.state_changes["c"] is changed
        assert session.state["c"] is changed
        snapshot = session.context().state["c"]
        assert snapshot is not changed
        assert snapshot == ("x",)


def _plain(value: Any) -> Any:
    """A frozen snapshot as plain dicts, lists and sets."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset):
        return set(value)
    return value


# -- sessions are isolated -------------------------------------------------------


@attrs.frozen
class Tenant:
    """A per-session scope."""

    tag: str


def _check_own(ctx: ExecutionContext, tag: str) -> None:
    """Fail the call unless everything in *ctx* belongs to session *tag*."""
    problems = []
    if ctx.session_id != tag or ctx.user_id != f"user-{tag}":
        problems.append(f"ids {ctx.session_id}/{ctx.user_id}")
    if ctx.scope_as(Tenant).tag != tag:
        problems.append(f"scope {ctx.scope}")
    if ctx.metadata != {"tenant": tag}:
        problems.append(f"metadata {dict(ctx.metadata)}")
    foreign = {k: v for k, v in ctx.state.items() if v != tag}
    if foreign:
        problems.append(f"state {foreign}")
    if problems:
        msg = f"session {tag} saw: {', '.join(problems)}"
        raise AssertionError(msg)


class TestSessionIsolation:
    """One session's state never reaches another session's call."""

    SESSIONS = 6
    CALLS = 6  # per session and per path

    def test_concurrent_sessions(self) -> None:
        """Batches, single calls and threads of many sessions stay apart."""
        registry = Registry()

        @registry.tool
        async def astep(tag: str, n: int) -> str:
            """Check, yield to the other tasks, check again, write."""
            _check_own(execution_context(), tag)
            await asyncio.sleep(0)
            _check_own(execution_context(), tag)
            set_state(f"w{n}", tag)
            return tag

        @registry.tool
        def step(tag: str, n: int) -> str:
            """The same from sync code (a worker thread under adispatch)."""
            _check_own(execution_context(), tag)
            set_state(f"w{n}", tag)
            publish("who", tag)
            return tag

        dispatcher = Dispatcher(registry)
        tags = [f"s{i}" for i in range(self.SESSIONS)]
        sessions = {
            tag: Session(
                tag,
                user_id=f"user-{tag}",
                state={"owner": tag},
                metadata={"tenant": tag},
                scope=Tenant(tag),
            )
            for tag in tags
        }
        counter = iter(range(10_000))
        planned: dict[str, set[int]] = {tag: set() for tag in tags}

        def calls(tag: str, count: int) -> list[ToolCall]:
            out = []
            for _ in range(count):
                n = next(counter)
                planned[tag].add(n)
                name = "astep" if n % 2 else "step"
                out.append(ToolCall(name, {"tag": tag, "n": n}))
            return out

        batches = {tag: calls(tag, self.CALLS) for tag in tags}
        singles = [
            (tag, call) for tag in tags for call in calls(tag, self.CALLS)
        ]
        threaded = {tag: calls(tag, self.CALLS) for tag in tags}
        results: list[tuple[str, ToolResult]] = []
        lock = threading.Lock()
        start = threading.Barrier(len(tags) + 1, timeout=JOIN_TIMEOUT)

        def worker(tag: str) -> None:
            start.wait()
            for call in threaded[tag]:
                result = dispatcher.dispatch(call, sessions[tag])
                with lock:
                    results.append((tag, result))

        async def main() -> None:
            start.wait()
            batch_tasks = [
                dispatcher.adispatch_all(batches[tag], sessions[tag])
                for tag in tags
            ]
            single_tasks = [
                dispatcher.adispatch(call, sessions[tag])
                for tag, call in singles
            ]
            batch_results, single_results = await asyncio.wait_for(
                asyncio.gather(
                    asyncio.gather(*batch_tasks),
                    asyncio.gather(*single_tasks),
                ),
                timeout=JOIN_TIMEOUT,
            )
            with lock:
                for tag, batch in zip(tags, batch_results, strict=True):
                    results.extend((tag, r) for r in batch)
                results.extend(
                    (tag, r)
                    for (tag, _), r in zip(
                        singles, single_results, strict=True
                    )
                )

        threads = [
            threading.Thread(target=worker, args=(tag,)) for tag in tags
        ]
        for thread in threads:
            thread.start()
        try:
            asyncio.run(main())
        finally:
            for thread in threads:
                thread.join(JOIN_TIMEOUT)
        assert not any(thread.is_alive() for thread in threads)

        assert len(results) == 3 * self.SESSIONS * self.CALLS
        for tag, result in results:
            assert not result.is_error, result.error
            assert result.output == tag
            assert set(result.state_changes.values()) == {tag}
            assert dict(result.metadata) in ({}, {"who": tag})
        for tag, session in sessions.items():
            expected = {"owner": tag} | {f"w{n}": tag for n in planned[tag]}
            assert session.state == expected
            assert len(session.results) == 3 * self.CALLS


# -- threads the tool starts ---------------------------------------------------


@pytest.mark.skipif(
    bool(getattr(sys.flags, "thread_inherit_context", 0)),
    reason="new threads inherit the context on this interpreter",
)
class TestThreadsStartedByTools:
    """Writes from other threads land on their own call, or raise."""

    def test_plain_thread_cannot_publish(self) -> None:
        """publish/set_state from a thread without the context raise."""
        registry = Registry()
        errors: list[BaseException] = []

        @registry.tool
        def spawn() -> str:
            """Publish from a thread started without the context."""

            def work() -> None:
                for write in (publish, set_state):
                    try:
                        write("leak", 1)
                    except BaseException as exc:
                        errors.append(exc)

            thread = threading.Thread(target=work)
            thread.start()
            thread.join(JOIN_TIMEOUT)
            return "done"

        session = Session("s1")
        dispatcher = Dispatcher(registry)
        results = [
            dispatcher.dispatch(ToolCall("spawn"), session),
            asyncio.run(dispatcher.adispatch(ToolCall("spawn"), session)),
        ]
        assert len(errors) == 4
        for exc in errors:
            assert isinstance(exc, ToolctxError)
            assert "No context is bound" in str(exc)
        for result in results:
            assert not result.is_error, result.error
            assert result.metadata == {}
            assert result.state_changes == {}
        assert session.state == {}

    def test_plain_pool_thread_cannot_publish(self) -> None:
        """A plain ThreadPoolExecutor task has no context to write to."""
        registry = Registry()
        pool = ThreadPoolExecutor(max_workers=1)

        @registry.tool
        def submit() -> str:
            """Publish from a plain pool."""
            future = pool.submit(publish, "leak", 1)
            exc = future.exception(JOIN_TIMEOUT)
            return type(exc).__name__

        with pool:
            result = Dispatcher(registry).dispatch(ToolCall("submit"))
        assert result.output == "ToolctxError"
        assert result.metadata == {}

    def test_bound_threads_land_on_their_own_call(self) -> None:
        """bind_context and ContextThreadPoolExecutor writes reach their call."""
        registry = Registry()
        together = threading.Barrier(4, timeout=JOIN_TIMEOUT)
        pool = ContextThreadPoolExecutor(max_workers=4)

        @registry.tool
        def fan_out(tag: str, pooled: bool) -> str:
            """Publish and change state from a helper thread."""

            def work() -> None:
                together.wait()  # all helpers alive at once
                publish("who", tag)
                set_state(f"by-{tag}", tag)

            if pooled:
                pool.submit(work).result(JOIN_TIMEOUT)
            else:
                thread = threading.Thread(target=bind_context(work))
                thread.start()
                thread.join(JOIN_TIMEOUT)
            return tag

        calls = [
            ToolCall("fan_out", {"tag": f"t{i}", "pooled": i % 2 == 0})
            for i in range(4)
        ]
        session = Session("s1")
        with pool:
            results = asyncio.run(
                asyncio.wait_for(
                    Dispatcher(registry).adispatch_all(calls, session),
                    timeout=JOIN_TIMEOUT,
                )
            )
        for i, result in enumerate(results):
            tag = f"t{i}"
            assert not result.is_error, result.error
            assert result.metadata == {"who": tag}
            assert result.state_changes == {f"by-{tag}": tag}
        assert session.state == {f"by-t{i}": f"t{i}" for i in range(4)}

    @pytest.mark.parametrize("runner", ["dispatch", "adispatch"])
    def test_writes_after_the_call_ended_raise(self, runner: str) -> None:
        """A bound thread that outlives its call cannot write any more.

        Its publish() and set_state() raise ToolctxError, and neither the
        built result nor the session changes: they keep exactly what the
        call wrote in time.
        """
        registry = Registry()
        release = threading.Event()
        errors: list[BaseException] = []
        finished = threading.Event()

        @registry.tool
        def linger() -> str:
            """Write in time, then leave a bound thread running."""

            def work() -> None:
                release.wait(JOIN_TIMEOUT)
                for write in (publish, set_state):
                    try:
                        write("late", 1)
                    except BaseException as exc:
                        errors.append(exc)
                finished.set()

            publish("in_time", 1)
            set_state("in_time", 1)
            threading.Thread(target=bind_context(work)).start()
            return "done"

        dispatcher = Dispatcher(registry)
        session = Session("s1")
        if runner == "dispatch":
            result = dispatcher.dispatch(ToolCall("linger"), session)
        else:
            result = asyncio.run(
                dispatcher.adispatch(ToolCall("linger"), session)
            )
        release.set()
        assert finished.wait(JOIN_TIMEOUT)
        assert len(errors) == 2
        for exc in errors:
            assert isinstance(exc, ToolctxError)
            assert "after tool call 'linger'" in str(exc)
            assert "finished" in str(exc)
        assert result.metadata == {"in_time": 1}
        assert result.state_changes == {"in_time": 1}
        assert session.state == {"in_time": 1}
