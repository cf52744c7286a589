"""Approvals: a call that waits for a person and resumes as the same invocation.

A tool declared ``needs_approval`` (always, or by a check of the call)
runs nothing when dispatched: its arguments are checked, and the result
carries an ``ApprovalRequest`` holding the call, its invocation id and
lineage, and its context without the scope. ``resume`` runs it later (in
this process or another, after a restart) with the same invocation id and
the scope supplied then, or declines it with an error worded for the
model. A request resumes once; a changed tool refuses it.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import approval_tools as at

from doubles import PassThrough
from toolctx import (
    ApprovalRequest,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolResult,
    execution_context,
)
from toolctx.exceptions import (
    ApprovalDenied,
    ApprovalError,
    ContextDataError,
    ToolctxError,
)
from toolctx.interceptors import (
    PERMISSIONS,
    AuditLog,
    Authorization,
    MemoryAuditSink,
)
from toolctx.sessions import (
    SQLiteSessionStore,
    session_from_dict,
    session_to_dict,
)


BANK = at.Bank("acme", "s3cr3t")
MAIN_THREAD = threading.main_thread()
TIMEOUT = 120
KEY = b"k" * 32
SIGNED: dict[str, Any] = {"approval_key": KEY, "approval_lifetime": 600}
"""Dispatchers made with these sign requests alike: any of them resumes."""


class Counting(PassThrough):
    """Counts the interceptor hooks it sees."""

    def __init__(self) -> None:
        self.before_calls: list[str] = []
        self.after_calls: list[str] = []

    def before(self, call: Any, context: ExecutionContext) -> ExecutionContext:
        self.before_calls.append(context.invocation_id)
        return context

    def after(
        self, call: Any, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        self.after_calls.append(context.invocation_id)
        return result


def _registry(ran: list[str] | None = None) -> Registry:
    registry = Registry()
    ran = [] if ran is None else ran

    @registry.tool(needs_approval=True)
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ran.append(to)
        return f"sent to {to} for {execution_context().user_id}"

    @registry.tool(needs_approval=True)
    async def delete_repo(name: str) -> str:
        """Delete a repository (async)."""
        ran.append(name)
        return f"deleted {name}"

    return registry


def _add(a: int, b: int) -> int:
    """Add."""
    return a + b


CALL = ToolCall("send_email", {"to": "ada@example.com", "body": "hi"}, id="c1")
CTX = ExecutionContext(user_id="grace", session_id="s", turn=2, scope=BANK)


class TestPending:
    """Dispatching a call that needs approval runs nothing."""

    def test_the_result_carries_the_request(self) -> None:
        """No tool, no interceptor; the request holds call, ids and context."""
        ran: list[str] = []
        spy = Counting()
        d = Dispatcher(_registry(ran), interceptors=[spy])
        result = d.dispatch(CALL, CTX)
        assert ran == []
        assert spy.before_calls == spy.after_calls == []
        assert (result.is_error, result.output, result.error) == (
            False,
            None,
            None,
        )
        request = result.approval
        assert isinstance(request, ApprovalRequest)
        assert request.invocation_id == result.invocation_id
        assert request.call == ToolCall(
            "send_email", {"to": "ada@example.com", "body": "hi"}, "c1"
        )
        assert request.context["user_id"] == "grace"
        assert request.context["invocation_id"] == result.invocation_id
        assert request.context["tool_call_id"] == "c1"

    def test_every_dispatch_path_holds_the_call(self) -> None:
        """adispatch, dispatch_all, adispatch_all, stream and astream alike."""
        d = Dispatcher(_registry())

        async def astream() -> list[Any]:
            return [item async for item in d.astream(CALL)]

        results = [
            asyncio.run(d.adispatch(CALL)),
            d.dispatch_all([CALL])[0],
            asyncio.run(d.adispatch_all([CALL]))[0],
            *list(d.stream(CALL)),
            *asyncio.run(astream()),
        ]
        assert len(results) == 5
        assert all(
            isinstance(r, ToolResult) and r.approval is not None
            for r in results
        )

    def test_bad_arguments_are_an_ordinary_error_result(self) -> None:
        """A call that could never run is not held: interceptors see it."""
        spy = Counting()
        d = Dispatcher(_registry(), interceptors=[spy])
        result = d.dispatch(ToolCall("send_email", {"to": 3}))
        assert result.is_error
        assert result.approval is None
        assert "body" in (result.error or "")
        assert len(spy.before_calls) == 1

    def test_a_check_decides_per_call(self) -> None:
        """Small transfers run at once; large ones wait."""
        d = Dispatcher(at.registry)
        small = d.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 10}), CTX
        )
        large = d.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), CTX
        )
        assert small.approval is None
        assert small.output["amount"] == 10
        assert large.approval is not None
        assert large.output is None

    def test_a_check_that_raises_fails_the_call(self) -> None:
        """The error names the tool; nothing is held."""
        registry = Registry()

        def broken(call: ToolCall, context: ExecutionContext) -> bool:
            raise RuntimeError("policy service down")

        @registry.tool(needs_approval=broken)
        def pay(amount: int) -> int:
            """Pay."""
            return amount

        result = Dispatcher(registry).dispatch(ToolCall("pay", {"amount": 1}))
        assert result.is_error
        assert "policy service down" in (result.error or "")
        assert result.approval is None

    def test_the_scope_never_reaches_the_request(self) -> None:
        """Neither the request, its JSON, nor a stored session holds the scope."""
        session = Session("s9", user_id="grace", scope=BANK)
        d = Dispatcher(at.registry)
        result = d.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), session
        )
        assert result.approval is not None
        text = json.dumps(result.approval.to_dict()) + json.dumps(
            session_to_dict(session)
        )
        assert "s3cr3t" not in text
        assert "s3cr3t" not in repr(result) + repr(result.approval)

    def test_needs_approval_takes_a_bool_or_a_function(self) -> None:
        """Anything else is a clear TypeError at decoration."""
        with pytest.raises(
            TypeError, match="needs_approval= takes True, False or a function"
        ):
            Registry().tool(needs_approval="yes")(_add)  # type: ignore[call-overload]


class TestResume:
    """Resuming runs the call once, as the same invocation, or declines it."""

    def test_approved_runs_as_the_same_invocation(self) -> None:
        """Same invocation id and call id; interceptors see the call once."""
        ran: list[str] = []
        spy = Counting()
        d = Dispatcher(_registry(ran), interceptors=[spy])
        held = d.dispatch(CALL, CTX)
        assert held.approval is not None
        done = d.resume(held.approval, approved=True)
        assert done.output == "sent to ada@example.com for grace"
        assert done.invocation_id == held.invocation_id
        assert done.call_id == "c1"
        assert ran == ["ada@example.com"]
        assert spy.before_calls == spy.after_calls == [held.invocation_id]

    def test_declined_runs_nothing_and_tells_the_model(self) -> None:
        """An error result with the reason, ApprovalDenied for the host."""
        ran: list[str] = []
        spy = Counting()
        d = Dispatcher(_registry(ran), interceptors=[spy])
        held = d.dispatch(CALL, CTX)
        assert held.approval is not None
        done = d.resume(
            held.approval, approved=False, reason="wrong recipient " * 100
        )
        assert ran == []
        assert spy.before_calls == []
        assert done.is_error
        assert done.invocation_id == held.invocation_id
        assert (done.error or "").startswith(
            "The call to 'send_email' was not approved by a person, so it did not run. "
            "Reason: wrong recipient"
        )
        assert len(done.error or "") < 800
        assert isinstance(done.exception, ApprovalDenied)
        assert done.exception.reason is not None

    def test_async(self) -> None:
        """An async resume runs an async tool, and declines like resume."""
        ran: list[str] = []
        d = Dispatcher(_registry(ran))

        async def main() -> tuple[ToolResult, ToolResult]:
            a = await d.adispatch(ToolCall("delete_repo", {"name": "x"}))
            b = await d.adispatch(ToolCall("delete_repo", {"name": "y"}))
            assert a.approval is not None
            assert b.approval is not None
            return (
                await d.aresume(a.approval, approved=True),
                await d.aresume(b.approval, approved=False),
            )

        yes, no = asyncio.run(main())
        assert yes.output == "deleted x"
        assert no.is_error
        assert ran == ["x"]

    def test_the_scope_comes_from_the_resume(self) -> None:
        """The stored context plus the scope given now."""
        d = Dispatcher(at.registry)
        held = d.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), CTX
        )
        assert held.approval is not None
        done = d.resume(
            held.approval,
            approved=True,
            context=ExecutionContext(scope=at.Bank("acme", "s3cr3t")),
        )
        assert done.output["by"] == "grace"
        assert done.output["secret_seen"] is True

    def test_nested_lineage_survives(self) -> None:
        """A call held inside another call resumes under the same parent."""
        inner = Dispatcher(_registry(), **SIGNED)
        registry = Registry()
        held: list[ToolResult] = []

        @registry.tool
        def outer() -> str:
            """Make a nested call that waits."""
            held.append(inner.dispatch(CALL))
            return "asked"

        parent = Dispatcher(registry).dispatch(ToolCall("outer"), CTX)
        request = held[0].approval
        assert request is not None
        assert request.parent_invocation_id == parent.invocation_id
        seen: list[str | None] = []

        class Lineage(PassThrough):
            def before(
                self, call: Any, context: ExecutionContext
            ) -> ExecutionContext:
                seen.append(context.parent_invocation_id)
                return context

        resumed = Dispatcher(
            inner.registry, interceptors=[Lineage()], **SIGNED
        )
        resumed.resume(request, approved=True)
        assert seen == [parent.invocation_id]

    def test_resuming_twice_is_refused(self) -> None:
        """The second resume raises, whatever the decision; nothing runs again."""
        ran: list[str] = []
        d = Dispatcher(_registry(ran))
        held = d.dispatch(CALL)
        assert held.approval is not None
        d.resume(held.approval, approved=True)
        for approved in (True, False):
            with pytest.raises(ApprovalError, match="resumed already"):
                d.resume(held.approval, approved=approved)
        assert ran == ["ada@example.com"]

    def test_a_changed_tool_refuses_the_request(self) -> None:
        """Another definition under the same name: refused, saying so."""
        registry = _registry()
        d = Dispatcher(registry)
        held = d.dispatch(CALL)
        assert held.approval is not None

        @registry.tool(name="send_email", needs_approval=True, replace=True)
        def send_email_v2(to: str, body: str, cc: str = "") -> str:
            """Send an email, with a copy."""
            return "v2"

        with pytest.raises(
            ApprovalError, match="changed since this call was requested"
        ):
            d.resume(held.approval, approved=True)
        registry.unregister("send_email")
        with pytest.raises(ApprovalError, match="not registered here"):
            d.resume(held.approval, approved=True)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ((None,), "takes the ApprovalRequest"),
            (("request",), "takes the ApprovalRequest"),
        ],
    )
    def test_resume_checks_its_arguments(
        self, args: tuple[Any, ...], message: str
    ) -> None:
        """Wrong types are TypeErrors naming what to pass."""
        with pytest.raises(TypeError, match=message):
            Dispatcher(_registry()).resume(*args, approved=True)

    def test_approved_must_be_a_bool(self) -> None:
        """approved="yes" is refused before anything is claimed."""
        d = Dispatcher(_registry())
        held = d.dispatch(CALL)
        assert held.approval is not None
        with pytest.raises(TypeError, match="approved= must be True or False"):
            d.resume(held.approval, approved="yes")  # type: ignore[arg-type]
        assert d.resume(held.approval, approved=True).output is not None

    def test_audit_links_the_request_and_the_run(self) -> None:
        """Audit: "pending" when held, then the run, by one invocation id."""
        sink = MemoryAuditSink()
        d = Dispatcher(_registry(), interceptors=[AuditLog(sink)])
        held = d.dispatch(CALL, CTX)
        assert held.approval is not None
        d.resume(held.approval, approved=True)
        again = d.dispatch(CALL, CTX)
        assert again.approval is not None
        d.resume(again.approval, approved=False, reason="no")
        assert [
            (r.outcome, r.invocation_id, r.user_id) for r in sink.records
        ] == [
            ("pending", held.invocation_id, "grace"),
            ("ok", held.invocation_id, "grace"),
            ("pending", again.invocation_id, "grace"),
            ("declined", again.invocation_id, "grace"),
        ]

    def test_an_on_approval_hook_that_raises_is_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The call is still held; the other hooks still hear."""
        heard: list[str] = []

        class Broken(PassThrough):
            def on_approval(
                self, call: Any, context: Any, result: Any
            ) -> None:
                raise RuntimeError("hook bug")

        class Listening(PassThrough):
            def on_approval(
                self, call: Any, context: Any, result: Any
            ) -> None:
                heard.append(context.invocation_id)

        d = Dispatcher(_registry(), interceptors=[Broken(), Listening()])
        with caplog.at_level("ERROR", logger="toolctx"):
            held = d.dispatch(CALL)
        assert held.approval is not None
        assert heard == [held.invocation_id]
        assert "hook bug" in caplog.text


