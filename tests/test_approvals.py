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
import json
import os
import subprocess
import sys
import threading

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
from toolctx.exceptions import ApprovalDenied, ApprovalError, ContextDataError
from toolctx.interceptors import AuditLog, MemoryAuditSink
from toolctx.sessions import (
    SQLiteSessionStore,
    session_from_dict,
    session_to_dict,
)


BANK = at.Bank("acme", "s3cr3t")
TIMEOUT = 120


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
        inner = Dispatcher(_registry())
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

        resumed = Dispatcher(inner.registry, interceptors=[Lineage()])
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
        with pytest.raises(ApprovalError, match="not pending in session 's3'"):
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
            ({"call": None}, "'call' must be a mapping"),
            ({"invocation_id": 3}, "'invocation_id' must be a string"),
            ({"context": []}, "must be mappings"),
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
