"""A tool's output is checked against its declared return type, on every path.

The output step is compiled once per tool, at decoration: the value the
tool returns (or each chunk it yields) must be of the declared type, as
the type model reads Python values, and have a JSON form. Otherwise the
call is an error result naming the problem, whichever way it was
dispatched; the tool's side effects have happened, and nothing published
as state is applied.
"""

from __future__ import annotations

import asyncio

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Literal, TypedDict

import pytest

from doubles import PassThrough
from toolctx import (
    Dispatcher,
    Registry,
    Session,
    ToolCall,
    ToolChunk,
    ToolResult,
    set_state,
)
from toolctx.exceptions import ToolOutputError


class Point(TypedDict):
    """A point."""

    x: int
    y: int


def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def count(value: str) -> int:
        """Return *value* (a wrong type) where an int is declared."""
        set_state("touched", True)
        return value  # type: ignore[return-value]

    @registry.tool
    async def acount(value: str) -> int:
        """Async: return *value* where an int is declared."""
        return value  # type: ignore[return-value]

    @registry.tool
    def flag() -> int:
        """Return a bool where an int is declared (bool is not an int)."""
        return True

    @registry.tool
    def ratio() -> float:
        """Return an int where a float is declared (allowed)."""
        return 2

    @registry.tool
    def ids() -> list[int]:
        """Return a list with one wrong item."""
        return [1, "2", 3]  # type: ignore[list-item]

    @registry.tool
    def mode() -> Literal["on", "off"]:
        """Return a value outside the Literal."""
        return "maybe"  # type: ignore[return-value]

    @registry.tool
    def maybe() -> str | None:
        """Return None where ``str | None`` is declared (allowed)."""
        return None

    @registry.tool
    def point() -> Point:
        """A TypedDict is not checked at runtime: its dict goes out."""
        return {"x": 1, "y": 2}

    @registry.tool
    def untyped():  # type: ignore[no-untyped-def]
        """No annotation: anything with a JSON form goes out."""
        return {"any": [1, "thing"]}

    @registry.tool
    def numbers() -> Iterator[int]:
        """Yield a wrong chunk after a good one."""
        yield 1
        yield "two"  # type: ignore[misc]

    @registry.tool
    async def anumbers() -> AsyncIterator[int]:
        """Async: yield a wrong chunk after a good one."""
        yield 1
        yield "two"  # type: ignore[misc]

    return registry


Runner = Callable[[Dispatcher, ToolCall], ToolResult]


def _last(items: list[ToolChunk | ToolResult]) -> ToolResult:
    result = items[-1]
    assert isinstance(result, ToolResult)
    return result


async def _acollect(d: Dispatcher, call: ToolCall) -> ToolResult:
    return _last([item async for item in d.astream(call)])


