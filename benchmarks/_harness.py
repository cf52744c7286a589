"""A tiny interleaved timing harness shared by the benchmarks.

Every case runs once per round, rounds alternate between cases, and the
best round counts: on a shared, noisy machine the minimum is the most
repeatable estimate of what a call costs. Report ratios from one run only.
"""

from __future__ import annotations

import asyncio
import gc
import time

from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass
class Case:
    """One timed case: a sync or async no-argument function."""

    name: str
    fn: Callable[[], object] | None = None
    afn: Callable[[], Awaitable[object]] | None = None


def _time_sync(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(number):
        fn()
    return (time.perf_counter_ns() - start) / number


async def _time_async(
    fn: Callable[[], Awaitable[object]], number: int
) -> float:
    start = time.perf_counter_ns()
    for _ in range(number):
        await fn()
    return (time.perf_counter_ns() - start) / number


def measure(
    cases: list[Case], *, number: int = 20_000, rounds: int = 7
) -> dict[str, float]:
    """Return the best ns per call of each case over interleaved rounds."""
    best = {c.name: float("inf") for c in cases}
    loop = asyncio.new_event_loop()
    try:
        gc.disable()
        for _ in range(rounds):
            for case in cases:
                if case.fn is not None:
                    ns = _time_sync(case.fn, number)
                else:
                    assert case.afn is not None
                    ns = loop.run_until_complete(_time_async(case.afn, number))
                best[case.name] = min(best[case.name], ns)
    finally:
        gc.enable()
        loop.close()
    return best


def table(rows: list[tuple[str, float, str, float]]) -> str:
    """Render (case, ns, baseline name, baseline ns) rows as Markdown."""
    out = [
        "| case | ns/call | baseline | ratio |",
        "|---|---:|---|---:|",
    ]
    for name, ns, base_name, base_ns in rows:
        ratio = f"{ns / base_ns:.2f}x" if base_ns else "-"
        out.append(f"| {name} | {ns:,.0f} | {base_name} | {ratio} |")
    return "\n".join(out)
