"""The worker pool that runs sync bodies for asyncio callers (_workers)."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import os
import subprocess
import sys
import textwrap
import threading
import weakref

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from toolctx import ExecutionContext, execution_context, use_context
from toolctx._dispatch.workers import Outcome, WorkerPool, pool, submit


T = TypeVar("T")

TIMEOUT = 30.0
_VAR: contextvars.ContextVar[str] = contextvars.ContextVar(
    "test_workers.var", default="unset"
)


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main()`` in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(main(), TIMEOUT)

    return asyncio.run(bounded())


class Blocker:
    """A body that blocks until released; counts who runs it, and where."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.running = 0
        self.peak = 0
        self.entered = 0
        self.threads: set[threading.Thread] = set()
        self._cond = threading.Condition()

    def __call__(self) -> str:
        with self._cond:
            self.running += 1
            self.entered += 1
            self.peak = max(self.peak, self.running)
            self.threads.add(threading.current_thread())
            self._cond.notify_all()
        try:
            if not self.release.wait(TIMEOUT):
                raise TimeoutError("the test never released the body")
            return threading.current_thread().name
        finally:
            with self._cond:
                self.running -= 1

    def wait_entered(self, count: int) -> None:
        """Block until *count* calls have started (bounded)."""
        with self._cond:
            started = self._cond.wait_for(
                lambda: self.entered >= count, TIMEOUT
            )
        assert started, f"{self.entered} of {count} bodies started"


@pytest.fixture(name="blocker")
def _blocker() -> Iterator[Blocker]:
    blocker = Blocker()
    yield blocker
    blocker.release.set()  # never leave a worker blocked


class CustomInterrupt(BaseException):
    """A BaseException of the tool's own, like KeyboardInterrupt."""


class TestOutcomes:
    """What the body returns or raises comes back as a value."""

    def test_a_value_comes_back_as_true_and_the_value(self) -> None:
        """submit() settles its future with (True, value)."""

        async def main() -> Outcome:
            return await submit(lambda: 6 * 7)

        assert run(main) == (True, 42)

    @pytest.mark.parametrize(
        "exc",
        [
            ValueError("bad input"),
            StopIteration("done"),
            asyncio.CancelledError("the tool's own"),
            SystemExit(3),
            KeyboardInterrupt(),
            GeneratorExit(),
            CustomInterrupt("stop"),
        ],
        ids=lambda exc: type(exc).__name__,
    )
    def test_whatever_the_body_raises_comes_back_as_false_and_it(
        self, exc: BaseException
    ) -> None:
        """Every exception, BaseException included, is an outcome.

        The future holds a result, never an exception: a StopIteration
        could not cross the await, and the body's CancelledError does not
        cancel the awaiting task.
        """

        def body() -> None:
            raise exc

        async def main() -> tuple[Outcome, bool]:
            future = submit(body)
            outcome = await future
            return outcome, future.exception() is None

        (ok, value), no_exception = run(main)
        assert ok is False
        assert value is exc
        assert no_exception

    def test_submit_needs_a_running_loop(self) -> None:
        """Called outside a running event loop, submit() says so."""
        with pytest.raises(RuntimeError, match="no running event loop"):
            submit(lambda: None)

    def test_bad_settings_are_refused_with_what_to_pass(self) -> None:
        """A pool needs at least one worker and a positive idle timeout."""
        with pytest.raises(ValueError, match="max_workers must be at least"):
            WorkerPool(max_workers=0)
        with pytest.raises(ValueError, match="idle_timeout must be above 0"):
            WorkerPool(idle_timeout=0)


class TestContext:
    """The body runs in a copy of the caller's context."""

    def test_the_body_sees_the_callers_context_and_keeps_its_changes(
        self,
    ) -> None:
        """The body reads what the caller bound; what it binds stays put.

        Neither the caller nor the next body run by the same worker
        thread sees the body's changes.
        """
        one = WorkerPool(max_workers=1, idle_timeout=1.0)

        def body() -> tuple[str | None, str, str]:
            seen = (
                execution_context().user_id,
                _VAR.get(),
                threading.current_thread().name,
            )
            _VAR.set("set by the body")
            return seen

        def next_body() -> tuple[str, str]:
            return _VAR.get(), threading.current_thread().name

        async def main() -> tuple[Outcome, str, Outcome]:
            with use_context(ExecutionContext(user_id="ada")):
                _VAR.set("the caller's")
                first = await one.submit(body)
                after = _VAR.get()
            second = await _in_fresh_context(one, next_body)
            return first, after, second

        first, after, second = run(main)
        assert first[0] is True
        assert first[1][:2] == ("ada", "the caller's")
        assert after == "the caller's"
        assert second == (True, ("unset", first[1][2]))

    def test_the_context_is_copied_when_submit_is_called(
        self, blocker: Blocker
    ) -> None:
        """A change the caller makes after submit() is not seen."""

        def body() -> str:
            blocker()
            return _VAR.get()

        async def main() -> Outcome:
            _VAR.set("at submit")
            future = submit(body)
            _VAR.set("after submit")
            blocker.wait_entered(1)
            blocker.release.set()
            return await future

        assert run(main) == (True, "at submit")


