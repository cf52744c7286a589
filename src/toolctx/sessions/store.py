"""What every session store promises: the protocol, tenancy, the checks.

A store (:class:`~toolctx.sessions.InMemorySessionStore`,
:class:`~toolctx.sessions.SQLiteSessionStore`, or any object with the
methods of :class:`SessionStore`) keeps what
:func:`~toolctx.sessions.codec.session_to_dict` writes (never the scope)
and enforces tenancy: every method takes the caller's *scope* first, the
store derives a tenant from it with its ``tenant_of`` callable, and a
session saved by one tenant can never be loaded, overwritten or deleted
by another. Session ids are global to a store (the first tenant to save
an id owns it), so use fresh, unguessable ids. The checks every store
makes live here too, so that each store makes them the same way.

Errors::

    ToolctxError
    └── SessionStoreError          (closed store, damaged database file,
        │                           SQLite failure, a stored entry that
        │                           holds another session's data)
        ├── SessionAccessError     (the id belongs to another tenant)
        ├── SessionConflictError   (expected_version no longer matches)
        └── SessionSchemaError     (the database's schema version is
                                    newer than this toolctx, or unknown)

A scope without a tenant raises :class:`~toolctx.ScopeError`; data that
cannot be serialized or read back raises
:class:`~toolctx.exceptions.ContextDataError`.
"""

from __future__ import annotations

import json

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from toolctx._context.session import Session
from toolctx._frozen import MAX_DATA_DEPTH
from toolctx.exceptions import (
    ContextDataError,
    ScopeError,
    SessionAccessError,
    SessionConflictError,
    SessionStoreError,
)
from toolctx.sessions.codec import session_from_dict, session_to_dict


__all__ = ["AsyncSessionStore", "SessionStore", "TenantOf", "tenant_id_of"]

TenantOf = Callable[[object], str]
"""Derives the tenant (a non-empty ``str``) from a caller's scope."""


def tenant_id_of(scope: object) -> str:
    """Return ``scope.tenant_id``: the stores' default ``tenant_of``.

    Args:
        scope: The caller's runtime scope.

    Returns:
        The scope's ``tenant_id`` attribute.

    Raises:
        ScopeError: *scope* is None or has no non-empty ``str`` attribute
            ``tenant_id``.

    Example:
        >>> class Auth:
        ...     tenant_id = "acme"
        >>> tenant_id_of(Auth())
        'acme'

    .. versionadded:: 0.1.0
    """
    tenant = getattr(scope, "tenant_id", None)
    if type(tenant) is not str or not tenant:
        what = "None" if scope is None else f"a {type(scope).__qualname__}"
        msg = (
            f"A session store needs the caller's tenant, but the scope is "
            f"{what} without a non-empty str attribute 'tenant_id'. Pass a "
            f"scope that has one, or build the store with "
            f"tenant_of=<callable(scope) -> str> (e.g. tenant_of=lambda "
            f"scope: 'default' for a single-tenant application)."
        )
        raise ScopeError(msg)
    return tenant


def derive_tenant(tenant_of: TenantOf, scope: object) -> str:
    """Return the tenant *tenant_of* derives from *scope*, checked.

    Raises:
        ScopeError: *tenant_of* returned no non-empty ``str`` (or raised
            it itself).
    """
    tenant: object = tenant_of(scope)
    if type(tenant) is not str or not tenant:
        msg = (
            f"The store's tenant_of returned {tenant!r}; it must return a "
            f"non-empty str naming the scope's tenant (or raise ScopeError)."
        )
        raise ScopeError(msg)
    return tenant


def check_id(session_id: object) -> str:
    """Return *session_id* if it is a non-empty ``str``; else TypeError."""
    if type(session_id) is not str or not session_id:
        msg = f"session_id must be a non-empty str, got {session_id!r}."
        raise TypeError(msg)
    return session_id


def check_expected(expected: int | None) -> None:
    """Refuse an ``expected_version`` that is not None or an int >= 0."""
    if expected is not None and (type(expected) is not int or expected < 0):
        msg = (
            f"expected_version must be None or an int >= 0 (0: the session "
            f"must not exist yet), got {expected!r}."
        )
        raise TypeError(msg)