class TestConcurrency:
    """Many pending calls resumed at once, from threads and tasks."""

    def test_each_request_runs_once(self) -> None:
        """Threads race to resume the same requests: one wins each."""
        ran: list[str] = []
        d = Dispatcher(_registry(ran))
        requests = []
        for i in range(40):
            held = d.dispatch(
                ToolCall("send_email", {"to": f"u{i}", "body": "b"})
            )
            assert held.approval is not None
            requests.append(held.approval)
        wins: list[str] = []
        refused: list[str] = []
        lock = threading.Lock()

        def resume_all() -> None:
            for request in requests:
                try:
                    result = d.resume(request, approved=True)
                except ApprovalError:
                    with lock:
                        refused.append(request.invocation_id)
                else:
                    with lock:
                        wins.append(result.invocation_id)

        threads = [threading.Thread(target=resume_all) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT)
        assert sorted(wins) == sorted(r.invocation_id for r in requests)
        assert len(refused) == 3 * 40
        assert sorted(ran) == sorted(f"u{i}" for i in range(40))

    def test_tasks(self) -> None:
        """Async resumes from many tasks: each runs once, with its own context."""
        ran: list[str] = []
        d = Dispatcher(_registry(ran))

        async def main() -> list[Any]:
            held = await d.adispatch_all(
                [ToolCall("delete_repo", {"name": f"r{i}"}) for i in range(30)]
            )
            requests = [h.approval for h in held]
            assert all(r is not None for r in requests)
            return await asyncio.gather(
                *(d.aresume(r, approved=True) for r in requests * 2),  # type: ignore[arg-type]
                return_exceptions=True,
            )

        outcomes = asyncio.run(main())
        assert sum(isinstance(o, ToolResult) for o in outcomes) == 30
        assert sum(isinstance(o, ApprovalError) for o in outcomes) == 30
        assert sorted(ran) == sorted(f"r{i}" for i in range(30))


