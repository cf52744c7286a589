"""Authorization and AuditLog: the interceptors shipped with toolctx."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import pickle
import sys

from collections.abc import Collection, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolDefinition,
    ToolDenied,
    ToolResult,
    execution_context,
    publish,
    set_state,
)
from toolctx.interceptors import (
    PERMISSIONS,
    AuditLog,
    AuditRecord,
    Authorization,
    JsonLinesAuditSink,
    LoggerAuditSink,
    MemoryAuditSink,
    PermissionDenied,
    required_permissions,
)
from toolctx.providers import openai


SECRET = "hunter2-scope-secret"
FIXED_TIME = datetime(2025, 6, 1, 12, 30, tzinfo=timezone.utc)


@attrs.frozen
class User:
    """A host's scope object: an identity with a secret token."""

    name: str
    permissions: frozenset[str]
    token: str = SECRET


def grants(*permissions: str) -> ExecutionContext:
    """Return a template for user 'bob' holding *permissions*."""
    return ExecutionContext(user_id="bob").with_value(
        PERMISSIONS, frozenset(permissions)
    )


class LegacyTool:
    """A tool class declaring permissions with a ``requires`` attribute."""

    requires = ("admin",)

    def __init__(self) -> None:
        self.calls = 0

    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="legacy")

    def execute(self, args: Mapping[str, Any]) -> str:
        self.calls += 1
        return "legacy ran"


class MethodTool:
    """A tool class declaring permissions with a ``permissions()`` method."""

    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="method_tool")

    def permissions(self) -> list[str]:
        return ["b:write", "a:read"]

    def execute(self, args: Mapping[str, Any]) -> str:
        return "method ran"


class PlainTool:
    """A tool class that declares no permissions."""

    def definition(self) -> ToolDefinition:
        return ToolDefinition(name="plain")

    def execute(self, args: Mapping[str, Any]) -> str:
        return "plain ran"


@pytest.fixture(name="ran")
def _ran() -> list[str]:
    return []


