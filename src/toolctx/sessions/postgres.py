"""Session stores in a PostgreSQL database shared by many hosts.

:class:`PostgresSessionStore` (sync) and :class:`AsyncPostgresSessionStore`
(asyncio) keep sessions exactly as the SQLite store does (the session
codec's JSON text, tenancy, ``expected_version``) in one table that every
host process on every machine shares. They run on psycopg 3 and its pool:
install ``toolctx[postgres]``.

The table (created when missing; :data:`POSTGRES_DDL` creates it ahead of
time for a role without DDL rights)::

    CREATE TABLE IF NOT EXISTS toolctx_sessions (
        session_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        turn BIGINT NOT NULL,
        version BIGINT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        data TEXT NOT NULL
    );

Every save is one transaction that locks the session's row
(``SELECT ... FOR UPDATE``), checks the tenant and the version, and
writes: two hosts saving one session are serialized by the database, and
a failure (the database gone, the connection cut) leaves the previous
version intact. Every statement is parameterized; the table name is
quoted as an identifier.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, final

from typing_extensions import Self

from toolctx._context.session import Session
from toolctx.exceptions import SessionAccessError, SessionStoreError
from toolctx.sessions.store import (
    MAX_SHOWN,
    TenantOf,
    check_expected,
    check_id,
    check_write,
    decode_session,
    derive_tenant,
    encode_session,
    tenant_id_of,
)


if TYPE_CHECKING:
    import psycopg

    from psycopg import sql
    from psycopg_pool import AsyncConnectionPool, ConnectionPool


__all__ = [
    "POSTGRES_DDL",
    "AsyncPostgresSessionStore",
    "PostgresSessionStore",
]

DEFAULT_TABLE: Final = "toolctx_sessions"

POSTGRES_DDL: Final = """\
CREATE TABLE IF NOT EXISTS {table} (
    session_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    turn BIGINT NOT NULL,
    version BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    data TEXT NOT NULL
)"""
"""The table both PostgreSQL stores use; ``{table}`` is its quoted name.

For a database role without DDL rights, have an administrator run it
once (``POSTGRES_DDL.format(table="toolctx_sessions")``), grant the
host's role ``SELECT, INSERT, UPDATE, DELETE`` on the table, and build
the stores with ``create_table=False``.

.. versionadded:: 0.1.0
"""

MAX_TURN: Final = 2**63 - 1
"""The ``turn`` column is informational (the data holds the exact turn)."""

_PASSWORD = re.compile(
    r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)|(://[^:/@\s]*:)[^@\s]*(@)",
    re.IGNORECASE,
)


def _import_psycopg() -> tuple[Any, Any]:
    """Return the ``psycopg`` and ``psycopg_pool`` modules, or explain."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        msg = (
            "The PostgreSQL session stores need psycopg 3 and psycopg-pool: "
            "install them with pip install 'toolctx[postgres]'."
        )
        raise ImportError(msg) from exc
    return psycopg, psycopg_pool


def _scrub(text: str) -> str:
    """*text* with every password of a conninfo or URL masked."""
    return _PASSWORD.sub(
        lambda m: (
            f"{m.group(1)}***"
            if m.group(1)
            else f"{m.group(3)}***{m.group(4)}"
        ),
        text,
    )


def _target(conninfo: str) -> str:
    """Where *conninfo* points, for reprs and errors: never the password."""
    psycopg, _ = _import_psycopg()
    try:
        params = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.Error:
        return "an unreadable conninfo"
    parts = [
        f"{name}={params[name]}"
        for name in ("host", "port", "dbname", "user")
        if params.get(name)
    ]
    return _scrub(" ".join(parts)) or "the default database"


def _pool_target(pool: Any) -> str:
    return f"pool {getattr(pool, 'name', '?')}"


