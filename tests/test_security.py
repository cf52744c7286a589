"""Security properties: what the model, a tool or another session cannot do.

The model cannot set context fields or injected parameters; the scope is
never rendered, serialized or logged by toolctx; metadata and state
snapshots are read-only; sessions never see each other's state, also
under concurrency; results only receive what their own call published.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import io
import json
import logging
import operator
import sys
import threading
import uuid

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import attrs
import pytest

from typing_extensions import TypedDict

from toolctx import (
    AuditLog,
    AuditRecord,
    Authorization,
    ContextLogFilter,
    ContextThreadPoolExecutor,
    Dispatcher,
    ExecutionContext,
    InMemorySessionStore,
    JsonLinesAuditSink,
    LoggerAuditSink,
    MemoryAuditSink,
    PermissionDenied,
    Registry,
    Session,
    SQLiteSessionStore,
    ToolCall,
    ToolResult,
    bind_context,
    execution_context,
    publish,
    session_to_dict,
    set_state,
    tool,
)
from toolctx.exceptions import (
    SchemaError,
    ScopeError,
    ToolArgumentsError,
    ToolctxError,
)
from toolctx.providers import mcp


SECRET = f"scope-secret-{uuid.uuid4().hex}"
"""Unique to this run: it can only appear where the scope was rendered."""

PROVIDERS = ("openai", "anthropic", "gemini", "mcp")
JOIN_TIMEOUT = 30.0  # a bound on hangs, not a timing assertion


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
            "ExecutionContext | None",
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
        """repr, str, to_dict, JSON and derived contexts hide the scope."""
        ctx = host_context()
        derived = [
            ctx,
            ctx.child(agent_id="researcher"),
            ctx.with_metadata(extra="x"),
        ]
        for item in derived:
            assert item.scope is not None
            assert_no_secret(item, item.to_dict(), json.dumps(item.to_dict()))
            assert "scope" not in item.to_dict()
            assert ExecutionContext.from_dict(item.to_dict()).scope is None

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


class TestKnownGaps:
    """Gaps found while writing these tests; xfail until the library is fixed."""

    def test_returned_context_hides_the_scope(self) -> None:
        """A context returned by a tool is rendered without its scope."""
        registry = Registry()

        @registry.tool
        def spawn(ctx: ExecutionContext) -> ExecutionContext:
            """Return a sub-agent context (e.g. for the host to use)."""
            return ctx.child(agent_id="researcher")

        result = Dispatcher(registry).dispatch(
            ToolCall("spawn", "{}", id="c1"), host_context()
        )
        assert_no_secret(result.output, *_renderings(result))

    def test_returned_prior_results_hide_host_only_fields(self) -> None:
        """Prior results returned by a tool do not show published metadata."""
        registry = _registry()

        @registry.tool
        def history(ctx: ExecutionContext) -> list[Any]:
            """Return this turn's earlier results."""
            return list(ctx.prior_results)

        results = Dispatcher(registry).dispatch_all(
            [ToolCall("ok", '{"text": "hi"}'), ToolCall("history", "{}")],
            host_context(),
        )
        assert results[0].metadata == {"billed": 1}
        assert "billed" not in json.dumps(results[1].output)

    def test_later_calls_cannot_change_earlier_results(self) -> None:
        """A call cannot rewrite the output of an earlier call of the turn."""
        registry = _registry()

        @registry.tool
        def rewrite(ctx: ExecutionContext) -> None:
            """Try to change what the model will be told about call one."""
            with contextlib.suppress(TypeError, AttributeError):
                ctx.prior_results[0].output["text"] = "forged"

        results = Dispatcher(registry).dispatch_all(
            [ToolCall("ok", '{"text": "hi"}'), ToolCall("rewrite", "{}")],
            host_context(),
        )
        assert results[0].output == {"text": "hi", "user": "ada"}

    @pytest.mark.parametrize(
        "value",
        [float("nan"), float("inf"), "\ud800", [[[[[[[[[[1]]]]]]]]]]],
        ids=["nan", "infinity", "surrogate", "deep"],
    )
    def test_limits_apply_to_decoded_arguments(self, value: object) -> None:
        """Decoded arguments get the checks JSON text gets."""
        registry = Registry()

        @registry.tool
        def take(x: float | str | list[Any]) -> None:
            """Take a value."""

        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "take", "arguments": {"x": value}},
        }
        [call] = mcp.parse_calls(request)
        result = Dispatcher(registry, max_argument_depth=8).dispatch(call)
        assert result.is_error


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

    def test_writes_after_the_call_ended_raise(self) -> None:
        """A bound thread that outlives its call cannot write any more."""
        registry = Registry()
        release = threading.Event()
        errors: list[BaseException] = []
        finished = threading.Event()

        @registry.tool
        def linger() -> str:
            """Leave a bound thread running past the end of the call."""

            def work() -> None:
                release.wait(JOIN_TIMEOUT)
                try:
                    publish("late", 1)
                except BaseException as exc:
                    errors.append(exc)
                finished.set()

            threading.Thread(target=bind_context(work)).start()
            return "done"

        result = Dispatcher(registry).dispatch(ToolCall("linger"))
        release.set()
        assert finished.wait(JOIN_TIMEOUT)
        assert result.metadata == {}
        assert len(errors) == 1
        assert isinstance(errors[0], ToolctxError)
