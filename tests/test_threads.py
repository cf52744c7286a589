"""Carrying the context into threads: bind_context and context executors."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading

from collections.abc import Callable, Iterator
from concurrent.futures import (
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
)
from typing import Any

import pytest

from toolctx import (
    ExecutionContext,
    current_context,
    execution_context,
    use_context,
)
from toolctx._context.current import set_current
from toolctx._context.threads import (
    ContextExecutor,
    ContextThreadPoolExecutor,
    bind_context,
)


TIMEOUT = 10.0
_MARK: contextvars.ContextVar[str] = contextvars.ContextVar(
    "test_threads.mark", default="unset"
)


def run_in_thread(target: Callable[[], object]) -> None:
    """Run *target* in a new thread and wait for it, bounded in time."""
    thread = threading.Thread(target=target)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "the thread did not finish in time"


@pytest.fixture(name="ctx")
def _ctx() -> ExecutionContext:
    return ExecutionContext(user_id="ada", session_id="s1")


@pytest.fixture(name="plain_pool")
def _plain_pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool


class TestGroundTruth:
    """Where the standard library carries the context, and where not."""

    def test_bare_thread_loses_the_context(
        self, ctx: ExecutionContext
    ) -> None:
        """threading.Thread runs its target without the starter's context."""
        seen: list[ExecutionContext | None] = []
        with use_context(ctx):
            run_in_thread(lambda: seen.append(current_context()))
        assert seen == [None]

    def test_plain_executor_loses_the_context(
        self, ctx: ExecutionContext, plain_pool: ThreadPoolExecutor
    ) -> None:
        """ThreadPoolExecutor.submit runs the task without the context."""
        with use_context(ctx):
            future = plain_pool.submit(current_context)
        assert future.result(TIMEOUT) is None

    def test_run_in_executor_loses_the_context(
        self, ctx: ExecutionContext
    ) -> None:
        """loop.run_in_executor does not copy the context; to_thread does."""

        async def main() -> tuple[object, object]:
            with use_context(ctx):
                loop = asyncio.get_running_loop()
                plain = await loop.run_in_executor(None, current_context)
                copied = await asyncio.to_thread(current_context)
            return plain, copied

        assert asyncio.run(main()) == (None, ctx)


