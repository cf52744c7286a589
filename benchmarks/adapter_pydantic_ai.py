"""A toolctx tool inside Pydantic AI against a native Pydantic AI tool.

Run: ``python benchmarks/adapter_pydantic_ai.py`` (``--quick`` for a
smoke run; ``--number``, ``--runs`` and ``--rounds`` to tune). Needs
``pip install -e '.[pydantic-ai]'``.

The workload is ``add(a: int, b: int) -> int`` called with the JSON text
``{"a": 1, "b": 2}``, two ways:

- toolctx: a ``Registry`` tool offered through
  ``toolctx.adapters.pydantic_ai.toolset(dispatcher)``, with
  ``deps=ExecutionContext(...)``; the tool reads
  ``execution_context().user_id``;
- native: the same function as ``@agent.tool_plain`` (in the direct
  cases, ``FunctionToolset.tool_plain``, which is what ``agent.tool_plain``
  registers into); it reads nothing, as a plain tool has no context.

Each is timed as a sync tool (both frameworks run it in a worker thread)
and as an async tool (on the event loop), in two settings:

- an agent run: ``Agent.run`` with a ``FunctionModel`` that calls the tool
  once and then answers; the whole run is timed (two model requests, the
  tool manager, the message history), so the difference between the rows
  is the per-call overhead of the adapter inside a real run;
- the toolset machinery directly, as the tool manager calls it:
  ``args_validator.validate_json(json_text)``, a per-call
  ``dataclasses.replace(run_ctx, tool_name=..., tool_call_id=...)``, then
  ``toolset.call_tool``.

Every case runs once before timing and must produce 3 (and the toolctx
tool must have read the user id); the script stops with an error
otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import platform
import sys

from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).parent))

from _harness import Case, measure, table
from toolctx import Dispatcher, ExecutionContext, Registry, execution_context


ARGS = '{"a": 1, "b": 2}'
USER = "user-42"
CALL_ID = "call_1"
TEMPLATE = ExecutionContext(user_id=USER, session_id="bench")
SEEN: list[object] = [None]


def _registry() -> Registry:
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

    return registry


def _native_add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def _native_add_async(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    return a + b


def build() -> tuple[list[Case], list[tuple[str, str]], Callable[..., Any]]:
    """The cases, the (case, baseline) pairs and a checker."""
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    from toolctx.adapters.pydantic_ai import toolset

    def script(name: str) -> FunctionModel:
        def respond(
            messages: list[ModelMessage], info: AgentInfo
        ) -> ModelResponse:
            last = messages[-1]
            if isinstance(last, ModelRequest) and any(
                isinstance(p, ToolReturnPart) for p in last.parts
            ):
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(
                parts=[ToolCallPart(name, ARGS, tool_call_id=CALL_ID)]
            )

        return FunctionModel(respond)

    dispatcher = Dispatcher(_registry())
    ours = toolset(dispatcher)

    def agent_run(agent: Agent[ExecutionContext, str]) -> Callable[[], Any]:
        run = agent.run

        def go() -> Awaitable[Any]:
            return run("add 1 and 2", deps=TEMPLATE)

        return go

    toolctx_agents = {
        name: Agent(script(name), deps_type=ExecutionContext, toolsets=[ours])
        for name in ("add", "add_async")
    }
    native_agents: dict[str, Agent[ExecutionContext, str]] = {}
    for name, fn in (("add", _native_add), ("add_async", _native_add_async)):
        agent = Agent(script(name), deps_type=ExecutionContext)
        agent.tool_plain(name=name)(fn)
        native_agents[name] = agent

    native_set: FunctionToolset[ExecutionContext] = FunctionToolset()
    native_set.tool_plain(name="add")(_native_add)
    native_set.tool_plain(name="add_async")(_native_add_async)

    run_ctx = RunContext(deps=TEMPLATE, model=TestModel(), usage=RunUsage())
    replace = dataclasses.replace

    def direct(ts: Any, name: str) -> Callable[[], Any]:
        tool = asyncio.run(ts.get_tools(run_ctx))[name]
        validate = tool.args_validator.validate_json
        call_tool = ts.call_tool
        max_retries = tool.max_retries

        def go() -> Awaitable[Any]:
            args = validate(ARGS)
            ctx = replace(
                run_ctx,
                tool_name=name,
                tool_call_id=CALL_ID,
                retry=0,
                max_retries=max_retries,
            )
            return call_tool(name, args, ctx, tool)

        return go

    cases: list[Case] = []
    pairs: list[tuple[str, str]] = []
    kinds = (("add", "sync tool"), ("add_async", "async tool"))
    for name, kind in kinds:
        native = f"agent run, native tool_plain ({kind})"
        mine = f"agent run, toolctx toolset ({kind})"
        cases += [
            Case(native, afn=agent_run(native_agents[name])),
            Case(mine, afn=agent_run(toolctx_agents[name])),
        ]
        pairs.append((mine, native))
    for name, kind in kinds:
        native = f"call_tool, native FunctionToolset ({kind})"
        mine = f"call_tool, toolctx toolset ({kind})"
        cases += [
            Case(native, afn=direct(native_set, name)),
            Case(mine, afn=direct(ours, name)),
        ]
        pairs.append((mine, native))

    def check(case: Case, value: Any) -> None:
        if hasattr(value, "all_messages"):
            returns = [
                p.content
                for m in value.all_messages()
                for p in getattr(m, "parts", ())
                if isinstance(p, ToolReturnPart)
            ]
            value = returns[0] if len(returns) == 1 else returns
        if str(value) != "3" or ("toolctx" in case.name and SEEN[0] != USER):
            msg = (
                f"{case.name} failed its check: expected 3 (and the user "
                f"id {USER!r} read inside the toolctx tool), got "
                f"{value!r} and {SEEN[0]!r}."
            )
            raise SystemExit(msg)

    return cases, pairs, check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--number", type=int, help="direct calls per sample")
    parser.add_argument("--runs", type=int, help="agent runs per sample")
    parser.add_argument("--rounds", type=int, help="interleaved rounds")
    opts = parser.parse_args()
    number, runs, rounds = (200, 20, 2) if opts.quick else (5_000, 100, 7)
    number = opts.number or number
    runs = opts.runs or runs
    rounds = opts.rounds or rounds

    try:
        version = metadata.version("pydantic-ai-slim")
    except metadata.PackageNotFoundError:
        raise SystemExit(
            "Pydantic AI is not installed: pip install -e '.[pydantic-ai]'"
        ) from None
    cases, pairs, check = build()

    loop = asyncio.new_event_loop()
    try:
        for case in cases:
            SEEN[0] = None
            assert case.afn is not None
            check(case, loop.run_until_complete(case.afn()))
    finally:
        loop.close()

    runs_cases = [c for c in cases if c.name.startswith("agent run")]
    direct_cases = [c for c in cases if c.name.startswith("call_tool")]
    ns = measure(runs_cases, number=runs, rounds=rounds)
    ns |= measure(direct_cases, number=number, rounds=rounds)

    print(
        f"python {platform.python_version()}, pydantic-ai-slim {version}, "
        f"toolctx {metadata.version('toolctx')}; best of {rounds} "
        f"interleaved rounds x {runs} agent runs / {number} direct calls"
    )
    print()
    print(table([(mine, ns[mine], base, ns[base]) for mine, base in pairs]))
    print()
    for mine, base in pairs:
        print(
            f"- {mine}: {ns[mine] - ns[base]:+,.0f} ns per call against {base}"
        )


if __name__ == "__main__":
    main()
