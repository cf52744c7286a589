"""A call on a ``Session`` costs the same however long the turn is (#19.9).

The dispatcher builds each call's ``prior_results`` from the session's
``results``. That must cost the same Python work for the 1,000th call of
a turn as for the 10th, on every path that takes a session, as it does
with a plain context. No timings here: the tests count the Python
function calls toolctx makes for one call (with ``sys.setprofile``), which
is the same number on every run and grew by one per earlier result before
the fix.
"""

from __future__ import annotations

import asyncio
import sys

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import toolctx

from toolctx import (
    Dispatcher,
    Registry,
    Session,
    ToolCall,
    ToolResult,
    execution_context,
    set_state,
)


PACKAGE = str(Path(toolctx.__file__).parent)

Runner = Callable[[Dispatcher, ToolCall, Session], ToolResult]


def _last(items: Iterator[object]) -> ToolResult:
    *_, last = items
    assert isinstance(last, ToolResult)
    return last


async def _alast(items: AsyncIterator[object]) -> ToolResult:
    last = None
    async for item in items:
        last = item
    assert isinstance(last, ToolResult)
    return last


def _adispatch_all(d: Dispatcher, c: ToolCall, s: Session) -> ToolResult:
    (result,) = asyncio.run(d.adispatch_all([c], s))
    return result


RUNNERS: dict[str, Runner] = {
    "dispatch": lambda d, c, s: d.dispatch(c, s),
    "dispatch_all": lambda d, c, s: d.dispatch_all([c], s)[0],
    "adispatch": lambda d, c, s: asyncio.run(d.adispatch(c, s)),
    "adispatch_all": _adispatch_all,
    "stream": lambda d, c, s: _last(d.stream(c, s)),
    "astream": lambda d, c, s: asyncio.run(_alast(d.astream(c, s))),
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(request: pytest.FixtureRequest) -> Runner:
    """Each public way to run a call with a session as its context."""
    return RUNNERS[request.param]


@pytest.fixture(name="dispatcher")
def _dispatcher() -> Dispatcher:
    """A dispatcher whose tool reads its prior results and changes state."""
    registry = Registry()

    @registry.tool
    def step(n: int) -> dict[str, int]:
        """Record a step; say how many came before it in this turn."""
        set_state("last", n)
        return {"n": n, "before": len(execution_context().prior_results)}

    return Dispatcher(registry)


def _toolctx_calls(work: Callable[[], object]) -> int:
    """The Python function calls made inside toolctx while *work* runs."""
    count = 0

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal count
        if event == "call" and frame.f_code.co_filename.startswith(PACKAGE):
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def _grow(dispatcher: Dispatcher, session: Session, to: int) -> None:
    """Record calls in *session* until its turn holds *to* results."""
    while len(session.results) < to:
        n = len(session.results)
        dispatcher.dispatch(ToolCall("step", {"n": n}, f"c{n}"), session)


def _work_at(run: Runner, dispatcher: Dispatcher, length: int) -> int:
    """Python calls toolctx makes for a call after *length* earlier ones."""
    session = Session("s1", user_id="ada")
    _grow(dispatcher, session, length)
    run(dispatcher, ToolCall("step", {"n": length}, "warm"), session)
    call = ToolCall("step", {"n": length + 1}, "measured")
    result: list[ToolResult] = []
    work = _toolctx_calls(
        lambda: result.append(run(dispatcher, call, session))
    )
    assert result[0].output == {"n": length + 1, "before": length + 1}
    return work


class TestSessionCallsDoNotSlowDown:
    """#19.9: the work of one session call does not grow with the turn."""

    def test_same_work_late_in_a_turn(
        self, run: Runner, dispatcher: Dispatcher
    ) -> None:
        """The 300th call of a turn does as much work as the 20th."""
        assert _work_at(run, dispatcher, 300) == _work_at(run, dispatcher, 20)

    def test_each_result_is_frozen_once(
        self, dispatcher: Dispatcher, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A turn of 200 calls freezes each of its results once."""
        from toolctx._context import session as session_module

        frozen: list[ToolResult] = []
        real = session_module.frozen_view

        def counting(result: ToolResult) -> ToolResult:
            frozen.append(result)
            return real(result)

        monkeypatch.setattr(session_module, "frozen_view", counting)
        session = Session("s1")
        _grow(dispatcher, session, 200)
        assert len(frozen) == 199
        assert [r.output["before"] for r in session.results] == list(
            range(200)
        )


class TestPriorResultsFollowTheSession:
    """The cached ``prior_results`` always equal the session's results."""

    def test_results_changed_by_the_host(self, dispatcher: Dispatcher) -> None:
        """Results the host removes, replaces or adds itself are followed."""
        session = Session("s1")
        _grow(dispatcher, session, 3)
        first, second, third = session.results
        assert len(session.context().prior_results) == 3

        del session.results[1]
        assert session.context().prior_results == (first, third)

        session.results[0] = second
        assert session.context().prior_results == (second, third)

        session.results = [third]
        assert session.context().prior_results == (third,)

        session.results.append(first)
        _grow(dispatcher, session, 3)
        prior = session.context().prior_results
        assert prior[:2] == (third, first)
        assert prior[2].output == {"n": 2, "before": 2}

    def test_next_turn_starts_empty(self, dispatcher: Dispatcher) -> None:
        """A new turn sees no results of the last one."""
        session = Session("s1")
        _grow(dispatcher, session, 3)
        session.next_turn()
        assert session.context().prior_results == ()
        _grow(dispatcher, session, 1)
        (only,) = session.context().prior_results
        assert only.output == {"n": 0, "before": 0}

    def test_results_given_at_construction(
        self, dispatcher: Dispatcher
    ) -> None:
        """A session made with results shows them, then its own calls."""
        earlier = Session("s0")
        _grow(dispatcher, earlier, 2)
        session = Session("s1", results=earlier.results)
        _grow(dispatcher, session, 3)
        assert [r.output["before"] for r in session.results] == [0, 1, 2]
        assert session.context().prior_results == tuple(session.results)

    def test_views_are_read_only(self, dispatcher: Dispatcher) -> None:
        """What later calls see cannot change what the host recorded."""
        session = Session("s1")
        _grow(dispatcher, session, 1)
        (view,) = session.context().prior_results
        out: Any = view.output
        with pytest.raises(TypeError, match="read-only"):
            out["n"] = 7
        assert session.results[0].output == {"n": 0, "before": 0}


class Incomparable:
    """An output value whose ``==`` raises, as a numpy array's does."""

    def __eq__(self, other: object) -> bool:
        msg = "the truth value of this comparison is ambiguous"
        raise ValueError(msg)

    __hash__ = object.__hash__


class TestIncomparableOutputs:
    """Results whose outputs cannot be compared are followed too."""

    def test_replaced_result_with_incomparable_output(self) -> None:
        """A result the host swaps in is shown, whatever its ``==`` does."""
        session = Session("s1")
        first = ToolResult(name="t", invocation_id="i1", output=Incomparable())
        session.record(first)
        assert session.context().prior_results[0].output is first.output
        second = ToolResult(
            name="t", invocation_id="i1", output=Incomparable()
        )
        session.results[0] = second
        (seen,) = session.context().prior_results
        assert seen.output is second.output