def _statements(table: str) -> dict[str, sql.Composed]:
    """The store's statements, with *table* quoted as an identifier."""
    _, _ = _import_psycopg()
    from psycopg import sql

    name = sql.Identifier(table)

    def q(text: str) -> sql.Composed:
        return sql.SQL(text).format(table=name)

    return {
        "create": q(POSTGRES_DDL),
        "fetch_data": q(
            "SELECT data FROM {table} WHERE session_id = %s AND tenant = %s"
        ),
        "fetch_version": q(
            "SELECT version FROM {table} WHERE session_id = %s AND tenant = %s"
        ),
        "lock": q(
            "SELECT tenant, version FROM {table} "
            "WHERE session_id = %s FOR UPDATE"
        ),
        "insert": q(
            "INSERT INTO {table} (session_id, tenant, turn, version, "
            "updated_at, data) VALUES (%s, %s, %s, 1, %s, %s) "
            "ON CONFLICT (session_id) DO NOTHING"
        ),
        "update": q(
            "UPDATE {table} SET turn = %s, version = %s, updated_at = %s, "
            "data = %s WHERE session_id = %s AND tenant = %s"
        ),
        "delete": q(
            "DELETE FROM {table} WHERE session_id = %s AND tenant = %s"
        ),
    }


def _check_table(table: object) -> str:
    if type(table) is not str or not table or len(table) > 63:  # noqa: PLR2004 - NAMEDATALEN
        msg = (
            f"table must be a non-empty str of at most 63 characters, got "
            f"{table!r:.80}."
        )
        raise TypeError(msg)
    return table


class _Base:
    """What both PostgreSQL stores share: naming, errors, the save plan."""

    __slots__ = (
        "_closed",
        "_owns_pool",
        "_sql",
        "_table",
        "_target",
        "_tenant_of",
        "_timeout",
    )

    _kind: str = "PostgresSessionStore"

    def __init__(
        self,
        table: str,
        tenant_of: TenantOf,
        timeout: float,
        target: str,
        *,
        owns_pool: bool,
    ) -> None:
        self._table = _check_table(table)
        self._tenant_of = tenant_of
        self._timeout = timeout
        self._target = target
        self._owns_pool = owns_pool
        self._closed = False
        self._sql = _statements(table)

    def __repr__(self) -> str:
        closed = ", closed=True" if self._closed else ""
        return (
            f"<{self._kind}({self._target!r}, table={self._table!r}{closed})>"
        )

    @property
    def table(self) -> str:
        """The name of the table this store keeps sessions in.

        .. versionadded:: 0.1.0
        """
        return self._table

    def _error(self, what: str, exc: BaseException) -> SessionStoreError:
        """The store error for *exc*, raised while doing *what*."""
        text = _scrub(str(exc).strip().splitlines()[0] if str(exc) else "")
        if len(text) > 2 * MAX_SHOWN:
            text = f"{text[: 2 * MAX_SHOWN]}..."
        name = type(exc).__name__
        if name == "PoolTimeout":
            cause = (
                f"no connection to the database within {self._timeout:g} s "
                f"(is the database up and reachable? {text})"
            )
        else:
            cause = f"{name}: {text}"
        msg = (
            f"The PostgreSQL session store ({self._target}, table "
            f"{self._table!r}) failed to {what}: {cause}. Nothing was "
            f"changed; retry once the database is reachable."
        )
        return SessionStoreError(msg)

    def _closed_error(self) -> SessionStoreError:
        msg = (
            f"{self!r} is closed. Open a new {self._kind}, or use the store "
            f"inside its `with` block only."
        )
        return SessionStoreError(msg)

    def _row_for(
        self, scope: object, session: Session, expected: int | None
    ) -> tuple[str, str, int, datetime, str]:
        """Check the save's arguments; the new row (version added later)."""
        tenant = derive_tenant(self._tenant_of, scope)
        check_expected(expected)
        text = encode_session(session)
        turn = min(max(session.turn, -MAX_TURN), MAX_TURN)
        return session.id, tenant, turn, datetime.now(timezone.utc), text


def _planned(
    locked: tuple[Any, ...] | None,
    row: tuple[str, str, int, datetime, str],
    expected: int | None,
) -> tuple[Any, ...] | None:
    """Check a save against the locked row: None to insert, else update."""
    session_id, tenant = row[0], row[1]
    if locked is None:
        check_write(None, 0, tenant, session_id, expected)
        return None
    version = int(locked[1]) + 1
    check_write(str(locked[0]), version - 1, tenant, session_id, expected)
    return (row[2], version, row[3], row[4], session_id, tenant)


