"""Serve a registry's tools over MCP with the official ``mcp`` SDK.

:func:`create_server` builds a low-level ``mcp.server.lowlevel.Server``
whose ``tools/list`` is the registry's tools, in order, with their JSON
Schemas as they are, and whose ``tools/call`` runs each call through
:meth:`Dispatcher.adispatch <toolctx.Dispatcher.adispatch>` in an
:class:`~toolctx.ExecutionContext` filled from the MCP request:

- ``session_id``: the ``mcp-session-id`` the streamable-HTTP transport
  assigned to its session (never a header the client merely sent); one id
  per connection on stdio; None on stateless HTTP and on the 2026 protocol
  over HTTP, which have no sessions.
- ``tool_call_id``: the JSON-RPC request id, as ``str``.
- ``user_id``: the authenticated user of the SDK's bearer-token auth (the
  token's ``subject``, else its ``client_id``); None without auth. The
  ``AccessToken`` itself becomes the ``scope``.
- ``parent_invocation_id``: the caller's invocation, when the request's
  ``_meta`` carries toolctx ids (see :func:`context_meta`).
- ``metadata["mcp.client_info"]``: the ``{"name", "version"}`` the client
  sent; ``metadata["mcp.meta"]``: the request's whole ``_meta``
  (progress token, trace context, ...); ``metadata["mcp.protocol_version"]``;
  ``metadata["mcp.auth"]``: ``{"client_id", "subject", "scopes"}`` when
  authenticated.
- ``metadata["traceparent"]`` (and ``tracestate``, ``baggage``): the W3C
  trace context from ``_meta``, when valid, so that :func:`context_meta`
  passes it on.

Results go back as ``CallToolResult``: the output as text content (and as
``structuredContent`` when it is a JSON object), or the error message with
``isError: true``; host-only fields never leave the process.

Whatever is raised around the tool (by an interceptor, the
``context_factory`` or the rendering of the result; ``SystemExit``
included) never stops the server and never reaches the client: the client
gets a JSON-RPC error with a generic message and an error id, and the
``toolctx.mcp.server`` logger gets the traceback under the same id. Only
cancellation and ``KeyboardInterrupt`` propagate, to stop the server.

The ``mcp`` package is an optional extra (``pip install toolctx[mcp]``);
this module imports it only when a server is built.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast, final

import attrs

from toolctx._records import ToolCall, ToolResult
from toolctx.context.execution import ExecutionContext
from toolctx.dispatch.dispatcher import Dispatcher
from toolctx.exceptions import McpUnavailableError, ToolDenied
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

    from anyio.abc import TaskStatus
    from mcp.server.context import (
        CallNext,
        HandlerResult,
        ServerRequestContext,
    )
    from mcp.server.lowlevel import Server


_CONNECTION_ID = "toolctx.connection_id"
_INTERNAL_ERROR = -32603  # JSON-RPC 2.0: internal error
_log = logging.getLogger(__name__)
_INSTALL_HINT = (
    "toolctx's MCP server needs the official MCP SDK: install it with "
    "`pip install 'toolctx[mcp]'` (or `pip install mcp`)."
)


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


def create_server(
    registry: Registry | Dispatcher,
    /,
    *,
    name: str = "toolctx",
    version: str = "",
    instructions: str | None = None,
    context_factory: ContextFactory | None = None,
    trust_meta_identity: bool = False,
) -> Server[dict[str, Any]]:
    """Return an MCP server (the SDK's low-level ``Server``) for the tools.

    ``tools/list`` answers with the registry's tools in registration order
    and their JSON Schemas unchanged, read at each request (tools added
    later show up). ``tools/call`` dispatches through the dispatcher, so
    its interceptors run; tool failures (``SystemExit`` included), unknown
    tools and invalid arguments come back as ``isError: true`` results the
    model can read. Anything else raised while answering (an interceptor,
    the *context_factory*, rendering the result) is logged with its
    traceback by the ``toolctx.mcp.server`` logger and answered with a
    generic JSON-RPC internal error naming the log's error id: its message
    never reaches the client, and the server keeps serving.

    Run it with :func:`run_stdio` or :func:`run_http`, or with the SDK
    directly (``server.run(...)``, ``server.streamable_http_app()``).

    Args:
        registry: A :class:`~toolctx.Registry`, or a
            :class:`~toolctx.Dispatcher` to use as it is (its registry
            and interceptors).
        name: The server name reported to clients.
        version: The server version reported to clients.
        instructions: Optional instructions for the client's model.
        context_factory: Called with an :class:`McpRequestInfo` for every
            call; returns (or awaits to) the template context. It may raise
            :class:`~toolctx.ToolDenied` to refuse the call. Use it to set
            ``scope``, typed values or the session from your own auth.
        trust_meta_identity: Take ``session_id``, ``turn``, ``agent_id``
            and ``user_id`` from the toolctx ids in the request's
            ``_meta``. **Off by default**: any client can write ``_meta``,
            so only turn it on when every client is your own code. An
            authenticated user always wins over a claimed one.

    Raises:
        McpUnavailableError: The ``mcp`` package is not installed.
        TypeError: *registry* is neither a Registry nor a Dispatcher.

    .. versionadded:: 0.1.0
    """
    dispatcher = _as_dispatcher(registry)
    factory: object = context_factory
    if factory is not None and not callable(factory):
        msg = (
            "context_factory must be a callable (info) -> ExecutionContext, "
            f"got {type(factory).__name__}."
        )
        raise TypeError(msg)
    server_class, types = _sdk()
    handlers = _Handlers(
        dispatcher, context_factory, trust_meta_identity, types
    )
    server: Server[dict[str, Any]] = server_class(
        name,
        version=version,
        instructions=instructions,
        lifespan=_connection_lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
    )
    server.middleware.append(handlers.keep_schema_order)
    return server


def _as_dispatcher(target: object) -> Dispatcher:
    if isinstance(target, Dispatcher):
        return target
    if isinstance(target, Registry):
        return Dispatcher(target)
    msg = (
        "create_server() takes a toolctx.Registry or Dispatcher, got "
        f"{type(target).__name__}."
    )
    raise TypeError(msg)


def _sdk() -> tuple[type[Server[Any]], Any]:
    try:
        import mcp_types as types

        from mcp.server.lowlevel import Server
    except ImportError as exc:
        raise McpUnavailableError(f"{_INSTALL_HINT} ({exc})") from exc
    return Server, types


@asynccontextmanager
async def _connection_lifespan(
    _server: Server[dict[str, Any]],
) -> AsyncIterator[dict[str, Any]]:
    # Entered once per Server.run(), i.e. per stdio connection; the HTTP
    # manager enters it once for the app and has session headers instead.
    yield {_CONNECTION_ID: uuid.uuid4().hex}


@final
class _Handlers:
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


# -- running -------------------------------------------------------------


async def run_stdio(server: Server[Any]) -> None:
    """Serve one MCP connection over this process's stdin and stdout.

    Returns when the client closes stdin. The SDK diverts ``print`` output
    to stderr while it serves, so tools cannot corrupt the protocol.

    .. versionadded:: 0.1.0
    """
    try:
        from mcp.server.stdio import stdio_server
    except ImportError as exc:  # pragma: no cover - checked by create_server
        raise McpUnavailableError(_INSTALL_HINT) from exc
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def run_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    stateless: bool = False,
    json_response: bool = False,
    log_level: str = "warning",
    shutdown_timeout: float = 5.0,
    task_status: TaskStatus[str] | None = None,
    **app_options: Any,
) -> None:
    """Serve MCP over streamable HTTP with uvicorn until cancelled.

    Cancelling the task (or SIGINT/SIGTERM when it runs in the main
    thread) shuts the server down gracefully: open sessions are closed,
    waiting at most *shutdown_timeout* seconds for open streams.

    Args:
        server: From :func:`create_server`.
        host: The interface to bind; the default accepts local clients
            only.
        port: The TCP port; 0 picks a free one (see *task_status*).
        path: The endpoint path.
        stateless: No sessions: every request stands alone.
        json_response: Answer with JSON instead of SSE streams.
        log_level: uvicorn's log level.
        shutdown_timeout: Seconds to wait for open connections on exit.
        task_status: For ``await task_group.start(run_http, server)``:
            reports the endpoint URL once the server listens.
        **app_options: Passed to the SDK's ``server.streamable_http_app()``
            (``auth``, ``token_verifier``, ``transport_security``, ...).

    .. versionadded:: 0.1.0
    """
    import anyio
    import uvicorn

    app = server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        json_response=json_response,
        host=host,
        **app_options,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws="none",
        lifespan="on",
        timeout_graceful_shutdown=max(1, round(shutdown_timeout)),
    )
    web = uvicorn.Server(config)
    done = anyio.Event()

    async def serve_shielded() -> None:
        # Shielded so cancellation becomes a graceful shutdown (lifespan
        # exit, sessions closed) instead of a torn-down event loop task.
        try:
            with anyio.CancelScope(shield=True):
                await web.serve()
        finally:
            done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(serve_shielded)
        try:
            # uvicorn reports start-up with a flag only, no event to await.
            while not web.started and not done.is_set():  # noqa: ASYNC110
                await anyio.sleep(0.01)
            if web.started and task_status is not None:
                task_status.started(_url(web, host, path))
            await done.wait()
        finally:
            web.should_exit = True
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(shutdown_timeout + 5):
                    await done.wait()
                if not done.is_set():  # pragma: no cover - a stuck shutdown
                    web.force_exit = True


def _url(web: Any, host: str, path: str) -> str:
    port = 0
    for listener in getattr(web, "servers", ()):
        for sock in listener.sockets:
            port = sock.getsockname()[1]
            break
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def serve(
    registry: Registry | Dispatcher,
    /,
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    ready: Callable[[str], object] | None = None,
    **server_options: Any,
) -> None:
    """Build a server for *registry* and serve it until it is stopped.

    Blocking; what ``toolctx serve`` runs. On stdio it returns when the
    client disconnects; over HTTP when interrupted (SIGINT, SIGTERM).

    Args:
        registry: A Registry or Dispatcher.
        transport: ``"stdio"`` or ``"streamable-http"``.
        host: HTTP only: the interface to bind.
        port: HTTP only: the TCP port.
        path: HTTP only: the endpoint path.
        ready: HTTP only: called with the endpoint URL once the server
            listens (to announce it; stdout belongs to stdio clients).
        **server_options: Passed to :func:`create_server`.

    Raises:
        ValueError: Unknown *transport*.
        McpUnavailableError: The ``mcp`` package is not installed.

    .. versionadded:: 0.1.0
    """
    if transport not in {"stdio", "streamable-http"}:
        msg = (
            f"Unknown MCP transport {transport!r}; use 'stdio' or "
            "'streamable-http'."
        )
        raise ValueError(msg)
    server = create_server(registry, **server_options)
    import anyio

    async def main() -> None:
        if transport == "stdio":
            await run_stdio(server)
            return
        async with anyio.create_task_group() as group:
            url = await group.start(
                partial(run_http, server, host=host, port=port, path=path)
            )
            if ready is not None:
                ready(url)

    try:
        anyio.run(main)
    except asyncio.CancelledError:
        # Python 3.10: Ctrl-C cancels the main task, and the cancellation
        # escapes anyio.run instead of a KeyboardInterrupt (3.11+).
        raise KeyboardInterrupt from None