async def _awaiting(future: Awaitable[T]) -> T:
    """Await *future* in a task of its own."""
    return await future


async def _in_fresh_context(
    one: WorkerPool, body: Callable[[], object]
) -> Outcome:
    """Submit *body* from a context where _VAR was never set."""
    return await contextvars.Context().run(one.submit, body)


class TestBounds:
    """Blocking bodies get workers of their own, up to max_workers."""

    def test_a_blocking_body_does_not_hold_up_others(
        self, blocker: Blocker
    ) -> None:
        """While one body blocks, another starts a worker and finishes."""
        pool = WorkerPool(max_workers=4, idle_timeout=1.0)

        async def main() -> tuple[Outcome, Outcome]:
            blocked = pool.submit(blocker)
            blocker.wait_entered(1)
            free = await pool.submit(lambda: "not held up")
            blocker.release.set()
            return free, await blocked

        free, blocked = run(main)
        assert free == (True, "not held up")
        assert blocked[0] is True

    def test_more_blocking_bodies_than_workers_queue_and_all_finish(
        self, blocker: Blocker
    ) -> None:
        """Never more than max_workers threads; the rest waits its turn."""
        pool = WorkerPool(max_workers=3, idle_timeout=1.0)

        async def main() -> list[Outcome]:
            futures = [pool.submit(blocker) for _ in range(10)]
            blocker.wait_entered(3)
            assert pool.threads == 3
            blocker.release.set()
            return list(await asyncio.gather(*futures))

        outcomes = run(main)
        assert [ok for ok, _ in outcomes] == [True] * 10
        assert blocker.peak == 3
        assert len(blocker.threads) == 3
        assert pool.threads <= 3

    def test_queued_work_runs_first_in_first_out(
        self, blocker: Blocker
    ) -> None:
        """Work that waits for a free worker runs in the order submitted."""
        pool = WorkerPool(max_workers=1, idle_timeout=1.0)
        order: list[int] = []

        async def main() -> None:
            first = pool.submit(blocker)
            blocker.wait_entered(1)
            queued = [
                pool.submit(lambda i=i: order.append(i)) for i in range(5)
            ]
            blocker.release.set()
            await asyncio.gather(first, *queued)

        run(main)
        assert order == [0, 1, 2, 3, 4]

    def test_a_body_that_submits_in_turn_never_waits_for_itself(
        self,
    ) -> None:
        """A nested submit at max_workers starts a thread: no deadlock.

        The outer body holds the only worker while its own event loop
        waits for the inner body.
        """
        pool = WorkerPool(max_workers=1, idle_timeout=1.0)

        def outer() -> tuple[Outcome, str]:
            async def inner() -> Outcome:
                return await asyncio.wait_for(
                    pool.submit(lambda: threading.current_thread().name),
                    TIMEOUT,
                )

            return asyncio.run(inner()), threading.current_thread().name

        async def main() -> Outcome:
            return await pool.submit(outer)

        ok, value = run(main)
        assert ok, value
        (inner_ok, inner_thread), outer_thread = value
        assert inner_ok
        assert inner_thread != outer_thread
        assert pool.threads == 2

    def test_sequential_calls_reuse_one_worker(self) -> None:
        """A caller awaiting one call at a time never starts a second thread.

        The worker is free again before the caller sees the outcome.
        """
        pool = WorkerPool(max_workers=8, idle_timeout=5.0)

        async def main() -> set[Any]:
            names = set()
            for _ in range(200):
                _, name = await pool.submit(
                    lambda: threading.current_thread().name
                )
                names.add(name)
            return names

        names = run(main)
        assert len(names) == 1
        assert pool.threads == 1

    def test_an_idle_worker_keeps_nothing_of_the_call_alive(self) -> None:
        """Once the caller drops it, the body and its value can be freed."""
        pool = WorkerPool(max_workers=1, idle_timeout=5.0)

        class Value:
            """A result that can be weakly referenced."""

        class Body:
            """A body that can be weakly referenced."""

            def __call__(self) -> Value:
                return Value()

        async def main() -> tuple[weakref.ref[Body], weakref.ref[Value]]:
            body = Body()
            ok, value = await pool.submit(body)
            assert ok
            return weakref.ref(body), weakref.ref(value)

        body_ref, value_ref = run(main)
        gc.collect()
        assert pool.threads == 1  # idle, not ended
        assert body_ref() is None
        assert value_ref() is None

    def test_the_default_pool_runs_named_daemon_threads(self) -> None:
        """Workers are daemon threads named toolctx-worker-N, capped."""

        def body() -> tuple[str, bool]:
            thread = threading.current_thread()
            return thread.name, thread.daemon

        async def main() -> Outcome:
            return await submit(body)

        ok, (name, daemon) = run(main)
        assert ok
        assert name.startswith("toolctx-worker-")
        assert name.removeprefix("toolctx-worker-").isdigit()
        assert daemon
        assert 1 <= pool.threads <= pool.max_workers <= 32