def _create_sync(conn: psycopg.Connection[Any], create: sql.Composed) -> None:
    """Create the table; another host creating it meanwhile is fine."""
    psycopg, _ = _import_psycopg()
    try:
        conn.execute(create)
    except psycopg.errors.UniqueViolation:
        conn.rollback()


@final
class PostgresSessionStore(_Base):
    """A :class:`SessionStore` in a PostgreSQL database, shared by hosts.

    The same contract as :class:`SQLiteSessionStore`: each session is one
    row of the table (default ``toolctx_sessions``, created when missing)
    holding the codec's JSON text, its ``tenant``, ``turn``, ``version``
    (1 on the first save, +1 on each) and ``updated_at``; tenancy is
    checked on every load, save and delete; ``save(...,
    expected_version=...)`` saves only if nobody saved in between, across
    every host. Each save is one transaction that locks the row.

    Args:
        conninfo: A libpq connection string or URL
            (``"postgresql://app@db/app"``), or a
            ``psycopg_pool.ConnectionPool`` of your own (the store then
            never closes it).
        tenant_of: Derives the tenant from a scope; the default,
            :func:`tenant_id_of`, reads ``scope.tenant_id``.
        table: The table's name (quoted as an identifier).
        create_table: Create the table when missing (needs DDL rights;
            see :data:`POSTGRES_DDL` for creating it ahead of time).
        timeout: Seconds to wait for a connection before failing.
        max_size: Most connections the store's own pool opens.

    Raises:
        ImportError: psycopg is not installed (``toolctx[postgres]``).
        SessionStoreError: The database cannot be reached or fails, naming
            what failed (never the password). Every method raises it too;
            nothing is half-written, and the store works again once the
            database is back.

    Example:
        >>> with PostgresSessionStore(dsn) as store:  # doctest: +SKIP
        ...     store.save(Auth(), Session("s1", turn=3))
        ...     store.load(Auth(), "s1").turn
        3

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_pool",)

    def __init__(
        self,
        conninfo: str | ConnectionPool[Any],
        *,
        tenant_of: TenantOf = tenant_id_of,
        table: str = DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 10.0,
        max_size: int = 4,
    ) -> None:
        _, psycopg_pool = _import_psycopg()
        owns = isinstance(conninfo, str)
        target = (
            _target(conninfo)
            if isinstance(conninfo, str)
            else _pool_target(conninfo)
        )
        super().__init__(table, tenant_of, timeout, target, owns_pool=owns)
        self._pool: ConnectionPool[Any] | None = None
        if owns:
            self._pool = psycopg_pool.ConnectionPool(
                conninfo,
                min_size=1,
                max_size=max_size,
                timeout=timeout,
                check=psycopg_pool.ConnectionPool.check_connection,
                kwargs={"connect_timeout": max(1, round(timeout))},
                open=False,
                name=f"toolctx-{id(self):x}",
            )
            try:
                self._pool.open(wait=False)
            except Exception as exc:  # pragma: no cover - bad options
                raise self._error("open its connection pool", exc) from exc
        else:
            self._pool = conninfo  # type: ignore[assignment]
        try:
            if create_table:
                with self._connection("create its table") as conn:
                    _create_sync(conn, self._sql["create"])
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the store's own connections; later calls raise.

        A pool passed in is left open (it is yours). Closing twice is
        fine; ``with PostgresSessionStore(...)`` closes on exit.

        .. versionadded:: 0.1.0
        """
        pool, self._pool = self._pool, None
        self._closed = True
        if pool is not None and self._owns_pool:
            pool.close()

    def load(self, scope: object, session_id: str) -> Session | None:
        """Return the scope's tenant's session *session_id*, or None.

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            ContextDataError: The stored data cannot be read back.
            SessionStoreError: The store is closed or the database fails.

        .. versionadded:: 0.1.0
        """
        text = self._fetch("fetch_data", scope, session_id)
        return (
            None if text is None else decode_session(text, scope, session_id)
        )

    def version(self, scope: object, session_id: str) -> int | None:
        """Return how many times the session was saved, or None.

        .. versionadded:: 0.1.0
        """
        version = self._fetch("fetch_version", scope, session_id)
        return None if version is None else int(version)

    def save(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """Save *session* for the scope's tenant, in one transaction.

        Args:
            scope: The caller's scope.
            session: The session to save (its ``scope`` is ignored).
            expected_version: Save only if the stored version is this one
                (0: only if the session does not exist yet). None saves
                unconditionally.

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            SessionAccessError: Another tenant owns ``session.id``.
            SessionConflictError: The stored version is not
                *expected_version*.
            ContextDataError: The session cannot be serialized.
            SessionStoreError: The store is closed or the database fails;
                nothing was changed.

        .. versionadded:: 0.1.0
        """
        row = self._row_for(scope, session, expected_version)
        with (
            self._connection(f"save session {session.id!r:.80}") as conn,
            conn.transaction(),
        ):
            for _ in range(2):
                locked = conn.execute(self._sql["lock"], (row[0],)).fetchone()
                update = _planned(locked, row, expected_version)
                if update is None:
                    if conn.execute(self._sql["insert"], row).rowcount == 1:
                        return
                    continue  # inserted meanwhile by another host: check it
                cursor = conn.execute(self._sql["update"], update)
                if cursor.rowcount != 1:  # pragma: no cover - checked before
                    raise SessionAccessError(row[0])
                return

    def delete(self, scope: object, session_id: str) -> bool:
        """Delete the scope's tenant's session; False if it has none.

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._connection(f"delete session {session_id!r:.80}") as conn:
            cursor = conn.execute(self._sql["delete"], (session_id, tenant))
            return bool(cursor.rowcount > 0)

    def _fetch(self, statement: str, scope: object, session_id: str) -> Any:
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._connection(f"load session {session_id!r:.80}") as conn:
            row = conn.execute(
                self._sql[statement], (session_id, tenant)
            ).fetchone()
        return None if row is None else row[0]

    @contextlib.contextmanager
    def _connection(self, what: str) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (committed on success); errors explained."""
        psycopg, psycopg_pool = _import_psycopg()
        pool = self._pool
        if pool is None:
            raise self._closed_error()
        try:
            with pool.connection() as conn:
                yield conn
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._error(what, exc) from exc


@final
class AsyncPostgresSessionStore(_Base):
    """:class:`PostgresSessionStore` for asyncio: never blocks the loop.

    Implements :class:`AsyncSessionStore` (``aload``, ``asave``,
    ``adelete``, ``aversion``) over an ``AsyncConnectionPool``, sharing
    the table and its rows with :class:`PostgresSessionStore`. The pool
    opens (and the table is created) on first use, or on ``async with``.

    Args:
        conninfo: A libpq connection string or URL, or a
            ``psycopg_pool.AsyncConnectionPool`` of your own (never closed
            by the store).
        tenant_of: Derives the tenant from a scope.
        table: The table's name (quoted as an identifier).
        create_table: Create the table when missing.
        timeout: Seconds to wait for a connection before failing.
        max_size: Most connections the store's own pool opens.

    Raises:
        ImportError: psycopg is not installed (``toolctx[postgres]``).

    Example:
        >>> store = AsyncPostgresSessionStore(dsn)  # doctest: +SKIP
        >>> async with store:  # doctest: +SKIP
        ...     await store.asave(Auth(), Session("s1"))

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_conninfo", "_create", "_max_size", "_pool", "_ready")

    _kind = "AsyncPostgresSessionStore"

    def __init__(
        self,
        conninfo: str | AsyncConnectionPool[Any],
        *,
        tenant_of: TenantOf = tenant_id_of,
        table: str = DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 10.0,
        max_size: int = 4,
    ) -> None:
        _import_psycopg()
        owns = isinstance(conninfo, str)
        target = (
            _target(conninfo)
            if isinstance(conninfo, str)
            else _pool_target(conninfo)
        )
        super().__init__(table, tenant_of, timeout, target, owns_pool=owns)
        self._conninfo = conninfo if owns else None
        self._pool: AsyncConnectionPool[Any] | None = (
            None if owns else conninfo  # type: ignore[assignment]
        )
        self._create = create_table
        self._max_size = max_size
        self._ready: asyncio.Lock | None = None

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Open the pool and create the table (done on first use too).

        .. versionadded:: 0.1.0
        """
        if self._closed:
            raise self._closed_error()
        if self._ready is None:
            self._ready = asyncio.Lock()
        async with self._ready:
            if self._conninfo is not None and self._pool is None:
                _, psycopg_pool = _import_psycopg()
                pool = psycopg_pool.AsyncConnectionPool(
                    self._conninfo,
                    min_size=1,
                    max_size=self._max_size,
                    timeout=self._timeout,
                    check=psycopg_pool.AsyncConnectionPool.check_connection,
                    kwargs={"connect_timeout": max(1, round(self._timeout))},
                    open=False,
                    name=f"toolctx-{id(self):x}",
                )
                await pool.open(wait=False)
                self._pool = pool
                try:
                    await self._create_table()
                except BaseException:
                    await self.aclose()
                    raise
            elif self._create and self._conninfo is None:
                self._create = False
                await self._create_table()

    async def _create_table(self) -> None:
        if self._create:
            async with self._connection("create its table") as conn:
                try:
                    await conn.execute(self._sql["create"])
                except _import_psycopg()[0].errors.UniqueViolation:
                    await conn.rollback()  # created meanwhile by another host

    async def aclose(self) -> None:
        """Close the store's own connections; later calls raise.

        .. versionadded:: 0.1.0
        """
        pool, self._pool = self._pool, None
        self._closed = True
        if pool is not None and self._owns_pool:
            await pool.close()

    async def aload(self, scope: object, session_id: str) -> Session | None:
        """Return the scope's tenant's session *session_id*, or None.

        .. versionadded:: 0.1.0
        """
        text = await self._fetch("fetch_data", scope, session_id)
        return (
            None if text is None else decode_session(text, scope, session_id)
        )

    async def aversion(self, scope: object, session_id: str) -> int | None:
        """Return how many times the session was saved, or None.

        .. versionadded:: 0.1.0
        """
        version = await self._fetch("fetch_version", scope, session_id)
        return None if version is None else int(version)

    async def asave(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """Save *session* for the scope's tenant, in one transaction.

        Raises as :meth:`PostgresSessionStore.save`.

        .. versionadded:: 0.1.0
        """
        row = self._row_for(scope, session, expected_version)
        async with (
            self._connection(f"save session {session.id!r:.80}") as conn,
            conn.transaction(),
        ):
            for _ in range(2):
                cursor = await conn.execute(self._sql["lock"], (row[0],))
                locked = await cursor.fetchone()
                update = _planned(locked, row, expected_version)
                if update is None:
                    cursor = await conn.execute(self._sql["insert"], row)
                    if cursor.rowcount == 1:
                        return
                    continue  # inserted meanwhile by another host: check it
                cursor = await conn.execute(self._sql["update"], update)
                if cursor.rowcount != 1:  # pragma: no cover - checked before
                    raise SessionAccessError(row[0])
                return

    async def adelete(self, scope: object, session_id: str) -> bool:
        """Delete the scope's tenant's session; False if it has none.

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        async with self._connection(
            f"delete session {session_id!r:.80}"
        ) as conn:
            cursor = await conn.execute(
                self._sql["delete"], (session_id, tenant)
            )
            return bool(cursor.rowcount > 0)

    async def _fetch(
        self, statement: str, scope: object, session_id: str
    ) -> Any:
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        async with self._connection(
            f"load session {session_id!r:.80}"
        ) as conn:
            cursor = await conn.execute(
                self._sql[statement], (session_id, tenant)
            )
            row = await cursor.fetchone()
        return None if row is None else row[0]

    @contextlib.asynccontextmanager
    async def _connection(
        self, what: str
    ) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        psycopg, psycopg_pool = _import_psycopg()
        pending = self._pool is None or (
            self._create and self._conninfo is None
        )
        if pending and what != "create its table":
            await self.open()
        pool = self._pool
        if pool is None:
            raise self._closed_error()
        try:
            async with pool.connection() as conn:
                yield conn
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._error(what, exc) from exc