class TestSessions:
    """A session knows what waits, stores it, and resumes it once."""

    def test_pending_calls_wait_in_the_session(self) -> None:
        """Held calls go to session.pending, not to its results."""
        session = Session("s1", user_id="grace", scope=BANK)
        d = Dispatcher(at.registry)
        held = d.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), session
        )
        assert held.approval is not None
        assert session.pending == {held.invocation_id: held.approval}
        assert session.results == []
        done = d.resume(held.approval, approved=True, context=session)
        assert session.pending == {}
        assert session.results == [done]
        assert session.state["last_transfer"] == 5000

    def test_a_stored_session_round_trips_its_pending_calls(
        self, tmp_path: Path
    ) -> None:
        """session_to_dict, JSON and an SQLite file keep the requests equal."""
        session = Session("s2", user_id="grace", scope=BANK)
        held = Dispatcher(at.registry).dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), session
        )
        restored = session_from_dict(
            json.loads(json.dumps(session_to_dict(session)))
        )
        assert restored.pending == session.pending
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            store.save(BANK, session)
            loaded = store.load(BANK, "s2")
        assert loaded is not None
        assert loaded.pending == {held.invocation_id: held.approval}

    def test_a_restored_session_resumes_once(self) -> None:
        """Two processes' worth of dispatchers: the session decides."""
        session = Session("s3", user_id="grace")
        held = Dispatcher(at.registry).dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), session
        )
        assert held.approval is not None
        data = session_to_dict(session)
        first = session_from_dict(data, scope=BANK)
        Dispatcher(at.registry).resume(
            held.approval, approved=True, context=first
        )
        again = session_from_dict(session_to_dict(first), scope=BANK)
        with pytest.raises(
            ApprovalError, match="resumed already and ran; its result is in"
        ):
            Dispatcher(at.registry).resume(
                held.approval, approved=True, context=again
            )

    def test_resume_in_a_new_process(self, tmp_path: Path) -> None:
        """Store the session, resume from it in a subprocess with a new scope."""
        db = tmp_path / "sessions.db"
        session = Session("s4", user_id="grace", scope=BANK)
        held = Dispatcher(at.registry).dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}, id="t1"),
            session,
        )
        assert held.approval is not None
        with SQLiteSessionStore(db) as store:
            store.save(BANK, session)
        script = """
import json, sys
import approval_tools as at
from toolctx import Dispatcher
from toolctx.sessions import SQLiteSessionStore
bank = at.Bank("acme", "s3cr3t")  # rebuilt here: never stored
with SQLiteSessionStore(sys.argv[1]) as store:
    session = store.load(bank, "s4")
    session.scope = bank
    (request,) = session.pending.values()
    result = Dispatcher(at.registry).resume(request, approved=True, context=session)
    store.save(bank, session)
print(json.dumps({"output": result.output, "invocation_id": result.invocation_id,
                  "call_id": result.call_id, "pending": len(session.pending)}))
"""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), env.get("PYTHONPATH", "")]
        )
        proc = subprocess.run(
            [sys.executable, "-c", script, str(db)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["invocation_id"] == held.invocation_id
        assert out["call_id"] == "t1"
        assert out["pending"] == 0
        assert out["output"]["by"] == "grace"
        assert out["output"]["secret_seen"] is True
        assert out["output"]["invocation_id"] == held.invocation_id
        with SQLiteSessionStore(db) as store:
            after = store.load(BANK, "s4")
        assert after is not None
        assert after.pending == {}
        assert after.state["last_transfer"] == 5000


class TestRequestData:
    """ApprovalRequest.to_dict/from_dict: JSON data, checked on the way in."""

    def test_round_trip_through_json(self) -> None:
        """Equal after JSON."""
        held = Dispatcher(_registry()).dispatch(CALL, CTX)
        assert held.approval is not None
        data = json.loads(json.dumps(held.approval.to_dict()))
        assert data["format"] == "toolctx.approval/1"
        assert ApprovalRequest.from_dict(data) == held.approval

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"format": "other"}, "format 'toolctx.approval/1'"),
            ({"call": None}, "'call' must be an object"),
            ({"invocation_id": 3}, "'invocation_id' must be a string"),
            ({"context": []}, "'context' must be an object"),
        ],
    )
    def test_damaged_data_is_refused(
        self, change: dict[str, Any], message: str
    ) -> None:
        """Each damage names its field."""
        held = Dispatcher(_registry()).dispatch(CALL, CTX)
        assert held.approval is not None
        data = {**held.approval.to_dict(), **change}
        with pytest.raises(ContextDataError, match=message):
            ApprovalRequest.from_dict(data)


