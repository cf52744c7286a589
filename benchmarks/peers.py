"""toolctx against the peer SDKs on one workload, from one run.

Run: ``python benchmarks/peers.py`` (``--quick`` for a smoke run;
``--number`` and ``--rounds`` to tune). Peers are optional: install them
with ``pip install -e '.[bench]'``; one that is not installed is reported
as "not installed" and skipped.

The workload: a tool ``add(a: int, b: int)`` called with the JSON text
``{"a": 1, "b": 2}`` that reads the caller's user id from its per-call
context, the way each SDK documents it:

- toolctx: ``execution_context().user_id``, through ``Dispatcher.dispatch``
  or ``adispatch``;
- openai-agents: a ``RunContextWrapper[App]`` first parameter, invoked via
  ``FunctionTool.on_invoke_tool(ToolContext(...), json_text)`` with a
  fresh ``ToolContext`` per call (call id, name, arguments), as the runner
  makes one per call;
- pydantic-ai: a ``RunContext[Deps]`` first parameter, invoked through the
  toolset machinery the agent's tool manager uses:
  ``args_validator.validate_json(json_text)``, a per-call
  ``dataclasses.replace(run_ctx, tool_name=..., tool_call_id=...)``, then
  ``FunctionToolset.call_tool``;
- mcp 2.x: ``MCPServer``'s tool manager
  ``call_tool(name, args, context=Context(...))`` with a fresh ``Context``
  per call; the tool reads ``get_access_token().subject``, the user the
  auth middleware binds per request (bound and reset in the timed call);
- langchain-core: ``@tool`` with a ``config: RunnableConfig`` parameter,
  ``invoke(args, config={"configurable": {"user_id": ...}})``;
- fastmcp: ``FastMCP.call_tool(name, args)``; the tool reads
  ``fastmcp.server.dependencies.get_access_token().subject`` (the auth
  ContextVar is bound and reset in the timed call).

The peers that take a dict (mcp, langchain-core, fastmcp) pay for
``json.loads`` inside the timed call, like everyone else. Every case is
run once before timing and must return 3 having read the right user id
inside the tool; the script stops with an error otherwise.

The module does not use ``from __future__ import annotations``: the peers
read the hints of tools defined inside functions, which must be real
objects rather than strings.

Floors: ``json.loads`` + ContextVar set/get/reset + a plain call (sync),
the same awaited (async), and the async floor with the call sent to the
loop's default executor under ``copy_context().run`` (worker thread).
"""

import argparse
import asyncio
import contextvars
import dataclasses
import json
import os
import platform
import sys

from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).parent))

from _harness import Case, measure
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    execution_context,
)


ARGS = '{"a": 1, "b": 2}'
USER = "user-42"
CALL_ID = "call_1"

# Every tool (and every floor) stores the user id it read here: the cost
# is the same for all cases, and the check before timing reads it.
SEEN: list[object] = [None]

VAR: contextvars.ContextVar[ExecutionContext] = contextvars.ContextVar("bench")
TEMPLATE = ExecutionContext(user_id=USER, session_id="bench")

PEERS = (
    "openai-agents",
    "pydantic-ai-slim",
    "mcp",
    "langchain-core",
    "fastmcp",
)

SYNC, ASYNC, THREAD = "sync", "async", "sync, worker thread"


@dataclasses.dataclass
class Row:
    """One timed case and how to check its result."""

    sdk: str
    label: str
    tool: str  # SYNC, ASYNC or THREAD: how the tool body runs
    fn: Callable[[], object] | None = None
    afn: Callable[[], Any] | None = None
    output: Callable[[Any], object] = lambda result: result
    case: Case = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        name = f"{self.sdk}: {self.label} ({self.tool} tool)"
        self.case = Case(name, self.fn, self.afn)


# -- floors --------------------------------------------------------------


def raw_add(a: int, b: int) -> int:
    SEEN[0] = VAR.get().user_id
    return a + b


async def raw_add_async(a: int, b: int) -> int:
    SEEN[0] = VAR.get().user_id
    return a + b


def floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        return raw_add(**args)
    finally:
        VAR.reset(token)


