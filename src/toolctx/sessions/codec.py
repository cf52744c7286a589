"""JSON-safe round trips of sessions: ``session_to_dict``/``from_dict``.

The format is versioned (``"format": "toolctx.session/1"``); both
functions are thin calls into :mod:`toolctx.codec`, toolctx's one
converter: ``scope`` is runtime-only and never written; typed values are
unstructured by their key's type and structured back to it; a value
whose key this process does not know is kept as
:class:`~toolctx._context.keys.RawValue` and written back as it came;
this turn's results use the ``toolctx.result/1`` format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolctx._context import codec
from toolctx._context.codec import SESSION_FORMAT
from toolctx._context.session import Session


__all__ = ["SESSION_FORMAT", "session_from_dict", "session_to_dict"]


def session_to_dict(session: Session) -> dict[str, Any]:
    """Return *session* as JSON-safe data; ``scope`` is never written.

    The fields are read under the session's lock, so a session that other
    threads are updating is written as one consistent snapshot.

    Args:
        session: The session to serialize.

    Returns:
        A dict of JSON types (``json.dumps`` accepts it) with
        ``"format": "toolctx.session/1"``, ``id``, ``user_id``, ``turn``,
        ``agent_id``, ``state``, ``metadata``, ``values``, ``results`` and
        ``pending`` (calls waiting for approval).

    Raises:
        ContextDataError: A state, metadata or result entry has no JSON
            form or nests deeper than 200 levels, or a typed value does
            not match its key's type.

    Example:
        >>> data = session_to_dict(Session("s1", state={"n": 1}))
        >>> data["format"], data["id"], data["state"]
        ('toolctx.session/1', 's1', {'n': 1})

    .. versionadded:: 0.1.0
    """
    return codec.session_to_dict(session)


def session_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> Session:
    """Rebuild a session from :func:`session_to_dict` output.

    Args:
        data: What ``session_to_dict`` returned (possibly through JSON).
        scope: The runtime scope to attach (auth identity, handles), rebuilt
            by the host; it is not part of the data.

    Returns:
        A new :class:`~toolctx.Session`, equal to the one that was written.
        Typed values whose key is not defined in this process come back as
        ``RawValue`` and are written back unchanged.

    Raises:
        ContextDataError: *data* is not session data of this format, or a
            field is unknown (a misspelled key), missing or of the wrong
            type, or nests deeper than 200 levels, or a typed value does
            not fit its key; the message names the field.

    Example:
        >>> s = session_from_dict({"format": "toolctx.session/1", "id": "s1"})
        >>> s == Session("s1")
        True

    .. versionadded:: 0.1.0
    """
    return codec.session_from_dict(data, scope=scope)
