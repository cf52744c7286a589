"""Dispatch overhead against a raw ContextVar floor, from one run.

Run: ``python benchmarks/dispatch.py`` (add ``--quick`` for a smoke run).
Prints a Markdown table of ns per call and ratios:

- raw call: ``add(1, 2)``;
- floor: ``json.loads`` + ContextVar set/get/reset + call;
- ``Dispatcher.dispatch`` of ``add(a: int, b: int)`` from ``{"a": 1, "b": 2}``;
- async floor (awaited) and ``adispatch`` of an async ``add``;
- ``execution_context()`` against a bare ``ContextVar.get()``.
"""

from __future__ import annotations

import contextvars
import json
import platform
import sys

from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent))

import toolctx

from _harness import Case, measure, table
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    execution_context,
    use_context,
)


ARGS = '{"a": 1, "b": 2}'
VAR: contextvars.ContextVar[object] = contextvars.ContextVar("bench")


def raw_add(a: int, b: int) -> int:
    return a + b


async def raw_add_async(a: int, b: int) -> int:
    return a + b


def floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        VAR.get()
        return raw_add(**args)
    finally:
        VAR.reset(token)


async def async_floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        VAR.get()
        return await raw_add_async(**args)
    finally:
        VAR.reset(token)


registry = Registry()


@registry.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    execution_context()
    return a + b


@registry.tool
async def add_async(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    execution_context()
    return a + b


TEMPLATE = ExecutionContext(user_id="bench-user", session_id="bench")
dispatcher = Dispatcher(registry)
CALL = ToolCall("add", ARGS, "call_1")
ACALL = ToolCall("add_async", ARGS, "call_2")


def main() -> None:
    quick = "--quick" in sys.argv
    number, rounds = (500, 2) if quick else (20_000, 7)
    assert dispatcher.dispatch(CALL, TEMPLATE).output == 3
    bound = use_context(TEMPLATE)
    bound.__enter__()
    try:
        VAR.set(TEMPLATE)
        get = VAR.get
        cases = [
            Case("raw call", lambda: raw_add(1, 2)),
            Case("floor", floor),
            Case("dispatch", lambda: dispatcher.dispatch(CALL, TEMPLATE)),
            Case("async floor", afn=async_floor),
            Case(
                "adispatch", afn=lambda: dispatcher.adispatch(ACALL, TEMPLATE)
            ),
            Case("ContextVar.get()", get),
            Case("execution_context()", execution_context),
        ]
        ns = measure(cases, number=number, rounds=rounds)
    finally:
        bound.__exit__(None, None, None)
    print(
        f"toolctx {toolctx.__version__}, CPython {platform.python_version()},"
        f" {platform.machine()}, best of {rounds} rounds x {number} calls\n"
    )
    print(
        table(
            [
                ("raw call", ns["raw call"], "floor", ns["floor"]),
                ("floor", ns["floor"], "floor", ns["floor"]),
                ("dispatch", ns["dispatch"], "floor", ns["floor"]),
                (
                    "async floor",
                    ns["async floor"],
                    "async floor",
                    ns["async floor"],
                ),
                (
                    "adispatch",
                    ns["adispatch"],
                    "async floor",
                    ns["async floor"],
                ),
                (
                    "ContextVar.get()",
                    ns["ContextVar.get()"],
                    "ContextVar.get()",
                    ns["ContextVar.get()"],
                ),
                (
                    "execution_context()",
                    ns["execution_context()"],
                    "ContextVar.get()",
                    ns["ContextVar.get()"],
                ),
            ]
        )
    )


if __name__ == "__main__":
    main()
