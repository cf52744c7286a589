"""The bound context: accessors, use_context, isolation under concurrency."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from hypothesis import given
from hypothesis import strategies as st

from toolctx import (
    ExecutionContext,
    NoExecutionContextError,
    ToolctxError,
    current_context,
    execution_context,
    publish,
    set_state,
    use_context,
)


class TestAccessors:
    """execution_context() and current_context()."""

    def test_outside_a_call_raises_helpful_error(self) -> None:
        """Outside a call the error says how to get a context."""
        with pytest.raises(NoExecutionContextError) as info:
            execution_context()
        message = str(info.value)
        assert "use_context" in message
        assert "dispatch" in message
        assert "current_context()" in message

    def test_error_is_a_lookup_error(self) -> None:
        """Code catching LookupError or ToolctxError catches it."""
        with pytest.raises(LookupError):
            execution_context()
        with pytest.raises(ToolctxError):
            execution_context()

    def test_current_context_never_raises(self) -> None:
        """current_context() returns None outside a call."""
        assert current_context() is None

    def test_use_context_binds_and_restores(self) -> None:
        """use_context binds for the block and restores on exit."""
        ctx = ExecutionContext(user_id="ada")
        with use_context(ctx) as bound:
            assert bound is ctx
            assert execution_context() is ctx
        assert current_context() is None

    def test_use_context_nests(self) -> None:
        """Nested blocks restore the outer context, not None."""
        outer, inner = ExecutionContext(), ExecutionContext()
        with use_context(outer):
            with use_context(inner):
                assert current_context() is inner
            assert current_context() is outer

    def test_use_context_restores_on_exception(self) -> None:
        """An exception in the block still restores the previous context."""
        outer = ExecutionContext()
        with use_context(outer):
            with pytest.raises(RuntimeError), use_context(ExecutionContext()):
                raise RuntimeError
            assert current_context() is outer

    def test_use_context_rejects_non_context(self) -> None:
        """Passing anything but an ExecutionContext is a TypeError."""
        with pytest.raises(TypeError, match="ExecutionContext"):
            use_context({"user_id": "ada"})  # type: ignore[arg-type]

    def test_use_context_not_reentrant(self) -> None:
        """Entering the same use_context twice is refused, state intact."""
        ctx = ExecutionContext()
        manager = use_context(ctx)
        with manager:
            with pytest.raises(ToolctxError, match="already active"):
                manager.__enter__()
            assert current_context() is ctx

    def test_out_of_order_exit_raises_and_restores(self) -> None:
        """An outer block exiting before an inner one is an error, and safe.

        Exiting out of order used to leave the outer block's context bound
        for good (the inner exit restored it). Now the outer exit raises a
        ToolctxError saying what happened, the context bound before the
        outer block is back, and the late inner exit changes nothing.
        """
        base, outer_ctx = ExecutionContext(), ExecutionContext()
        outer = use_context(outer_ctx)
        inner = use_context(ExecutionContext())
        with use_context(base):
            outer.__enter__()
            inner.__enter__()
            with pytest.raises(ToolctxError, match="out of order") as info:
                outer.__exit__(None, None, None)
            assert outer_ctx.invocation_id in str(info.value)
            assert "innermost block first" in str(info.value)
            assert current_context() is base
            inner.__exit__(None, None, None)
            assert current_context() is base
        assert current_context() is None

    def test_suspended_generator_block_is_detected(self) -> None:
        """A generator left open inside a block cannot leak its context.

        The generator's own ``with use_context`` is still open when the
        block around it ends: that exit raises, nothing stays bound, and
        closing the generator later binds nothing either.
        """
        held = ExecutionContext(user_id="held")

        def holding() -> Iterator[None]:
            with use_context(held):
                yield

        gen = holding()

        def block() -> None:
            with use_context(ExecutionContext(user_id="outer")):
                next(gen)
                assert current_context() is held

        with pytest.raises(ToolctxError, match="1 use_context"):
            block()
        assert current_context() is None
        gen.close()
        assert current_context() is None
        with use_context(held):
            assert current_context() is held
        assert current_context() is None

    def test_exit_in_another_thread_is_refused(self) -> None:
        """Exiting a block in a thread that did not enter it changes nothing.

        The error says to exit it where it was entered; doing so then works.
        """
        ctx = ExecutionContext()
        manager = use_context(ctx)
        manager.__enter__()
        errors: list[BaseException] = []

        def exit_here() -> None:
            try:
                manager.__exit__(None, None, None)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=exit_here)
        thread.start()
        thread.join(timeout=60)
        assert len(errors) == 1
        assert isinstance(errors[0], ToolctxError)
        assert "where it was entered" in str(errors[0])
        assert current_context() is ctx
        manager.__exit__(None, None, None)
        assert current_context() is None

    def test_exit_in_a_task_copy_is_refused(self) -> None:
        """A task that exits a block its parent opened is refused too."""

        async def main() -> None:
            ctx = ExecutionContext()
            manager = use_context(ctx)
            manager.__enter__()

            async def exit_here() -> None:
                manager.__exit__(None, None, None)

            with pytest.raises(ToolctxError, match="where it was entered"):
                await asyncio.create_task(exit_here())
            assert current_context() is ctx
            manager.__exit__(None, None, None)
            assert current_context() is None

        asyncio.run(main())

    def test_async_use_context(self) -> None:
        """use_context also works with async with."""

        async def main() -> str | None:
            async with use_context(ExecutionContext(user_id="ada")):
                await asyncio.sleep(0)
                return execution_context().user_id

        assert asyncio.run(main()) == "ada"

    def test_publish_outside_a_dispatch(self) -> None:
        """publish() and set_state() need a dispatched call, and say so."""
        with pytest.raises(ToolctxError, match="inside a tool call"):
            publish("k", 1)
        with use_context(ExecutionContext()):
            with pytest.raises(ToolctxError, match="no dispatched call"):
                set_state("k", 1)


class TestIsolation:
    """Each task and thread sees only its own context."""

    def test_tasks_see_their_own_context(self) -> None:
        """1,000 concurrent tasks each read their own context across awaits."""

        async def worker(i: int) -> None:
            ctx = ExecutionContext(user_id=f"user-{i}")
            with use_context(ctx):
                for _ in range(3):
                    await asyncio.sleep(0)
                    assert execution_context() is ctx

        async def main() -> None:
            await asyncio.gather(*(worker(i) for i in range(1000)))
            assert current_context() is None

        asyncio.run(main())

    def test_threads_see_their_own_context(self) -> None:
        """8 threads binding contexts concurrently never see each other's."""
        errors: list[str] = []
        barrier = threading.Barrier(8)

        def worker(n: int) -> None:
            barrier.wait()
            for i in range(1000):
                ctx = ExecutionContext(user_id=f"{n}-{i}")
                with use_context(ctx):
                    if current_context() is not ctx:
                        errors.append(f"{n}-{i}")
            if current_context() is not None:
                errors.append(f"{n} leaked")

        threads = [
            threading.Thread(target=worker, args=(n,)) for n in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []

    def test_plain_executor_does_not_copy(self) -> None:
        """Documented ground truth: ThreadPoolExecutor.submit loses the context."""
        with use_context(ExecutionContext()), ThreadPoolExecutor(1) as pool:
            assert pool.submit(current_context).result() is None
            copied = contextvars.copy_context()
            assert (
                pool.submit(copied.run, current_context).result() is not None
            )

    def test_child_task_binding_does_not_leak_back(self) -> None:
        """A context bound inside a task never reaches its parent."""

        async def child() -> None:
            use_context(ExecutionContext()).__enter__()

        async def main() -> None:
            await asyncio.create_task(child())
            assert current_context() is None

        asyncio.run(main())

    @given(st.lists(st.integers(0, 3), max_size=12))
    def test_nesting_restores_every_level(self, depths: list[int]) -> None:
        """Any sequence of nested blocks restores each level on the way out."""
        stack: list[ExecutionContext] = []

        def nest(remaining: list[int]) -> None:
            if not remaining:
                return
            ctx = ExecutionContext(turn=remaining[0])
            with use_context(ctx):
                stack.append(ctx)
                assert current_context() is ctx
                nest(remaining[1:])
                assert current_context() is ctx
                stack.pop()

        nest(depths)
        assert current_context() is None
