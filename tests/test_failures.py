"""How failed calls are reported, to the model and to the host (#19).

A ``SystemExit`` raised while the arguments are checked is a bad
argument (#19.7); a timed-out call tells the truth about whether it may
still be running (#19.6); a crashed process-pool worker is replaced and
the call that died is reported as such (#19.8); and every failed call is
logged once, on the ``toolctx`` logger, whichever path ran it (#19,
"Also").
"""

import argparse
import asyncio
import dataclasses
import logging
import multiprocessing
import os
import threading
import time

from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import attrs
import pytest

from toolctx import (
    Dispatcher,
    Registry,
    ToolArgumentsError,
    ToolCall,
    ToolResult,
)
from toolctx.exceptions import ToolTimeoutError


BOUND = 30.0  # seconds before a call that should return is called a hang


def _bounded(work: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(work, BOUND))


async def _drain(items: Any) -> list[Any]:
    return [item async for item in items]


Runner = Callable[[Dispatcher, ToolCall], ToolResult]

RUNNERS: dict[str, Runner] = {
    "dispatch": lambda d, call: d.dispatch(call),
    "dispatch_all": lambda d, call: d.dispatch_all([call])[0],
    "adispatch": lambda d, call: _bounded(d.adispatch(call)),
    "adispatch_all": lambda d, call: _bounded(d.adispatch_all([call]))[0],
    "stream": lambda d, call: list(d.stream(call))[-1],
    "astream": lambda d, call: _bounded(_drain(d.astream(call)))[-1],
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(request: pytest.FixtureRequest) -> Runner:
    """Each public way to run one call."""
    return RUNNERS[request.param]


# -- #19.7: SystemExit while checking the arguments ----------------------------


def _exit_like_argparse(text: str) -> None:
    """What argparse does with a bad value: print usage, SystemExit(2)."""
    parser = argparse.ArgumentParser(prog="when", exit_on_error=False)
    parser.add_argument("n", type=int)
    try:
        parser.parse_args([text])
    except argparse.ArgumentError:
        raise SystemExit(2) from None


@dataclasses.dataclass
class Window:
    """A dataclass whose ``__post_init__`` exits on a bad value."""

    spec: str

    def __post_init__(self) -> None:
        _exit_like_argparse(self.spec)


@attrs.define
class Slot:
    """An attrs class whose validator exits on a bad value."""

    spec: str = attrs.field()

    @spec.validator
    def _check(self, _: object, value: str) -> None:
        _exit_like_argparse(value)


def _exiting_registry() -> Registry:
    pydantic = pytest.importorskip("pydantic")

    class Period(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        """A pydantic model whose validator exits on a bad value."""

        spec: str

        @pydantic.field_validator("spec")
        @classmethod
        def _check(cls, value: str) -> str:
            _exit_like_argparse(value)
            return value

    registry = Registry()

    @registry.tool
    def by_model(period: Period) -> str:
        """Take a pydantic model."""
        return period.spec

    @registry.tool
    def by_dataclass(window: Window) -> str:
        """Take a dataclass."""
        return window.spec

    @registry.tool
    def by_attrs(slot: Slot) -> str:
        """Take an attrs class."""
        return slot.spec

    return registry


EXITING = {
    "pydantic validator": ("by_model", "period"),
    "dataclass __post_init__": ("by_dataclass", "window"),
    "attrs validator": ("by_attrs", "slot"),
}


class TestSystemExitInArgumentChecks:
    """A validator's SystemExit is an argument error like any other."""

    @pytest.mark.parametrize("kind", sorted(EXITING))
    def test_is_an_argument_error_naming_the_argument(self, run, kind):
        """The call becomes a ToolArgumentsError result naming the argument, on every path; a good value still runs."""
        name, argument = EXITING[kind]
        dispatcher = Dispatcher(_exiting_registry())

        bad = run(dispatcher, ToolCall(name, {argument: {"spec": "x"}}))
        good = run(dispatcher, ToolCall(name, {argument: {"spec": "7"}}))

        assert bad.is_error
        assert isinstance(bad.exception, ToolArgumentsError)
        assert [e.path for e in bad.exception.errors] == [argument]
        assert f"{argument}: invalid value (SystemExit: 2)" in (
            bad.error or ""
        )
        assert good.output == "7"

    def test_adispatch_all_keeps_the_other_results(self):
        """One call whose validator exits does not cost the batch the other calls' results."""
        dispatcher = Dispatcher(_exiting_registry())
        calls = [
            ToolCall("by_dataclass", {"window": {"spec": "1"}}),
            ToolCall("by_attrs", {"slot": {"spec": "x"}}),
            ToolCall("by_dataclass", {"window": {"spec": "3"}}),
        ]

        results = _bounded(dispatcher.adispatch_all(calls))

        assert [r.output for r in results] == ["1", None, "3"]
        assert isinstance(results[1].exception, ToolArgumentsError)

    def test_keyboard_interrupt_still_propagates(self):
        """KeyboardInterrupt in a validator is not an argument error: it stops the host."""
        registry = Registry()

        @dataclasses.dataclass
        class Stop:
            spec: str

            def __post_init__(self) -> None:
                raise KeyboardInterrupt

        @registry.tool
        def stop(s: Stop) -> str:
            """Never runs."""
            return s.spec

        with pytest.raises(KeyboardInterrupt):
            Dispatcher(registry).dispatch(
                ToolCall("stop", {"s": {"spec": ""}})
            )

    def test_mcp_answers_with_an_error_result(self):
        """Over MCP the call is an isError result naming the argument, not a JSON-RPC -32603."""
        pytest.importorskip("mcp")
        from tests.test_mcp_server import call, text_of

        from toolctx.mcp import create_server

        server = create_server(Dispatcher(_exiting_registry()))

        result = call(server, "by_model", {"period": {"spec": "x"}})

        assert result.is_error is True
        assert "period: invalid value (SystemExit: 2)" in text_of(result)


# -- #19 "Also": every failed call is logged once ------------------------------

SECRET_SCOPE = "scope-secret-4711"


class Principal:
    """A scope whose repr would leak a secret if it were ever logged."""

    def __repr__(self) -> str:
        return f"Principal({SECRET_SCOPE})"


def _logging_registry() -> Registry:
    registry = Registry()

    @registry.tool
    def fine(n: int) -> int:
        """Work."""
        return n

    @registry.tool
    def broken(n: int) -> int:
        """Fail."""
        msg = f"disk {n} is gone"
        raise OSError(msg)

    @registry.tool
    def halfway(n: int) -> Iterator[int]:
        """Stream one chunk, then fail."""
        yield n
        msg = f"disk {n} is gone"
        raise OSError(msg)

    @registry.tool(needs_approval=True)
    def guarded(n: int) -> int:
        """Fail once a person approved it."""
        msg = f"disk {n} is gone"
        raise OSError(msg)

    return registry


def _resume(d: Dispatcher, call: ToolCall) -> ToolResult:
    held = d.dispatch(call)
    assert held.approval is not None
    return d.resume(held.approval, approved=True)


def _aresume(d: Dispatcher, call: ToolCall) -> ToolResult:
    held = d.dispatch(call)
    assert held.approval is not None
    result: ToolResult = _bounded(d.aresume(held.approval, approved=True))
    return result


LOGGED_PATHS: dict[str, tuple[str, Runner]] = {
    **{name: ("broken", runner) for name, runner in RUNNERS.items()},
    "stream of a generator": ("halfway", RUNNERS["stream"]),
    "astream of a generator": ("halfway", RUNNERS["astream"]),
    "resume": ("guarded", _resume),
    "aresume": ("guarded", _aresume),
}


def _toolctx_records(caplog: pytest.LogCaptureFixture) -> list[Any]:
    return [r for r in caplog.records if r.name == "toolctx"]


class TestFailedCallsAreLoggedOnce:
    """A plain Dispatcher logs every failed call once, with its ids."""

    @pytest.mark.parametrize("path", sorted(LOGGED_PATHS))
    @pytest.mark.parametrize("detail", [True, False], ids=["detail", "bare"])
    def test_a_tool_exception_is_logged_with_its_traceback(
        self, caplog, path, detail
    ):
        """One ERROR record on "toolctx" carries the exception and the call's ids, on every path, whether or not the model sees the exception's text."""
        name, run = LOGGED_PATHS[path]
        dispatcher = Dispatcher(
            _logging_registry(), include_exception_messages=detail
        )

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = run(dispatcher, ToolCall(name, {"n": 7}, "call-7"))
        [record] = _toolctx_records(caplog)

        assert result.is_error
        assert record.levelno == logging.ERROR
        assert isinstance(record.exc_info[1], OSError)
        assert "disk 7 is gone" in caplog.text
        assert "Traceback" in caplog.text
        message = record.getMessage()
        assert f"'{name}'" in message
        assert "call id call-7" in message
        assert f"invocation {result.invocation_id}" in message
        assert record.toolctx_tool_name == name
        assert record.toolctx_tool_call_id == "call-7"
        assert record.toolctx_invocation_id == result.invocation_id

    @pytest.mark.parametrize("path", sorted(RUNNERS))
    def test_good_and_bad_argument_calls_log_no_traceback(self, caplog, path):
        """A call that works logs nothing; one with bad arguments logs one DEBUG line without a traceback."""
        run = RUNNERS[path]
        dispatcher = Dispatcher(_logging_registry())

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            good = run(dispatcher, ToolCall("fine", {"n": 1}))
            assert _toolctx_records(caplog) == []
            bad = run(dispatcher, ToolCall("fine", {"n": "one"}))
        [record] = _toolctx_records(caplog)

        assert good.output == 1
        assert bad.is_error
        assert record.levelno == logging.DEBUG
        assert record.exc_info is None
        assert "Traceback" not in caplog.text

    @pytest.mark.parametrize("path", ["dispatch", "adispatch"])
    def test_an_executor_call_is_logged_once_by_the_dispatcher(
        self, caplog, path
    ):
        """A call run by an executor is logged once, by the dispatcher that sent it, with the exception that came back (the worker, here in-process, logs nothing)."""
        import remote_tools as rt

        with ThreadPoolExecutor(max_workers=1) as pool:
            dispatcher = Dispatcher(Registry([rt.explode]), executor=pool)
            with caplog.at_level(logging.DEBUG, logger="toolctx"):
                result = RUNNERS[path](
                    dispatcher, ToolCall("explode", {"message": "gone"}, "e")
                )
        [record] = _toolctx_records(caplog)

        assert result.is_error
        assert record.levelno == logging.ERROR
        assert isinstance(record.exc_info[1], ValueError)
        assert record.toolctx_invocation_id == result.invocation_id

    def test_a_failing_approval_check_is_logged(self, caplog):
        """An approval check that raises fails the call, and that failure is logged once with the check's exception."""

        def check(call: ToolCall, context: Any) -> bool:
            msg = "policy store down"
            raise ConnectionError(msg)

        registry = Registry()

        @registry.tool(needs_approval=check)
        def pay(amount: int) -> int:
            """Pay."""
            return amount

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = Dispatcher(registry).dispatch(
                ToolCall("pay", {"amount": 1})
            )
        [record] = _toolctx_records(caplog)

        assert result.is_error
        assert record.levelno == logging.ERROR
        assert isinstance(record.exc_info[1], ConnectionError)

    def test_the_context_filter_sees_the_failed_call(self, caplog):
        """A ContextLogFilter on the handler gets the failed call's own ids and session, not the caller's (none)."""
        from toolctx import ExecutionContext
        from toolctx.interceptors import ContextLogFilter

        dispatcher = Dispatcher(_logging_registry())
        template = ExecutionContext(session_id="s-1", user_id="ada")
        caplog.handler.addFilter(ContextLogFilter())
        try:
            with caplog.at_level(logging.ERROR, logger="toolctx"):
                result = dispatcher.dispatch(
                    ToolCall("broken", {"n": 1}, "c-1"), template
                )
        finally:
            caplog.handler.filters.clear()
        [record] = _toolctx_records(caplog)

        assert record.toolctx_invocation_id == result.invocation_id
        assert record.toolctx_session_id == "s-1"
        assert record.toolctx_user_id == "ada"

    def test_the_scope_is_never_logged(self, caplog):
        """Nothing of the scope reaches the log record of a failed call."""
        from toolctx import ExecutionContext

        dispatcher = Dispatcher(_logging_registry())
        template = ExecutionContext(scope=Principal())

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            dispatcher.dispatch(ToolCall("broken", {"n": 1}), template)
        [record] = _toolctx_records(caplog)

        assert SECRET_SCOPE not in caplog.text
        assert SECRET_SCOPE not in repr(vars(record))

    def test_a_denied_call_is_logged_at_info(self, caplog):
        """An interceptor's denial is logged once, at INFO, without a traceback."""
        from toolctx import ToolDenied

        class No:
            """Deny every call."""

            def before(self, call: ToolCall, context: Any) -> Any:
                raise ToolDenied("not today")

            def after(self, call: ToolCall, context: Any, result: Any) -> Any:
                return result

        dispatcher = Dispatcher(_logging_registry(), interceptors=[No()])

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = dispatcher.dispatch(ToolCall("fine", {"n": 1}))
        [record] = _toolctx_records(caplog)

        assert result.is_error
        assert record.levelno == logging.INFO
        assert record.exc_info is None
        assert "not today" in record.getMessage()

    def test_mcp_logs_a_failed_call_once(self, caplog):
        """Over MCP a failed call is logged once (by the dispatcher), with its traceback; the server adds no second record."""
        pytest.importorskip("mcp")
        from tests.test_mcp_server import call

        from toolctx.mcp import create_server

        server = create_server(Dispatcher(_logging_registry()))

        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = call(server, "broken", {"n": 3})
        records = [r for r in caplog.records if r.name.startswith("toolctx")]

        assert result.is_error is True
        assert len(records) == 1
        assert records[0].levelno == logging.ERROR
        assert isinstance(records[0].exc_info[1], OSError)


# -- #19.6: a timed-out call tells the truth ------------------------------------


def _slow_registry(done: threading.Event) -> Registry:
    registry = Registry()

    @registry.tool(timeout=0.05)
    def send_email(to: str) -> str:
        """A sync tool that outlives its timeout, then takes effect."""
        time.sleep(0.3)
        done.set()
        return f"sent to {to}"

    @registry.tool(timeout=0.05, needs_approval=True)
    def send_approved(to: str) -> str:
        """The same, held for a person first."""
        time.sleep(0.3)
        done.set()
        return f"sent to {to}"

    @registry.tool(timeout=0.05)
    async def polite(to: str) -> str:
        """An async tool that stops when cancelled."""
        await asyncio.sleep(10)
        return to

    @registry.tool(timeout=0.05)
    async def stubborn(to: str) -> str:
        """An async tool that ignores its cancellation."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.to_thread(time.sleep, 0.2)
        return to

    return registry


async def _aresume_first(d: Dispatcher, call: ToolCall) -> ToolResult:
    held = await d.adispatch(call)
    assert held.approval is not None
    return await d.aresume(held.approval, approved=True)


TIMED_PATHS: dict[str, tuple[str, Callable[[Dispatcher, ToolCall], Any]]] = {
    "adispatch": ("send_email", lambda d, c: d.adispatch(c)),
    "adispatch_all": (
        "send_email",
        lambda d, c: _first(d.adispatch_all([c])),
    ),
    "astream": ("send_email", lambda d, c: _last(d.astream(c))),
    "aresume": ("send_approved", _aresume_first),
}


async def _first(work: Awaitable[list[ToolResult]]) -> ToolResult:
    return (await work)[0]


async def _last(items: Any) -> Any:
    return [item async for item in items][-1]


class TestTimeoutsTellTheTruth:
    """A timeout says whether the tool was stopped or may still run."""

    @pytest.mark.parametrize("path", sorted(TIMED_PATHS))
    def test_a_sync_tool_may_still_be_running(self, path):
        """A sync tool's worker thread cannot be stopped: the model reads that it may still be running and not to repeat it blindly, and the host reads may_still_run; the tool does finish."""
        done = threading.Event()
        name, run = TIMED_PATHS[path]
        dispatcher = Dispatcher(_slow_registry(done))

        result = _bounded(run(dispatcher, ToolCall(name, {"to": "ada"})))

        assert result.is_error
        error = result.error or ""
        assert "timed out after 0.05 seconds and may still be running" in error
        assert "Do not repeat this call if it has side effects" in error
        assert "cancelled" not in error
        assert "Try again" not in error
        exc = result.exception
        assert isinstance(exc, ToolTimeoutError)
        assert (exc.may_still_run, exc.started) == (True, True)
        assert (exc.tool_name, exc.timeout) == (name, 0.05)
        assert not done.is_set()
        assert done.wait(BOUND)  # it did run on, and took effect

    def test_an_async_tool_is_stopped(self):
        """An async tool cancelled at its timeout is reported as stopped, not as still running."""
        dispatcher = Dispatcher(_slow_registry(threading.Event()))

        result = _bounded(
            dispatcher.adispatch(ToolCall("polite", {"to": "x"}))
        )

        assert "and was stopped before it finished" in (result.error or "")
        assert isinstance(result.exception, ToolTimeoutError)
        assert result.exception.may_still_run is False

    def test_an_async_tool_that_ignores_cancellation_may_still_run(self):
        """An async tool still running after its cancellation is reported as possibly running."""
        dispatcher = Dispatcher(_slow_registry(threading.Event()))

        async def main() -> ToolResult:
            result = await dispatcher.adispatch(
                ToolCall("stubborn", {"to": "x"})
            )
            await asyncio.sleep(0.3)  # let it end before the loop closes
            return result

        result = _bounded(main())

        assert "may still be running" in (result.error or "")
        assert isinstance(result.exception, ToolTimeoutError)
        assert result.exception.may_still_run is True

    def test_an_executor_call_that_never_started_did_not_run(self):
        """Through an executor, a call that started may still run there, and one still waiting for a worker at its timeout is cancelled and reported as not run."""
        import remote_tools as rt

        registry = Registry([rt.sleepy])
        with ThreadPoolExecutor(max_workers=1) as pool:
            dispatcher = Dispatcher(registry, executor=pool)
            first, second = _bounded(
                dispatcher.adispatch_all(
                    [
                        ToolCall("sleepy", {"seconds": 0.4}),
                        ToolCall("sleepy", {"seconds": 0.4}),
                    ]
                )
            )

        assert "may still be running" in (first.error or "")
        assert isinstance(first.exception, ToolTimeoutError)
        assert first.exception.may_still_run is True
        assert "before it started, and did not run" in (second.error or "")
        assert isinstance(second.exception, ToolTimeoutError)
        assert second.exception.started is False
        assert second.exception.may_still_run is False

    def test_the_error_pickles_whole(self):
        """A ToolTimeoutError crosses a process with its message and fields."""
        import pickle

        exc = ToolTimeoutError(
            "late", tool_name="t", timeout=1.5, may_still_run=True
        )

        copy = pickle.loads(pickle.dumps(exc))

        assert str(copy) == "late"
        assert (copy.tool_name, copy.timeout, copy.may_still_run) == (
            "t",
            1.5,
            True,
        )


# -- #19.8: a crashed process-pool worker --------------------------------------


@pytest.fixture(name="spawn_pool")
def _spawn_pool() -> Iterator[ProcessPoolExecutor]:
    """A one-worker spawned pool, shut down (with any replacement) after."""
    pool = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


CRASH_RUNNERS: dict[str, Runner] = {
    "dispatch": RUNNERS["dispatch"],
    "adispatch": RUNNERS["adispatch"],
}


class TestCrashedWorkers:
    """A process pool whose worker died is replaced; the dead call is told."""

    @pytest.mark.parametrize("path", sorted(CRASH_RUNNERS))
    def test_the_next_call_runs_in_a_new_pool(self, spawn_pool, path):
        """The call whose worker died gets a truthful error (it may have partly run), and the next call succeeds in a pool made like the first."""
        import remote_tools as rt

        run = CRASH_RUNNERS[path]
        dispatcher = Dispatcher(
            Registry([rt.crash_worker, rt.shout]), executor=spawn_pool
        )
        try:
            died = run(dispatcher, ToolCall("crash_worker", {}))
            after = run(dispatcher, ToolCall("shout", {"text": "hi"}))
            again = run(dispatcher, ToolCall("shout", {"text": "yo"}))
        finally:
            fresh = dispatcher.executor
            if fresh is not spawn_pool and fresh is not None:
                fresh.shutdown(wait=True)

        assert died.is_error
        error = died.error or ""
        assert "the worker process running it died" in error
        assert "may have partly run" in error
        assert "Try again" not in error
        assert isinstance(died.exception, BrokenProcessPool)
        assert (after.output, again.output) == ("HI!", "YO!")
        assert isinstance(fresh, ProcessPoolExecutor)
        assert fresh is not spawn_pool
        assert fresh._max_workers == 1
        assert fresh._mp_context.get_start_method() == "spawn"

    def test_a_pool_broken_elsewhere_is_replaced_before_the_call(
        self, spawn_pool
    ):
        """A call sent to a pool that broke before it (nothing of it ran) runs in the new pool."""
        import remote_tools as rt

        crashed = spawn_pool.submit(os._exit, 3)
        with pytest.raises(BrokenProcessPool):
            crashed.result(timeout=BOUND)
        dispatcher = Dispatcher(Registry([rt.shout]), executor=spawn_pool)
        try:
            result = dispatcher.dispatch(ToolCall("shout", {"text": "hi"}))
        finally:
            fresh = dispatcher.executor
            if fresh is not spawn_pool and fresh is not None:
                fresh.shutdown(wait=True)

        assert result.output == "HI!"
        assert fresh is not spawn_pool

    def test_a_pool_toolctx_cannot_rebuild_is_kept(self):
        """A subclass of ProcessPoolExecutor is not replaced: the dead call is told, and later calls say the tool is unavailable."""
        import remote_tools as rt

        class Custom(ProcessPoolExecutor):
            """A pool class toolctx does not know how to rebuild."""

        with Custom(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")
        ) as pool:
            dispatcher = Dispatcher(
                Registry([rt.crash_worker, rt.shout]), executor=pool
            )
            died = dispatcher.dispatch(ToolCall("crash_worker", {}))
            later = dispatcher.dispatch(ToolCall("shout", {"text": "hi"}))

        assert dispatcher.executor is pool
        assert "the worker process running it died" in (died.error or "")
        assert "unavailable" in (died.error or "")
        assert "nothing of the call ran" in (later.error or "")
        assert isinstance(later.exception, BrokenProcessPool)
