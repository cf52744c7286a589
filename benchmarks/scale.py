"""Registries of 10, 1,000 and 10,000 tools, from one run.

Run: ``python benchmarks/scale.py`` (``--quick`` for a smoke run;
``--sizes 10,1000`` to choose sizes). For each size it prints:

- decorate: making the tools with ``@tool`` (schema and validator built
  once per tool), total and per tool;
- register: ``Registry.register`` of every tool, total and per tool;
- ``definitions()`` first call after a change (builds the cached tuple)
  and a cached call (copies the cached tuple into a new list);
- ``fingerprint()`` first call after a change (serializes every
  definition and hashes it) and a cached call;
- dispatch to the last-registered tool and to the first, ns per call,
  measured interleaved across sizes with ``_harness.measure``: lookup is a
  dict lookup, so these stay flat as the registry grows.

"First call" timings are the best of ``--repeat`` tries; before each try
one tool is registered and unregistered again, which, like any change,
drops the cached definitions and fingerprint. The script checks that
the caches are reused while nothing changes (the same fingerprint, the
same definition objects) and rebuilt after a change (the new tool
appears, the fingerprint changes), and stops with an error otherwise.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

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
    FunctionTool,
    Registry,
    ToolCall,
    execution_context,
    tool,
)


ARGS = '{"a": 1, "b": 2}'
TEMPLATE = ExecutionContext(user_id="user-42", session_id="bench")


def make_function(i: int) -> Callable[[int, int], int]:
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        execution_context()
        return a + b + i

    add.__name__ = add.__qualname__ = f"add_{i}"
    return add


def clock(fn: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    fn()
    return float(time.perf_counter_ns() - start)


def best_after_change(
    registry: Registry, spare: FunctionTool[Any, Any], fn: Callable[[], Any]
) -> float:
    registry.register(spare)
    registry.unregister(spare.name)
    return clock(fn)


def best_cached(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    return min(clock(fn) for _ in range(repeat))


class Size:
    """One registry of *n* tools and its timings."""

    def __init__(self, n: int, repeat: int) -> None:
        self.n = n
        functions = [make_function(i) for i in range(n)]
        made: list[FunctionTool[Any, Any]] = []
        self.decorate_ns = clock(lambda: made.extend(map(tool, functions)))
        self.registry = Registry()
        register = self.registry.register
        self.register_ns = clock(lambda: [register(t) for t in made])
        spare = tool(make_function(n))
        registry = self.registry
        self.definitions_first_ns = min(
            best_after_change(registry, spare, registry.definitions)
            for _ in range(repeat)
        )
        self.definitions_cached_ns = best_cached(registry.definitions, repeat)
        self.fingerprint_first_ns = min(
            best_after_change(registry, spare, registry.fingerprint)
            for _ in range(repeat)
        )
        self.fingerprint_cached_ns = best_cached(registry.fingerprint, repeat)
        self.check_caching(spare)
        self.dispatcher = Dispatcher(registry)
        self.last = ToolCall(made[-1].name, ARGS, "call_last")
        self.first = ToolCall(made[0].name, ARGS, "call_first")
        for call, expected in ((self.last, 3 + n - 1), (self.first, 3)):
            result = self.dispatcher.dispatch(call, TEMPLATE)
            if result.output != expected:
                msg = f"{n} tools: {call.name} returned {result!r}"
                raise SystemExit(msg)

    def check_caching(self, spare: FunctionTool[Any, Any]) -> None:
        registry = self.registry
        fp = registry.fingerprint()
        defs = registry.definitions()
        again = registry.definitions()
        if registry.fingerprint() != fp or any(
            a is not b for a, b in zip(defs, again, strict=True)
        ):
            msg = f"{self.n} tools: cached definitions were rebuilt"
            raise SystemExit(msg)
        registry.register(spare)
        try:
            changed = registry.definitions()
            if changed[-1].name != spare.name or registry.fingerprint() == fp:
                msg = f"{self.n} tools: caches not rebuilt after register()"
                raise SystemExit(msg)
        finally:
            registry.unregister(spare.name)
        if registry.fingerprint() != fp:
            msg = f"{self.n} tools: fingerprint differs after unregister()"
            raise SystemExit(msg)


def us(ns: float) -> str:
    return f"{ns / 1000:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument(
        "--sizes", default="10,1000,10000", help="comma-separated sizes"
    )
    parser.add_argument("--repeat", type=int, default=5, help="tries")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    number, rounds = (500, 2) if opts.quick else (20_000, 7)

    results = [Size(n, opts.repeat) for n in sizes]
    cases = []
    for r in results:
        run = r.dispatcher.dispatch
        cases.append(Case(f"last {r.n}", partial(run, r.last, TEMPLATE)))
        cases.append(Case(f"first {r.n}", partial(run, r.first, TEMPLATE)))
    ns = measure(cases, number=number, rounds=rounds)

    print(
        f"toolctx {metadata.version('toolctx')}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; first-call timings best of {opts.repeat}; "
        f"dispatch best of {rounds} rounds x {number} calls\n"
    )
    print(
        "| tools | decorate (ms) | per tool (µs) | register (ms) | "
        "per tool (µs) | definitions() first (µs) | cached (µs) | "
        "fingerprint() first (µs) | cached (µs) | dispatch last (ns) | "
        "dispatch first (ns) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.n:,} | {r.decorate_ns / 1e6:,.1f} | "
            f"{us(r.decorate_ns / r.n)} | {r.register_ns / 1e6:,.2f} | "
            f"{us(r.register_ns / r.n)} | {us(r.definitions_first_ns)} | "
            f"{us(r.definitions_cached_ns)} | {us(r.fingerprint_first_ns)} | "
            f"{us(r.fingerprint_cached_ns)} | {ns[f'last {r.n}']:,.0f} | "
            f"{ns[f'first {r.n}']:,.0f} |"
        )
    print(
        "\nchecked: cached definitions() and fingerprint() are reused "
        "until the registry changes, and rebuilt after register() and "
        "unregister()."
    )


if __name__ == "__main__":
    main()