class TestBindContext:
    """bind_context(fn) runs fn in a copy of the binder's context."""

    def test_thread_target_sees_the_context(
        self, ctx: ExecutionContext
    ) -> None:
        """A bound thread target sees the context it was bound in."""
        seen: list[ExecutionContext] = []
        with use_context(ctx):
            run_in_thread(
                bind_context(lambda: seen.append(execution_context()))
            )
        assert seen == [ctx]

    def test_plain_executor_task_sees_the_context(
        self, ctx: ExecutionContext, plain_pool: ThreadPoolExecutor
    ) -> None:
        """A bound task submitted to a plain executor sees the context."""
        with use_context(ctx):
            future = plain_pool.submit(bind_context(execution_context))
        assert future.result(TIMEOUT) is ctx

    def test_context_is_captured_at_bind_time(
        self, ctx: ExecutionContext
    ) -> None:
        """The copy is taken when binding, not when the callable runs."""
        with use_context(ctx):
            bound = bind_context(execution_context)
        with use_context(ExecutionContext(user_id="other")):
            assert bound() is ctx
        assert bound() is ctx

    def test_passes_arguments_and_returns_the_result(
        self, ctx: ExecutionContext
    ) -> None:
        """Positional and keyword arguments pass through; the result returns."""

        def greet(greeting: str, *, punctuation: str) -> str:
            return f"{greeting}, {execution_context().user_id}{punctuation}"

        with use_context(ctx):
            bound = bind_context(greet)
        assert bound("hi", punctuation="!") == "hi, ada!"

    def test_exceptions_propagate(self, ctx: ExecutionContext) -> None:
        """An exception raised by fn reaches the caller unchanged."""

        def fail() -> None:
            raise ValueError(execution_context().user_id)

        with use_context(ctx):
            bound = bind_context(fail)
        with pytest.raises(ValueError, match="ada"):
            bound()

    def test_keeps_name_doc_and_wrapped(self) -> None:
        """functools.wraps keeps the name, docstring and __wrapped__."""

        def work() -> None:
            """Do the work."""

        bound = bind_context(work)
        assert bound.__name__ == "work"
        assert bound.__doc__ == "Do the work."
        assert bound.__wrapped__ is work  # type: ignore[attr-defined]

    def test_nothing_leaks_back_to_the_caller(
        self, ctx: ExecutionContext
    ) -> None:
        """What fn binds stays inside fn; the caller's context is unchanged."""

        def rebind() -> None:
            set_current(ExecutionContext(user_id="inner"))
            _MARK.set("inner")

        with use_context(ctx):
            bind_context(rebind)()
            assert execution_context() is ctx
            assert _MARK.get() == "unset"

    def test_each_call_starts_from_the_captured_context(
        self, ctx: ExecutionContext
    ) -> None:
        """A second call does not see what the first call bound."""
        seen: list[str] = []

        def mark() -> None:
            seen.append(_MARK.get())
            _MARK.set("changed")
            set_current(None)

        with use_context(ctx):
            bound = bind_context(mark)
        bound()
        bound()
        run_in_thread(bound)
        assert seen == ["unset", "unset", "unset"]

    def test_concurrent_calls_are_isolated(
        self, ctx: ExecutionContext
    ) -> None:
        """In 8 threads at once, each run sees the captured context and its own bindings only."""
        n = 8
        barrier = threading.Barrier(n, timeout=TIMEOUT)
        errors: list[BaseException] = []
        own: dict[int, object] = {}

        def work(i: int) -> None:
            try:
                assert execution_context() is ctx
                barrier.wait()  # all 8 are inside the bound fn now
                mine = ExecutionContext(user_id=f"user-{i}")
                with use_context(mine):
                    barrier.wait()  # all 8 have bound their own
                    own[i] = execution_context()
                    barrier.wait()
                assert execution_context() is ctx
            except BaseException as exc:
                errors.append(exc)
                barrier.abort()

        with use_context(ctx):
            bound = bind_context(work)
            threads = [
                threading.Thread(target=bound, args=(i,)) for i in range(n)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(TIMEOUT)
            assert execution_context() is ctx
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert {i: c.user_id for i, c in own.items()} == {  # type: ignore[attr-defined]
            i: f"user-{i}" for i in range(n)
        }

    def test_binding_outside_a_call_binds_no_context(self) -> None:
        """Bound outside any call, fn sees no ExecutionContext."""
        bound = bind_context(current_context)
        with use_context(ExecutionContext()):
            assert bound() is None

    def test_rejects_coroutine_functions(self) -> None:
        """A coroutine function is a TypeError that points to asyncio."""

        async def work() -> None:
            """Never runs."""

        with pytest.raises(TypeError, match="create_task"):
            bind_context(work)

    def test_rejects_non_callables(self) -> None:
        """Anything not callable is a TypeError."""
        with pytest.raises(TypeError, match="callable"):
            bind_context("work")  # type: ignore[arg-type]


class TestContextThreadPoolExecutor:
    """A ThreadPoolExecutor whose tasks see the submit-time context."""

    def test_is_a_thread_pool_executor(self) -> None:
        """It can go wherever a ThreadPoolExecutor is expected."""
        with ContextThreadPoolExecutor(max_workers=1) as pool:
            assert isinstance(pool, ThreadPoolExecutor)

    def test_submit_propagates_the_context(
        self, ctx: ExecutionContext
    ) -> None:
        """A submitted task sees the submitter's context."""
        with ContextThreadPoolExecutor(max_workers=1) as pool:
            with use_context(ctx):
                future = pool.submit(execution_context)
            assert future.result(TIMEOUT) is ctx

    def test_submit_passes_arguments(self, ctx: ExecutionContext) -> None:
        """Arguments and keyword arguments reach the task."""

        def greet(greeting: str, *, name: str) -> str:
            return f"{greeting} {name} from {execution_context().user_id}"

        with ContextThreadPoolExecutor(max_workers=1) as pool:
            with use_context(ctx):
                future = pool.submit(greet, "hi", name="bob")
            assert future.result(TIMEOUT) == "hi bob from ada"

    def test_each_submit_sees_its_own_context(self) -> None:
        """Two submits from two contexts each see their own submit-time one."""
        first = ExecutionContext(user_id="first")
        second = ExecutionContext(user_id="second")
        gate = threading.Event()

        def who() -> str | None:
            assert gate.wait(TIMEOUT)
            return execution_context().user_id

        with ContextThreadPoolExecutor(max_workers=2) as pool:
            with use_context(first):
                a = pool.submit(who)
            with use_context(second):
                b = pool.submit(who)
            gate.set()
            assert (a.result(TIMEOUT), b.result(TIMEOUT)) == (
                "first",
                "second",
            )

    def test_map_propagates_the_context(self, ctx: ExecutionContext) -> None:
        """Every item of map() sees the context map() was called in."""

        def who(i: int) -> str:
            return f"{i}:{execution_context().user_id}"

        with ContextThreadPoolExecutor(max_workers=2) as pool:
            with use_context(ctx):
                results = pool.map(who, range(4), timeout=TIMEOUT)
            assert list(results) == ["0:ada", "1:ada", "2:ada", "3:ada"]

    def test_nothing_leaks_into_the_next_task(
        self, ctx: ExecutionContext
    ) -> None:
        """What a task binds and never resets is gone for the next task."""

        def leak() -> int:
            set_current(ExecutionContext(user_id="leaked"))
            _MARK.set("leaked")
            return threading.get_ident()

        def look() -> tuple[int, object, str]:
            return threading.get_ident(), current_context(), _MARK.get()

        with ContextThreadPoolExecutor(max_workers=1) as pool:
            first = pool.submit(leak).result(TIMEOUT)
            second = pool.submit(look).result(TIMEOUT)
            with use_context(ctx):
                third = pool.submit(look).result(TIMEOUT)
        assert second == (first, None, "unset")
        assert third == (first, ctx, "unset")

    def test_run_in_executor_propagates_as_default_executor(
        self, ctx: ExecutionContext
    ) -> None:
        """As default executor it makes run_in_executor(None, fn) propagate."""

        async def main() -> object:
            loop = asyncio.get_running_loop()
            loop.set_default_executor(ContextThreadPoolExecutor(1))
            with use_context(ctx):
                return await loop.run_in_executor(None, execution_context)

        assert asyncio.run(main()) is ctx


class TestContextExecutor:
    """ContextExecutor(executor) adds context propagation to any pool."""

    def test_submit_and_map_propagate(
        self, ctx: ExecutionContext, plain_pool: ThreadPoolExecutor
    ) -> None:
        """submit() and map() through the wrapper see the context."""
        pool = ContextExecutor(plain_pool)
        with use_context(ctx):
            future = pool.submit(execution_context)
            results = pool.map(lambda _: execution_context(), [1, 2])
        assert future.result(TIMEOUT) is ctx
        assert list(results) == [ctx, ctx]

    def test_nothing_leaks_into_the_next_task(
        self, plain_pool: ThreadPoolExecutor
    ) -> None:
        """A context bound by one wrapped task is gone for the next one."""
        pool = ContextExecutor(plain_pool)
        pool.submit(set_current, ExecutionContext()).result(TIMEOUT)
        assert pool.submit(current_context).result(TIMEOUT) is None

    def test_works_with_any_executor(self, ctx: ExecutionContext) -> None:
        """Any Executor subclass running tasks in this process works."""

        class Inline(Executor):
            """Runs every task at once in the submitting thread."""

            def submit(  # type: ignore[override]
                self, fn: Callable[..., object], /, *args: Any, **kwargs: Any
            ) -> Future[object]:
                future: Future[object] = Future()
                # Run in an empty context, like a fresh worker thread.
                value = contextvars.Context().run(fn, *args, **kwargs)
                future.set_result(value)
                return future

        with use_context(ctx):
            assert Inline().submit(current_context).result() is None
            future = ContextExecutor(Inline()).submit(current_context)
        assert future.result() is ctx

    def test_shutdown_and_with_reach_the_wrapped_executor(self) -> None:
        """Leaving the with block shuts the wrapped executor down."""
        inner = ThreadPoolExecutor(max_workers=1)
        with ContextExecutor(inner) as pool:
            assert pool.executor is inner
            assert pool.submit(lambda: 1).result(TIMEOUT) == 1
        with pytest.raises(RuntimeError, match="shutdown"):
            inner.submit(int)

    def test_rejects_process_pools(self) -> None:
        """A process pool is a TypeError that says what to do instead."""
        pool = ProcessPoolExecutor(max_workers=1)
        try:
            with pytest.raises(TypeError) as info:
                ContextExecutor(pool)
        finally:
            pool.shutdown()
        message = str(info.value)
        assert "ProcessPoolExecutor" in message
        assert "Dispatcher" in message
        assert "to_dict()" in message

    def test_rejects_non_executors(self) -> None:
        """Anything but an Executor is a TypeError."""
        with pytest.raises(TypeError, match="Executor"):
            ContextExecutor(functools.partial(int))  # type: ignore[arg-type]

    def test_repr_names_the_wrapped_executor(
        self, plain_pool: ThreadPoolExecutor
    ) -> None:
        """The repr shows what is wrapped."""
        assert repr(ContextExecutor(plain_pool)).startswith(
            "<toolctx.ContextExecutor(<concurrent.futures.thread."
        )
