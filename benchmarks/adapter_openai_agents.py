"""A toolctx tool inside the OpenAI Agents SDK against the SDK's own tool.

Run: ``python benchmarks/adapter_openai_agents.py`` (``--quick`` for a
smoke run; ``--number``, ``--turns`` and ``--rounds`` to tune). Needs the
SDK: ``pip install -e '.[openai-agents]'``.

The workload is the one of ``benchmarks/peers.py``: ``add(a: int, b:
int)`` called with ``{"a": 1, "b": 2}``, reading the caller's user id
from its per-call context:

- toolctx: ``execution_context().user_id``, the tool turned into a
  ``FunctionTool`` by ``toolctx.adapters.openai_agents.function_tools``
  with an ``ExecutionContext`` as the run's context;
- the SDK: ``@function_tool`` with a ``RunContextWrapper[App]`` first
  parameter reading ``ctx.context.user_id``.

Two levels:

- ``on_invoke_tool``: ``FunctionTool.on_invoke_tool(ToolContext(...),
  json_text)`` with a fresh ``ToolContext`` per call, as the runner makes
  one per call (plus ``Dispatcher.adispatch`` alone, for what the adapter
  adds to toolctx's own dispatch);
- ``Runner.run`` turn: a whole run of an agent whose model (a minimal
  ``Model`` that answers at once, no network) asks for one ``add`` call
  and then answers; the tool is one part of that.

Every case is run once before timing and must return 3 having read the
right user id inside the tool; the script stops with an error otherwise.
The module does not use ``from __future__ import annotations``: the SDK
reads the hints of the tools defined inside functions.
"""

import argparse
import asyncio
import dataclasses
import platform
import sys

from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).parent))

from _harness import Case, measure, table
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    execution_context,
)


ARGS = '{"a": 1, "b": 2}'
USER = "user-42"
CALL_ID = "call_1"
SEEN: list[object] = [None]
TEMPLATE = ExecutionContext(user_id=USER, session_id="bench")


@dataclasses.dataclass
class App:
    """The SDK-native run context: the app's own object."""

    user_id: str


@dataclasses.dataclass
class Row:
    """One timed case, its baseline, and how to read its answer."""

    case: Case
    baseline: str
    answer: Callable[[Any], object] = lambda out: out