class TestIdle:
    """Threads of a burst do not stay forever."""

    def test_idle_workers_exit_and_new_work_starts_one_again(
        self, blocker: Blocker
    ) -> None:
        """After idle_timeout without work, every thread has ended.

        The reaper thread that ends them ends too, once none is left.
        """
        pool = WorkerPool(max_workers=3, idle_timeout=0.05)

        async def burst() -> None:
            futures = [pool.submit(blocker) for _ in range(3)]
            blocker.wait_entered(3)
            blocker.release.set()
            await asyncio.gather(*futures)

        run(burst)
        assert len(blocker.threads) == 3
        # The pool's first worker started its reaper, of the same number.
        first = min(int(t.name.rpartition("-")[2]) for t in blocker.threads)
        reapers = [
            t
            for t in threading.enumerate()
            if t.name == f"toolctx-reaper-{first}"
        ]
        for thread in [*blocker.threads, *reapers]:
            thread.join(TIMEOUT)
            assert not thread.is_alive(), f"{thread.name} did not exit"
        assert pool.threads == 0

        async def again() -> Outcome:
            return await pool.submit(lambda: "again")

        assert run(again) == (True, "again")
        assert pool.threads == 1

    def test_a_steady_trickle_lets_the_rest_of_a_burst_exit(
        self, blocker: Blocker
    ) -> None:
        """The newest idle worker takes the next call; the others exit."""
        pool = WorkerPool(max_workers=4, idle_timeout=0.2)

        async def main() -> set[str]:
            futures = [pool.submit(blocker) for _ in range(4)]
            blocker.wait_entered(4)
            blocker.release.set()
            await asyncio.gather(*futures)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + TIMEOUT
            names = set()
            while pool.threads > 1 and loop.time() < deadline:
                _, name = await pool.submit(
                    lambda: threading.current_thread().name
                )
                names.add(name)
                await asyncio.sleep(0.01)
            return names

        names = run(main)
        assert pool.threads <= 1
        assert len(names) <= 1


