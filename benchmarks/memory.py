"""Memory: no growth over many dispatches, and what one call allocates.

Run: ``python benchmarks/memory.py`` (``--calls N``, default 1,000,000;
use fewer while developing). A benchmark script, not a test: it exits
with status 1 when any case grows by more than ``--threshold-kib``
(default 64 KiB) over its calls.

Workload: ``add(a: int, b: int)`` reading ``execution_context().user_id``,
called with ``{"a": 1, "b": 2}`` and a template context; plus an
invalid-arguments call (an error result, whose exception and traceback
must not keep anything alive) and the async paths.

Method, per case:

1. **Growth.** Run ``--warmup`` calls untraced (caches, free lists and
   lazy imports fill up), ``gc.collect()``, start ``tracemalloc``, take a
   snapshot, run the calls dropping every result, ``gc.collect()``, take a
   second snapshot. The difference is memory allocated during the calls
   and still alive after them: a leak shows up as growth proportional to
   the number of calls. Also printed: the change of
   ``sys.getallocatedblocks()`` (live interpreter memory blocks) over the
   same calls, and the lines that grew most.
2. **Peak per call.** With ``tracemalloc`` on, for each of 1,000 single
   calls: ``reset_peak()``, note the traced memory, run the call, read the
   peak. Peak minus the starting level is the most memory the call held
   at once (arguments, context, result...). It is a lower bound on the
   bytes the call allocates in total (memory freed and reused inside the
   call is counted once); CPython has no cheap counter of cumulative
   allocations. The median is printed, for the floor too (``json.loads``
   + ContextVar set/get/reset + call).
3. **Kept result.** Run 1,000 calls keeping every result in a list:
   traced memory growth / 1,000 is what a host pays per result it keeps
   (the ``ToolResult`` and its invocation id; an error result also
   keeps its exception for the host).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import json
import linecache
import platform
import statistics
import sys
import tracemalloc

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import metadata

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
TEMPLATE = ExecutionContext(user_id=USER, session_id="bench")
VAR: contextvars.ContextVar[ExecutionContext] = contextvars.ContextVar("bench")
PEAK_CALLS = 1_000
KEPT_CALLS = 1_000

registry = Registry()


@registry.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    if execution_context().user_id != USER:
        raise AssertionError
    return a + b


@registry.tool
async def add_async(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    if execution_context().user_id != USER:
        raise AssertionError
    return a + b


dispatcher = Dispatcher(registry)
CALL = ToolCall("add", ARGS, "call_1")
ACALL = ToolCall("add_async", ARGS, "call_2")
BAD = ToolCall("add", '{"a": "one", "b": 2}', "call_3")


def raw_add(a: int, b: int) -> int:
    if VAR.get().user_id != USER:
        raise AssertionError
    return a + b


def floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(TEMPLATE)
    try:
        return raw_add(**args)
    finally:
        VAR.reset(token)


def nothing() -> None:
    return None


@dataclass
class Case:
    """A memory case: a sync or async call and the calls to run."""

    name: str
    calls: int
    fn: Callable[[], object] | None = None
    afn: Callable[[], Awaitable[object]] | None = None
    expect_error: bool = False


@dataclass
class Growth:
    """What one case left alive after its calls."""

    bytes: int
    blocks: int
    allocated_blocks: int
    top: list[tracemalloc.StatisticDiff]


_FILTERS = (
    tracemalloc.Filter(inclusive=False, filename_pattern=tracemalloc.__file__),
    tracemalloc.Filter(inclusive=False, filename_pattern=linecache.__file__),
    tracemalloc.Filter(inclusive=False, filename_pattern="<unknown>"),
)


def check(case: Case, result: object) -> None:
    if case.fn is None and case.afn is None:
        return
    if not isinstance(result, ToolResult):
        return
    ok = result.is_error if case.expect_error else result.output == 3
    if not ok:
        msg = f"{case.name}: unexpected result {result!r}"
        raise SystemExit(msg)


def run_calls(
    case: Case, n: int, loop: asyncio.AbstractEventLoop, *, keep: bool
) -> list[object]:
    kept: list[object] = []
    if case.fn is not None:
        fn = case.fn
        if keep:
            kept = [fn() for _ in range(n)]
        else:
            for _ in range(n):
                fn()
        return kept
    afn = case.afn
    assert afn is not None

    async def body() -> None:
        if keep:
            for _ in range(n):
                kept.append(await afn())
        else:
            for _ in range(n):
                await afn()

    loop.run_until_complete(body())
    return kept


def growth(case: Case, warmup: int, loop: asyncio.AbstractEventLoop) -> Growth:
    run_calls(case, warmup, loop, keep=False)
    gc.collect()
    tracemalloc.start()
    try:
        blocks_before = sys.getallocatedblocks()
        before = tracemalloc.take_snapshot().filter_traces(_FILTERS)
        run_calls(case, case.calls, loop, keep=False)
        gc.collect()
        after = tracemalloc.take_snapshot().filter_traces(_FILTERS)
        blocks_after = sys.getallocatedblocks()
    finally:
        tracemalloc.stop()
    stats = after.compare_to(before, "lineno")
    grown = sorted(
        (s for s in stats if s.size_diff > 0),
        key=lambda s: s.size_diff,
        reverse=True,
    )
    return Growth(
        bytes=sum(s.size_diff for s in stats),
        blocks=sum(s.count_diff for s in stats),
        allocated_blocks=blocks_after - blocks_before,
        top=grown,
    )


def peak_per_call(case: Case, loop: asyncio.AbstractEventLoop) -> float:
    """Median of (peak - start) traced bytes over single calls."""
    peaks: list[int] = []
    tracemalloc.start()
    try:
        if case.fn is not None:
            fn = case.fn
            for _ in range(PEAK_CALLS):
                tracemalloc.reset_peak()
                start = tracemalloc.get_traced_memory()[0]
                fn()
                peaks.append(tracemalloc.get_traced_memory()[1] - start)
        else:
            afn = case.afn
            assert afn is not None

            async def body() -> None:
                for _ in range(PEAK_CALLS):
                    tracemalloc.reset_peak()
                    start = tracemalloc.get_traced_memory()[0]
                    await afn()
                    peaks.append(tracemalloc.get_traced_memory()[1] - start)

            loop.run_until_complete(body())
    finally:
        tracemalloc.stop()
    return statistics.median(peaks)


def kept_per_call(case: Case, loop: asyncio.AbstractEventLoop) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        kept = run_calls(case, KEPT_CALLS, loop, keep=True)
        gc.collect()
        end = tracemalloc.get_traced_memory()[0]
        for result in kept[:1]:
            check(case, result)
        del kept
    finally:
        tracemalloc.stop()
    return (end - start) / KEPT_CALLS


def where(stat: tracemalloc.StatisticDiff) -> str:
    frame = stat.traceback[0]
    return f"{frame.filename}:{frame.lineno}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--calls",
        type=int,
        default=1_000_000,
        help="calls per case for the growth check (default 1,000,000)",
    )
    parser.add_argument(
        "--warmup", type=int, default=10_000, help="untraced calls first"
    )
    parser.add_argument(
        "--threshold-kib",
        type=float,
        default=64,
        help="growth per case that fails the run (default 64 KiB)",
    )
    parser.add_argument("--top", type=int, default=5, help="lines shown")
    opts = parser.parse_args()
    calls = opts.calls
    thread_calls = max(1, calls // 20)
    cases = [
        Case("nothing (measurement overhead)", calls, fn=nothing),
        Case("floor", calls, fn=floor),
        Case(
            "dispatch (sync tool)",
            calls,
            fn=lambda: dispatcher.dispatch(CALL, TEMPLATE),
        ),
        Case(
            "dispatch (invalid arguments: error result)",
            calls,
            fn=lambda: dispatcher.dispatch(BAD, TEMPLATE),
            expect_error=True,
        ),
        Case(
            "adispatch (async tool)",
            calls,
            afn=lambda: dispatcher.adispatch(ACALL, TEMPLATE),
        ),
        Case(
            "adispatch (sync tool, worker thread)",
            thread_calls,
            afn=lambda: dispatcher.adispatch(CALL, TEMPLATE),
        ),
    ]
    print(
        f"toolctx {metadata.version('toolctx')}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; warm-up {opts.warmup:,} calls; growth "
        f"threshold {opts.threshold_kib:g} KiB per case\n"
    )
    # Compile the snapshot filters' patterns now, not inside a measurement.
    tracemalloc.start()
    junk = [[i] for i in range(10)]
    tracemalloc.take_snapshot().filter_traces(_FILTERS)
    del junk
    tracemalloc.stop()
    loop = asyncio.new_event_loop()
    failed = []
    rows = []
    tops = []
    try:
        for case in cases:
            check(case, run_calls(case, 1, loop, keep=True)[0])
            g = growth(case, opts.warmup, loop)
            peak = peak_per_call(case, loop)
            kept = kept_per_call(case, loop)
            rows.append((case, g, peak, kept))
            if g.bytes > opts.threshold_kib * 1024:
                failed.append(case.name)
            tops.append((case, g))
    finally:
        loop.close()
    print(
        "| case | calls | growth (bytes) | growth (blocks) | "
        "getallocatedblocks() delta | peak bytes/call (median) | "
        "bytes/result kept |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case, g, peak, kept in rows:
        print(
            f"| {case.name} | {case.calls:,} | {g.bytes:,} | {g.blocks:,} | "
            f"{g.allocated_blocks:,} | {peak:,.0f} | {kept:,.0f} |"
        )
    print("\nlines that grew most (after minus before, per case):")
    for case, g in tops:
        shown = g.top[: opts.top]
        if not shown:
            print(f"- {case.name}: none")
            continue
        print(f"- {case.name}:")
        for stat in shown:
            print(
                f"  - {where(stat)}: +{stat.size_diff:,} B "
                f"in {stat.count_diff:+,} blocks"
            )
    if failed:
        print(
            f"\nFAILED: growth above {opts.threshold_kib:g} KiB in: "
            + ", ".join(failed)
        )
        return 1
    print(f"\nOK: no case grew by more than {opts.threshold_kib:g} KiB.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
