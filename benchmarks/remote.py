"""What running a tool call in a process pool costs, from one run.

Run: ``python benchmarks/remote.py`` (add ``--quick`` for a smoke run).
Prints a Markdown table of ns per call and ratios, on one warmed,
spawned ``ProcessPoolExecutor`` worker:

- bare pool round trip: ``pool.submit(add, 1, 2).result()``;
- ``pool.submit(run_remote, call).result()`` with a prebuilt RemoteCall;
- the same with ``RemoteCall.for_tool(...)`` built per call, as a
  dispatcher does (reference lookup and ``ExecutionContext.to_dict()``);
- ``run_remote(call)`` in this process: the worker-side work alone,
  against a plain ``add(1, 2)`` call.

The tool lives in this script, which the spawned worker re-imports as
``__main__`` (hence ``allow_main=True``); real code keeps its tools in an
importable module.
"""

from __future__ import annotations

import multiprocessing
import platform
import sys

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent))

import toolctx

from _harness import Case, measure, table
from toolctx import ExecutionContext, execution_context, tool
from toolctx.remote import RemoteCall, run_remote


def raw_add(a: int, b: int) -> int:
    return a + b


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    execution_context()
    return a + b


TEMPLATE = ExecutionContext(
    invocation_id="inv-bench",
    user_id="bench-user",
    session_id="bench",
    tool_name="add",
    tool_call_id="call_1",
)
ARGS = {"a": 1, "b": 2}


def main() -> None:
    quick = "--quick" in sys.argv
    number, rounds = (200, 2) if quick else (2_000, 5)
    call = RemoteCall.for_tool(add, ARGS, TEMPLATE, allow_main=True)
    assert run_remote(call).output == 3
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        for _ in range(50):  # warm: start the worker, import, cache the tool
            assert pool.submit(raw_add, 1, 2).result() == 3
            outcome = pool.submit(run_remote, call).result()
            assert outcome.output == 3, outcome.error

        def per_call() -> object:
            built = RemoteCall.for_tool(add, ARGS, TEMPLATE, allow_main=True)
            return pool.submit(run_remote, built).result()

        cases = [
            Case(
                "pool round trip", lambda: pool.submit(raw_add, 1, 2).result()
            ),
            Case(
                "pool run_remote",
                lambda: pool.submit(run_remote, call).result(),
            ),
            Case("pool run_remote, built per call", per_call),
        ]
        ns = measure(cases, number=number, rounds=rounds)
    local = measure(
        [
            Case("raw call", lambda: raw_add(1, 2)),
            Case("run_remote in-process", lambda: run_remote(call)),
        ],
        number=number * 10,
        rounds=rounds,
    )
    print(
        f"toolctx {toolctx.__version__}, CPython {platform.python_version()},"
        f" {platform.machine()}, best of {rounds} rounds x {number} calls"
        " (in-process: x10)\n"
    )
    base = ns["pool round trip"]
    print(
        table(
            [
                ("pool round trip", base, "pool round trip", base),
                (
                    "pool run_remote",
                    ns["pool run_remote"],
                    "pool round trip",
                    base,
                ),
                (
                    "pool run_remote, built per call",
                    ns["pool run_remote, built per call"],
                    "pool round trip",
                    base,
                ),
                (
                    "raw call",
                    local["raw call"],
                    "raw call",
                    local["raw call"],
                ),
                (
                    "run_remote in-process",
                    local["run_remote in-process"],
                    "raw call",
                    local["raw call"],
                ),
            ]
        )
    )
    extra = ns["pool run_remote"] - base
    print(
        f"\nrun_remote adds {extra / 1000:.1f} µs to a "
        f"{base / 1000:.1f} µs pool round trip "
        f"({ns['pool run_remote'] / base:.2f}x)."
    )


if __name__ == "__main__":
    main()
