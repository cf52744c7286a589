"""``ToolArgumentsError``: what a tool raises is what the model reads (#19.12).

``raise ToolArgumentsError("n must be even")`` is one problem, not one per
character, on every path a call can take: the dispatcher's sync, async,
batch and stream paths, a process-pool executor (the exception crosses a
pickle) and the MCP server. Anything that is not a problem is refused with
a ``TypeError`` that says what to pass.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import pickle

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from argument_tools import registry
from toolctx import (
    Dispatcher,
    ToolArgumentsError,
    ToolCall,
    ToolResult,
)
from toolctx.exceptions import ArgumentError
from toolctx.providers import anthropic, gemini, openai


ODD = ToolCall("halve", {"n": 3}, "call_1")
MESSAGE = "Invalid arguments for tool 'halve': n must be even"


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


def _adispatch_all(d: Dispatcher, call: ToolCall) -> ToolResult:
    (result,) = asyncio.run(d.adispatch_all([call]))
    return result


RUNNERS: dict[str, Callable[[Dispatcher, ToolCall], ToolResult]] = {
    "dispatch": lambda d, c: d.dispatch(c),
    "dispatch_all": lambda d, c: d.dispatch_all([c])[0],
    "adispatch": lambda d, c: asyncio.run(d.adispatch(c)),
    "adispatch_all": _adispatch_all,
    "stream": lambda d, c: _last(d.stream(c)),
    "astream": lambda d, c: asyncio.run(_alast(d.astream(c))),
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(
    request: pytest.FixtureRequest,
) -> Callable[[Dispatcher, ToolCall], ToolResult]:
    """Each public way to run one call."""
    return RUNNERS[request.param]


def _one_problem(result: ToolResult) -> None:
    """*result* reports the tool's message as its one problem."""
    assert result.is_error
    assert result.error == MESSAGE
    assert isinstance(result.exception, ToolArgumentsError)
    assert result.exception.errors == (ArgumentError("", "n must be even"),)


class TestOneMessageIsOneProblem:
    """A tool raising ToolArgumentsError("...") reports one problem."""

    def test_every_dispatch_path(
        self, run: Callable[[Dispatcher, ToolCall], ToolResult]
    ) -> None:
        """The model reads the message once, as the tool wrote it."""
        _one_problem(run(Dispatcher(registry), ODD))

    def test_process_pool(self) -> None:
        """The message and the problems survive a spawned worker's pickle."""
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=context
        ) as pool:
            dispatcher = Dispatcher(registry, executor=pool)
            _one_problem(dispatcher.dispatch(ODD))
            _one_problem(asyncio.run(dispatcher.adispatch(ODD)))

    def test_rendered_for_the_model(self) -> None:
        """The provider messages carry the message once."""
        result = Dispatcher(registry).dispatch(ODD)
        assert openai.result_message(result)["content"] == MESSAGE
        [block] = anthropic.result_message(result)["content"]
        assert block["content"] == MESSAGE
        [part] = gemini.result_message(result)["parts"]
        assert part["function_response"]["response"] == {"error": MESSAGE}

    def test_mcp_server(self) -> None:
        """An MCP client reads the message once, as an error result."""
        pytest.importorskip("mcp")
        import anyio

        from mcp.client.session import ClientSession
        from mcp.shared.memory import create_client_server_memory_streams

        from toolctx.mcp import create_server

        server = create_server(registry)

        async def go() -> Any:
            with anyio.fail_after(30):
                async with create_client_server_memory_streams() as (
                    client,
                    served,
                ):
                    async with anyio.create_task_group() as group:
                        group.start_soon(
                            server.run,
                            served[0],
                            served[1],
                            server.create_initialization_options(),
                        )
                        async with ClientSession(client[0], client[1]) as s:
                            await s.initialize()
                            answer = await s.call_tool("halve", {"n": 3})
                        group.cancel_scope.cancel()
            return answer

        answer = anyio.run(go)
        assert answer.is_error is True
        assert [block.text for block in answer.content] == [MESSAGE]


class TestConstructor:
    """What ToolArgumentsError accepts as its problems."""

    @pytest.mark.parametrize(
        ("errors", "expected"),
        [
            ("n must be even", [("", "n must be even")]),
            (ArgumentError("n", "must be even"), [("n", "must be even")]),
            (
                [ArgumentError("n", "must be even"), "too many calls"],
                [("n", "must be even"), ("", "too many calls")],
            ),
            (
                (e for e in ["first", ArgumentError("a.b", "second")]),
                [("", "first"), ("a.b", "second")],
            ),
        ],
        ids=["str", "ArgumentError", "list", "generator"],
    )
    def test_problems(
        self, errors: Any, expected: list[tuple[str, str]]
    ) -> None:
        """A str or an ArgumentError is one problem; an iterable, each item."""
        error = ToolArgumentsError(errors)
        assert [(e.path, e.message) for e in error.errors] == expected

    def test_message(self) -> None:
        """The message names the tool and lists the problems in order."""
        error = ToolArgumentsError(
            ["too big", ArgumentError("n", "must be even")], tool_name="halve"
        )
        assert str(error) == (
            "Invalid arguments for tool 'halve': too big; n: must be even"
        )
        assert str(ToolArgumentsError([])) == "Invalid arguments"

    @pytest.mark.parametrize(
        ("errors", "named"),
        [
            (b"n must be even", "bytes"),
            ({"n": "must be even"}, "dict"),
            (3, "int"),
            (None, "NoneType"),
        ],
    )
    def test_nonsense_is_a_type_error(self, errors: Any, named: str) -> None:
        """Anything else is a TypeError that says what to pass."""
        with pytest.raises(TypeError) as info:
            ToolArgumentsError(errors)
        assert str(info.value) == (
            "ToolArgumentsError() takes the problems with the arguments, "
            f"got {named}. Pass one message (a str), one "
            "ArgumentError(path, message), or a list of them."
        )

    def test_an_item_of_the_wrong_type(self) -> None:
        """An item that is no problem is named by its position."""
        with pytest.raises(TypeError, match=r"problem 1 is a int, not a str"):
            ToolArgumentsError(["fine", 7])

    def test_argument_error_fields_are_text(self) -> None:
        """An ArgumentError's path and message are str."""
        with pytest.raises(
            TypeError,
            match=r"^ArgumentError\(path, message\) takes two str, got "
            r"message=int\.$",
        ):
            ArgumentError("n", 5)  # type: ignore[arg-type]

    def test_tool_name_must_be_text(self) -> None:
        """tool_name is a str or None."""
        with pytest.raises(TypeError, match=r"tool_name=\.\.\.\) takes a str"):
            ToolArgumentsError("x", tool_name=3)  # type: ignore[arg-type]

    def test_pickle_round_trip(self) -> None:
        """Unpickled, it has the same problems, tool name and message."""
        error = ToolArgumentsError(
            [ArgumentError("n", "must be even"), "again"], tool_name="halve"
        )
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is ToolArgumentsError
        assert back.errors == error.errors
        assert back.tool_name == "halve"
        assert str(back) == str(error)