async def async_floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        return await raw_add_async(**args)
    finally:
        VAR.reset(token)


async def thread_floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        loop = asyncio.get_running_loop()
        body = partial(raw_add, **args)
        return await loop.run_in_executor(
            None, contextvars.copy_context().run, body
        )
    finally:
        VAR.reset(token)


def floor_rows() -> list[Row]:
    return [
        Row("floor", "sync floor", SYNC, floor),
        Row("floor", "async floor", ASYNC, afn=async_floor),
        Row("floor", "async floor + worker thread", THREAD, afn=thread_floor),
    ]


# -- toolctx -------------------------------------------------------------


def _toolctx_output(result: ToolResult) -> object:
    if result.is_error:
        return f"error result: {result.error}"
    return result.output


def toolctx_rows() -> list[Row]:
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

    @registry.tool(inline=True)
    def add_inline(a: int, b: int) -> int:
        """Add two integers on the event loop."""
        SEEN[0] = execution_context().user_id
        return a + b

    dispatcher = Dispatcher(registry)
    call = ToolCall("add", ARGS, CALL_ID)
    acall = ToolCall("add_async", ARGS, CALL_ID)
    icall = ToolCall("add_inline", ARGS, CALL_ID)
    out = _toolctx_output
    return [
        Row(
            "toolctx",
            "dispatch",
            SYNC,
            lambda: dispatcher.dispatch(call, TEMPLATE),
            output=out,
        ),
        Row(
            "toolctx",
            "adispatch",
            ASYNC,
            afn=lambda: dispatcher.adispatch(acall, TEMPLATE),
            output=out,
        ),
        Row(
            "toolctx",
            "adispatch, @tool(inline=True)",
            SYNC,
            afn=lambda: dispatcher.adispatch(icall, TEMPLATE),
            output=out,
        ),
        Row(
            "toolctx",
            "adispatch (default for sync tools)",
            THREAD,
            afn=lambda: dispatcher.adispatch(call, TEMPLATE),
            output=out,
        ),
    ]


# -- peers ---------------------------------------------------------------


