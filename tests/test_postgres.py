"""PostgreSQL stores, the async store protocol, held calls across hosts.

The store contract itself (tenancy, versions, concurrency) runs against
PostgreSQL in test_stores.py (its ``store`` fixture covers every store);
here is what only a shared database does: many processes, outages, a
DSN's password, a table made ahead of time, and the async twins.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from toolctx import Dispatcher, Session, ToolCall
from toolctx.exceptions import ApprovalError, SessionStoreError
from toolctx.sessions import (
    POSTGRES_DDL,
    AsyncPostgresSessionStore,
    AsyncSessionStore,
    InMemorySessionStore,
    PostgresSessionStore,
    SessionAccessError,
    SessionConflictError,
    SQLiteSessionStore,
    aresume_stored,
    resume_stored,
)


psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install '.[tests]'"
)
psycopg_pool = pytest.importorskip(
    "psycopg_pool", reason="psycopg is not installed: pip install '.[tests]'"
)


ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two_hosts.py"
TIMEOUT = 120


@attrs.frozen
class Scope:
    """A scope naming its tenant."""

    tenant_id: str


ACME = Scope("acme")
GLOBEX = Scope("globex")


@pytest.fixture(name="dsn")
def _dsn(postgres_server: Any) -> str:
    return str(postgres_server.dsn)


@pytest.fixture(name="table")
def _table() -> str:
    return f"sessions_{uuid.uuid4().hex}"


def with_password(dsn: str, password: str) -> str:
    """*dsn* (a socket URL without password) carrying *password*."""
    return dsn.replace("postgres:@", f"postgres:{password}@", 1)


# -- the async protocol, on every store -----------------------------------


@pytest.fixture(name="astore", params=["memory", "sqlite"])
def _astore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The stores whose async twins wrap the sync methods."""
    if request.param == "memory":
        yield InMemorySessionStore()
    else:
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            yield store


def run(coro: Any) -> Any:
    """Run *coro* on a new event loop."""
    return asyncio.run(coro)


class TestAsyncStores:
    """aload/asave/adelete/aversion: the same contract, awaited."""

    @pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
    def test_every_store_is_an_async_store(
        self, kind: str, tmp_path: Path, request: pytest.FixtureRequest
    ) -> None:
        """Each store satisfies the runtime-checkable AsyncSessionStore."""
        store: object
        if kind == "memory":
            store = InMemorySessionStore()
        elif kind == "sqlite":
            store = SQLiteSessionStore(tmp_path / "s.db")
        else:
            dsn = request.getfixturevalue("postgres_server").dsn
            store = AsyncPostgresSessionStore(dsn)
        try:
            assert isinstance(store, AsyncSessionStore)
            assert not isinstance(object(), AsyncSessionStore)
        finally:
            if isinstance(store, SQLiteSessionStore):
                store.close()

    def test_round_trip_versions_tenancy(self, astore: Any) -> None:
        """Save, load, version, conflict, tenancy and delete, awaited."""

        async def scenario() -> None:
            session = Session("s1", user_id="ada", turn=2, state={"n": [1]})
            await astore.asave(ACME, session, expected_version=0)
            assert await astore.aload(ACME, "s1") == session
            assert await astore.aversion(ACME, "s1") == 1
            with pytest.raises(SessionConflictError):
                await astore.asave(ACME, session, expected_version=0)
            with pytest.raises(SessionAccessError):
                await astore.asave(GLOBEX, session)
            assert await astore.aload(GLOBEX, "s1") is None
            assert await astore.adelete(GLOBEX, "s1") is False
            assert await astore.adelete(ACME, "s1") is True
            assert await astore.aload(ACME, "s1") is None

        run(scenario())

    def test_async_postgres_round_trip(self, dsn: str, table: str) -> None:
        """The asyncio PostgreSQL store keeps the contract on one loop."""

        async def scenario() -> None:
            async with AsyncPostgresSessionStore(dsn, table=table) as store:
                session = Session("s1", turn=2, state={"n": [1]})
                await store.asave(ACME, session, expected_version=0)
                assert await store.aload(ACME, "s1") == session
                assert await store.aversion(ACME, "s1") == 1
                with pytest.raises(SessionConflictError):
                    await store.asave(ACME, session, expected_version=0)
                with pytest.raises(SessionAccessError):
                    await store.asave(GLOBEX, session)
                assert await store.aload(GLOBEX, "s1") is None
                assert await store.adelete(ACME, "s1") is True
            with pytest.raises(SessionStoreError, match="closed"):
                await store.aload(ACME, "s1")

        run(scenario())

    def test_sqlite_never_blocks_the_loop(self, tmp_path: Path) -> None:
        """A save waiting for SQLite's lock leaves the event loop running."""
        path = tmp_path / "s.db"
        blocker = sqlite3.connect(path, isolation_level=None)
        with SQLiteSessionStore(path, timeout=2.0) as store:
            blocker.execute("BEGIN IMMEDIATE")  # hold the write lock

            async def scenario() -> int:
                ticks = 0
                save = asyncio.ensure_future(store.asave(ACME, Session("s1")))
                while not save.done():
                    await asyncio.sleep(0.01)
                    ticks += 1
                    if ticks == 20:
                        blocker.execute("ROLLBACK")
                await save
                return ticks

            assert run(scenario()) >= 20
            assert store.version(ACME, "s1") == 1
        blocker.close()

    def test_sync_and_async_share_the_table(
        self, dsn: str, table: str
    ) -> None:
        """What the sync store saves, the async one loads, and back."""
        with PostgresSessionStore(dsn, table=table) as sync_store:
            sync_store.save(ACME, Session("s1", turn=1))

            async def scenario() -> None:
                async with AsyncPostgresSessionStore(
                    dsn, table=table
                ) as store:
                    loaded = await store.aload(ACME, "s1")
                    assert loaded is not None
                    loaded.next_turn()
                    await store.asave(ACME, loaded, expected_version=1)

            run(scenario())
            assert sync_store.load(ACME, "s1") == Session("s1", turn=2)
            assert sync_store.version(ACME, "s1") == 2