def test_providers_refuse_a_pending_result() -> None:
    """A held call is never rendered as if it had run."""
    from toolctx.providers import anthropic, openai

    held = Dispatcher(_registry()).dispatch(CALL)
    for render in (
        openai.result_message,
        openai.responses_result_item,
        anthropic.result_block,
    ):
        with pytest.raises(ValueError, match="resume"):
            render(held)


def test_spans_link_the_request_and_the_run() -> None:
    """OpenTelemetry: a tool_approval span, then the run's, by invocation id."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )

    from toolctx.otel import OpenTelemetryInterceptor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        d = Dispatcher(
            _registry(),
            interceptors=[OpenTelemetryInterceptor(tracer_provider=provider)],
        )
        held = d.dispatch(CALL)
        assert held.approval is not None
        d.resume(held.approval, approved=True)
        requested, ran = exporter.get_finished_spans()
        assert requested.name == "tool_approval send_email"
        assert ran.name == "execute_tool send_email"
        assert requested.attributes is not None
        assert ran.attributes is not None
        assert requested.attributes["toolctx.approval"] == "requested"
        assert "gen_ai.operation.name" not in requested.attributes
        assert (
            requested.attributes["toolctx.invocation_id"]
            == ran.attributes["toolctx.invocation_id"]
            == held.invocation_id
        )
    finally:
        provider.shutdown()


# -- issue 19: the gate fails closed -----------------------------------------

PATHS = ["dispatch", "adispatch", "dispatch_all", "adispatch_all"]
STREAMS = ["stream", "astream"]


def _on(path: str, d: Dispatcher, call: ToolCall, context: Any) -> ToolResult:
    """The result of *call* dispatched along *path*."""

    async def astream() -> ToolResult:
        items = [item async for item in d.astream(call, context)]
        return items[-1]  # type: ignore[no-any-return]

    runs = {
        "dispatch": lambda: d.dispatch(call, context),
        "adispatch": lambda: asyncio.run(d.adispatch(call, context)),
        "dispatch_all": lambda: d.dispatch_all([call], context)[0],
        "adispatch_all": lambda: asyncio.run(d.adispatch_all([call], context))[
            0
        ],
        "stream": lambda: list(d.stream(call, context))[-1],
        "astream": lambda: asyncio.run(astream()),
    }
    result = runs[path]()
    assert isinstance(result, ToolResult)
    return result


def _resume(kind: str, d: Dispatcher, request: Any, **kw: Any) -> ToolResult:
    """``resume`` or ``aresume``, by *kind*."""
    if kind == "resume":
        return d.resume(request, **kw)
    return asyncio.run(d.aresume(request, **kw))


def _gated(check: Any, ran: list[str]) -> Registry:
    """A plain tool and a streaming tool, both behind *check*."""
    registry = Registry()

    @registry.tool(needs_approval=check)
    def pay(to: str) -> str:
        """Pay someone."""
        ran.append(to)
        return f"paid {to}"

    @registry.tool(needs_approval=check)
    def feed(to: str) -> Iterator[str]:
        """Stream to someone."""
        ran.append(to)
        yield f"fed {to}"

    return registry


def _unknown_recipients(call: ToolCall, context: ExecutionContext) -> Any:
    """A check returning what it found: a list of unknown recipients."""
    return [r for r in [call.arguments["to"]] if r != "bob"]


def _with_reason(call: ToolCall, context: ExecutionContext) -> Any:
    """``cond and "reason"``: a string when the call must wait."""
    return call.arguments["to"] != "bob" and "unknown recipient"


async def _async_check(call: ToolCall, context: ExecutionContext) -> bool:
    """An async check (e.g. asking a policy service)."""
    await asyncio.sleep(0)
    return call.arguments["to"] != "bob"  # type: ignore[no-any-return]


class TestTheGateFailsClosed:
    """A check's result is a condition; async checks are awaited (#19)."""

    @pytest.mark.parametrize("path", PATHS + STREAMS)
    @pytest.mark.parametrize(
        "check", [_unknown_recipients, _with_reason, _async_check]
    )
    def test_a_truthy_or_async_check_holds_the_call(
        self, path: str, check: Any
    ) -> None:
        """A truthy non-bool or an async check's True holds; bob runs."""
        ran: list[str] = []
        d = Dispatcher(_gated(check, ran))
        for name in ("pay", "feed") if path in STREAMS else ("pay",):
            held = _on(path, d, ToolCall(name, {"to": "eve"}), CTX)
            assert held.approval is not None, (path, name)
            assert not held.is_error
            passed = _on(path, d, ToolCall(name, {"to": "bob"}), CTX)
            assert passed.approval is None
            assert not passed.is_error, passed.error
        assert "eve" not in ran
        assert "bob" in ran

    @pytest.mark.parametrize("path", PATHS + STREAMS)
    def test_a_session_holds_what_the_check_holds(self, path: str) -> None:
        """With a Session too: the held call waits in session.pending."""
        ran: list[str] = []
        d = Dispatcher(_gated(_with_reason, ran))
        session = Session("s-gate", user_id="grace")
        held = _on(path, d, ToolCall("pay", {"to": "eve"}), session)
        assert held.approval is not None
        assert list(session.pending) == [held.invocation_id]
        assert ran == []

    @pytest.mark.parametrize("path", PATHS + STREAMS)
    def test_a_check_that_raises_or_has_no_truth_fails_the_call(
        self, path: str
    ) -> None:
        """Raising (sync or async) or an unreadable truth: nothing runs."""

        class NoTruth:
            def __bool__(self) -> bool:
                raise ValueError("ambiguous")

        async def down(call: ToolCall, context: ExecutionContext) -> bool:
            raise RuntimeError("policy service down")

        for check, text in (
            (lambda call, context: NoTruth(), "ambiguous"),
            (down, "policy service down"),
        ):
            ran: list[str] = []
            d = Dispatcher(_gated(check, ran))
            result = _on(path, d, ToolCall("pay", {"to": "eve"}), CTX)
            assert result.is_error, path
            assert text in (result.error or "")
            assert result.approval is None
            assert ran == []

    def test_a_sync_check_never_blocks_the_event_loop(self) -> None:
        """Three slow sync checks under adispatch_all: the loop keeps ticking."""

        def slow(call: ToolCall, context: ExecutionContext) -> bool:
            time.sleep(0.3)
            return False

        d = Dispatcher(_gated(slow, []))

        async def main() -> float:
            gaps: list[float] = []
            stop = asyncio.Event()

            async def tick() -> None:
                last = time.monotonic()
                while not stop.is_set():
                    await asyncio.sleep(0.01)
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now

            ticker = asyncio.create_task(tick())
            calls = [ToolCall("pay", {"to": f"u{i}"}) for i in range(3)]
            results = await d.adispatch_all(calls)
            assert all(r.output for r in results)
            async for _ in d.astream(ToolCall("feed", {"to": "x"})):
                pass
            await d.adispatch(ToolCall("pay", {"to": "y"}))
            stop.set()
            await ticker
            return max(gaps)

        assert asyncio.run(main()) < 0.2

    def test_a_sync_check_sees_the_callers_context_variables(self) -> None:
        """Run in a worker thread, a check sees what the caller had bound."""
        tenant: contextvars.ContextVar[str] = contextvars.ContextVar("t")
        seen: list[tuple[str, bool]] = []

        def check(call: ToolCall, context: ExecutionContext) -> bool:
            seen.append(
                (tenant.get(), threading.current_thread() is MAIN_THREAD)
            )
            return False

        d = Dispatcher(_gated(check, []))

        async def main() -> None:
            tenant.set("acme")
            await d.adispatch(ToolCall("pay", {"to": "bob"}))

        asyncio.run(main())
        assert seen == [("acme", False)]

    def test_an_async_check_inside_a_running_loop_points_to_adispatch(
        self,
    ) -> None:
        """Sync dispatch cannot await in a running loop: a host error."""
        d = Dispatcher(_gated(_async_check, []))

        async def main() -> None:
            d.dispatch(ToolCall("pay", {"to": "eve"}))

        with pytest.raises(ToolctxError, match="adispatch"):
            asyncio.run(main())

    def test_a_cancelled_async_check_propagates_and_holds_nothing(
        self,
    ) -> None:
        """Cancelling adispatch while its check awaits: nothing held, run."""
        started = threading.Event()
        ran: list[str] = []

        async def waits(call: ToolCall, context: ExecutionContext) -> bool:
            started.set()
            await asyncio.sleep(60)
            return True

        d = Dispatcher(_gated(waits, ran))

        async def main() -> None:
            task = asyncio.create_task(
                d.adispatch(ToolCall("pay", {"to": "eve"}))
            )
            await _until(started.is_set)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        assert ran == []
        assert d._approvals.remembered() == (0, 0)


