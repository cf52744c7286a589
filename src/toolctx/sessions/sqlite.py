""":class:`SQLiteSessionStore`: sessions in an SQLite database file.

Here too: its table layout (one row per session), creating that
schema in a new file or checking the version of an existing one, and what
the store says when SQLite fails: each message names the file and the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sqlite3
import threading

from collections.abc import Iterator
from datetime import datetime, timezone
from types import TracebackType
from typing import Any, ClassVar, NamedTuple, final

from typing_extensions import Self

from toolctx._context.session import Session
from toolctx.exceptions import (
    SessionAccessError,
    SessionSchemaError,
    SessionStoreError,
)
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


__all__ = ["SQLiteSessionStore"]


@final
class SQLiteSessionStore:
    """A :class:`SessionStore` in an SQLite database file (stdlib ``sqlite3``).

    Each session is one row of the table ``toolctx_sessions``: the JSON
    text of :func:`session_to_dict` plus ``tenant``, ``session_id``,
    ``turn``, ``version`` (1 on the first save, +1 on each) and
    ``updated_at`` (UTC, ISO 8601) columns. The primary key is
    ``session_id`` alone, so an id belongs to the tenant that first saved
    it; another tenant cannot claim it (``save`` raises
    :class:`SessionAccessError`) nor see it.

    The database runs in WAL mode, so other processes can read while one
    writes. Every save is one ``BEGIN IMMEDIATE`` transaction, rolled back
    on any error: a crash leaves the previous version intact. One
    connection, guarded by a lock, serves all threads of the store. The
    schema version lives in the table ``toolctx_meta``, so the store can
    share a database file with the application's own tables.

    Args:
        path: The database file (created if missing), or ``":memory:"``
            for a private in-memory database.
        tenant_of: Derives the tenant from a scope; the default,
            :func:`tenant_id_of`, reads ``scope.tenant_id``.
        timeout: Seconds to wait for another connection's write lock.

    Raises:
        SessionSchemaError: The file was written by a newer toolctx.
        SessionStoreError: The file is damaged or is not an SQLite
            database, or SQLite cannot open it. Every method raises it too
            for a database that fails, naming the file and what failed
            (the SQLite error is its ``__cause__``).

    Example:
        >>> class Auth:
        ...     tenant_id = "acme"
        >>> with SQLiteSessionStore(":memory:") as store:
        ...     store.save(Auth(), Session("s1", turn=3))
        ...     store.load(Auth(), "s1").turn
        3

    .. versionadded:: 0.1.0
    """

    SCHEMA_VERSION: ClassVar[int] = 1
    """The schema version this class writes and reads."""

    __slots__ = ("_conn", "_lock", "_path", "_tenant_of")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        tenant_of: TenantOf = tenant_id_of,
        timeout: float = 5.0,
    ) -> None:
        self._path = os.fspath(path)
        self._tenant_of = tenant_of
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            with self._database_errors():
                self._conn = sqlite3.connect(
                    self._path,
                    timeout=timeout,
                    isolation_level=None,  # explicit BEGIN/COMMIT only
                    check_same_thread=False,  # shared by threads, under _lock
                )
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._migrate()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        closed = ", closed=True" if self._conn is None else ""
        return f"<SQLiteSessionStore(path={self._path!r}{closed})>"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> str:
        """The database path this store was opened with.

        .. versionadded:: 0.1.0
        """
        return self._path

    def close(self) -> None:
        """Close the database connection; later calls raise.

        Closing twice is fine. ``with SQLiteSessionStore(...)`` closes on
        exit.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()

    def load(self, scope: object, session_id: str) -> Session | None:
        """Return the scope's tenant's session *session_id*, or None.

        The returned session is a new object carrying *scope*.

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            ContextDataError: The stored data cannot be read back.
            SessionStoreError: The store is closed, the database is
                damaged or fails, or the stored row holds the data of
                another session id (it was changed outside the store).

        .. versionadded:: 0.1.0
        """
        row = self._fetch("data", scope, session_id)
        return None if row is None else decode_session(row, scope, session_id)

    def version(self, scope: object, session_id: str) -> int | None:
        """Return how many times the session was saved, or None.

        Pass it as ``save(..., expected_version=...)`` to save only if
        nobody saved the session in between (optimistic concurrency).

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            SessionStoreError: The store is closed, or the database is
                damaged or fails.

        .. versionadded:: 0.1.0
        """
        version: int | None = self._fetch("version", scope, session_id)
        return version

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
                (0: only if the session does not exist yet); see
                :meth:`version`. None saves unconditionally.

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            SessionAccessError: Another tenant owns ``session.id``.
            SessionConflictError: The stored version is not
                *expected_version*.
            ContextDataError: The session cannot be serialized; nothing
                was changed.
            SessionStoreError: The store is closed, or the database is
                damaged or fails; nothing was changed.

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_expected(expected_version)
        text = encode_session(session)
        updated_at = datetime.now(timezone.utc).isoformat()
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT tenant, version FROM toolctx_sessions "
                "WHERE session_id = ?",
                (session.id,),
            ).fetchone()
            owner, version = (None, 0) if row is None else row
            check_write(owner, version, tenant, session.id, expected_version)
            self._write(
                conn,
                _Row(
                    session.id,
                    tenant,
                    session.turn,
                    version + 1,
                    updated_at,
                    text,
                ),
                exists=row is not None,
            )

    def delete(self, scope: object, session_id: str) -> bool:
        """Delete the scope's tenant's session; False if it has none.

        Raises:
            ScopeError: No tenant can be derived from *scope*.
            SessionStoreError: The store is closed, or the database is
                damaged or fails.

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM toolctx_sessions "
                "WHERE session_id = ? AND tenant = ?",
                (session_id, tenant),
            )
            return cursor.rowcount > 0

    # -- internals ---------------------------------------------------------

    def _write(
        self,
        conn: sqlite3.Connection,
        row: _Row,
        *,
        exists: bool,
    ) -> None:
        """Write one row inside the open transaction (not committed).

        An update matches the tenant too, so even a bug upstream could
        never hand a session to another tenant.
        """
        if exists:
            cursor = conn.execute(
                "UPDATE toolctx_sessions SET turn = ?, version = ?, "
                "updated_at = ?, data = ? "
                "WHERE session_id = ? AND tenant = ?",
                (
                    row.turn,
                    row.version,
                    row.updated_at,
                    row.data,
                    row.session_id,
                    row.tenant,
                ),
            )
            if cursor.rowcount != 1:  # pragma: no cover - checked before
                raise SessionAccessError(row.session_id)
        else:
            conn.execute(
                "INSERT INTO toolctx_sessions (session_id, tenant, turn, "
                "version, updated_at, data) VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )

    def _fetch(self, column: str, scope: object, session_id: str) -> Any:
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._lock, self._database_errors():
            row = (
                self._connection()
                .execute(
                    f"SELECT {column} FROM toolctx_sessions "  # noqa: S608 - a fixed column name
                    "WHERE session_id = ? AND tenant = ?",
                    (session_id, tenant),
                )
                .fetchone()
            )
        return None if row is None else row[0]

    def _connection(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            msg = (
                f"{self!r} is closed. Open a new SQLiteSessionStore, or use "
                f"the store inside its `with` block only."
            )
            raise SessionStoreError(msg)
        return conn

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and a write transaction; commit or roll back."""
        with self._lock, self._database_errors():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # keep the cause
                        conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _database_errors(self) -> Iterator[None]:
        """Raise SQLite's own errors as :class:`SessionStoreError`."""
        try:
            yield
        except sqlite3.Error as exc:
            raise SessionStoreError(
                _database_message(self._path, exc)
            ) from exc

    def _migrate(self) -> None:
        """Create the schema, or check that the file's is one we read."""
        with self._transaction() as conn:
            _migrate(conn, self._path, self.SCHEMA_VERSION)

    # -- AsyncSessionStore: SQLite runs in a worker thread, off the loop ----
    # Cancelled while the thread runs, a save still completes or rolls back
    # as a whole (the transaction is the thread's).

    async def aload(self, scope: object, session_id: str) -> Session | None:
        """:meth:`load` in a worker thread (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        return await asyncio.to_thread(self.load, scope, session_id)

    async def asave(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """:meth:`save` in a worker thread (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        await asyncio.to_thread(
            functools.partial(
                self.save, scope, session, expected_version=expected_version
            )
        )

    async def adelete(self, scope: object, session_id: str) -> bool:
        """:meth:`delete` in a worker thread (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        return await asyncio.to_thread(self.delete, scope, session_id)

    async def aversion(self, scope: object, session_id: str) -> int | None:
        """:meth:`version` in a worker thread.

        .. versionadded:: 0.1.0
        """
        return await asyncio.to_thread(self.version, scope, session_id)


class _Row(NamedTuple):
    """One row of ``toolctx_sessions``, in column order."""

    session_id: str
    tenant: str
    turn: int
    version: int
    updated_at: str
    data: str


_SCHEMA = (
    """
    CREATE TABLE toolctx_sessions (
        session_id TEXT PRIMARY KEY NOT NULL,
        tenant TEXT NOT NULL,
        turn INTEGER NOT NULL,
        version INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        data TEXT NOT NULL
    )
    """,
    """
    CREATE INDEX toolctx_sessions_by_tenant
        ON toolctx_sessions (tenant, updated_at)
    """,
)


def _migrate(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Create the schema in *conn*, or check that the file's is *version*.

    Runs inside the store's open write transaction.

    Raises:
        SessionSchemaError: The file holds another schema version.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS toolctx_meta "
        "(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL)"
    )
    row = conn.execute(
        "SELECT value FROM toolctx_meta WHERE key = 'schema_version'"
    ).fetchone()
    if row is None:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO toolctx_meta (key, value) "
            "VALUES ('schema_version', ?)",
            (version,),
        )
        return
    found = row[0]
    if found != version:
        raise SessionSchemaError(_schema_message(path, found, version))


def _schema_message(path: str, found: object, version: int) -> str:
    head = (
        f"The session database {path!r} has schema version "
        f"{found!r}; this version of toolctx reads version "
        f"{version}."
    )
    if type(found) is int and found > version:
        return f"{head} It was written by a newer toolctx: upgrade."
    return f"{head} No toolctx writes that version: use another file."


def _database_message(path: str, exc: sqlite3.Error) -> str:
    """The message of the store error raised for SQLite's *exc* on *path*."""
    where = f"The session database {path!r}"
    text = str(exc)[:MAX_SHOWN]
    if type(exc) is sqlite3.DatabaseError:  # SQLITE_CORRUPT, _NOTADB
        return (
            f"{where} is damaged or is not an SQLite database ({text}). "
            "Restore the file from a backup, or open the store on "
            "another path."
        )
    if "locked" in text or "busy" in text:
        return (
            f"{where} stayed locked by another connection ({text}). "
            "Retry, or open the store with a longer timeout=..."
        )
    return f"{where} failed: {type(exc).__name__}: {text}."