# -- PostgreSQL only ---------------------------------------------------------


class TestPostgresStore:
    """Connections, secrets, the table, statements."""

    def test_password_never_in_repr_or_error(self, dsn: str) -> None:
        """Neither the repr nor a connection error shows the password."""
        secret = "s3cr3t-pw"
        with PostgresSessionStore(with_password(dsn, secret)) as store:
            assert secret not in repr(store)
            assert "postgres" in repr(store)
        bad = f"host=/nonexistent-{uuid.uuid4().hex} password={secret}"
        store = PostgresSessionStore(bad, timeout=1, create_table=False)
        with store, pytest.raises(SessionStoreError) as info:
            store.load(ACME, "s1")
        assert secret not in str(info.value)
        assert secret not in repr(store)
        assert "failed to load session 's1'" in str(info.value)
        for url in (
            f"postgresql://u:{secret}@h/db",
            f"password='{secret}' host=h",
        ):
            with PostgresSessionStore(
                url, create_table=False, timeout=1
            ) as store:
                assert secret not in repr(store)

    def test_missing_psycopg_names_the_extra(self) -> None:
        """Without psycopg, building a store says to install the extra."""
        script = textwrap.dedent(
            """
            import sys
            sys.modules["psycopg"] = None
            from toolctx.sessions import PostgresSessionStore
            try:
                PostgresSessionStore("dbname=x")
            except ImportError as exc:
                print(exc)
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        ).stdout
        assert "toolctx[postgres]" in out

    def test_context_manager_closes_its_connections(self, dsn: str) -> None:
        """`with` closes the store's pool; later calls say it is closed."""
        with PostgresSessionStore(dsn) as store:
            store.save(ACME, Session("s1"))
        assert "closed=True" in repr(store)
        with pytest.raises(SessionStoreError, match="is closed"):
            store.load(ACME, "s1")

    def test_own_pool_is_used_and_left_open(
        self, dsn: str, table: str
    ) -> None:
        """A pool passed in serves the store and stays open after it."""
        with psycopg_pool.ConnectionPool(dsn, min_size=1) as pool:
            with PostgresSessionStore(pool, table=table) as store:
                store.save(ACME, Session("s1"))
            assert not pool.closed
            with pool.connection() as conn:
                row = conn.execute(
                    psycopg.sql.SQL("SELECT count(*) FROM {}").format(
                        psycopg.sql.Identifier(table)
                    )
                ).fetchone()
            assert row == (1,)

    def test_table_made_ahead_of_time(self, dsn: str, table: str) -> None:
        """POSTGRES_DDL creates the table for a store without DDL rights."""
        with (
            PostgresSessionStore(dsn, table=table, create_table=False) as bare,
            pytest.raises(SessionStoreError, match="does not exist"),
        ):
            bare.load(ACME, "s1")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL(POSTGRES_DDL).format(
                    table=psycopg.sql.Identifier(table)
                )
            )
        with PostgresSessionStore(
            dsn, table=table, create_table=False
        ) as store:
            store.save(ACME, Session("s1"))
            assert store.load(ACME, "s1") == Session("s1")

    def test_statements_are_parameterized(self, dsn: str) -> None:
        """Quotes and SQL in ids, tenants and the table name are just data."""
        table = f'odd "name"; DROP TABLE x; {uuid.uuid4().hex[:8]}'
        tenant = Scope("o'brien'; DROP TABLE toolctx_sessions; --")
        sid = "s1'); DELETE FROM toolctx_sessions; --"
        with PostgresSessionStore(dsn, table=table) as store:
            store.save(tenant, Session(sid, state={"q": "'\"\\"}))
            loaded = store.load(tenant, sid)
            assert loaded == Session(sid, state={"q": "'\"\\"})
            assert store.delete(tenant, sid) is True

    def test_huge_turn_is_kept_exactly(self, dsn: str, table: str) -> None:
        """A turn beyond BIGINT is kept in the data; the column is capped."""
        with PostgresSessionStore(dsn, table=table) as store:
            store.save(ACME, Session("s1", turn=2**70))
            loaded = store.load(ACME, "s1")
            assert loaded is not None
            assert loaded.turn == 2**70


