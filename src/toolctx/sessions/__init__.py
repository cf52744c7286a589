"""Sessions kept across calls and processes: stores, tenancy, the codec.

A :class:`toolctx.Session` holds one conversation's identity and state
in memory. This package saves and restores it:

- :class:`SessionStore` and :class:`AsyncSessionStore` (the protocols),
  :class:`InMemorySessionStore`, :class:`SQLiteSessionStore`, and
  :class:`PostgresSessionStore` / :class:`AsyncPostgresSessionStore` for
  a database shared by many hosts (``toolctx[postgres]``), each isolating
  tenants (:data:`TenantOf`, :func:`tenant_id_of`);
- :func:`resume_stored` / :func:`aresume_stored`: a call held in a stored
  session, resumed exactly once however many hosts race for it;
- :func:`session_to_dict` / :func:`session_from_dict`, the versioned JSON
  form the stores write.
"""

from __future__ import annotations

from toolctx.exceptions import (
    SessionAccessError,
    SessionConflictError,
    SessionSchemaError,
    SessionStoreError,
)
from toolctx.sessions.codec import session_from_dict, session_to_dict
from toolctx.sessions.held import aresume_stored, resume_stored
from toolctx.sessions.memory import InMemorySessionStore
from toolctx.sessions.postgres import (
    POSTGRES_DDL,
    AsyncPostgresSessionStore,
    PostgresSessionStore,
)
from toolctx.sessions.sqlite import SQLiteSessionStore
from toolctx.sessions.store import (
    AsyncSessionStore,
    SessionStore,
    TenantOf,
    tenant_id_of,
)


__all__ = [
    "POSTGRES_DDL",
    "AsyncPostgresSessionStore",
    "AsyncSessionStore",
    "InMemorySessionStore",
    "PostgresSessionStore",
    "SQLiteSessionStore",
    "SessionAccessError",
    "SessionConflictError",
    "SessionSchemaError",
    "SessionStore",
    "SessionStoreError",
    "TenantOf",
    "aresume_stored",
    "resume_stored",
    "session_from_dict",
    "session_to_dict",
    "tenant_id_of",
]