@pytest.fixture(name="registry")
def _registry(ran: list[str]) -> Registry:
    registry = Registry()

    @registry.tool(requires=["files:delete"])
    def rm(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    @registry.tool(requires=["files:delete", "files:admin", "audit:write"])
    def purge() -> str:
        """Delete everything."""
        ran.append("purge")
        return "purged"

    @registry.tool
    def ping() -> str:
        """Answer pong."""
        ran.append("ping")
        return "pong"

    @registry.tool
    def boom(message: str) -> None:
        """Always fail."""
        raise ValueError(message)

    @registry.tool
    def refuse() -> None:
        """Deny from inside the tool."""
        msg = "not today"
        raise ToolDenied(msg)

    @registry.tool
    def leaky(note: str) -> str:
        """Publish host-only data and change state."""
        publish("token", SECRET)
        set_state("token", SECRET)
        return note

    return registry


class TestRequiredPermissions:
    """required_permissions(): how a tool declares what it needs."""

    def test_function_tool(self, registry: Registry) -> None:
        """A @tool(requires=...) declaration is read as a frozenset."""
        assert required_permissions(registry["rm"]) == {"files:delete"}
        assert required_permissions(registry["ping"]) == frozenset()

    def test_requires_attribute(self) -> None:
        """A class tool may declare a ``requires`` attribute."""
        assert required_permissions(LegacyTool()) == {"admin"}

    def test_permissions_method(self) -> None:
        """A class tool may declare a ``permissions()`` method."""
        assert required_permissions(MethodTool()) == {"a:read", "b:write"}

    def test_nothing_declared(self) -> None:
        """A class tool without a declaration needs nothing."""
        assert required_permissions(PlainTool()) == frozenset()

    def test_single_string_is_refused(self) -> None:
        """A bare string would be split into letters, so it is refused."""
        t = LegacyTool()
        t.requires = "admin"  # type: ignore[assignment]
        with pytest.raises(TypeError, match=r"'legacy'.*\['files:delete'\]"):
            required_permissions(t)

    def test_non_string_permission_is_refused(self) -> None:
        """Every declared permission must be a non-empty string."""
        t = LegacyTool()
        t.requires = ("admin", 3)  # type: ignore[assignment]
        with pytest.raises(TypeError, match="declares the permission 3"):
            required_permissions(t)


class TestAuthorization:
    """Authorization: deny calls whose caller lacks a permission."""

    def test_denial_stops_the_tool(
        self, registry: Registry, ran: list[str]
    ) -> None:
        """A missing permission gives an error result; the tool never runs."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(
            ToolCall("rm", {"path": "/etc"}, "c1"), grants("files:read")
        )
        assert ran == []
        assert result.is_error
        assert result.error == (
            "Call to tool 'rm' was denied: it requires the permission "
            "'files:delete', which user 'bob' lacks. Do not retry; tell the "
            "user the permission is missing."
        )
        exc = result.exception
        assert isinstance(exc, PermissionDenied)
        assert isinstance(exc, ToolDenied)
        assert (exc.tool_name, exc.missing, exc.user_id) == (
            "rm",
            ("files:delete",),
            "bob",
        )

    def test_allowed_when_granted(
        self, registry: Registry, ran: list[str]
    ) -> None:
        """A caller holding every required permission runs the tool."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(
            ToolCall("rm", {"path": "a.txt"}),
            grants("files:read", "files:delete"),
        )
        assert result.output == "deleted a.txt"
        assert ran == ["a.txt"]

    def test_names_only_the_missing_permissions(
        self, registry: Registry
    ) -> None:
        """Several missing permissions are listed, sorted; held ones are not."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(ToolCall("purge"), grants("files:admin"))
        assert result.error == (
            "Call to tool 'purge' was denied: it requires the permissions "
            "'audit:write' and 'files:delete', which user 'bob' lacks. Do "
            "not retry; tell the user these permissions are missing."
        )

    def test_without_user_or_permissions(self, registry: Registry) -> None:
        """No PERMISSIONS value means none held; no user_id says 'caller'."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(ToolCall("rm", {"path": "a"}))
        assert result.is_error
        assert "which the caller lacks" in (result.error or "")

    def test_tools_that_declare_nothing_are_allowed(
        self, registry: Registry
    ) -> None:
        """A tool without requirements runs for a caller holding nothing."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        assert dispatcher.dispatch(ToolCall("ping")).output == "pong"

    def test_unknown_tools_pass_through(self, registry: Registry) -> None:
        """An unknown tool is left to the dispatcher's own error."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(ToolCall("nope"))
        assert result.is_error
        assert (result.error or "").startswith("Unknown tool 'nope'.")
        assert not isinstance(result.exception, ToolDenied)

    def test_denied_before_arguments_are_checked(
        self, registry: Registry
    ) -> None:
        """A denied call is refused before its arguments are validated."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )
        result = dispatcher.dispatch(ToolCall("rm", '{"path": 3}'))
        assert isinstance(result.exception, PermissionDenied)

    def test_policy_reading_the_scope(
        self, registry: Registry, ran: list[str]
    ) -> None:
        """A custom policy reads the scope; the reason never shows it."""
        auth = Authorization(
            registry, lambda ctx: ctx.scope_as(User).permissions
        )
        dispatcher = Dispatcher(registry, interceptors=[auth])
        carol = User("carol", frozenset({"files:delete"}))
        dave = User("dave", frozenset({"files:read"}))
        ok = dispatcher.dispatch(
            ToolCall("rm", {"path": "x"}), ExecutionContext(scope=carol)
        )
        denied = dispatcher.dispatch(
            ToolCall("rm", {"path": "y"}),
            ExecutionContext(user_id="dave", scope=dave),
        )
        assert ok.output == "deleted x"
        assert ran == ["x"]
        assert denied.is_error
        assert "'files:delete'" in (denied.error or "")
        assert SECRET not in (denied.error or "")
        assert "files:read" not in (denied.error or "")
        assert SECRET not in str(denied.exception)

    def test_policy_returning_none_denies(self, registry: Registry) -> None:
        """A policy returning None means the caller holds nothing."""
        dispatcher = Dispatcher(
            registry,
            interceptors=[Authorization(registry, lambda ctx: None)],
        )
        result = dispatcher.dispatch(ToolCall("rm", {"path": "a"}))
        assert isinstance(result.exception, PermissionDenied)

    def test_policy_with_wildcards(self, registry: Registry) -> None:
        """A policy may return any container, e.g. one matching wildcards."""

        class Wildcards(Collection[str]):
            def __init__(self, *patterns: str) -> None:
                self.patterns = patterns

            def __contains__(self, permission: object) -> bool:
                return any(
                    isinstance(permission, str)
                    and (p == permission or permission.startswith(p[:-1]))
                    for p in self.patterns
                    if p.endswith("*") or p == permission
                )

            def __iter__(self) -> Iterator[str]:
                return iter(self.patterns)

            def __len__(self) -> int:
                return len(self.patterns)

        dispatcher = Dispatcher(
            registry,
            interceptors=[
                Authorization(registry, lambda ctx: Wildcards("files:*"))
            ],
        )
        result = dispatcher.dispatch(ToolCall("purge"))
        assert result.error is not None
        assert "'audit:write'," in result.error
        assert "files:" not in result.error
        assert dispatcher.dispatch(ToolCall("rm", {"path": "a"})).output

    def test_policy_returning_a_string_is_a_host_error(
        self, registry: Registry
    ) -> None:
        """A string would allow substrings, so the dispatch raises instead."""
        dispatcher = Dispatcher(
            registry,
            interceptors=[
                Authorization(registry, lambda ctx: "files:delete,admin")
            ],
        )
        with pytest.raises(TypeError, match="returned a string"):
            dispatcher.dispatch(ToolCall("rm", {"path": "a"}))

    def test_class_tools_and_extra_requirements(self) -> None:
        """Class tools' declarations and per-name requirements both count."""
        legacy, plain = LegacyTool(), PlainTool()
        registry = Registry([legacy, plain, MethodTool()])
        auth = Authorization(registry, requirements={"plain": ["ops"]})
        dispatcher = Dispatcher(registry, interceptors=[auth])
        assert auth.required("plain") == frozenset({"ops"})
        assert auth.required("method_tool") == frozenset({"a:read", "b:write"})
        assert auth.required("missing") is None
        denied = dispatcher.dispatch(ToolCall("legacy"), grants("ops"))
        assert isinstance(denied.exception, PermissionDenied)
        assert legacy.calls == 0
        assert dispatcher.dispatch(ToolCall("plain"), grants("ops")).output
        assert dispatcher.dispatch(ToolCall("legacy"), grants("admin")).output
        assert legacy.calls == 1

    def test_tools_registered_later_are_guarded(
        self, registry: Registry
    ) -> None:
        """The registry is read per call, so later registrations count."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )

        @registry.tool(requires=["late"])
        def later() -> str:
            """Registered after the interceptor."""
            return "ran"

        result = dispatcher.dispatch(ToolCall("later"))
        assert isinstance(result.exception, PermissionDenied)

    def test_nested_calls_are_checked_with_the_inherited_permissions(
        self, registry: Registry
    ) -> None:
        """A nested call inherits the permissions and is checked too."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )

        @registry.tool
        def outer() -> list[Any]:
            """Call rm and purge from inside a tool."""
            return [
                dispatcher.dispatch(ToolCall("rm", {"path": "n"})).output,
                dispatcher.dispatch(ToolCall("purge")).is_error,
            ]

        result = dispatcher.dispatch(ToolCall("outer"), grants("files:delete"))
        assert result.output == ["deleted n", True]

    def test_async_dispatch(self, registry: Registry, ran: list[str]) -> None:
        """The async dispatch applies the same check."""
        dispatcher = Dispatcher(
            registry, interceptors=[Authorization(registry)]
        )

        async def main() -> list[ToolResult]:
            return await dispatcher.adispatch_all(
                [ToolCall("rm", {"path": "a"}), ToolCall("ping")],
                grants(),
            )

        denied, ok = asyncio.run(asyncio.wait_for(main(), 30))
        assert isinstance(denied.exception, PermissionDenied)
        assert ok.output == "pong"
        assert ran == ["ping"]

    def test_invalid_construction(self) -> None:
        """A non-registry or a string requirement is refused at once."""
        with pytest.raises(TypeError, match=r"takes the toolctx\.Registry"):
            Authorization({})  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"requirements\['x'\]"):
            Authorization(Registry(), requirements={"x": "admin"})

    def test_permission_denied_pickles(self) -> None:
        """PermissionDenied survives pickling with its attributes."""
        exc = PermissionDenied("rm", ["b", "a"], "bob")
        copy = pickle.loads(pickle.dumps(exc))
        assert (copy.tool_name, copy.missing, copy.user_id) == (
            "rm",
            ("a", "b"),
            "bob",
        )
        assert copy.reason == exc.reason

    def test_permissions_key_round_trips(self) -> None:
        """PERMISSIONS survives to_dict/from_dict as a frozenset."""
        ctx = grants("a", "b")
        back = ExecutionContext.from_dict(
            json.loads(json.dumps(ctx.to_dict()))
        )
        assert back.get(PERMISSIONS) == frozenset({"a", "b"})
        assert ExecutionContext().get(PERMISSIONS) == frozenset()