RECOVERY = 30.0


def back(operation: Any) -> Any:
    """*operation*'s result once the database is back (within RECOVERY s).

    The pool reconnects on its own (with a backoff of a few seconds);
    until then every call fails with a SessionStoreError.
    """
    deadline = time.monotonic() + RECOVERY
    while True:
        try:
            return operation()
        except SessionStoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


async def aback(operation: Any) -> Any:
    """:func:`back` for a coroutine function."""
    deadline = time.monotonic() + RECOVERY
    while True:
        try:
            return await operation()
        except SessionStoreError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


class TestOutage:
    """The database going away mid-use, and coming back."""

    def test_sync_store_fails_clearly_and_recovers(
        self, postgres_server: Any, table: str
    ) -> None:
        """Down: errors name what failed, nothing changes; back: it works."""
        with PostgresSessionStore(
            postgres_server.dsn, table=table, timeout=1
        ) as store:
            store.save(ACME, Session("s1", turn=1))
            postgres_server.stop()
            try:
                with pytest.raises(SessionStoreError) as info:
                    store.save(ACME, Session("s1", turn=2))
                message = str(info.value)
                assert "failed to save session 's1'" in message
                assert "Nothing was changed" in message
                assert isinstance(
                    info.value.__cause__,
                    (psycopg.Error, psycopg_pool.PoolTimeout),
                )
                with pytest.raises(SessionStoreError, match="load session"):
                    store.load(ACME, "s1")
            finally:
                postgres_server.start()
            assert back(lambda: store.load(ACME, "s1")) == Session(
                "s1", turn=1
            )
            assert store.version(ACME, "s1") == 1
            store.save(ACME, Session("s1", turn=3), expected_version=1)
            assert store.version(ACME, "s1") == 2

    def test_async_store_fails_clearly_and_recovers(
        self, postgres_server: Any, table: str
    ) -> None:
        """The asyncio store fails the same way and recovers the same way."""

        async def scenario() -> None:
            async with AsyncPostgresSessionStore(
                postgres_server.dsn, table=table, timeout=1
            ) as store:
                await store.asave(ACME, Session("s1", turn=1))
                postgres_server.stop()
                try:
                    with pytest.raises(
                        SessionStoreError, match="failed to save session"
                    ):
                        await store.asave(ACME, Session("s1", turn=2))
                finally:
                    postgres_server.start()
                loaded = await aback(lambda: store.aload(ACME, "s1"))
                assert loaded == Session("s1", turn=1)
                assert await store.aversion(ACME, "s1") == 1

        run(scenario())


# -- many processes -----------------------------------------------------------

INCREMENTS = textwrap.dedent(
    """
    import sys
    from toolctx.exceptions import SessionConflictError
    from toolctx.sessions import PostgresSessionStore

    class Scope:
        tenant_id = "acme"

    dsn, table, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conflicts = 0
    with PostgresSessionStore(dsn, table=table) as store:
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
    print(conflicts)
    """
)


def spawn(argv: list[str]) -> subprocess.Popen[str]:
    """Start a Python process running *argv*."""
    return subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outputs(processes: list[subprocess.Popen[str]]) -> list[str]:
    """Each process's stdout, once all exited cleanly."""
    results = []
    for process in processes:
        out, err = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, err
        results.append(out)
    return results


