"""The database file under :class:`~toolctx.sessions.SQLiteSessionStore`.

Its table layout (one :class:`Row` per session), creating that schema in
a new file or checking the version of an existing one, and what the store
says when SQLite fails: each message names the file and the fix.
"""

from __future__ import annotations

import sqlite3

from typing import NamedTuple

from toolctx.exceptions import SessionSchemaError
from toolctx.sessions.store import MAX_SHOWN


class Row(NamedTuple):
    """One row of ``toolctx_sessions``, in column order."""

    session_id: str
    tenant: str
    turn: int
    version: int
    updated_at: str
    data: str


SCHEMA = (
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


def migrate(conn: sqlite3.Connection, path: str, version: int) -> None:
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
        for statement in SCHEMA:
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


def database_message(path: str, exc: sqlite3.Error) -> str:
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