def openai_agents_rows() -> list[Row]:
    from agents import RunContextWrapper, function_tool
    from agents.tool_context import ToolContext
    from agents.usage import Usage

    @dataclasses.dataclass
    class App:
        user_id: str

    @function_tool
    async def add(ctx: RunContextWrapper[App], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.context.user_id
        return a + b

    @function_tool(name_override="add")
    def add_sync(ctx: RunContextWrapper[App], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.context.user_id
        return a + b

    app = App(USER)
    usage = Usage()

    def invoker(tool: Any) -> Callable[[], Any]:
        invoke = tool.on_invoke_tool

        def run() -> Any:
            ctx = ToolContext(app, usage, "add", CALL_ID, ARGS)
            return invoke(ctx, ARGS)

        return run

    sdk, label = "openai-agents", "FunctionTool.on_invoke_tool"
    return [
        Row(sdk, label, ASYNC, afn=invoker(add)),
        Row(sdk, label, THREAD, afn=invoker(add_sync)),
    ]


def pydantic_ai_rows() -> list[Row]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    @dataclasses.dataclass
    class Deps:
        user_id: str

    toolset: FunctionToolset[Deps] = FunctionToolset()

    @toolset.tool
    async def add(ctx: RunContext[Deps], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.deps.user_id
        return a + b

    @toolset.tool
    def add_sync(ctx: RunContext[Deps], a: int, b: int) -> int:
        """Add two integers."""
        SEEN[0] = ctx.deps.user_id
        return a + b

    run_ctx = RunContext(deps=Deps(USER), model=TestModel(), usage=RunUsage())
    tools = asyncio.run(toolset.get_tools(run_ctx))
    replace = dataclasses.replace

    def invoker(name: str) -> Callable[[], Any]:
        tool = tools[name]
        validate = tool.args_validator.validate_json
        call_tool = toolset.call_tool
        max_retries = tool.max_retries

        def run() -> Any:
            args = validate(ARGS)
            ctx = replace(
                run_ctx,
                tool_name=name,
                tool_call_id=CALL_ID,
                retry=0,
                max_retries=max_retries,
            )
            return call_tool(name, args, ctx, tool)

        return run

    sdk, label = "pydantic-ai-slim", "validate_json + toolset call_tool"
    return [
        Row(sdk, label, ASYNC, afn=invoker("add")),
        Row(sdk, label, THREAD, afn=invoker("add_sync")),
    ]


def mcp_rows() -> list[Row]:
    from mcp.server.auth.middleware.auth_context import (
        auth_context_var,
        get_access_token,
    )
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("bench")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        token = get_access_token()
        SEEN[0] = token.subject if token is not None else None
        return a + b

    user = AuthenticatedUser(
        AccessToken(token="t", client_id="bench", scopes=[], subject=USER)  # noqa: S106
    )
    call_tool = server._tool_manager.call_tool  # noqa: SLF001

    async def run() -> Any:
        args = json.loads(ARGS)
        token = auth_context_var.set(user)
        try:
            return await call_tool(
                "add", args, context=Context(mcp_server=server)
            )
        finally:
            auth_context_var.reset(token)

    return [Row("mcp", "MCPServer tool manager call_tool", ASYNC, afn=run)]


def langchain_rows() -> list[Row]:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int, config: RunnableConfig) -> int:
        """Add two integers."""
        SEEN[0] = config["configurable"]["user_id"]
        return a + b

    @tool("add")
    async def add_async(a: int, b: int, config: RunnableConfig) -> int:
        """Add two integers."""
        SEEN[0] = config["configurable"]["user_id"]
        return a + b

    invoke = add.invoke
    ainvoke = add_async.ainvoke

    def run() -> Any:
        return invoke(
            json.loads(ARGS), config={"configurable": {"user_id": USER}}
        )

    def arun() -> Any:
        return ainvoke(
            json.loads(ARGS), config={"configurable": {"user_id": USER}}
        )

    return [
        Row("langchain-core", "tool.invoke", SYNC, run),
        Row("langchain-core", "tool.ainvoke", ASYNC, afn=arun),
    ]


def fastmcp_rows() -> list[Row]:
    from fastmcp import FastMCP
    from fastmcp.server.auth import AccessToken
    from fastmcp.server.dependencies import get_access_token
    from mcp.server.auth.middleware.auth_context import auth_context_var
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    server = FastMCP("bench")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        token = get_access_token()
        SEEN[0] = token.subject if token is not None else None
        return a + b

    user = AuthenticatedUser(
        AccessToken(token="t", client_id="bench", scopes=[], subject=USER)  # noqa: S106
    )
    call_tool = server.call_tool

    async def run() -> Any:
        args = json.loads(ARGS)
        token = auth_context_var.set(user)
        try:
            return await call_tool("add", args)
        finally:
            auth_context_var.reset(token)

    return [
        Row(
            "fastmcp",
            "FastMCP.call_tool",
            ASYNC,
            afn=run,
            output=lambda r: (r.structured_content or {}).get("result"),
        )
    ]


BUILDERS: dict[str, Callable[[], list[Row]]] = {
    "openai-agents": openai_agents_rows,
    "pydantic-ai-slim": pydantic_ai_rows,
    "mcp": mcp_rows,
    "langchain-core": langchain_rows,
    "fastmcp": fastmcp_rows,
}


# -- running -------------------------------------------------------------


def installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def verify(row: Row, loop: asyncio.AbstractEventLoop) -> None:
    """Run *row* once; stop the script unless it returned 3 for USER."""
    SEEN[0] = None
    case = row.case
    if case.fn is not None:
        result = case.fn()
    else:
        assert case.afn is not None
        result = loop.run_until_complete(case.afn())
    output = row.output(result)
    if output != 3 or SEEN[0] != USER:
        msg = (
            f"{case.name} failed its check: "
            f"expected output 3 and user id {USER!r} read inside the "
            f"tool, got output {output!r} and user id {SEEN[0]!r}."
        )
        raise SystemExit(msg)


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor() or "unknown CPU"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def header(
    versions: dict[str, str | None], number: int, rounds: int, before: str
) -> str:
    lines = [
        (
            f"machine: {platform.system()} {platform.machine()}, "
            f"{cpu_model()}, {os.cpu_count()} CPUs"
        ),
        (
            f"python: {platform.python_implementation()} "
            f"{platform.python_version()}"
        ),
        f"toolctx {metadata.version('toolctx')}; peers: "
        + ", ".join(
            f"{dist} {v}" if v else f"{dist} not installed"
            for dist, v in versions.items()
        ),
        (
            f"best of {rounds} interleaved rounds x {number} calls; "
            f"load average before: {before}, after: {load()}"
        ),
    ]
    return "\n".join(lines)


def render(rows: list[Row], ns: dict[str, float]) -> str:
    floors = {r.label: ns[r.case.name] for r in rows if r.sdk == "floor"}
    sync_floor, async_floor = floors["sync floor"], floors["async floor"]
    out = [
        "| SDK | case | tool | ns/call | x sync floor | x async floor |",
        "|---|---|---|---:|---:|---:|",
    ]
    for row in rows:
        t = ns[row.case.name]
        out.append(
            f"| {row.sdk} | {row.label} | {row.tool} | "
            f"{t:,.0f} | {t / sync_floor:.2f}x | {t / async_floor:.2f}x |"
        )
    return "\n".join(out)


def speedups(rows: list[Row], ns: dict[str, float]) -> str:
    """Compare toolctx with the fastest peer for each kind of tool."""
    if all(r.sdk in {"toolctx", "floor"} for r in rows):
        return "- no peer SDK installed: pip install -e '.[bench]'"
    lines = []
    for kind in (ASYNC, SYNC, THREAD):
        ours = [r for r in rows if r.sdk == "toolctx" and r.tool == kind]
        theirs = [r for r in rows if r.sdk not in {"toolctx", "floor"}]
        theirs = [r for r in theirs if r.tool == kind]
        if not ours or not theirs:
            continue
        peer = min(theirs, key=lambda r: ns[r.case.name])
        peer_ns = ns[peer.case.name]
        for r in ours:
            lines.append(
                f"- {kind} tool: {r.label} {ns[r.case.name]:,.0f}"
                f" ns vs fastest peer {peer.sdk} "
                f"({peer.label}) {peer_ns:,.0f} ns: "
                f"speed-up {peer_ns / ns[r.case.name]:.2f}x"
            )
    peers = [r for r in rows if r.sdk not in {"toolctx", "floor"}]
    if peers:
        best_peer = min(peers, key=lambda r: ns[r.case.name])
        best_ours = min(
            (r for r in rows if r.sdk == "toolctx"),
            key=lambda r: ns[r.case.name],
        )
        lines.append(
            f"- overall: fastest toolctx case ({best_ours.label},"
            f" {best_ours.tool} tool) vs fastest peer case "
            f"({best_peer.sdk} {best_peer.label}, "
            f"{best_peer.tool} tool): "
            "speed-up "
            f"{ns[best_peer.case.name] / ns[best_ours.case.name]:.2f}x"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--number", type=int, help="calls per sample")
    parser.add_argument("--rounds", type=int, help="interleaved rounds")
    opts = parser.parse_args()
    number, rounds = (300, 2) if opts.quick else (10_000, 7)
    number = opts.number or number
    rounds = opts.rounds or rounds

    versions = {dist: installed_version(dist) for dist in PEERS}
    rows = floor_rows() + toolctx_rows()
    for dist in PEERS:
        if versions[dist] is not None:
            rows += BUILDERS[dist]()

    loop = asyncio.new_event_loop()
    try:
        for row in rows:
            verify(row, loop)
    finally:
        loop.close()

    before = load()
    ns = measure([r.case for r in rows], number=number, rounds=rounds)
    print(header(versions, number, rounds, before), end="\n\n")
    print(render(rows, ns))
    missing = [dist for dist, v in versions.items() if v is None]
    if missing:
        print(f"\nnot installed (skipped): {', '.join(missing)}")
    print("\ntoolctx against the fastest peer, like for like:")
    print(speedups(rows, ns))


if __name__ == "__main__":
    main()