class TestManyProcesses:
    """Processes racing on one database lose nothing and run nothing twice."""

    PROCESSES = 8
    INCREMENTS = 25

    def test_optimistic_increments_are_exact(
        self, dsn: str, table: str
    ) -> None:
        """8 processes x N increments with expected_version: none lost."""
        with PostgresSessionStore(dsn, table=table) as store:
            store.save(ACME, Session("counter", state={"n": 0}))
            processes = [
                spawn(["-c", INCREMENTS, dsn, table, str(self.INCREMENTS)])
                for _ in range(self.PROCESSES)
            ]
            outputs(processes)
            final = store.load(ACME, "counter")
            assert final is not None
            total = self.PROCESSES * self.INCREMENTS
            assert final.state["n"] == total
            assert store.version(ACME, "counter") == total + 1

    def test_six_hosts_race_one_approval(self, dsn: str) -> None:
        """6 host processes resume one held call: it runs exactly once."""
        sys.path.insert(0, str(EXAMPLE.parent))
        try:
            import two_hosts

            for _ in range(1):  # benchmarks/postgres_stores.py: 10 rounds
                session_id = f"race-{uuid.uuid4().hex}"
                inv = two_hosts.hold(dsn, session_id)
                code = textwrap.dedent(
                    f"""
                    import sys
                    sys.path.insert(0, {str(EXAMPLE.parent)!r})
                    import two_hosts
                    print(two_hosts.resume(*sys.argv[1:])[:4])
                    """
                )
                answers = outputs(
                    [
                        spawn(["-c", code, dsn, session_id, inv])
                        for _ in range(6)
                    ]
                )
                assert (
                    sorted(a.strip() for a in answers)
                    == ["ran:"] + ["refu"] * 5
                )
                assert two_hosts.ledger_count(dsn, inv) == 1
                with PostgresSessionStore(dsn) as store:
                    session = store.load(
                        two_hosts.Host("acme", dsn), session_id
                    )
                assert session is not None
                assert session.pending == {}
                outcome = session.outcome(inv)
                assert outcome is not None
                assert outcome.output == "paid 5000 to bob"
        finally:
            sys.path.remove(str(EXAMPLE.parent))

    def test_example_two_hosts_runs(self, dsn: str) -> None:
        """examples/two_hosts.py: two hosts, one database, one payment."""
        done = subprocess.run(
            [sys.executable, str(EXAMPLE), dsn],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "payments made: 1" in done.stdout
        assert done.stdout.count("refused:") == 1


# -- resume_stored, on every store -------------------------------------------


class TestResumeStored:
    """The claim is durable before the call runs; losers run nothing."""

    @pytest.fixture(name="setup")
    def _setup(self, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
        sys.path.insert(0, str(Path(__file__).parent))
        import approval_tools

        yield approval_tools, Dispatcher(approval_tools.registry)
        sys.path.remove(str(Path(__file__).parent))

    def held(self, tools: Any, dispatcher: Dispatcher, store: Any) -> str:
        """Hold a transfer in session s1, saved in *store*."""
        scope = tools.Bank("acme", "pw")
        session = Session("s1", user_id="ada", scope=scope)
        result = dispatcher.dispatch(
            ToolCall("transfer", {"to": "bob", "amount": 5000}), session
        )
        store.save(scope, session)
        return str(result.approval.invocation_id)

    def test_second_resume_is_refused(self, setup: Any) -> None:
        """Resumed once, a second resume says how the first ended."""
        tools, dispatcher = setup
        store = InMemorySessionStore()
        inv = self.held(tools, dispatcher, store)
        scope = tools.Bank("acme", "pw")
        result = resume_stored(
            dispatcher, store, scope, "s1", inv, approved=True
        )
        assert result.output["amount"] == 5000
        with pytest.raises(ApprovalError, match="resumed already"):
            resume_stored(dispatcher, store, scope, "s1", inv, approved=True)
        stored = store.load(scope, "s1")
        assert stored is not None
        assert stored.outcome(inv) == result
        assert stored.state["last_transfer"] == 5000

    def test_refused_resume_puts_the_request_back(self, setup: Any) -> None:
        """A request the dispatcher refuses is pending again, nothing ran."""
        tools, dispatcher = setup
        store = InMemorySessionStore()
        inv = self.held(tools, dispatcher, store)
        scope = tools.Bank("acme", "pw")
        other = Dispatcher(tools.Registry())  # the tool is not registered
        with pytest.raises(ApprovalError):
            resume_stored(other, store, scope, "s1", inv, approved=True)
        stored = store.load(scope, "s1")
        assert stored is not None
        assert inv in stored.pending
        assert stored.results == []

    def test_claimed_elsewhere_is_refused(self, setup: Any) -> None:
        """A request claimed by another host (not pending) runs nothing."""
        tools, dispatcher = setup
        store = InMemorySessionStore()
        inv = self.held(tools, dispatcher, store)
        scope = tools.Bank("acme", "pw")
        session = store.load(scope, "s1")
        assert session is not None
        session.resolve(inv)
        store.save(scope, session)
        with pytest.raises(ApprovalError, match="another host claimed it"):
            resume_stored(dispatcher, store, scope, "s1", inv, approved=True)

    def test_async_resume_on_sqlite(self, setup: Any, tmp_path: Path) -> None:
        """aresume_stored claims and records through the async protocol."""
        tools, dispatcher = setup
        with SQLiteSessionStore(tmp_path / "s.db") as store:
            inv = self.held(tools, dispatcher, store)
            scope = tools.Bank("acme", "pw")

            async def both() -> list[Any]:
                return await asyncio.gather(
                    aresume_stored(
                        dispatcher, store, scope, "s1", inv, approved=True
                    ),
                    aresume_stored(
                        dispatcher, store, scope, "s1", inv, approved=True
                    ),
                    return_exceptions=True,
                )

            answers = run(both())
            errors = [a for a in answers if isinstance(a, ApprovalError)]
            assert len(errors) == 1
            stored = store.load(scope, "s1")
            assert stored is not None
            assert stored.pending == {}
            assert len(stored.results) == 1

    def test_threads_race_on_postgres(self, setup: Any, dsn: str) -> None:
        """8 threads, 8 stores, one request: one result, 7 refusals."""
        tools, dispatcher = setup
        table = f"sessions_{uuid.uuid4().hex}"
        with PostgresSessionStore(dsn, table=table) as store:
            inv = self.held(tools, dispatcher, store)
        scope = tools.Bank("acme", "pw")
        ran: list[object] = []
        refused: list[object] = []
        barrier = threading.Barrier(8)

        def host() -> None:
            with PostgresSessionStore(dsn, table=table) as mine:
                barrier.wait(timeout=TIMEOUT)
                try:
                    ran.append(
                        resume_stored(
                            Dispatcher(tools.registry),
                            mine,
                            scope,
                            "s1",
                            inv,
                            approved=True,
                        )
                    )
                except ApprovalError as exc:
                    refused.append(exc)

        threads = [threading.Thread(target=host) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=TIMEOUT)
        assert (len(ran), len(refused)) == (1, 7)

    def test_unrecorded_outcome_says_the_call_ran(self, setup: Any) -> None:
        """A store failing after the run: the error says the call ran."""
        tools, dispatcher = setup
        inner = InMemorySessionStore()
        inv = self.held(tools, dispatcher, inner)
        saves: list[int] = []

        class Failing:
            """Takes the claim, then fails like a database gone away."""

            load = inner.load
            version = inner.version

            def save(self, scope: object, session: Session, **kw: Any) -> None:
                saves.append(1)
                if len(saves) > 1:
                    msg = "database gone"
                    raise SessionStoreError(msg)
                inner.save(scope, session, **kw)

        scope = tools.Bank("acme", "pw")
        with pytest.raises(SessionStoreError, match="the call ran") as info:
            resume_stored(
                dispatcher, Failing(), scope, "s1", inv, approved=True
            )
        assert "database gone" in str(info.value)
        with pytest.raises(ApprovalError, match="another host claimed it"):
            resume_stored(dispatcher, inner, scope, "s1", inv, approved=True)

    def test_async_hosts_race_on_postgres(self, setup: Any, dsn: str) -> None:
        """Four asyncio stores race for one request: it runs once."""
        tools, dispatcher = setup
        table = f"sessions_{uuid.uuid4().hex}"
        with PostgresSessionStore(dsn, table=table) as store:
            inv = self.held(tools, dispatcher, store)
        scope = tools.Bank("acme", "pw")

        async def host() -> Any:
            async with AsyncPostgresSessionStore(dsn, table=table) as mine:
                return await aresume_stored(
                    Dispatcher(tools.registry),
                    mine,
                    scope,
                    "s1",
                    inv,
                    approved=True,
                )

        async def race() -> list[Any]:
            return await asyncio.gather(
                *(host() for _ in range(4)), return_exceptions=True
            )

        answers = run(race())
        refused = [a for a in answers if isinstance(a, ApprovalError)]
        assert len(refused) == 3, answers
        with PostgresSessionStore(dsn, table=table) as store:
            stored = store.load(scope, "s1")
        assert stored is not None
        assert len(stored.results) == 1
        assert stored.pending == {}