RUNNERS: dict[str, Runner] = {
    "dispatch": lambda d, c: d.dispatch(c),
    "adispatch": lambda d, c: asyncio.run(d.adispatch(c)),
    "dispatch_all": lambda d, c: d.dispatch_all([c])[0],
    "adispatch_all": lambda d, c: asyncio.run(d.adispatch_all([c]))[0],
    "stream": lambda d, c: _last(list(d.stream(c))),
    "astream": lambda d, c: asyncio.run(_acollect(d, c)),
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(request: pytest.FixtureRequest) -> Runner:
    return RUNNERS[request.param]


@pytest.fixture(params=["plain", "intercepted"], name="dispatcher")
def _dispatcher(request: pytest.FixtureRequest) -> Dispatcher:
    interceptors = [PassThrough()] if request.param == "intercepted" else []
    return Dispatcher(_registry(), interceptors=interceptors)


class TestDeclaredReturnType:
    """An output that is not of the declared type is an error result."""

    @pytest.mark.parametrize(
        ("name", "args", "got", "declared"),
        [
            ("count", '{"value": "x"}', "a str", "int"),
            ("acount", '{"value": "x"}', "a str", "int"),
            ("flag", "{}", "a bool", "int"),
            ("ids", "{}", "a list", "list[int]"),
            ("mode", "{}", "a str", "Literal['on', 'off']"),
        ],
    )
    def test_a_mismatch_is_an_error_result_naming_both_types(  # noqa: PLR0917
        self,
        dispatcher: Dispatcher,
        run: Runner,
        name: str,
        args: str,
        got: str,
        declared: str,
    ) -> None:
        """The message names what came back and what was declared."""
        result = run(dispatcher, ToolCall(name, args))
        assert result.is_error
        assert result.error is not None
        assert f"The output ({got}) does not match" in result.error
        assert f"declared return type {declared}" in result.error
        assert isinstance(result.exception, ToolOutputError)
        assert isinstance(result.exception, TypeError)

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("ratio", 2),
            ("maybe", None),
            ("point", {"x": 1, "y": 2}),
            ("untyped", {"any": [1, "thing"]}),
        ],
    )
    def test_matching_outputs_go_out(
        self, dispatcher: Dispatcher, run: Runner, name: str, expected: object
    ) -> None:
        """What matches (int for float, None for optional) goes out."""
        result = run(dispatcher, ToolCall(name, "{}"))
        assert not result.is_error, result.error
        assert result.output == expected

    def test_no_state_change_is_applied(self) -> None:
        """A mismatched output applies none of the call's state changes."""
        session = Session("s")
        Dispatcher(_registry()).dispatch(
            ToolCall("count", '{"value": "x"}'), session
        )
        assert "touched" not in session.state

    def test_the_model_is_not_shown_the_text_when_asked_not_to(self) -> None:
        """Without exception messages the model reads only that it failed."""
        dispatcher = Dispatcher(_registry(), include_exception_messages=False)
        result = dispatcher.dispatch(ToolCall("count", '{"value": "x"}'))
        assert result.error == "Tool 'count' failed."
        assert isinstance(result.exception, ToolOutputError)


class TestChunks:
    """Each chunk of a streaming tool is checked against the yield type."""

    @pytest.mark.parametrize("name", ["numbers", "anumbers"])
    def test_a_wrong_chunk_ends_the_call_with_an_error(
        self,
        dispatcher: Dispatcher,
        run: Runner,
        name: str,
        request: pytest.FixtureRequest,
    ) -> None:
        """The bad chunk is named; a stream keeps the good ones so far.

        A dispatch runs the generator to its end for one output, so its
        error result holds none, as for any failure.
        """
        streamed = request.node.callspec.params["run"] in {"stream", "astream"}
        result = run(dispatcher, ToolCall(name, "{}"))
        assert result.is_error
        assert result.error is not None
        assert (
            "A chunk (a str) does not match the declared yield type int"
            in (result.error)
        )
        assert result.output == ([1] if streamed else None)

    def test_streamed_chunks_before_the_wrong_one_arrive(self) -> None:
        """stream() hands over the good chunk, then the error result."""
        items = list(Dispatcher(_registry()).stream(ToolCall("numbers", "{}")))
        assert [type(i).__name__ for i in items] == ["ToolChunk", "ToolResult"]
        assert isinstance(items[0], ToolChunk)
        assert items[0].data == 1
        assert isinstance(items[1], ToolResult)
        assert items[1].is_error
        assert items[1].output == [1]


class TestCompiledOnce:
    """The output step is compiled at decoration, not per call."""

    def test_the_step_is_part_of_the_tools_call_plan(self) -> None:
        """Each registered tool carries its compiled step."""
        registry = _registry()
        entry = registry.entry("count")
        assert entry is not None
        with pytest.raises(ToolOutputError, match="declared return type int"):
            entry.output("x")
        assert entry.output(3) == 3

    def test_an_unannotated_tool_has_only_the_json_step(self) -> None:
        """No annotation: only what JSON cannot carry is refused."""
        entry = _registry().entry("untyped")
        assert entry is not None
        with pytest.raises(ToolOutputError, match="no JSON form"):
            entry.output(float("nan"))