def toolctx_tools() -> tuple[Dispatcher, list[Any]]:
    from toolctx.adapters.openai_agents import function_tools

    registry = Registry()

    @registry.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = execution_context().user_id
        return a + b

    @registry.tool
    def add_sync(a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = execution_context().user_id
        return a + b

    dispatcher = Dispatcher(registry)
    return dispatcher, function_tools(dispatcher)


def sdk_tools() -> list[Any]:
    from agents import RunContextWrapper, function_tool

    @function_tool
    async def add(ctx: RunContextWrapper[App], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.context.user_id
        return a + b

    @function_tool
    def add_sync(ctx: RunContextWrapper[App], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.context.user_id
        return a + b

    return [add, add_sync]


def invoke_rows() -> list[Row]:
    from agents.tool_context import ToolContext
    from agents.usage import Usage

    dispatcher, ours = toolctx_tools()
    theirs = sdk_tools()
    app = App(USER)
    usage = Usage()

    def invoker(tool: Any, context: object) -> Callable[[], Awaitable[Any]]:
        invoke = tool.on_invoke_tool
        name = tool.name

        def run() -> Awaitable[Any]:
            ctx = ToolContext(context, usage, name, CALL_ID, ARGS)
            return invoke(ctx, ARGS)

        return run

    def adispatch(name: str) -> Callable[[], Awaitable[Any]]:
        call = ToolCall(name, ARGS, CALL_ID)

        def run() -> Awaitable[Any]:
            return dispatcher.adispatch(call, TEMPLATE)

        return run

    native = "SDK @function_tool on_invoke_tool"
    native_async = f"{native} (async tool)"
    native_sync = f"{native} (sync tool, worker thread)"
    return [
        Row(Case(native_async, afn=invoker(theirs[0], app)), native_async),
        Row(Case(native_sync, afn=invoker(theirs[1], app)), native_sync),
        Row(
            Case(
                "toolctx on_invoke_tool (async tool)",
                afn=invoker(ours[0], TEMPLATE),
            ),
            native_async,
            answer=int,
        ),
        Row(
            Case(
                "toolctx on_invoke_tool (sync tool, worker thread)",
                afn=invoker(ours[1], TEMPLATE),
            ),
            native_sync,
            answer=int,
        ),
        Row(
            Case("toolctx adispatch alone (async tool)", afn=adispatch("add")),
            native_async,
            answer=lambda result: result.output,
        ),
        Row(
            Case(
                "toolctx adispatch alone (sync tool, worker thread)",
                afn=adispatch("add_sync"),
            ),
            native_sync,
            answer=lambda result: result.output,
        ),
    ]


def turn_rows() -> list[Row]:
    from agents import Agent, RunConfig, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.testing import assistant_message, function_call
    from agents.usage import Usage

    class OneCall(Model):
        """Asks for one call of *tool*, then answers with its output."""

        def __init__(self, tool: str) -> None:
            self.tool = tool

        async def get_response(
            self,
            system_instructions: Any,
            input: Any,  # noqa: A002 - the interface's name
            *args: Any,
            **kw: Any,
        ) -> ModelResponse:
            last = input[-1] if isinstance(input, list) else {}
            if last.get("type") == "function_call_output":
                output = [assistant_message(str(last["output"]))]
            else:
                output = [function_call(self.tool, ARGS, call_id=CALL_ID)]
            return ModelResponse(
                output=output, usage=Usage(requests=1), response_id=None
            )

        def stream_response(self, *args: Any, **kw: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

    config = RunConfig(tracing_disabled=True)
    _, ours = toolctx_tools()
    theirs = sdk_tools()

    def turn(tool: Any, context: object) -> Callable[[], Awaitable[Any]]:
        agent = Agent(name="bench", model=OneCall(tool.name), tools=[tool])

        async def run() -> Any:
            result = await Runner.run(
                agent, "add 1 and 2", context=context, run_config=config
            )
            return result.final_output

        return run

    native = "SDK @function_tool Runner.run turn"
    native_async = f"{native} (async tool)"
    native_sync = f"{native} (sync tool, worker thread)"
    return [
        Row(
            Case(native_async, afn=turn(theirs[0], App(USER))),
            native_async,
            answer=int,
        ),
        Row(
            Case(native_sync, afn=turn(theirs[1], App(USER))),
            native_sync,
            answer=int,
        ),
        Row(
            Case(
                "toolctx Runner.run turn (async tool)",
                afn=turn(ours[0], TEMPLATE),
            ),
            native_async,
            answer=int,
        ),
        Row(
            Case(
                "toolctx Runner.run turn (sync tool, worker thread)",
                afn=turn(ours[1], TEMPLATE),
            ),
            native_sync,
            answer=int,
        ),
    ]


def verify(row: Row, loop: asyncio.AbstractEventLoop) -> None:
    """Run *row* once; stop the script unless it returned 3 for USER."""
    SEEN[0] = None
    assert row.case.afn is not None
    answer = row.answer(loop.run_until_complete(row.case.afn()))
    if answer != 3 or SEEN[0] != USER:
        msg = (
            f"{row.case.name} failed its check: expected 3 and user id "
            f"{USER!r} read inside the tool, got {answer!r} and "
            f"{SEEN[0]!r}."
        )
        raise SystemExit(msg)


def render(rows: list[Row], ns: dict[str, float]) -> str:
    return table(
        [
            (r.case.name, ns[r.case.name], r.baseline, ns[r.baseline])
            for r in rows
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--number", type=int, help="on_invoke calls/sample")
    parser.add_argument("--turns", type=int, help="Runner.run turns/sample")
    parser.add_argument("--rounds", type=int, help="interleaved rounds")
    opts = parser.parse_args()
    number, turns, rounds = (200, 20, 2) if opts.quick else (5_000, 100, 7)
    number = opts.number or number
    turns = opts.turns or turns
    rounds = opts.rounds or rounds
    try:
        sdk = metadata.version("openai-agents")
    except metadata.PackageNotFoundError:
        msg = "needs the SDK: pip install -e '.[openai-agents]'"
        raise SystemExit(msg) from None

    invokes, runs = invoke_rows(), turn_rows()
    loop = asyncio.new_event_loop()
    try:
        for row in invokes + runs:
            verify(row, loop)
    finally:
        loop.close()
    invoke_ns = measure(
        [r.case for r in invokes], number=number, rounds=rounds
    )
    turn_ns = measure([r.case for r in runs], number=turns, rounds=rounds)

    print(
        f"python {platform.python_version()}, toolctx "
        f"{metadata.version('toolctx')}, openai-agents {sdk}; best of "
        f"{rounds} interleaved rounds"
    )
    print(f"\non_invoke_tool, {number} calls per sample:\n")
    print(render(invokes, invoke_ns))
    print(f"\nRunner.run turn (two model calls, one tool call), {turns} runs")
    print("per sample:\n")
    print(render(runs, turn_ns))


if __name__ == "__main__":
    main()
