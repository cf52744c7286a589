"""How the MCP server answers a request: ``tools/list``, ``tools/call``.

:class:`Handlers` reads each ``tools/call`` request into an
:class:`McpRequestInfo` (ids, client info, auth, trace context: the
fields :mod:`toolctx.mcp.server` lists), asks the ``context_factory``
for the template context, dispatches the call and renders its result.
Whatever is raised around the tool becomes a generic JSON-RPC error for
the client, its traceback logged under an error id.
"""

from __future__ import annotations

import inspect
import logging
import uuid

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, cast, final

import attrs

from toolctx._records import ToolCall, ToolResult
from toolctx.context.execution import ExecutionContext
from toolctx.dispatch.dispatcher import Dispatcher
from toolctx.exceptions import ToolDenied
from toolctx.mcp.meta import (
    TRACE_KEYS,
    context_from_meta,
)
from toolctx.providers._render import plain
from toolctx.providers.mcp import result_message, tools
from toolctx.tools.registry import Registry


if TYPE_CHECKING:
    from collections.abc import Iterator

    import mcp_types

    from mcp.server.context import (
        CallNext,
        HandlerResult,
        ServerRequestContext,
    )
    from mcp.server.lowlevel import Server


_CONNECTION_ID = "toolctx.connection_id"
_INTERNAL_ERROR = -32603  # JSON-RPC 2.0: internal error
# The logger the documentation names (docs/mcp.md, SECURITY.md), kept
# when the handlers moved out of toolctx.mcp.server.
_log = logging.getLogger("toolctx.mcp.server")


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


@final
class Handlers:
    """The ``tools/list`` and ``tools/call`` handlers of one server."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        factory: ContextFactory | None,
        trust: bool,
        types: Any,
    ) -> None:
        self.dispatcher = dispatcher
        self.factory = factory
        self.trust = trust
        self.types = types

    async def list_tools(
        self,
        _ctx: ServerRequestContext[dict[str, Any]],
        _params: mcp_types.PaginatedRequestParams | None,
    ) -> mcp_types.ListToolsResult:
        """``tools/list``: the registry's tools, read at each request."""
        with _answering("tools/list"):
            result = self.types.ListToolsResult.model_validate(
                {"tools": tools(self.dispatcher.registry)}
            )
        return cast("mcp_types.ListToolsResult", result)

    async def keep_schema_order(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: undo the key reordering of older protocol versions.

        The SDK re-validates ``tools/list`` results against the protocol
        version's model, which moves ``type`` after ``properties``. When a
        schema is otherwise unchanged, send ours, byte for byte.
        """
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            with _answering("tools/list"):
                _restore_schemas(result, self.dispatcher.registry)
        return result

    async def call_tool(
        self,
        ctx: ServerRequestContext[dict[str, Any]],
        params: mcp_types.CallToolRequestParams,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """``tools/call``: dispatch in the context the request gives."""
        with _answering("tools/call", params.name):
            info = _request_info(ctx, params.name, trust=self.trust)
            call = ToolCall(params.name, params.arguments, id=info.request_id)
            try:
                template = await self._template(info)
            except ToolDenied as exc:
                result = ToolResult(
                    name=params.name,
                    call_id=info.request_id,
                    is_error=True,
                    error=(
                        f"Call to tool {params.name!r} was denied: "
                        f"{exc.reason}"
                    ),
                )
            else:
                result = await self.dispatcher.adispatch(call, template)
            message = self.types.CallToolResult.model_validate(
                result_message(result)
            )
        return cast("mcp_types.CallToolResult", message)

    async def _template(self, info: McpRequestInfo) -> ExecutionContext:
        if self.factory is None:
            return info.context
        made: object = self.factory(info)
        if inspect.isawaitable(made):
            made = await made
        if type(made) is not ExecutionContext:
            msg = (
                "The context_factory must return an ExecutionContext, got "
                f"{type(made).__name__}."
            )
            raise TypeError(msg)
        return made


@contextmanager
def _answering(method: str, tool_name: str | None = None) -> Iterator[None]:
    """Turn anything raised while answering *method* into a generic error.

    The SDK would send the exception's text to the client (a secret in an
    interceptor's error message would reach it) and let a ``SystemExit``
    stop the server. Instead the client gets a JSON-RPC internal error
    naming an error id, and the host's log the traceback under that id.
    Only cancellation and ``KeyboardInterrupt`` propagate: they stop the
    request or the server on purpose.
    """
    try:
        yield
    except BaseException as exc:
        if _propagates(exc):
            raise
        _internal_error(exc, method, tool_name)


def _propagates(exc: BaseException) -> bool:
    """Cancellation, an interrupt, or an exception group holding one."""
    import anyio

    if isinstance(
        exc,
        (KeyboardInterrupt, GeneratorExit, anyio.get_cancelled_exc_class()),
    ):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and any(
        isinstance(e, BaseException) and _propagates(e) for e in inner
    )


def _internal_error(
    exc: BaseException, method: str, tool_name: str | None
) -> NoReturn:
    """Log *exc* with its traceback; raise the generic error for the client."""
    from mcp.shared.exceptions import MCPError

    error_id = uuid.uuid4().hex[:16]
    what = method if tool_name is None else f"{method} of {tool_name[:100]!r}"
    _log.error(
        "The MCP server failed to answer %s (error id %s)",
        what,
        error_id,
        exc_info=exc,
    )
    message = (
        f"Internal error: the server failed to answer this {method} "
        f"request (error id {error_id}; its log has the details). This "
        "is not a problem with the request: try again later, or report "
        "the error id to the server's operator."
    )
    raise MCPError(code=_INTERNAL_ERROR, message=message) from None


def _restore_schemas(result: dict[str, Any], registry: Registry) -> None:
    listed = result.get("tools")
    if not isinstance(listed, list):
        return
    # The definitions the listing was built from, read at registration:
    # a tool's own definition() is not called again.
    schemas = {d.name: d.parameters for d in registry.definitions()}
    for entry in cast("list[object]", listed):
        if not isinstance(entry, dict):
            continue
        tool = cast("dict[str, Any]", entry)
        found = schemas.get(tool.get("name", ""))
        if found is None:
            continue
        ours = plain(found)
        if tool.get("inputSchema") == ours:
            tool["inputSchema"] = ours


def _request_info(
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
