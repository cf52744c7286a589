"""What a ``tools/call`` request says about its call.

:func:`request_info` reads each request into an :class:`McpRequestInfo`
(ids, client info, auth, trace context: the fields
:mod:`toolctx.mcp.server` lists), whose ``context`` is the template the
call is dispatched with unless a ``context_factory`` says otherwise.
"""

from __future__ import annotations

import uuid

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast, final

import attrs

from toolctx._context.execution import ExecutionContext
from toolctx.mcp.meta import TRACE_KEYS, context_from_meta
from toolctx.providers._render import plain


if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server


_CONNECTION_ID = "toolctx.connection_id"


@final
@attrs.frozen(kw_only=True)
class McpRequestInfo:
    """What an MCP ``tools/call`` request says about its call.

    Built for every call and handed to the ``context_factory`` of
    :func:`create_server`, which returns the template context to dispatch
    with. :attr:`context` is the template the server would use on its own,
    so a factory usually derives from it, for example
    ``attrs.evolve(info.context, scope=load_account(info.user_id))``.

    Attributes:
        tool_name: The tool the client asked for.
        request_id: The JSON-RPC request id, as ``str``.
        session_id: The transport's session: the ``mcp-session-id`` the
            server assigned to a streamable-HTTP session, a per-connection
            id on stdio, None on stateless HTTP and on the 2026 protocol
            over HTTP (a header the client sends there is ignored).
        protocol_version: The MCP protocol version of the connection.
        client_info: ``{"name", "version"}`` of the client, when it sent
            them.
        meta: The request's ``_meta`` as plain JSON data (``{}`` if none).
        caller: The toolctx ids found in ``_meta`` (see
            :func:`context_from_meta`): claims made by the client, checked
            for shape only.
        user_id: The authenticated user, from the SDK's auth; None when
            the transport has no authentication.
        access_token: The SDK's ``AccessToken`` for the request, if any.
        context: The default template built from all of the above.
        request_context: The SDK's ``ServerRequestContext`` (for progress
            notifications and other protocol features).

    .. versionadded:: 0.1.0
    """

    tool_name: str
    request_id: str | None
    session_id: str | None
    protocol_version: str | None
    client_info: Mapping[str, Any] | None
    meta: Mapping[str, Any]
    caller: Mapping[str, Any]
    user_id: str | None
    access_token: object | None = attrs.field(repr=False)
    context: ExecutionContext
    request_context: object = attrs.field(repr=False, eq=False)


ContextFactory = Callable[
    [McpRequestInfo], "ExecutionContext | Awaitable[ExecutionContext]"
]
"""A hook ``(info) -> ExecutionContext`` (may be async) for each call.

.. versionadded:: 0.1.0
"""


@asynccontextmanager
async def connection_lifespan(
    _server: Server[dict[str, Any]],
) -> AsyncIterator[dict[str, Any]]:
    """The server's lifespan: give each stdio connection its own id.

    Entered once per ``Server.run()``, i.e. per stdio connection; the
    HTTP manager enters it once for the app and has session ids instead.
    """
    yield {_CONNECTION_ID: uuid.uuid4().hex}


def request_info(
    ctx: ServerRequestContext[Any, Any],
    tool_name: str,
    *,
    trust: bool = False,
) -> McpRequestInfo:
    """Read what a ``tools/call`` request says about its call.

    Args:
        ctx: The SDK's request context.
        tool_name: The requested tool.
        trust: Take session, turn, agent and user from ``_meta`` (see
            ``trust_meta_identity`` of :func:`create_server`).

    .. versionadded:: 0.1.0
    """
    raw = ctx.params.get("_meta") if isinstance(ctx.params, Mapping) else None
    meta: dict[str, Any] = plain(raw) if isinstance(raw, Mapping) else {}
    caller = context_from_meta(meta)
    request_id = None if ctx.request_id is None else str(ctx.request_id)
    session_id = _session_id(ctx)
    client_info = _client_info(ctx)
    token = _access_token(ctx.request)
    user_id = _token_user(token)

    metadata: dict[str, Any] = {"mcp.meta": meta}
    if client_info is not None:
        metadata["mcp.client_info"] = client_info
    if ctx.protocol_version:
        metadata["mcp.protocol_version"] = ctx.protocol_version
    if token is not None:
        metadata["mcp.auth"] = {
            "client_id": getattr(token, "client_id", None),
            "subject": getattr(token, "subject", None),
            "scopes": list(getattr(token, "scopes", None) or ()),
        }
    for key in TRACE_KEYS:
        if key in caller:
            metadata[key] = caller[key]

    fields: dict[str, Any] = {"session_id": session_id, "user_id": user_id}
    if trust:
        for name in ("session_id", "turn", "agent_id"):
            if name in caller:
                fields[name] = caller[name]
        if user_id is None and "user_id" in caller:
            fields["user_id"] = caller["user_id"]
    template = ExecutionContext(
        **fields,
        parent_invocation_id=caller.get("invocation_id"),
        metadata=metadata,
        scope=token,
    )
    return McpRequestInfo(
        tool_name=tool_name,
        request_id=request_id,
        session_id=session_id,
        protocol_version=ctx.protocol_version or None,
        client_info=client_info,
        meta=meta,
        caller=caller,
        user_id=user_id,
        access_token=token,
        context=template,
        request_context=ctx,
    )


def _session_id(ctx: ServerRequestContext[Any, Any]) -> str | None:
    if ctx.request is not None:
        # Streamable HTTP: the session the transport itself assigned (and
        # checks the client's mcp-session-id header against); None when
        # stateless, where the header is whatever the client chose to send.
        # The SDK keeps it on the connection, which it does not expose.
        connection = getattr(ctx.session, "_connection", None)
        value = getattr(connection, "session_id", None)
        return value if isinstance(value, str) and value else None
    state = ctx.lifespan_context
    if isinstance(state, Mapping):
        value = cast("Mapping[str, object]", state).get(_CONNECTION_ID)
        if isinstance(value, str):
            return value
    return None


def _client_info(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any] | None:
    params = ctx.session.client_params
    info = None if params is None else params.client_info
    if info is None:
        return None
    return {"name": info.name, "version": info.version}


def _access_token(request: object) -> object | None:
    try:
        from mcp.server.auth.middleware.auth_context import get_access_token
    except ImportError:  # pragma: no cover - part of the SDK
        return None
    token = get_access_token()
    if token is not None:
        return token
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, Mapping) else None
    return getattr(user, "access_token", None)


def _token_user(token: object | None) -> str | None:
    if token is None:
        return None
    for name in ("subject", "client_id"):
        value = getattr(token, name, None)
        if isinstance(value, str) and value:
            return value
    return None
