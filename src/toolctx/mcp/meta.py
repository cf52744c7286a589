"""Carry a call's ids across MCP in the request ``_meta``.

:func:`context_meta` renders the ids of the running (or a given) context
into the ``_meta`` object of an *outgoing* MCP request, under namespaced
``io.toolctx/*`` keys plus the W3C trace-context keys; the server side
reads them back with :func:`context_from_meta`, which validates every
value and drops anything malformed. Neither needs the ``mcp`` package.

Only an allow-list crosses: the invocation, session, turn and agent ids,
optionally the user id, and ``traceparent``/``tracestate``/``baggage``
from the context's metadata. ``scope``, typed values, state and any other
metadata never do.
"""

from __future__ import annotations

import re

from collections.abc import Mapping
from typing import Any, cast

from toolctx._context.current import current_context
from toolctx._context.execution import ExecutionContext


META_PREFIX = "io.toolctx/"
"""The ``_meta`` key prefix of the ids toolctx propagates."""

INVOCATION_ID_KEY = META_PREFIX + "invocation_id"
SESSION_ID_KEY = META_PREFIX + "session_id"
TURN_KEY = META_PREFIX + "turn"
USER_ID_KEY = META_PREFIX + "user_id"
AGENT_ID_KEY = META_PREFIX + "agent_id"

TRACE_KEYS = ("traceparent", "tracestate", "baggage")
"""W3C trace-context (and baggage) keys, read from and written to metadata."""

_ID_FIELDS = (
    (INVOCATION_ID_KEY, "invocation_id"),
    (SESSION_ID_KEY, "session_id"),
    (USER_ID_KEY, "user_id"),
    (AGENT_ID_KEY, "agent_id"),
)

_MAX_ID = 256
_MAX_TURN = 2**53 - 1  # the largest integer every JSON reader keeps exact
_MAX_TRACE = {"traceparent": 55, "tracestate": 512, "baggage": 8192}
_TRACEPARENT = re.compile(
    r"(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}"
)


def context_meta(
    ctx: ExecutionContext | None = None, *, include_user: bool = False
) -> dict[str, Any]:
    """Return ``_meta`` entries that link an outgoing MCP call to *ctx*.

    Pass the result as the ``meta`` of an MCP client request (for example
    ``ClientSession.call_tool(name, args, meta=context_meta())``). A
    toolctx server reads it back: the call it runs gets
    ``parent_invocation_id`` set to this invocation, and the trace
    context carries over. The keys are namespaced (``io.toolctx/...``)
    except the W3C ones, so they never collide with other ``_meta`` users.

    Only ids cross: never ``scope``, typed values, state, or metadata other
    than ``traceparent``, ``tracestate`` and ``baggage``.

    Args:
        ctx: The context to describe; by default the running call's. With
            neither, the result is ``{}``.
        include_user: Also send ``user_id``. Off by default: the user id
            is personal data, and a server ignores it unless it is
            configured to trust its callers.

    Returns:
        A fresh dict of JSON values, safe to merge into other ``_meta``.

    Example:
        >>> from toolctx import ExecutionContext
        >>> tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        >>> ctx = ExecutionContext(
        ...     invocation_id="inv-1", session_id="chat-7", turn=3,
        ...     user_id="ada", metadata={"traceparent": tp},
        ... )
        >>> meta = context_meta(ctx)
        >>> meta["io.toolctx/invocation_id"], meta["io.toolctx/turn"]
        ('inv-1', 3)
        >>> "io.toolctx/user_id" in meta
        False
        >>> meta["traceparent"] == tp
        True

    .. versionadded:: 0.1.0
    """
    if ctx is None:
        ctx = current_context()
        if ctx is None:
            return {}
    elif not isinstance(cast("object", ctx), ExecutionContext):
        msg = (
            "context_meta() takes an ExecutionContext or None, got "
            f"{type(ctx).__name__}."
        )
        raise TypeError(msg)
    meta: dict[str, Any] = {}
    if _valid_id(ctx.invocation_id):
        meta[INVOCATION_ID_KEY] = ctx.invocation_id
    if _valid_id(ctx.session_id):
        meta[SESSION_ID_KEY] = ctx.session_id
    meta[TURN_KEY] = ctx.turn
    if _valid_id(ctx.agent_id):
        meta[AGENT_ID_KEY] = ctx.agent_id
    if include_user and _valid_id(ctx.user_id):
        meta[USER_ID_KEY] = ctx.user_id
    for key in TRACE_KEYS:
        value = ctx.metadata.get(key)
        if _valid_trace(key, value):
            meta[key] = value
    return meta


def context_from_meta(meta: object) -> dict[str, Any]:
    """Return the toolctx ids and trace context found in a request ``_meta``.

    The reverse of :func:`context_meta`. Every value is checked: ids must
    be non-empty printable strings of at most 256 characters, ``turn`` a
    non-negative integer, ``traceparent`` a valid W3C header. Anything
    else (a wrong type, an oversized value, a missing or non-mapping
    ``_meta``) is left out, never an error: ``_meta`` comes from the
    remote peer.

    The result is *claims* by the caller, not facts: ``invocation_id`` is
    the **caller's** invocation (a server uses it as its call's
    ``parent_invocation_id``), and ``session_id``/``user_id`` are whatever
    the client chose to send.

    Args:
        meta: The ``_meta`` mapping of an incoming request (or None).

    Returns:
        A dict with some of the keys ``invocation_id``, ``session_id``,
        ``turn``, ``user_id``, ``agent_id``, ``traceparent``,
        ``tracestate`` and ``baggage``.

    Example:
        >>> context_from_meta({
        ...     "io.toolctx/invocation_id": "inv-1",
        ...     "io.toolctx/turn": "3",
        ...     "progressToken": 5,
        ... })
        {'invocation_id': 'inv-1'}

    .. versionadded:: 0.1.0
    """
    if not isinstance(meta, Mapping):
        return {}
    data = cast("Mapping[Any, object]", meta)
    found: dict[str, Any] = {}
    for key, name in _ID_FIELDS:
        value = data.get(key)
        if _valid_id(value):
            found[name] = value
    turn = data.get(TURN_KEY)
    if type(turn) is int and 0 <= turn <= _MAX_TURN:
        found["turn"] = turn
    for key in TRACE_KEYS:
        value = data.get(key)
        if _valid_trace(key, value):
            found[key] = value
    return found


def _valid_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_ID
        and value.isprintable()
    )


def _valid_trace(key: str, value: object) -> bool:
    if not isinstance(value, str) or not value:
        return False
    if len(value) > _MAX_TRACE[key] or not value.isprintable():
        return False
    return key != "traceparent" or _TRACEPARENT.fullmatch(value) is not None
