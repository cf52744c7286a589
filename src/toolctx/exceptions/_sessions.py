"""The exceptions of session stores.

A store that refuses or fails an operation, a database schema this
version cannot use, a stale version on save, and another tenant's
session id.
"""

from __future__ import annotations

from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError


class SessionStoreError(ToolctxError):
    """A session store refused or failed an operation.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class SessionSchemaError(SessionStoreError):
    """The database's schema is not one this version of toolctx can use.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class SessionConflictError(SessionStoreError):
    """The stored version is not the one the caller expected.

    Attributes:
        session_id: The session's id.
        expected: The ``expected_version`` passed to ``save``.
        actual: The stored version (0 when the session does not exist).

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, session_id: str, expected: int, actual: int) -> None:
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"Session {session_id!r} is at version {actual}, not "
            f"{expected}: it was saved (or deleted) since you read it. Load "
            f"it again, reapply your change and save with the new version."
        )


class SessionAccessError(SessionStoreError):
    """The session id is owned by another tenant.

    Raised by ``save``; ``load`` and ``delete`` of another tenant's id act
    as if the id did not exist, so they do not reveal it.

    Attributes:
        session_id: The id that could not be written.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"Session {session_id!r} belongs to another tenant; this scope "
            f"cannot overwrite it. Session ids are global to a store: give "
            f"every new session a fresh, unguessable id (uuid.uuid4().hex)."
        )