# -- issue 19: what runs is exactly what was held ----------------------------

RESUMES = ["resume", "aresume"]

PAY_PERMISSION = "payments:send"
ALLOWED = ExecutionContext(
    user_id="grace", session_id="s7", turn=4
).with_value(PERMISSIONS, frozenset({PAY_PERMISSION}))


def _bank(ran: list[dict[str, Any]]) -> Registry:
    """A transfer that needs a person and a permission, and says who ran it."""
    registry = Registry()

    @registry.tool(needs_approval=True, requires=[PAY_PERMISSION])
    def wire(to: str, amount: int) -> dict[str, Any]:
        """Wire money."""
        ctx = execution_context()
        seen = {
            "to": to,
            "amount": amount,
            "user": ctx.user_id,
            "session": ctx.session_id,
            "turn": ctx.turn,
            "channel": ctx.metadata.get("channel"),
            "invocation_id": ctx.invocation_id,
            "call_id": ctx.tool_call_id,
        }
        ran.append(seen)
        return seen

    return registry


def _tamper(data: dict[str, Any], what: str) -> None:
    """Change one thing of a request's JSON, as a hostile review UI might."""
    if what == "amount":
        data["call"]["arguments"]["amount"] = 9_000_000
    elif what == "recipient":
        data["call"]["arguments"]["to"] = "mallory"
    elif what == "user":
        data["context"]["user_id"] = "root"
    elif what == "metadata":
        data["context"]["metadata"] = {"channel": "forged"}
    elif what == "permissions":
        data["context"]["values"]["toolctx.permissions"] = ["*", "admin"]
    elif what == "call id":
        data["call"]["id"] = "c-forged"
    elif what == "parent":
        data["parent_invocation_id"] = "another-parent"
    elif what == "expiry":
        data["expires_at"] = "2999-01-01T00:00:00+00:00"
    else:  # pragma: no cover - a test bug
        raise AssertionError(what)


TAMPERINGS = [
    "amount",
    "recipient",
    "user",
    "metadata",
    "permissions",
    "call id",
    "parent",
    "expiry",
]


