"""JSON-safe round trips of sessions: ``session_to_dict``/``from_dict``.

The format is versioned (``"format": "toolctx.session/1"``) and mirrors
:mod:`toolctx.context.codec`: ``scope`` is runtime-only and never
written; typed values are unstructured by their key's type and
structured back to it; a value whose key this process does not know is kept as
:class:`~toolctx.context.keys.RawValue` and written back as it came; this
turn's results use the ``toolctx.result/1`` format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolctx._frozen import ENTRIES
from toolctx._records import ApprovalRequest
from toolctx.context.codec import (
    mapping_field,
    result_from_dict,
    result_to_dict,
    to_json,
    value_from_json,
    value_to_json,
)
from toolctx.context.session import Session
from toolctx.exceptions import ContextDataError


__all__ = ["SESSION_FORMAT", "session_from_dict", "session_to_dict"]

SESSION_FORMAT = "toolctx.session/1"
_WHAT = "Session data"


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
    snap = session.snapshot()
    state, metadata = snap["state"], snap["metadata"]
    values, results = snap["values"], snap["results"]
    session_id, user_id, turn, agent_id = (
        snap["id"],
        snap["user_id"],
        snap["turn"],
        snap["agent_id"],
    )
    return {
        "format": SESSION_FORMAT,
        "id": session_id,
        "user_id": user_id,
        "turn": turn,
        "agent_id": agent_id,
        "state": to_json(state, "the session state", envelope=ENTRIES),
        "metadata": to_json(
            metadata, "the session metadata", envelope=ENTRIES
        ),
        "values": {name: value_to_json(name, v) for name, v in values.items()},
        "results": [result_to_dict(result) for result in results],
        "pending": [request.to_dict() for request in snap["pending"]],
    }


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
            field has the wrong type or nests deeper than 200 levels, or a
            typed value does not fit its key.

    Example:
        >>> s = session_from_dict({"format": "toolctx.session/1", "id": "s1"})
        >>> s == Session("s1")
        True

    .. versionadded:: 0.1.0
    """
    data = _check_format(data)
    session_id = data.get("id")
    if type(session_id) is not str or not session_id:
        msg = f"{_WHAT} field 'id' must be a non-empty string, got "
        msg += f"{session_id!r}."
        raise ContextDataError(msg)
    turn = data.get("turn", 0)
    if type(turn) is not int:
        msg = f"{_WHAT} field 'turn' must be an integer, got {turn!r}."
        raise ContextDataError(msg)
    results = data.get("results")
    results = [] if results is None else results
    if not isinstance(results, list):
        msg = f"{_WHAT} field 'results' must be a list, got {results!r}."
        raise ContextDataError(msg)
    pending = data.get("pending") or []
    if not isinstance(pending, list):
        msg = f"{_WHAT} field 'pending' must be a list of approval requests."
        raise ContextDataError(msg)
    return Session(
        session_id,
        user_id=_optional_str(data, "user_id"),
        turn=turn,
        agent_id=_optional_str(data, "agent_id"),
        state=mapping_field(data, "state", _WHAT),
        metadata=mapping_field(data, "metadata", _WHAT),
        values={
            name: value_from_json(name, raw)
            for name, raw in mapping_field(data, "values", _WHAT).items()
        },
        results=[result_from_dict(result) for result in results],
        pending=[ApprovalRequest.from_dict(item) for item in pending],
        scope=scope,
    )


# -- helpers -----------------------------------------------------------------


def _check_format(data: object) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        msg = (
            f"session_from_dict() takes a mapping, got {type(data).__name__}."
        )
        raise ContextDataError(msg)
    fmt = data.get("format")
    if fmt != SESSION_FORMAT:
        msg = (
            f"Unsupported session data format {fmt!r}; this version of "
            f"toolctx reads {SESSION_FORMAT!r}. Data written by a newer "
            f"toolctx needs that version to read it."
        )
        raise ContextDataError(msg)
    return data


def _optional_str(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and type(value) is not str:
        msg = f"{_WHAT} field {name!r} must be a string or null, got "
        msg += f"{value!r}."
        raise ContextDataError(msg)
    return value
