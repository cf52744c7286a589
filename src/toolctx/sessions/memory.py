""":class:`InMemorySessionStore`: sessions in a dict, for tests and demos."""

from __future__ import annotations

import threading

from typing import NamedTuple, final

from toolctx._context.session import Session
from toolctx.sessions.store import (
    TenantOf,
    check_expected,
    check_id,
    check_write,
    decode_session,
    derive_tenant,
    encode_session,
    tenant_id_of,
)


__all__ = ["InMemorySessionStore"]


class _Entry(NamedTuple):
    tenant: str
    version: int
    text: str


@final
class InMemorySessionStore:
    """A thread-safe :class:`SessionStore` in a dict, for tests and demos.

    It keeps each session as JSON text (exactly what
    :class:`SQLiteSessionStore` writes), so later changes to a
    :class:`~toolctx.Session` object never change what was saved, and a
    session that cannot be serialized fails here as it would there.

    Args:
        tenant_of: Derives the tenant from a scope; the default,
            :func:`tenant_id_of`, reads ``scope.tenant_id``.

    Example:
        >>> class Auth:
        ...     tenant_id = "acme"
        >>> store = InMemorySessionStore()
        >>> store.save(Auth(), Session("s1", state={"n": 1}))
        >>> store.load(Auth(), "s1").state
        {'n': 1}

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_entries", "_lock", "_tenant_of")

    def __init__(self, *, tenant_of: TenantOf = tenant_id_of) -> None:
        self._tenant_of = tenant_of
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<InMemorySessionStore(num_sessions={len(self._entries)})>"

    def load(self, scope: object, session_id: str) -> Session | None:
        """Return the scope's tenant's session *session_id*, or None.

        The returned session is a new object carrying *scope*.

        Raises:
            ScopeError: No tenant can be derived from *scope*.

        .. versionadded:: 0.1.0
        """
        entry = self._entry(scope, session_id)
        return (
            None
            if entry is None
            else decode_session(entry.text, scope, session_id)
        )

    def save(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """Save *session* for the scope's tenant.

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

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_expected(expected_version)
        text = encode_session(session)
        with self._lock:
            entry = self._entries.get(session.id)
            owner, version = (None, 0) if entry is None else entry[:2]
            check_write(owner, version, tenant, session.id, expected_version)
            self._entries[session.id] = _Entry(tenant, version + 1, text)

    def delete(self, scope: object, session_id: str) -> bool:
        """Delete the scope's tenant's session; False if it has none.

        Raises:
            ScopeError: No tenant can be derived from *scope*.

        .. versionadded:: 0.1.0
        """
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._lock:
            entry = self._entries.get(session_id)
            if entry is None or entry.tenant != tenant:
                return False
            del self._entries[session_id]
            return True

    def version(self, scope: object, session_id: str) -> int | None:
        """Return how many times the session was saved, or None.

        Pass it as ``save(..., expected_version=...)`` to save only if
        nobody saved the session in between (optimistic concurrency).

        .. versionadded:: 0.1.0
        """
        entry = self._entry(scope, session_id)
        return None if entry is None else entry.version

    def _entry(self, scope: object, session_id: str) -> _Entry | None:
        tenant = derive_tenant(self._tenant_of, scope)
        check_id(session_id)
        with self._lock:
            entry = self._entries.get(session_id)
        return None if entry is None or entry.tenant != tenant else entry

    # -- AsyncSessionStore: a dict never blocks, so these answer at once ----

    async def aload(self, scope: object, session_id: str) -> Session | None:
        """:meth:`load`, for async hosts (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        return self.load(scope, session_id)

    async def asave(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """:meth:`save`, for async hosts (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        self.save(scope, session, expected_version=expected_version)

    async def adelete(self, scope: object, session_id: str) -> bool:
        """:meth:`delete`, for async hosts (:class:`AsyncSessionStore`).

        .. versionadded:: 0.1.0
        """
        return self.delete(scope, session_id)

    async def aversion(self, scope: object, session_id: str) -> int | None:
        """:meth:`version`, for async hosts.

        .. versionadded:: 0.1.0
        """
        return self.version(scope, session_id)