class TestCancelledAndClosed:
    """A caller that gives up, or a loop that is gone, gets no error."""

    def test_a_cancelled_caller_never_has_its_future_settled(
        self, blocker: Blocker, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The body runs on; its outcome is dropped, nothing is logged.

        Setting the result of a cancelled future would raise
        InvalidStateError in the loop's callback.
        """
        pool = WorkerPool(max_workers=1, idle_timeout=1.0)
        errors: list[dict[str, Any]] = []

        async def main() -> tuple[bool, Outcome]:
            loop = asyncio.get_running_loop()
            loop.set_exception_handler(lambda _, ctx: errors.append(ctx))
            future = pool.submit(blocker)
            waiter = asyncio.create_task(_awaiting(future))
            await asyncio.sleep(0)  # the task now awaits the future
            blocker.wait_entered(1)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            blocker.release.set()
            # One worker: this runs after the first outcome was sent back,
            # and the loop runs callbacks in order.
            after = await pool.submit(lambda: "after")
            await asyncio.sleep(0)
            return future.cancelled(), after

        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            cancelled, after = run(main)
        assert cancelled
        assert after == (True, "after")
        assert errors == []
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

    def test_a_body_cancelled_while_it_waits_for_a_worker_never_runs(
        self, blocker: Blocker
    ) -> None:
        """As with run_in_executor: cancelled before it starts, it is skipped.

        A tool whose caller gave up (a timeout, a cancelled turn) before
        any worker was free must not act later.
        """
        pool = WorkerPool(max_workers=1, idle_timeout=1.0)
        ran: list[str] = []

        async def main() -> tuple[bool, Outcome]:
            first = pool.submit(blocker)
            blocker.wait_entered(1)
            queued = pool.submit(lambda: ran.append("queued"))
            waiter = asyncio.create_task(_awaiting(queued))
            await asyncio.sleep(0)  # the task now awaits the future
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            blocker.release.set()
            await first
            # One worker, first in first out: the queued body's turn has
            # passed once this one has run.
            after = await pool.submit(lambda: ran.append("after"))
            return queued.cancelled(), after

        cancelled, after = run(main)
        assert cancelled
        assert after == (True, None)
        assert ran == ["after"]

    @pytest.mark.parametrize("how", ["task cancelled", "future abandoned"])
    def test_a_loop_closed_while_the_body_runs_gets_no_error_anywhere(
        self,
        how: str,
        blocker: Blocker,
        capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """asyncio.run ends while the body blocks: nothing breaks.

        The outcome is dropped (the loop is closed), nothing reaches
        stderr, a log or threading.excepthook, and the worker serves
        the next loop.
        """
        pool = WorkerPool(max_workers=1, idle_timeout=5.0)
        hooked: list[threading.ExceptHookArgs] = []
        monkeypatch.setattr(threading, "excepthook", hooked.append)

        tasks: list[asyncio.Task[Outcome]] = []

        futures: list[asyncio.Future[Outcome]] = []

        async def ends_early() -> None:
            futures.append(pool.submit(blocker))
            if how == "task cancelled":
                # asyncio.run cancels the task that awaits the future.
                tasks.append(asyncio.create_task(_awaiting(futures[0])))
                await asyncio.sleep(0)
            # else: the future is still pending when the loop closes
            blocker.wait_entered(1)

        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            asyncio.run(ends_early())
            blocker.release.set()

            async def next_loop() -> Outcome:
                return await pool.submit(lambda: "next")

            assert run(next_loop) == (True, "next")
        assert futures[0].cancelled() is (how == "task cancelled")
        assert hooked == []
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert capfd.readouterr().err == ""


class TestProcess:
    """Interpreter exit and fork."""

    def test_the_interpreter_exits_while_a_body_blocks(self) -> None:
        """A body that never returns does not keep the process alive."""
        script = """
            import asyncio, threading
            from toolctx._dispatch import workers as _workers

            started = threading.Event()

            def forever():
                started.set()
                threading.Event().wait()

            async def main():
                _workers.submit(forever)
                assert started.wait(30)

            asyncio.run(main())
            print("main done")
        """
        done = _run_script(script)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "main done\n"
        assert done.stderr == ""

    @pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
    def test_a_forked_child_starts_with_an_empty_pool(self) -> None:
        """In the child, the parent's workers (idle or busy) do not count.

        At the fork the pool is full: one worker idle, one blocked. The
        child's call starts a thread of its own and completes.
        """
        script = """
            import asyncio, os, threading, warnings
            from toolctx._dispatch import workers as _workers

            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+
            pool = _workers.WorkerPool(max_workers=2)
            gate = threading.Event()
            entered = threading.Event()

            def blocked():
                entered.set()
                gate.wait(30)

            async def parent():
                first = pool.submit(blocked)
                assert entered.wait(30)
                await pool.submit(lambda: None)  # a second worker, now idle
                return first

            asyncio.run(parent())
            assert pool.threads == 2
            pid = os.fork()
            if pid == 0:
                async def child():
                    return await asyncio.wait_for(
                        pool.submit(os.getpid), 10
                    )
                ok = False
                try:
                    ok = asyncio.run(child()) == (True, os.getpid())
                    ok = ok and pool.threads == 1
                finally:
                    os._exit(0 if ok else 1)
            gate.set()
            _, status = os.waitpid(pid, 0)
            print("child exit code", os.waitstatus_to_exitcode(status))
        """
        done = _run_script(script)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "child exit code 0\n", done.stderr


def _run_script(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


class TestStress:
    """Many loops in many threads share one pool."""

    def test_hundreds_of_calls_from_loops_in_several_threads(self) -> None:
        """Every call gets its own outcome, with its own context."""
        pool = WorkerPool(max_workers=4, idle_timeout=1.0)
        loops, calls = 6, 100
        results: dict[int, list[Outcome]] = {}
        failures: list[BaseException] = []

        def body() -> str:
            value = _VAR.get()
            if value.endswith("7"):
                raise ValueError(value)
            return value

        async def one(tag: str) -> Outcome:
            _VAR.set(tag)
            await asyncio.sleep(0)
            return await pool.submit(body)

        def in_thread(index: int) -> None:
            async def main() -> list[Outcome]:
                return list(
                    await asyncio.gather(
                        *(one(f"{index}-{i}") for i in range(calls))
                    )
                )

            try:
                results[index] = run(main)
            except BaseException as exc:
                failures.append(exc)

        threads = [
            threading.Thread(target=in_thread, args=(i,)) for i in range(loops)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
            assert not thread.is_alive(), "a loop did not finish in time"
        assert failures == []
        for index in range(loops):
            for i, (ok, value) in enumerate(results[index]):
                tag = f"{index}-{i}"
                if tag.endswith("7"):
                    assert not ok
                    assert isinstance(value, ValueError)
                    assert str(value) == tag
                else:
                    assert (ok, value) == (True, tag)
        assert pool.threads <= 4
