"""Sessions kept across calls and processes: stores, tenancy, the codec.

A :class:`toolctx.Session` holds one conversation's identity and state
in memory. This package saves and restores it:

- :class:`SessionStore` (the protocol), :class:`InMemorySessionStore`
  and :class:`SQLiteSessionStore`, each isolating tenants
  (:data:`TenantOf`, :func:`tenant_id_of`);
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
from toolctx.sessions.memory import InMemorySessionStore
from toolctx.sessions.sqlite import SQLiteSessionStore
from toolctx.sessions.store import SessionStore, TenantOf, tenant_id_of


__all__ = [
    "InMemorySessionStore",
    "SQLiteSessionStore",
    "SessionAccessError",
    "SessionConflictError",
    "SessionSchemaError",
    "SessionStore",
    "SessionStoreError",
    "TenantOf",
    "session_from_dict",
    "session_to_dict",
    "tenant_id_of",
]