def _posted_back(request: ApprovalRequest, what: str) -> ApprovalRequest:
    """*request* through JSON, with *what* changed on the way."""
    data = json.loads(json.dumps(request.to_dict()))
    _tamper(data, what)
    return ApprovalRequest.from_dict(data)


class TestWhatRunsIsWhatWasHeld:
    """resume runs the held call, never the request it is handed (#19)."""

    @pytest.mark.parametrize("kind", RESUMES)
    @pytest.mark.parametrize("what", TAMPERINGS)
    def test_a_changed_request_is_refused_with_its_session(
        self, kind: str, what: str, tmp_path: Path
    ) -> None:
        """Posted back changed, refused: nothing ran, it is still pending."""
        ran: list[dict[str, Any]] = []
        registry = _bank(ran)
        d = Dispatcher(registry, interceptors=[Authorization(registry)])
        session = Session("s7", user_id="grace", values=dict(ALLOWED.values))
        session.turn = 4
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}, id="c1"), session
        )
        assert held.approval is not None
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            store.save(BANK, session)
            loaded = store.load(BANK, "s7")
        assert loaded is not None
        for where in (session, loaded):
            forged = _posted_back(held.approval, what)
            with pytest.raises(ApprovalError, match="Nothing ran"):
                _resume(kind, d, forged, approved=True, context=where)
            assert list(where.pending) == [held.invocation_id]
        assert ran == []
        done = _resume(
            kind,
            d,
            _posted_back_unchanged(held.approval),
            approved=True,
            context=loaded,
        )
        assert done.output["amount"] == 5
        assert ran == [done.output]

    @pytest.mark.parametrize("kind", RESUMES)
    @pytest.mark.parametrize("what", TAMPERINGS)
    def test_a_changed_request_is_refused_without_its_session(
        self, kind: str, what: str
    ) -> None:
        """The dispatcher remembers what it held: a changed copy is refused."""
        ran: list[dict[str, Any]] = []
        registry = _bank(ran)
        d = Dispatcher(registry, interceptors=[Authorization(registry)])
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}, id="c1"), ALLOWED
        )
        assert held.approval is not None
        with pytest.raises(ApprovalError, match="Nothing ran"):
            _resume(
                kind,
                d,
                _posted_back(held.approval, what),
                approved=True,
                context=ALLOWED,
            )
        assert ran == []
        done = _resume(
            kind,
            d,
            _posted_back_unchanged(held.approval),
            approved=True,
            context=ALLOWED,
        )
        assert not done.is_error, done.error
        assert ran == [done.output]

    @pytest.mark.parametrize("kind", RESUMES)
    def test_a_session_runs_its_own_request(self, kind: str) -> None:
        """Even an equal copy: what runs is the object the session holds."""
        ran: list[dict[str, Any]] = []
        d = Dispatcher(_bank(ran))
        session = Session("s7", user_id="grace", values=dict(ALLOWED.values))
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), session
        )
        assert held.approval is not None
        copy = _posted_back_unchanged(held.approval)
        done = _resume(kind, d, copy, approved=True, context=session)
        assert done.output["to"] == "bob"
        assert session.pending == {}

    @pytest.mark.parametrize("kind", RESUMES)
    def test_another_dispatcher_cannot_verify_without_a_key(
        self, kind: str
    ) -> None:
        """Not held here, no session, no signature: refused, saying how."""
        ran: list[dict[str, Any]] = []
        held = Dispatcher(_bank(ran)).dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), ALLOWED
        )
        assert held.approval is not None
        with pytest.raises(ApprovalError, match="approval_key"):
            _resume(
                kind,
                Dispatcher(_bank(ran)),
                held.approval,
                approved=True,
                context=ALLOWED,
            )
        assert ran == []

    @pytest.mark.parametrize("kind", RESUMES)
    @pytest.mark.parametrize("what", TAMPERINGS)
    def test_a_signed_request_resumes_anywhere_unless_changed(
        self, kind: str, what: str
    ) -> None:
        """With one approval_key, another process verifies the signature."""
        ran: list[dict[str, Any]] = []
        held = Dispatcher(_bank(ran), **SIGNED).dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), ALLOWED
        )
        assert held.approval is not None
        assert held.approval.signature is not None
        elsewhere = Dispatcher(_bank(ran), **SIGNED)
        with pytest.raises(ApprovalError, match="Nothing ran"):
            _resume(
                kind,
                elsewhere,
                _posted_back(held.approval, what),
                approved=True,
                context=ALLOWED,
            )
        other_key = Dispatcher(
            _bank(ran), approval_key=b"o" * 32, approval_lifetime=600
        )
        with pytest.raises(ApprovalError, match="another key"):
            _resume(
                kind, other_key, held.approval, approved=True, context=ALLOWED
            )
        assert ran == []
        done = _resume(
            kind,
            elsewhere,
            _posted_back_unchanged(held.approval),
            approved=True,
            context=ALLOWED,
        )
        assert done.output["amount"] == 5
        with pytest.raises(ApprovalError, match="resumed already"):
            _resume(
                kind, elsewhere, held.approval, approved=True, context=ALLOWED
            )
        assert len(ran) == 1

    @pytest.mark.parametrize("signature", [None, "", "é" * 64, "0" * 64])
    def test_a_missing_or_forged_signature_is_refused(
        self, signature: str | None
    ) -> None:
        """Any other signature, non-ASCII text included: ApprovalError."""
        ran: list[dict[str, Any]] = []
        held = Dispatcher(_bank(ran), **SIGNED).dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), ALLOWED
        )
        assert held.approval is not None
        data = held.approval.to_dict()
        data["signature"] = signature
        with pytest.raises(ApprovalError, match="Nothing ran"):
            Dispatcher(_bank(ran), **SIGNED).resume(
                ApprovalRequest.from_dict(data),
                approved=True,
                context=ALLOWED,
            )
        assert ran == []

    def test_a_key_is_long_and_needs_a_lifetime(self) -> None:
        """Short keys and keys without a lifetime are refused at once."""
        with pytest.raises(ValueError, match="at least 16 bytes"):
            Dispatcher(Registry(), approval_key=b"short", approval_lifetime=1)
        with pytest.raises(ValueError, match="needs approval_lifetime"):
            Dispatcher(Registry(), approval_key=KEY)
        with pytest.raises(ValueError, match="positive number of seconds"):
            Dispatcher(Registry(), approval_lifetime=-1)
        assert "k" * 32 not in repr(
            Dispatcher(Registry(), **SIGNED)._approvals
        )


