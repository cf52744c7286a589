"""A toolctx tool inside LangChain / LangGraph against LangChain's ``@tool``.

Run: ``python benchmarks/adapter_langchain.py`` (``--quick`` for a smoke
run; ``--number`` and ``--rounds`` to tune). Needs the extra:
``pip install -e '.[langchain]'``.

The workload is the one of ``benchmarks/peers.py``: ``add(a: int, b:
int)`` called with ``{"a": 1, "b": 2}``, reading the caller's user id
from its per-call context:

- toolctx: ``execution_context().user_id``, the tool turned into a
  ``BaseTool`` by ``toolctx.adapters.langchain.tools``; the template is
  ``config["configurable"]["toolctx_context"]`` (direct invoke) or the
  graph's ``context=`` (ToolNode);
- LangChain: ``@tool`` reading ``config["configurable"]["user_id"]`` from
  a ``config: RunnableConfig`` parameter (direct invoke), or
  ``runtime.context.user_id`` from a ``runtime: ToolRuntime`` parameter
  (ToolNode), as LangChain documents each.

Two levels:

- ``tool.invoke`` / ``tool.ainvoke`` with a tool call
  (``{"type": "tool_call", ...}``): the tool answers with a
  ``ToolMessage``, as it does for an agent (plus ``Dispatcher.dispatch``
  and ``adispatch`` alone, for what the adapter and LangChain's tool
  machinery add to toolctx's own dispatch);
- ``ToolNode``: a one-node LangGraph graph (``START -> ToolNode -> END``)
  run with an ``AIMessage`` holding the call, what an agent's tool step
  costs; the tool is one part of that.

The numbers are per call; the ratio column compares each case with the
LangChain-native case of the same kind. Every case is run once before
timing and must return 3 having read the right user id inside the tool;
the script stops with an error otherwise. The module does not use ``from
__future__ import annotations``: LangChain reads the hints of the tools
defined inside functions.
"""

import argparse
import asyncio
import dataclasses
import platform
import sys
import warnings

from collections.abc import Callable
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


ARGS = {"a": 1, "b": 2}
USER = "user-42"
CALL_ID = "call_1"
SEEN: list[object] = [None]
TEMPLATE = ExecutionContext(user_id=USER, session_id="bench")


@dataclasses.dataclass
class App:
    """The LangGraph-native run context: the app's own object."""

    user_id: str


@dataclasses.dataclass
class Row:
    """One timed case, its baseline, and how to read its answer."""

    case: Case
    baseline: str
    answer: Callable[[Any], object] = lambda out: out


def tool_call(name: str) -> dict[str, Any]:
    return {"type": "tool_call", "name": name, "args": ARGS, "id": CALL_ID}


def message_content(message: Any) -> object:
    return int(message.content)


def graph_content(out: Any) -> object:
    return int(out["messages"][-1].content)


def result_output(result: Any) -> object:
    return result.output


