"""Worker-thread round trip: toolctx's pool against the stdlib and anyio.

Run: ``python benchmarks/workers.py`` (``--quick`` for a smoke run;
``--number`` and ``--rounds`` to tune). Prints a Markdown table of ns per
call and ratios, from one run.

Every case sends the same trivial sync body (it reads a ContextVar the
caller bound and returns 3) to a worker thread and awaits it:

- ``_workers.submit``: toolctx's dedicated pool
  (``toolctx._dispatch.workers``), the body wrapped in
  ``_workers.in_thread`` by the pool;
- ``run_in_executor``: what ``adispatch`` does without the pool,
  ``loop.run_in_executor(None, copy_context().run, in_thread, body)``;
- ``asyncio.to_thread(body)``;
- ``anyio.to_thread.run_sync(body)``, if anyio is installed.

Floors: ``await`` of a trivial coroutine that reads the ContextVar (the
async floor), and the async floor of ``peers.py`` (``json.loads`` +
ContextVar set/reset + the awaited call), the one ``docs/performance.md``
reports ratios to.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import platform
import sys

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).parent))

import toolctx

from _harness import Case, measure
from toolctx._dispatch import run as _run
from toolctx._dispatch import workers as _workers


USER = "user-42"
ARGS = '{"a": 1, "b": 2}'
VAR: contextvars.ContextVar[str] = contextvars.ContextVar("bench")
SEEN: list[object] = [None]


def body() -> int:
    SEEN[0] = VAR.get()
    return 3


async def body_async() -> int:
    SEEN[0] = VAR.get()
    return 3


async def add_async(a: int, b: int) -> int:
    SEEN[0] = VAR.get()
    return a + b


# -- cases -----------------------------------------------------------------


async def trivial_await() -> int:
    return await body_async()


async def peers_async_floor() -> int:
    args = json.loads(ARGS)
    token = VAR.set(USER)
    try:
        return await add_async(**args)
    finally:
        VAR.reset(token)


async def pool_submit() -> int:
    return _run.thread_result(await _workers.submit(body))


async def run_in_executor() -> int:
    loop = asyncio.get_running_loop()
    outcome = await loop.run_in_executor(
        None, contextvars.copy_context().run, _workers.in_thread, body
    )
    return _run.thread_result(outcome)


async def to_thread() -> int:
    return await asyncio.to_thread(body)


def anyio_case() -> Callable[[], Awaitable[object]] | None:
    try:
        import anyio.to_thread
    except ImportError:
        return None
    run_sync: Any = anyio.to_thread.run_sync

    async def anyio_to_thread() -> int:
        return int(await run_sync(body))

    return anyio_to_thread


FLOOR = "await trivial coroutine"
PEERS_FLOOR = "async floor (peers.py)"
EXECUTOR = "run_in_executor + copy_context"


def cases() -> list[Case]:
    out = [
        Case(FLOOR, afn=trivial_await),
        Case(PEERS_FLOOR, afn=peers_async_floor),
        Case("_workers.submit", afn=pool_submit),
        Case(EXECUTOR, afn=run_in_executor),
        Case("asyncio.to_thread", afn=to_thread),
    ]
    anyio_fn = anyio_case()
    if anyio_fn is not None:
        out.append(Case("anyio.to_thread.run_sync", afn=anyio_fn))
    return out


def verify(case: Case) -> None:
    """Each case returns 3, having read the caller's value in the body."""
    assert case.afn is not None
    afn = case.afn

    async def once() -> object:
        return await afn()

    SEEN[0] = None
    result = asyncio.run(once())
    if result != 3 or SEEN[0] != USER:
        sys.exit(f"{case.name}: returned {result!r}, read {SEEN[0]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--number", type=int, help="calls per sample")
    parser.add_argument("--rounds", type=int, help="interleaved rounds")
    opts = parser.parse_args()
    number, rounds = (300, 2) if opts.quick else (2_000, 15)
    number = opts.number or number
    rounds = opts.rounds or rounds

    VAR.set(USER)  # every case's task copies this context
    timed = cases()
    for case in timed:
        verify(case)
    ns = measure(timed, number=number, rounds=rounds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"toolctx {toolctx.__version__}, CPython {platform.python_version()},"
        f" {platform.machine()}, {os.cpu_count()} cpus, load {load:.2f},"
        f" best of {rounds} rounds x {number} calls\n"
    )
    bases = (FLOOR, PEERS_FLOOR, EXECUTOR)
    print("| case | ns/call | " + " | ".join(f"x {b}" for b in bases) + " |")
    print("|---|---:|" + "---:|" * len(bases))
    for case in timed:
        t = ns[case.name]
        ratios = " | ".join(f"{t / ns[b]:.2f}x" for b in bases)
        print(f"| {case.name} | {t:,.0f} | {ratios} |")


if __name__ == "__main__":
    main()