async def _until(done: Any) -> None:
    """Yield to the loop until ``done()``; fail after 10 seconds."""
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.001)


def _posted_back_unchanged(request: ApprovalRequest) -> ApprovalRequest:
    """*request* through JSON, unchanged."""
    return ApprovalRequest.from_dict(json.loads(json.dumps(request.to_dict())))


# -- issue 19: the authority of now ------------------------------------------


class TestTheAuthorityOfNow:
    """Identity is the held call's; authority the host's context now (#19)."""

    @pytest.mark.parametrize("kind", RESUMES)
    def test_a_revoked_permission_is_not_honoured(self, kind: str) -> None:
        """Granted at hold time, revoked since: Authorization denies."""
        ran: list[dict[str, Any]] = []
        registry = _bank(ran)
        d = Dispatcher(registry, interceptors=[Authorization(registry)])
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), ALLOWED
        )
        assert held.approval is not None
        revoked = ExecutionContext(user_id="grace")
        denied = _resume(
            kind, d, held.approval, approved=True, context=revoked
        )
        assert denied.is_error
        assert PAY_PERMISSION in (denied.error or "")
        assert ran == []

    @pytest.mark.parametrize("kind", RESUMES)
    def test_a_revoked_permission_in_a_stored_session(
        self, kind: str, tmp_path: Path
    ) -> None:
        """The session's values now, after a store round trip, decide."""
        ran: list[dict[str, Any]] = []
        registry = _bank(ran)
        d = Dispatcher(registry, interceptors=[Authorization(registry)])
        session = Session("s7", user_id="grace", values=dict(ALLOWED.values))
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), session
        )
        assert held.approval is not None
        session.values.clear()  # revoked
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            store.save(BANK, session)
            loaded = store.load(BANK, "s7")
        assert loaded is not None
        denied = _resume(kind, d, held.approval, approved=True, context=loaded)
        assert denied.is_error
        assert PAY_PERMISSION in (denied.error or "")
        assert loaded.results == [denied]
        assert ran == []

    @pytest.mark.parametrize("kind", RESUMES)
    def test_identity_is_held_authority_is_now(self, kind: str) -> None:
        """Held user, session, turn and ids; metadata of the resume context."""
        ran: list[dict[str, Any]] = []
        d = Dispatcher(_bank(ran))
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}, id="c1"),
            ALLOWED.with_metadata(channel="then"),
        )
        assert held.approval is not None
        now = ExecutionContext(turn=99).with_metadata(channel="now")
        done = _resume(kind, d, held.approval, approved=True, context=now)
        assert done.output == {
            "to": "bob",
            "amount": 5,
            "user": "grace",
            "session": "s7",
            "turn": 4,
            "channel": "now",
            "invocation_id": held.invocation_id,
            "call_id": "c1",
        }

    @pytest.mark.parametrize("kind", RESUMES)
    @pytest.mark.parametrize(
        "context",
        [
            ExecutionContext(user_id="mallory"),
            ExecutionContext(user_id="grace", session_id="other"),
            Session("other", user_id="grace"),
            Session("s7", user_id="mallory"),
        ],
        ids=["user", "session id", "session", "session user"],
    )
    def test_another_user_or_session_is_refused(
        self, kind: str, context: Any
    ) -> None:
        """Nothing ran and nothing was claimed: the right one still resumes."""
        ran: list[dict[str, Any]] = []
        d = Dispatcher(_bank(ran))
        held = d.dispatch(
            ToolCall("wire", {"to": "bob", "amount": 5}), ALLOWED
        )
        assert held.approval is not None
        with pytest.raises(ApprovalError, match="was held for"):
            _resume(kind, d, held.approval, approved=True, context=context)
        assert ran == []
        done = _resume(kind, d, held.approval, approved=True, context=ALLOWED)
        assert done.output["user"] == "grace"


# -- issue 19: claimed, run and recorded as one step -------------------------