def build() -> list[Row]:
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, ToolRuntime

    from toolctx.adapters.langchain import CONFIG_KEY, tools

    registry = Registry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = execution_context().user_id
        return a + b

    @registry.tool
    async def add_async(a: int, b: int) -> int:
        """Add two integers, asynchronously."""
        SEEN[0] = execution_context().user_id
        return a + b

    dispatcher = Dispatcher(registry)
    ours = {t.name: t for t in tools(dispatcher)}

    @tool("add")
    def lc_add(a: int, b: int, config: RunnableConfig) -> int:
        """Add two integers."""
        SEEN[0] = config["configurable"]["user_id"]
        return a + b

    @tool("add_async")
    async def lc_add_async(a: int, b: int, config: RunnableConfig) -> int:
        """Add two integers, asynchronously."""
        SEEN[0] = config["configurable"]["user_id"]
        return a + b

    @tool("add")
    def lc_add_runtime(a: int, b: int, runtime: ToolRuntime) -> int:
        """Add two integers."""
        SEEN[0] = runtime.context.user_id
        return a + b

    def one_node_graph(node_tool: Any, schema: type) -> Any:
        builder = StateGraph(MessagesState, context_schema=schema)
        builder.add_node("tools", ToolNode([node_tool]))
        builder.add_edge(START, "tools")
        builder.add_edge("tools", END)
        return builder.compile()

    ours_config = {"configurable": {CONFIG_KEY: TEMPLATE}}
    native_config = {"configurable": {"user_id": USER}}
    sync_call, async_call = tool_call("add"), tool_call("add_async")
    our_add, our_async = ours["add"], ours["add_async"]
    call, acall = ToolCall("add", ARGS, CALL_ID), ToolCall("add_async", ARGS)

    our_graph = one_node_graph(our_add, ExecutionContext)
    native_graph = one_node_graph(lc_add_runtime, App)
    state = {"messages": [AIMessage("", tool_calls=[sync_call])]}
    app = App(USER)

    native, native_async = "langchain @tool invoke", "langchain @tool ainvoke"
    native_node = "ToolNode graph, langchain @tool"
    return [
        Row(
            Case(native, lambda: lc_add.invoke(sync_call, native_config)),
            native,
            message_content,
        ),
        Row(
            Case(
                "toolctx tool invoke",
                lambda: our_add.invoke(sync_call, ours_config),
            ),
            native,
            message_content,
        ),
        Row(
            Case(
                "toolctx Dispatcher.dispatch alone",
                lambda: dispatcher.dispatch(call, TEMPLATE),
            ),
            native,
            result_output,
        ),
        Row(
            Case(
                native_async,
                afn=lambda: lc_add_async.ainvoke(async_call, native_config),
            ),
            native_async,
            message_content,
        ),
        Row(
            Case(
                "toolctx async tool ainvoke",
                afn=lambda: our_async.ainvoke(async_call, ours_config),
            ),
            native_async,
            message_content,
        ),
        Row(
            Case(
                "toolctx Dispatcher.adispatch alone",
                afn=lambda: dispatcher.adispatch(acall, TEMPLATE),
            ),
            native_async,
            result_output,
        ),
        Row(
            Case(native_node, lambda: native_graph.invoke(state, context=app)),
            native_node,
            graph_content,
        ),
        Row(
            Case(
                "ToolNode graph, toolctx tool",
                lambda: our_graph.invoke(state, context=TEMPLATE),
            ),
            native_node,
            graph_content,
        ),
    ]


def verify(row: Row, loop: asyncio.AbstractEventLoop) -> None:
    """Run *row* once; stop the script unless it returned 3 for USER."""
    SEEN[0] = None
    case = row.case
    if case.fn is not None:
        out = case.fn()
    else:
        assert case.afn is not None
        out = loop.run_until_complete(case.afn())
    answer = row.answer(out)
    if answer != 3 or SEEN[0] != USER:
        msg = (
            f"{case.name} failed its check: expected 3 and user id "
            f"{USER!r} read inside the tool, got {answer!r} and "
            f"{SEEN[0]!r}."
        )
        raise SystemExit(msg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--number", type=int, help="calls per sample")
    parser.add_argument("--rounds", type=int, help="interleaved rounds")
    opts = parser.parse_args()
    number, rounds = (100, 2) if opts.quick else (2_000, 7)
    number = opts.number or number
    rounds = opts.rounds or rounds
    # LangChain's own ToolRuntime tool warns once, when its callback input
    # is serialized, that the app's context is not None; harmless here.
    warnings.filterwarnings(
        "ignore", "Pydantic serializer warnings", UserWarning
    )
    try:
        rows = build()
    except ImportError as exc:
        msg = f"{exc}: pip install -e '.[langchain]'"
        raise SystemExit(msg) from None

    loop = asyncio.new_event_loop()
    try:
        for row in rows:
            verify(row, loop)
    finally:
        loop.close()

    ns = measure([r.case for r in rows], number=number, rounds=rounds)
    versions = ", ".join(
        f"{dist} {metadata.version(dist)}"
        for dist in ("toolctx", "langchain-core", "langgraph")
    )
    print(
        f"python {platform.python_version()}; {versions}; best of "
        f"{rounds} interleaved rounds x {number} calls\n"
    )
    print(
        table(
            [
                (r.case.name, ns[r.case.name], r.baseline, ns[r.baseline])
                for r in rows
            ]
        )
    )


if __name__ == "__main__":
    main()
