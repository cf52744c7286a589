"""Concurrency costs, from one run: parallel calls and process pools.

Run: ``python benchmarks/concurrency.py`` (``--quick`` for a smoke run).

- ``adispatch_all`` of 100 calls of an async ``add`` against
  ``asyncio.gather`` of 100 bare coroutines that each parse the same JSON
  and set/get/reset a raw ContextVar;
- ``Dispatcher(executor=pool).dispatch`` against a bare
  ``pool.submit(add, 1, 2).result()`` on one warmed, spawned worker.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import multiprocessing
import platform
import sys

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent))

import bench_tools
import toolctx

from _harness import Case, measure, table
from toolctx import Dispatcher, ExecutionContext, Registry, ToolCall


ARGS = '{"a": 1, "b": 2}'
VAR: contextvars.ContextVar[object] = contextvars.ContextVar("bench")
TEMPLATE = ExecutionContext(user_id="bench-user", session_id="bench")

registry = Registry()


@registry.tool
async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    toolctx.execution_context()
    return a + b


dispatcher = Dispatcher(registry)
CALLS = [ToolCall("add_async", ARGS, f"c{i}") for i in range(100)]


async def bare_one() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        VAR.get()
        await asyncio.sleep(0)
        return int(args["a"]) + int(args["b"])
    finally:
        VAR.reset(token)


async def bare_gather() -> list[int]:
    return await asyncio.gather(*(bare_one() for _ in range(100)))


async def toolctx_gather() -> list[toolctx.ToolResult]:
    return await dispatcher.adispatch_all(CALLS, TEMPLATE)


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 2 if quick else 7
    results = asyncio.run(toolctx_gather())
    assert [r.output for r in results] == [3] * 100
    ns = measure(
        [
            Case("gather bare", afn=bare_gather),
            Case("adispatch_all", afn=toolctx_gather),
        ],
        number=20 if quick else 300,
        rounds=rounds,
    )
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        remote = Dispatcher(Registry([bench_tools.add]), executor=pool)
        call = ToolCall("add", ARGS, "c1")
        assert remote.dispatch(call, TEMPLATE).output == 3
        assert pool.submit(bench_tools.raw_add, 1, 2).result() == 3
        pool_ns = measure(
            [
                Case(
                    "bare submit",
                    lambda: pool.submit(bench_tools.raw_add, 1, 2).result(),
                ),
                Case(
                    "dispatch via pool",
                    lambda: remote.dispatch(call, TEMPLATE),
                ),
            ],
            number=20 if quick else 300,
            rounds=rounds,
        )
    print(
        f"toolctx {toolctx.__version__}, CPython {platform.python_version()},"
        f" {platform.machine()}, best of {rounds} rounds\n"
    )
    print(
        table(
            [
                (
                    "gather of 100 bare calls",
                    ns["gather bare"],
                    "gather of 100 bare calls",
                    ns["gather bare"],
                ),
                (
                    "adispatch_all of 100 calls",
                    ns["adispatch_all"],
                    "gather of 100 bare calls",
                    ns["gather bare"],
                ),
                (
                    "bare pool.submit round trip",
                    pool_ns["bare submit"],
                    "bare pool.submit round trip",
                    pool_ns["bare submit"],
                ),
                (
                    "dispatch via process pool",
                    pool_ns["dispatch via pool"],
                    "bare pool.submit round trip",
                    pool_ns["bare submit"],
                ),
            ]
        )
    )


if __name__ == "__main__":
    main()