class TestOneStep:
    """An interrupted resume is released, or recorded, truthfully (#19)."""

    def test_cancelled_before_the_body_starts_stays_pending(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Aresume cancelled while its sync tool waits for a worker thread."""
        from toolctx._dispatch import workers

        real_submit = workers.submit
        waiting: list[asyncio.Future[Any]] = []

        def busy(body: Any) -> asyncio.Future[Any]:
            """Every worker busy: the body waits, and never starts."""
            waiting.append(asyncio.get_running_loop().create_future())
            return waiting[-1]

        ran: list[str] = []
        d = Dispatcher(_registry(ran))
        session = Session("s-c", user_id="grace")
        held = d.dispatch(CALL, session)
        assert held.approval is not None

        async def cancel_early() -> None:
            monkeypatch.setattr(workers, "submit", busy)
            task = asyncio.create_task(
                d.aresume(
                    held.approval,  # type: ignore[arg-type]
                    approved=True,
                    context=session,
                )
            )
            await _until(lambda: bool(waiting))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            monkeypatch.setattr(workers, "submit", real_submit)

        asyncio.run(cancel_early())
        assert ran == []
        assert list(session.pending) == [held.invocation_id]
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            store.save(BANK, session)
            loaded = store.load(BANK, "s-c")
        assert loaded is not None
        done = d.resume(held.approval, approved=True, context=loaded)
        assert done.output == "sent to ada@example.com for grace"
        assert ran == ["ada@example.com"]

    def test_interrupted_before_the_body_without_a_session(self) -> None:
        """Resume interrupted in an interceptor: the request resumes later."""

        class Interrupt(PassThrough):
            armed = True

            def before(
                self, call: Any, context: ExecutionContext
            ) -> ExecutionContext:
                if self.armed:
                    self.armed = False
                    raise KeyboardInterrupt
                return context

        ran: list[str] = []
        d = Dispatcher(_registry(ran), interceptors=[Interrupt()])
        held = d.dispatch(CALL)
        assert held.approval is not None
        with pytest.raises(KeyboardInterrupt):
            d.resume(held.approval, approved=True)
        assert d.resume(held.approval, approved=True).output is not None
        assert ran == ["ada@example.com"]

    def test_cancelled_while_running_is_recorded(self, tmp_path: Path) -> None:
        """Cancelled once the tool started: a retry hears it may have run."""
        ran: list[str] = []
        registry = Registry()
        started = threading.Event()

        @registry.tool(needs_approval=True)
        async def wipe(name: str) -> str:
            """Wipe something, slowly."""
            ran.append(name)
            started.set()
            await asyncio.sleep(60)
            return "wiped"

        d = Dispatcher(registry)
        session = Session("s-w", user_id="grace")
        held = d.dispatch(ToolCall("wipe", {"name": "db"}), session)
        assert held.approval is not None

        async def cancel_late() -> None:
            task = asyncio.create_task(
                d.aresume(held.approval, approved=True, context=session)  # type: ignore[arg-type]
            )
            await _until(started.is_set)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancel_late())
        assert ran == ["db"]
        assert session.pending == {}
        (recorded,) = session.results
        assert recorded.is_error
        assert "interrupted while it ran" in (recorded.error or "")
        with pytest.raises(ApprovalError, match="interrupted while its tool"):
            d.resume(held.approval, approved=True, context=session)
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            store.save(BANK, session)
            loaded = store.load(BANK, "s-w")
        assert loaded is not None
        with pytest.raises(ApprovalError, match="interrupted while it ran"):
            Dispatcher(registry).resume(
                held.approval, approved=True, context=loaded
            )
        assert ran == ["db"]


# -- issue 19: bounded memory, lifetimes, ids --------------------------------


class TestBounds:
    """Memory stays bounded and fails closed; requests can expire (#19)."""

    def test_resumed_ids_do_not_grow_forever(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Past the bound, a round of hold and resume keeps no more memory."""
        from toolctx._dispatch import approvals

        monkeypatch.setattr(approvals, "MAX_REMEMBERED", 50, raising=False)
        ran: list[str] = []
        d = Dispatcher(_registry(ran))

        def rounds(n: int) -> None:
            for i in range(n):
                held = d.dispatch(
                    ToolCall("send_email", {"to": f"u{i}", "body": "b"})
                )
                d.resume(held.approval, approved=True)  # type: ignore[arg-type]
                # What the tool keeps is the test's, not the dispatcher's.
                ran.clear()

        tracemalloc.start()
        try:
            # Past the bound first, traced, so that what the bounded
            # memory holds is in both snapshots.
            rounds(200)
            before = tracemalloc.take_snapshot()
            rounds(1000)
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        grown = sum(
            stat.size_diff
            for stat in after.compare_to(before, "filename")
            if "toolctx" in str(stat.traceback)
        )
        assert grown < 40_000

    def test_a_forgotten_request_is_refused(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Forgetting fails closed: the first request cannot run again."""
        from toolctx._dispatch import approvals

        monkeypatch.setattr(approvals, "MAX_REMEMBERED", 5)
        ran: list[str] = []
        d = Dispatcher(_registry(ran))
        requests = []
        for i in range(20):
            held = d.dispatch(
                ToolCall("send_email", {"to": f"u{i}", "body": ""})
            )
            assert held.approval is not None
            requests.append(held.approval)
        assert d._approvals.remembered() == (5, 0)
        with pytest.raises(ApprovalError, match="no longer remembered"):
            d.resume(requests[0], approved=True)
        for request in requests[-5:]:
            d.resume(request, approved=True)
        with pytest.raises(ApprovalError):
            d.resume(requests[-5], approved=True)
        assert ran == [f"u{i}" for i in range(15, 20)]

    @pytest.mark.parametrize("kind", RESUMES)
    def test_an_expired_request_is_refused(self, kind: str) -> None:
        """Past its lifetime, approving is refused; declining still works."""
        ran: list[str] = []
        d = Dispatcher(_registry(ran), approval_lifetime=0.05)
        session = Session("s-x", user_id="grace")
        held = d.dispatch(CALL, session)
        assert held.approval is not None
        assert held.approval.expires_at is not None
        time.sleep(0.1)
        with pytest.raises(ApprovalError, match="expired"):
            _resume(kind, d, held.approval, approved=True, context=session)
        assert list(session.pending) == [held.invocation_id]
        no = _resume(kind, d, held.approval, approved=False, context=session)
        assert isinstance(no.exception, ApprovalDenied)
        assert ran == []
        assert session.pending == {}

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"invocation_id": ""}, "32 lowercase hex"),
            ({"invocation_id": "a" * 31 + "\n"}, "32 lowercase hex"),
            ({"invocation_id": "A" * 32}, "32 lowercase hex"),
            ({"parent_invocation_id": ""}, "non-empty single line"),
            ({"parent_invocation_id": "p\nINFO forged"}, "single line"),
            (
                {
                    "call": {
                        "name": "send_email",
                        "arguments": {},
                        "id": "x\ny",
                    }
                },
                "single line",
            ),
            ({"expires_at": "tomorrow"}, "ISO 8601"),
            ({"expires_at": "2999-01-01T00:00:00"}, "with a zone"),
        ],
    )
    def test_ids_are_a_dispatchers_own(
        self, change: dict[str, Any], message: str
    ) -> None:
        """from_dict refuses ids no dispatcher makes, naming the field."""
        held = Dispatcher(_registry()).dispatch(CALL, CTX)
        assert held.approval is not None
        data = {**held.approval.to_dict(), **change}
        with pytest.raises(ContextDataError, match=message):
            ApprovalRequest.from_dict(data)

    def test_the_context_names_the_same_invocation(self) -> None:
        """A request whose context names another invocation is refused."""
        held = Dispatcher(_registry()).dispatch(CALL, CTX)
        assert held.approval is not None
        data = held.approval.to_dict()
        data["context"]["invocation_id"] = "b" * 32
        with pytest.raises(ContextDataError, match="another invocation"):
            ApprovalRequest.from_dict(data)