def audited(
    registry: Registry, **options: Any
) -> tuple[Dispatcher, MemoryAuditSink]:
    """Return a dispatcher with AuditLog first, then Authorization."""
    sink = MemoryAuditSink()
    log = AuditLog(sink, clock=lambda: FIXED_TIME, **options)
    return Dispatcher(
        registry, interceptors=[log, Authorization(registry)]
    ), sink


def expected(
    result: ToolResult, ctx: ExecutionContext, **fields: Any
) -> AuditRecord:
    """Build the record the audit log should produce for *result*."""
    defaults: dict[str, Any] = {
        "tool": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "session_id": ctx.session_id,
        "user_id": ctx.user_id,
        "agent_id": ctx.agent_id,
        "turn": ctx.turn,
        "outcome": "ok",
        "error": None,
        "error_type": None,
        "duration_ns": result.duration_ns,
        "timestamp": FIXED_TIME,
    }
    defaults.update(fields)
    return AuditRecord(**defaults)


class TestAuditLog:
    """AuditLog: one structured record per call."""

    def test_record_fields_for_a_nested_call(self, registry: Registry) -> None:
        """Outer and nested calls get exact records; the inner one links up."""
        dispatcher, sink = audited(registry)
        inner_results: list[ToolResult] = []
        outer_ids: list[str] = []

        @registry.tool
        def outer() -> str:
            """Call ping from inside a tool."""
            outer_ids.append(execution_context().invocation_id)
            inner = dispatcher.dispatch(ToolCall("ping", None, "call-2"))
            inner_results.append(inner)
            return str(inner.output)

        template = ExecutionContext(
            session_id="s1", user_id="ada", agent_id="planner", turn=4
        )
        outer_result = dispatcher.dispatch(
            ToolCall("outer", "{}", "call-1"), template
        )
        (inner,) = inner_results
        assert outer_result.output == "pong"
        inner_record, outer_record = sink.records
        assert inner_record == AuditRecord(
            tool="ping",
            call_id="call-2",
            invocation_id=inner.invocation_id,
            parent_invocation_id=outer_result.invocation_id,
            session_id="s1",
            user_id="ada",
            agent_id="planner",
            turn=4,
            outcome="ok",
            error=None,
            error_type=None,
            duration_ns=inner.duration_ns,
            timestamp=FIXED_TIME,
        )
        assert outer_record == AuditRecord(
            tool="outer",
            call_id="call-1",
            invocation_id=outer_ids[0],
            parent_invocation_id=None,
            session_id="s1",
            user_id="ada",
            agent_id="planner",
            turn=4,
            outcome="ok",
            error=None,
            error_type=None,
            duration_ns=outer_result.duration_ns,
            timestamp=FIXED_TIME,
        )
        assert outer_record.invocation_id == outer_result.invocation_id
        assert inner_record.arguments is None
        assert inner_record.extra == {}

    def test_denied_call_gets_one_denied_record(
        self, registry: Registry, ran: list[str]
    ) -> None:
        """A call Authorization denies still yields one record, 'denied'."""
        dispatcher, sink = audited(registry)
        ctx = grants("files:read")
        result = dispatcher.dispatch(ToolCall("rm", {"path": "x"}, "c9"), ctx)
        assert ran == []
        assert sink.records == [
            expected(
                result,
                ctx,
                outcome="denied",
                error=result.error,
                error_type="PermissionDenied",
            )
        ]
        assert "'files:delete'" in (sink.records[0].error or "")

    def test_tool_raising_tool_denied_is_denied(
        self, registry: Registry
    ) -> None:
        """ToolDenied raised by the tool itself is recorded as 'denied'."""
        dispatcher, sink = audited(registry)
        dispatcher.dispatch(ToolCall("refuse"))
        assert [(r.outcome, r.error_type) for r in sink.records] == [
            ("denied", "ToolDenied")
        ]

    def test_errors_are_recorded(self, registry: Registry) -> None:
        """Tool failures, unknown tools and bad arguments give 'error'."""
        dispatcher, sink = audited(registry)
        results = dispatcher.dispatch_all(
            [
                ToolCall("boom", {"message": "disk full"}),
                ToolCall("nope"),
                ToolCall("boom", "{not json"),
                ToolCall("boom", {"message": 3}),
            ]
        )
        assert [r.outcome for r in sink.records] == ["error"] * 4
        assert [r.error for r in sink.records] == [r.error for r in results]
        assert [r.error_type for r in sink.records] == [
            "ValueError",
            None,
            "JSONDecodeError",
            "ToolArgumentsError",
        ]
        assert sink.records[0].error == (
            "Tool 'boom' failed: ValueError: disk full"
        )

    def test_result_is_returned_unchanged(self, registry: Registry) -> None:
        """The audit log hands the dispatcher's result back as it is."""
        log = AuditLog(MemoryAuditSink())
        result = ToolResult(name="ping", output="pong")
        ctx = ExecutionContext()
        assert log.after(ToolCall("ping"), ctx, result) is result
        assert log.before(ToolCall("ping"), ctx) is ctx

    def test_arguments_left_out_by_default(self, registry: Registry) -> None:
        """Without include_arguments the record has no arguments."""
        dispatcher, sink = audited(registry)
        dispatcher.dispatch(ToolCall("boom", {"message": "private"}))
        (record,) = sink.records
        assert record.arguments is None
        assert "private" not in repr(record.to_dict().get("arguments"))

    def test_arguments_included_on_request(self, registry: Registry) -> None:
        """include_arguments=True records the decoded arguments."""
        dispatcher, sink = audited(registry, include_arguments=True)
        dispatcher.dispatch_all(
            [
                ToolCall("boom", '{"message": "a"}'),
                ToolCall("boom", b'{"message": "b"}'),
                ToolCall("boom", {"message": "c"}),
                ToolCall("ping"),
                ToolCall("boom", "{broken"),
            ]
        )
        assert [r.arguments for r in sink.records] == [
            {"message": "a"},
            {"message": "b"},
            {"message": "c"},
            {},
            "{broken",
        ]

    def test_extra_hook(self, registry: Registry) -> None:
        """The extra hook adds only the fields the host returns."""
        dispatcher, sink = audited(
            registry,
            extra=lambda ctx, result: {
                "tenant": ctx.scope_as(User).name,
                "published": dict(result.metadata).get("token") is not None,
            },
        )
        dispatcher.dispatch(
            ToolCall("leaky", {"note": "n"}),
            ExecutionContext(scope=User("acme", frozenset())),
        )
        (record,) = sink.records
        assert record.extra == {"tenant": "acme", "published": True}
        with pytest.raises(TypeError):
            record.extra["x"] = 1  # type: ignore[index]

    def test_concurrent_calls_get_their_own_records(
        self, registry: Registry
    ) -> None:
        """Concurrent adispatch calls each produce a record with their ids."""
        dispatcher, sink = audited(registry)

        @registry.tool
        async def nap(n: int) -> int:
            """Yield to the loop a few times."""
            for _ in range(3):
                await asyncio.sleep(0)
            return n

        async def main() -> list[ToolResult]:
            return await asyncio.gather(
                *(
                    dispatcher.adispatch(
                        ToolCall("nap", {"n": n}, f"c{n}"),
                        ExecutionContext(user_id=f"u{n}"),
                    )
                    for n in range(50)
                )
            )

        results = asyncio.run(asyncio.wait_for(main(), 30))
        by_call = {r.call_id: r for r in sink.records}
        assert len(by_call) == 50
        for n, result in enumerate(results):
            record = by_call[f"c{n}"]
            assert record.invocation_id == result.invocation_id
            assert record.user_id == f"u{n}"

    def test_session_fields(self, registry: Registry) -> None:
        """A Session template records its id and turn."""
        dispatcher, sink = audited(registry)
        session = Session("s-42", user_id="ada")
        dispatcher.dispatch(ToolCall("ping"), session)
        (record,) = sink.records
        assert (record.session_id, record.user_id, record.turn) == (
            "s-42",
            "ada",
            session.turn,
        )

    def test_timestamp_defaults_to_utc_now(self, registry: Registry) -> None:
        """Without a clock the timestamp is the current UTC time."""
        sink = MemoryAuditSink()
        dispatcher = Dispatcher(registry, interceptors=[AuditLog(sink)])
        before = datetime.now(timezone.utc)
        dispatcher.dispatch(ToolCall("ping"))
        after = datetime.now(timezone.utc)
        (record,) = sink.records
        assert record.timestamp.tzinfo is timezone.utc
        assert before <= record.timestamp <= after

    def test_rejects_a_non_callable_sink(self) -> None:
        """A sink that is neither callable nor a Logger is refused."""
        with pytest.raises(TypeError, match="sink\\(record\\) callable"):
            AuditLog([])  # type: ignore[arg-type]

    @pytest.mark.parametrize("path", ["dispatch", "adispatch"])
    def test_sink_failure_keeps_the_result(
        self,
        registry: Registry,
        ran: list[str],
        path: str,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A failing sink never costs the call its result.

        The dispatch returns the result as usual, and the failure is
        logged at ERROR on the "toolctx" logger with its traceback, the
        call's ids and the record the sink refused.
        """
        # A directory cannot be opened as a file: a real OSError.
        sink = JsonLinesAuditSink(Path(__file__).parent)
        dispatcher = Dispatcher(registry, interceptors=[AuditLog(sink)])
        call = ToolCall("ping", None, "call-1")
        with caplog.at_level(logging.ERROR, "toolctx"):
            if path == "dispatch":
                result = dispatcher.dispatch(call)
            else:
                result = asyncio.run(dispatcher.adispatch(call))
        assert (result.output, result.is_error, ran) == (
            "pong",
            False,
            ["ping"],
        )
        (logged,) = caplog.records
        assert logged.name == "toolctx"
        assert logged.levelno == logging.ERROR
        assert logged.exc_info is not None
        assert isinstance(logged.exc_info[1], OSError)
        message = logged.getMessage()
        assert "could not record tool call 'ping' (call id 'call-1'" in message
        assert result.invocation_id in message
        assert "JsonLinesAuditSink" in message
        assert "returned as usual" in message
        record = logged.toolctx_audit_record  # type: ignore[attr-defined]
        assert isinstance(record, AuditRecord)
        assert record.invocation_id == result.invocation_id

    def test_extra_hook_failure_keeps_the_result(
        self, registry: Registry, caplog: pytest.LogCaptureFixture
    ) -> None:
        """An extra hook that raises is logged; the result is returned."""
        sink = MemoryAuditSink()
        log = AuditLog(
            sink, extra=lambda ctx, result: {"who": ctx.scope_as(User).name}
        )
        dispatcher = Dispatcher(registry, interceptors=[log])
        with caplog.at_level(logging.ERROR, "toolctx"):
            result = dispatcher.dispatch(ToolCall("boom", {"message": "x"}))
        assert result.error == "Tool 'boom' failed: ValueError: x"
        assert sink.records == []
        # Besides the failed call itself (logged by the dispatcher):
        (logged,) = [
            r
            for r in caplog.records
            if not r.getMessage().startswith("Tool call 'boom' failed")
        ]
        assert "building the record" in logged.getMessage()
        assert logged.toolctx_audit_record is None  # type: ignore[attr-defined]


class TestNoSecretsInOutput:
    """Scope, metadata, state and published values never reach the audit."""

    def test_secret_never_rendered(
        self,
        registry: Registry,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """No record, log line or JSON line contains the scope's secret."""
        memory = MemoryAuditSink()
        path = tmp_path / "audit.jsonl"
        jsonl = JsonLinesAuditSink(path)
        logger_sink = LoggerAuditSink("test_interceptors.secret")

        def fan_out(record: AuditRecord) -> None:
            memory(record)
            jsonl(record)
            logger_sink(record)

        dispatcher = Dispatcher(
            registry,
            interceptors=[
                AuditLog(fan_out, include_arguments=True),
                Authorization(
                    registry, lambda ctx: ctx.scope_as(User).permissions
                ),
            ],
        )
        template = ExecutionContext(
            user_id="bob",
            scope=User("bob", frozenset()),
            metadata={"api_key": SECRET},
            state={"token": SECRET},
        )
        with (
            caplog.at_level(logging.DEBUG, "test_interceptors.secret"),
            caplog.at_level(logging.DEBUG, "toolctx"),
        ):
            dispatcher.dispatch_all(
                [
                    ToolCall("leaky", {"note": "hello"}),
                    ToolCall("rm", {"path": "x"}),
                    ToolCall("boom", {"message": "bad"}),
                ],
                template,
            )
        assert [r.outcome for r in memory.records] == [
            "ok",
            "denied",
            "error",
        ]
        rendered = [
            *(repr(r) for r in memory.records),
            *(json.dumps(r.to_dict(), default=str) for r in memory.records),
            path.read_text(encoding="utf-8"),
            caplog.text,
            *(repr(vars(r)) for r in caplog.records),
        ]
        # Three audit lines, and the dispatcher's own log of the denied
        # and the failed call: none holds the secret.
        assert [r.name for r in caplog.records].count(
            "test_interceptors.secret"
        ) == 3
        assert [r.name for r in caplog.records].count("toolctx") == 2
        for text in rendered:
            assert SECRET not in text
        assert "hello" in path.read_text(encoding="utf-8")


class TestSinks:
    """The shipped sinks: memory, logger, JSON lines."""

    def test_memory_sink(self) -> None:
        """MemoryAuditSink keeps records in order and can be cleared."""
        sink = MemoryAuditSink()
        a = expected(ToolResult(name="a"), ExecutionContext())
        b = expected(ToolResult(name="b"), ExecutionContext())
        sink(a)
        sink(b)
        assert sink.records == [a, b]
        assert (
            repr(sink)
            == "<toolctx.interceptors.MemoryAuditSink(num_records=2)>"
        )
        sink.clear()
        assert sink.records == []

    def test_logger_sink_levels_and_extra(
        self, registry: Registry, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Successes log at INFO, failures at WARNING, fields in extra."""
        logger = logging.getLogger("test_interceptors.levels")
        dispatcher = Dispatcher(
            registry,
            interceptors=[AuditLog(logger), Authorization(registry)],
        )
        ctx = ExecutionContext(user_id="ada", session_id="s1")
        with caplog.at_level(logging.INFO, logger.name):
            ok = dispatcher.dispatch(ToolCall("ping", None, "c1"), ctx)
            dispatcher.dispatch(ToolCall("rm", {"path": "x"}), ctx)
        first, second = caplog.records
        assert first.levelno == logging.INFO
        assert first.getMessage().startswith("tool call ping: ok in ")
        assert first.audit_tool == "ping"  # type: ignore[attr-defined]
        assert first.audit_call_id == "c1"  # type: ignore[attr-defined]
        assert first.audit_invocation_id == ok.invocation_id  # type: ignore[attr-defined]
        assert first.audit_user_id == "ada"  # type: ignore[attr-defined]
        assert first.audit_session_id == "s1"  # type: ignore[attr-defined]
        assert first.audit_arguments is None  # type: ignore[attr-defined]
        assert isinstance(first.audit_timestamp, str)  # type: ignore[attr-defined]
        assert second.levelno == logging.WARNING
        assert second.audit_outcome == "denied"  # type: ignore[attr-defined]
        assert second.getMessage().endswith(
            "which user 'ada' lacks. Do not retry; tell the user the "
            "permission is missing."
        )

    def test_logger_sink_skips_disabled_levels(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Nothing is logged when the level is disabled."""
        sink = LoggerAuditSink("test_interceptors.quiet", level=logging.DEBUG)
        with caplog.at_level(logging.INFO, "test_interceptors.quiet"):
            sink(expected(ToolResult(name="a"), ExecutionContext()))
        assert caplog.records == []

    def test_default_sink_is_the_toolctx_audit_logger(
        self, registry: Registry, caplog: pytest.LogCaptureFixture
    ) -> None:
        """AuditLog() logs to the 'toolctx.audit' logger."""
        dispatcher = Dispatcher(registry, interceptors=[AuditLog()])
        with caplog.at_level(logging.INFO, "toolctx.audit"):
            dispatcher.dispatch(ToolCall("ping"))
        (record,) = caplog.records
        assert record.name == "toolctx.audit"
        assert record.audit_outcome == "ok"  # type: ignore[attr-defined]

    def test_json_lines_to_a_path(
        self, registry: Registry, tmp_path: Path
    ) -> None:
        """Each record becomes one JSON line appended to the file."""
        path = tmp_path / "audit.jsonl"
        dispatcher = Dispatcher(
            registry,
            interceptors=[
                AuditLog(
                    JsonLinesAuditSink(str(path)),
                    include_arguments=True,
                    clock=lambda: FIXED_TIME,
                )
            ],
        )
        dispatcher.dispatch(ToolCall("ping", None, "c1"))
        dispatcher.dispatch(ToolCall("boom", {"message": "é"}))
        lines = path.read_text(encoding="utf-8").splitlines()
        first, second = (json.loads(line) for line in lines)
        assert list(first) == [f.name for f in attrs.fields(AuditRecord)]
        assert first["tool"] == "ping"
        assert first["call_id"] == "c1"
        assert first["timestamp"] == "2025-06-01T12:30:00+00:00"
        assert second["outcome"] == "error"
        assert second["arguments"] == {"message": "é"}

    @pytest.mark.parametrize("path", ["dispatch", "adispatch"])
    def test_lone_surrogate_from_a_chat_completion(
        self, registry: Registry, tmp_path: Path, path: str
    ) -> None:
        r"""A lone surrogate the model sent is written escaped, not lost.

        Chat Completions JSON may hold "\ud800" escapes, and json.loads
        turns them into lone surrogates in the tool name, the call id or
        the arguments. Each call still gets its result and one line of
        valid UTF-8 JSON that reads back as exactly what the model sent,
        with Authorization in the chain too.
        """
        body = json.dumps(
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_\udfff",
                        "type": "function",
                        "function": {"name": "rm\ud800", "arguments": "{}"},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {
                            "name": "boom",
                            "arguments": '{"message": "\\ud800"}',
                        },
                    },
                ],
            }
        )
        calls = openai.parse_calls(json.loads(body))
        assert calls[0].name == "rm\ud800"
        target = tmp_path / "audit.jsonl"
        log = AuditLog(JsonLinesAuditSink(target), include_arguments=True)
        dispatcher = Dispatcher(
            registry, interceptors=[log, Authorization(registry)]
        )
        if path == "dispatch":
            results = [dispatcher.dispatch(call) for call in calls]
        else:
            results = [
                asyncio.run(dispatcher.adispatch(call)) for call in calls
            ]
        assert [r.is_error for r in results] == [True, True]
        assert (results[0].error or "").startswith("Unknown tool 'rm\\ud800'")
        text = target.read_bytes().decode("utf-8")  # strict: valid UTF-8
        first, second = (json.loads(line) for line in text.splitlines())
        assert (first["tool"], first["call_id"]) == ("rm\ud800", "call_\udfff")
        assert first["invocation_id"] == results[0].invocation_id
        assert second["arguments"] == {"message": "\ud800"}
        assert second["invocation_id"] == results[1].invocation_id

    def test_json_lines_write_only_valid_json(self, tmp_path: Path) -> None:
        """Whatever the record holds, each line is valid JSON.

        Argument text the dispatcher refuses (NaN, a repeated key) is kept
        as the text the model sent; decoded arguments JSON cannot carry
        (NaN, infinity, an integer too long to print, a key that is not a
        string, a value whose str() raises, a cycle) are written as text.
        """

        class Unprintable:
            def __str__(self) -> str:
                raise RuntimeError

        cycle: list[Any] = []
        cycle.append(cycle)
        target = tmp_path / "audit.jsonl"
        registry = Registry()

        @registry.tool
        def take(data: Any = None) -> str:
            """Accept anything."""
            return "ok"

        dispatcher = Dispatcher(
            registry,
            interceptors=[
                AuditLog(JsonLinesAuditSink(target), include_arguments=True)
            ],
        )
        huge = 10**5000
        dispatcher.dispatch_all(
            [
                ToolCall("take", '{"data": NaN}'),
                ToolCall("take", '{"data": 1, "data": 2}'),
                ToolCall(
                    "take",
                    {
                        "data": [float("nan"), float("-inf"), huge],
                        (1, 2): Unprintable(),
                    },
                ),
                ToolCall("take", {"data": cycle}),
            ]
        )
        lines = target.read_text(encoding="utf-8").splitlines()
        parsed = [
            json.loads(line, parse_constant=pytest.fail) for line in lines
        ]
        assert [p["arguments"] for p in parsed[:2]] == [
            '{"data": NaN}',
            '{"data": 1, "data": 2}',
        ]
        # Interpreters with an int digit limit cannot print it (3.11+).
        printed = (
            f"<int of {huge.bit_length()} bits>"
            if hasattr(sys, "get_int_max_str_digits")
            else huge
        )
        assert parsed[2]["arguments"] == {
            "data": ["nan", "-inf", printed],
            "(1, 2)": "<Unprintable>",
        }
        assert parsed[3]["arguments"] == {"data": ["<cycle>"]}

    def test_logger_sink_escapes_lone_surrogates(
        self, registry: Registry, tmp_path: Path
    ) -> None:
        """A UTF-8 log file gets the line, the surrogate escaped.

        Unescaped, the handler could not encode the message and the
        record would be lost (logging prints "--- Logging error ---").
        """
        target = tmp_path / "audit.log"
        handler = logging.FileHandler(target, encoding="utf-8")
        handler.setFormatter(
            logging.Formatter("%(message)s | %(audit_call_id)s")
        )
        logger = logging.getLogger("test_interceptors.surrogates")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        dispatcher = Dispatcher(registry, interceptors=[AuditLog(logger)])
        try:
            dispatcher.dispatch(ToolCall("rm\ud800", "{}", "c\udfff"))
        finally:
            logger.removeHandler(handler)
            handler.close()
        line = target.read_text(encoding="utf-8")
        assert line.startswith("tool call rm\\ud800: error in ")
        assert "Unknown tool 'rm\\ud800'" in line
        assert line.endswith(" | c\\udfff\n")

    def test_json_lines_to_a_stream(self) -> None:
        """A stream gets the line and stays open; odd values use str()."""
        stream = io.StringIO()
        sink = JsonLinesAuditSink(stream)
        record = attrs.evolve(
            expected(ToolResult(name="a"), ExecutionContext()),
            arguments={"when": FIXED_TIME},
        )
        sink(record)
        sink(record)
        lines = stream.getvalue().splitlines()
        assert len(lines) == 2
        assert json.loads(lines[0])["arguments"] == {
            "when": "2025-06-01 12:30:00+00:00"
        }
        assert not stream.closed
