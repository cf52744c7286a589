"""Dispatch overhead against a raw ContextVar floor, from one run.

Run: ``python benchmarks/dispatch.py`` (add ``--quick`` for a smoke run).
Prints a Markdown table of ns per call and ratios:

- raw call: ``add(1, 2)``;
- floor: ``json.loads`` + ContextVar set/get/reset + call;
- ``Dispatcher.dispatch`` of ``add(a: int, b: int)`` from ``{"a": 1, "b": 2}``;
- async floor (awaited) and ``adispatch`` of an async ``add``;
- through one pass-through interceptor, sync and async;
- a sync tool under the default ``adispatch`` (the worker-thread hop);
- ``stream()`` of a 10-chunk generator, ``dispatch_all`` /
  ``adispatch_all`` of 10 calls and a 10-parameter tool, per call;
- the bind seam: binding through ``SEAM`` against the ContextVar's own
  ``set``/``reset`` (diagnostics off);
- ``execution_context()`` against a bare ``ContextVar.get()``.
"""

from __future__ import annotations

import contextvars
import json
import platform
import sys

from collections.abc import Iterator
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent))

import toolctx

from _harness import Case, measure, table
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    execution_context,
    use_context,
)
from toolctx._context.current import SEAM, reset_current, set_current


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


@registry.tool
def count(n: int) -> Iterator[int]:
    """Yield 0..n-1."""
    execution_context()
    yield from range(n)


@registry.tool
def wide(  # noqa: PLR0917 - the 10-parameter case
    a: int,
    b: int,
    c: str,
    d: str,
    e: float,
    f: float,
    g: bool,
    h: bool,
    i: int = 0,
    j: str = "",
) -> int:
    """Take ten parameters."""
    execution_context()
    return a + b


class PassThrough:
    """An interceptor that changes nothing."""

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Return the context as it is."""
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Return the result as it is."""
        return result


TEMPLATE = ExecutionContext(user_id="bench-user", session_id="bench")
dispatcher = Dispatcher(registry)
intercepted = Dispatcher(registry, interceptors=[PassThrough()])
CALL = ToolCall("add", ARGS, "call_1")
ACALL = ToolCall("add_async", ARGS, "call_2")
STREAM = ToolCall("count", '{"n": 10}', "call_3")
WIDE = ToolCall(
    "wide",
    '{"a": 1, "b": 2, "c": "x", "d": "y", "e": 1.5, "f": 2.5, "g": true, '
    '"h": false, "i": 3, "j": "z"}',
    "call_4",
)
TEN = [ToolCall("add", ARGS, f"call_{n}") for n in range(10)]
ATEN = [ToolCall("add_async", ARGS, f"call_{n}") for n in range(10)]


def seam_bind() -> None:
    SEAM.unbind(SEAM.bind(TEMPLATE))


def var_bind() -> None:
    reset_current(set_current(TEMPLATE))


def stream_ten() -> None:
    for _ in dispatcher.stream(STREAM, TEMPLATE):
        pass


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
            Case(
                "dispatch, 1 interceptor",
                lambda: intercepted.dispatch(CALL, TEMPLATE),
            ),
            Case(
                "adispatch, 1 interceptor",
                afn=lambda: intercepted.adispatch(ACALL, TEMPLATE),
            ),
            Case(
                "sync tool under adispatch",
                afn=lambda: dispatcher.adispatch(CALL, TEMPLATE),
            ),
            Case("stream(), 10 chunks", stream_ten),
            Case(
                "dispatch_all, 10 calls",
                lambda: dispatcher.dispatch_all(TEN, TEMPLATE),
            ),
            Case(
                "adispatch_all, 10 calls",
                afn=lambda: dispatcher.adispatch_all(ATEN, TEMPLATE),
            ),
            Case("10-parameter tool", lambda: dispatcher.dispatch(WIDE)),
            Case("bind via SEAM", seam_bind),
            Case("bind via ContextVar", var_bind),
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
    floor_ns, afloor_ns = ns["floor"], ns["async floor"]
    rows = [
        ("raw call", ns["raw call"], "floor", floor_ns),
        ("floor", floor_ns, "floor", floor_ns),
        ("dispatch", ns["dispatch"], "floor", floor_ns),
        ("async floor", afloor_ns, "async floor", afloor_ns),
        ("adispatch", ns["adispatch"], "async floor", afloor_ns),
    ]
    rows += [
        (name, ns[name], base, {"floor": floor_ns}.get(base, afloor_ns))
        for name, base in [
            ("dispatch, 1 interceptor", "floor"),
            ("adispatch, 1 interceptor", "async floor"),
            ("sync tool under adispatch", "async floor"),
        ]
    ]
    rows += [
        (
            "stream(), per chunk",
            ns["stream(), 10 chunks"] / 10,
            "floor",
            floor_ns,
        ),
        (
            "dispatch_all, per call",
            ns["dispatch_all, 10 calls"] / 10,
            "floor",
            floor_ns,
        ),
        (
            "adispatch_all, per call",
            ns["adispatch_all, 10 calls"] / 10,
            "async floor",
            afloor_ns,
        ),
        ("10-parameter tool", ns["10-parameter tool"], "floor", floor_ns),
        (
            "bind via SEAM",
            ns["bind via SEAM"],
            "bind via ContextVar",
            ns["bind via ContextVar"],
        ),
        (
            "bind via ContextVar",
            ns["bind via ContextVar"],
            "bind via ContextVar",
            ns["bind via ContextVar"],
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
    print(table(rows))


if __name__ == "__main__":
    main()