def check_write(
    owner: str | None,
    version: int,
    tenant: str,
    session_id: str,
    expected: int | None,
) -> None:
    """Refuse a save by another tenant or against a stale version."""
    if owner is not None and owner != tenant:
        raise SessionAccessError(session_id)
    if expected is not None and expected != version:
        raise SessionConflictError(session_id, expected, version)


def encode_session(session: Session) -> str:
    """Return the JSON text a store keeps for *session* (never its scope).

    Raises:
        ContextDataError: The session cannot be serialized.
    """
    data = session_to_dict(session)
    try:
        return json.dumps(data, separators=(",", ":"))
    except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
        msg = f"Cannot serialize session {session.id!r}: {exc}"
        raise ContextDataError(msg) from None


def decode_session(text: str, scope: object, session_id: str) -> Session:
    """Read back the entry stored under *session_id*, for *scope*.

    Raises:
        ContextDataError: *text* cannot be read back as a session.
        SessionStoreError: *text* holds the data of another session id.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        msg = f"Stored session data is not valid JSON: {exc}"
        raise ContextDataError(msg) from None
    except RecursionError:  # the decoder's own limit, deeper than ours
        msg = (
            f"Stored session data is nested deeper than {MAX_DATA_DEPTH} "
            "levels of objects and arrays, the most toolctx stores and "
            "reads back, so it was changed outside toolctx; it was not "
            "loaded. Delete the entry, or restore it from a backup."
        )
        raise ContextDataError(msg) from None
    session = session_from_dict(data, scope=scope)
    if session.id != session_id:
        msg = (
            f"The stored entry for session {_shown(session_id)} holds the "
            f"data of session {_shown(session.id)}, so it was changed "
            "outside this store; it was not loaded. Delete the entry, or "
            "restore it from a backup."
        )
        raise SessionStoreError(msg)
    return session


def _shown(text: str) -> str:
    """*text* as a repr for a message, shortened when it is long."""
    shown = repr(text)
    return shown if len(shown) <= MAX_SHOWN else f"{shown[:MAX_SHOWN]}..."


MAX_SHOWN = 80
"""Most characters of a stored value quoted in an error message."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live between turns and processes.

    Every method takes the caller's *scope* first, so that the store can
    enforce tenancy: a session saved under one tenant is invisible to
    every other one (``load`` returns None, ``delete`` returns False, as
    if the id did not exist) and cannot be overwritten by it (``save``
    raises :class:`SessionAccessError`). The scope itself is never
    stored; ``load`` attaches the caller's scope to the session it
    returns.

    :class:`InMemorySessionStore` and :class:`SQLiteSessionStore`
    implement it; any object with these three methods is a store.

    .. versionadded:: 0.1.0
    """

    def load(self, scope: object, session_id: str) -> Session | None:
        """Return the session saved under *session_id*, or None.

        .. versionadded:: 0.1.0
        """
        ...

    def save(self, scope: object, session: Session) -> None:
        """Save *session* atomically, replacing any earlier version.

        .. versionadded:: 0.1.0
        """
        ...

    def delete(self, scope: object, session_id: str) -> bool:
        """Delete the session; return whether there was one to delete.

        .. versionadded:: 0.1.0
        """
        ...


@runtime_checkable
class AsyncSessionStore(Protocol):
    """:class:`SessionStore` for asyncio hosts: the same methods, awaited.

    ``aload``, ``asave`` and ``adelete`` behave exactly as ``load``,
    ``save`` and ``delete`` (tenancy, errors), and never block the event
    loop: :class:`InMemorySessionStore` answers at once,
    :class:`SQLiteSessionStore` runs SQLite in a worker thread, and
    :class:`AsyncPostgresSessionStore` talks to PostgreSQL with asyncio.

    .. versionadded:: 0.1.0
    """

    async def aload(self, scope: object, session_id: str) -> Session | None:
        """Return the session saved under *session_id*, or None.

        .. versionadded:: 0.1.0
        """
        ...

    async def asave(self, scope: object, session: Session) -> None:
        """Save *session* atomically, replacing any earlier version.

        .. versionadded:: 0.1.0
        """
        ...

    async def adelete(self, scope: object, session_id: str) -> bool:
        """Delete the session; return whether there was one to delete.

        .. versionadded:: 0.1.0
        """
        ...
