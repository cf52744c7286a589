"""Stress and property tests: the right context, and only that one, always."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    current_context,
    execution_context,
    use_context,
)


registry = Registry()
dispatcher = Dispatcher(registry)


def _identity() -> dict[str, Any]:
    ctx = execution_context()
    return {
        "user": ctx.user_id,
        "call": ctx.tool_call_id,
        "inv": ctx.invocation_id,
        "parent": ctx.parent_invocation_id,
    }


@registry.tool
async def jittery(seed: int, nest: bool) -> dict[str, Any]:
    """Await a random number of times, maybe dispatch a nested call."""
    rng = random.Random(seed)
    mine = _identity()
    inner = None
    for _ in range(rng.randint(1, 5)):
        await asyncio.sleep(0 if rng.random() < 0.7 else 0.001)
        if _identity() != mine:
            return {"ok": False}
        if nest and inner is None and rng.random() < 0.5:
            inner = await dispatcher.adispatch(ToolCall("echo_id"))
    if inner is not None and (
        inner.output["parent"] != mine["inv"]
        or inner.output["user"] != mine["user"]
    ):
        return {"ok": False}
    return {"ok": True, **mine}


@registry.tool
def echo_id() -> dict[str, Any]:
    """Report the identity of the running call."""
    return _identity()


@registry.tool
def recurse(depth: int) -> list[str]:
    """Dispatch itself until depth reaches 0; return the invocation chain."""
    me = execution_context()
    if depth == 0:
        return [me.invocation_id]
    inner = dispatcher.dispatch(ToolCall("recurse", {"depth": depth - 1}))
    assert inner.output is not None, inner.error
    chain: list[str] = inner.output
    assert execution_context() is me
    return [me.invocation_id, *chain]


class TestStress:
    """Many calls at once never see another call's context."""

    def test_ten_thousand_concurrent_calls_with_threads(self) -> None:
        """10,000 adispatch calls with random awaits and nesting, plus threads."""
        thread_errors: list[str] = []
        stop = threading.Event()

        def hammer(n: int) -> None:
            i = 0
            while not stop.is_set() and i < 2000:
                result = dispatcher.dispatch(
                    ToolCall("echo_id", None, f"t{n}-{i}"),
                    ExecutionContext(user_id=f"thread-{n}"),
                )
                out = result.output
                if out["user"] != f"thread-{n}" or out["call"] != f"t{n}-{i}":
                    thread_errors.append(f"{n}-{i}")
                i += 1
            if current_context() is not None:
                thread_errors.append(f"thread {n} leaked")

        threads = [
            threading.Thread(target=hammer, args=(n,)) for n in range(4)
        ]
        for t in threads:
            t.start()

        async def main() -> list[Any]:
            calls = [
                dispatcher.adispatch(
                    ToolCall(
                        "jittery", {"seed": i, "nest": i % 3 == 0}, f"c{i}"
                    ),
                    ExecutionContext(user_id=f"user-{i}"),
                )
                for i in range(10_000)
            ]
            results = await asyncio.gather(*calls)
            assert current_context() is None
            return results

        try:
            results = asyncio.run(main())
        finally:
            stop.set()
            for t in threads:
                t.join(60)
        bad = [
            i
            for i, r in enumerate(results)
            if r.is_error
            or not r.output["ok"]
            or r.output["user"] != f"user-{i}"
            or r.output["call"] != f"c{i}"
            or r.output["inv"] != r.invocation_id
        ]
        assert bad == []
        assert len({r.invocation_id for r in results}) == 10_000
        assert thread_errors == []

    def test_nested_fifty_deep(self) -> None:
        """A call chain 50 deep links every level to its caller."""
        template = ExecutionContext(user_id="deep")
        result = dispatcher.dispatch(
            ToolCall("recurse", {"depth": 50}), template
        )
        assert not result.is_error, result.error
        chain = result.output
        assert len(chain) == 51
        assert len(set(chain)) == 51
        assert chain[0] == result.invocation_id
        assert current_context() is None

    def test_nested_fifty_deep_async(self) -> None:
        """The same chain through adispatch (sync tool in worker threads)."""

        async def main() -> Any:
            return await dispatcher.adispatch(
                ToolCall("recurse", {"depth": 50})
            )

        result = asyncio.run(main())
        assert len(result.output) == 51


class UseContextMachine(RuleBasedStateMachine):
    """use_context blocks opened and closed in any order a program can."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[use_context, ExecutionContext]] = []

    @rule(turn=st.integers(0, 5))
    def enter(self, turn: int) -> None:
        """Open a block: its context becomes current."""
        ctx = ExecutionContext(turn=turn)
        manager = use_context(ctx)
        manager.__enter__()
        self.open.append((manager, ctx))

    @precondition(lambda self: self.open)
    @rule()
    def exit_innermost(self) -> None:
        """Close the innermost block: the one around it is current again."""
        manager, _ = self.open.pop()
        manager.__exit__(None, None, None)

    @precondition(lambda self: self.open)
    @rule()
    def dispatch_inside(self) -> None:
        """A dispatch inside the blocks inherits and then restores them."""
        _, top = self.open[-1]
        result = dispatcher.dispatch(ToolCall("echo_id"))
        assert result.output["inv"] != top.invocation_id
        assert current_context() is top

    @rule()
    def raise_inside(self) -> None:
        """An exception through a block restores the context around it."""
        before = current_context()
        with (
            contextlib.suppress(RuntimeError),
            use_context(ExecutionContext()),
        ):
            raise RuntimeError
        assert current_context() is before

    @invariant()
    def current_is_innermost(self) -> None:
        """The current context is always the innermost open block's."""
        expected = self.open[-1][1] if self.open else None
        assert current_context() is expected

    def teardown(self) -> None:
        """Closing everything, innermost first, leaves no context bound."""
        while self.open:
            manager, _ = self.open.pop()
            manager.__exit__(None, None, None)
        assert current_context() is None


TestUseContextNesting = UseContextMachine.TestCase
TestUseContextNesting.settings = settings(max_examples=50, deadline=None)
