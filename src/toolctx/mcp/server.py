"""Serve a registry's tools over MCP with the official ``mcp`` SDK.

:func:`create_server` builds a low-level ``mcp.server.lowlevel.Server``
whose ``tools/list`` is the registry's tools, in order, with their JSON
Schemas as they are (plus ``title``, ``annotations`` and
``outputSchema``, see :mod:`toolctx.providers.mcp`), and whose
``tools/call`` runs each call through
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

Results go back as ``CallToolResult``: content parts as MCP text, image,
audio and embedded-resource content; JSON output as text and, for a tool
with an output schema, as ``structuredContent`` (``{"result": value}``
when the schema is not an object); or the error message with ``isError:
true``, the failure logged with its traceback on the ``toolctx`` logger.
Host-only fields never leave the process.

The server announces ``tools.listChanged`` and sends
``notifications/tools/list_changed`` to its connected clients whenever
the registry changes; a call whose request carries
``_meta.progressToken`` gets its ``report_progress`` calls as
``notifications/progress`` (:mod:`toolctx.mcp.notify`).

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
import io

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._tools.registry import Registry
from toolctx.exceptions import McpUnavailableError
from toolctx.mcp.handlers import Handlers
from toolctx.mcp.request import ContextFactory, connection_lifespan
from toolctx.mcp.stdio import claimed_stdio


if TYPE_CHECKING:
    from anyio.abc import TaskStatus
    from mcp.server.lowlevel import Server


_INSTALL_HINT = (
    "toolctx's MCP server needs the official MCP SDK: install it with "
    "`pip install 'toolctx[mcp]'` (or `pip install mcp`)."
)


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

    ``tools/list`` takes no cursor: every tool comes in one page, and a
    cursor is answered with JSON-RPC error ``-32602``.

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
    .. versionchanged:: 0.2.0
       Lists ``title``, ``annotations`` and ``outputSchema``; returns
       ``structuredContent`` for every JSON output of a tool with an output
       schema and content parts in their MCP forms; sends
       ``notifications/tools/list_changed`` and ``notifications/progress``;
       answers a ``tools/list`` cursor with ``-32602``; logs failed calls.
    """
    dispatcher = _as_dispatcher(registry)
    factory: object = context_factory
    if factory is not None and not callable(factory):
        msg = (
            "context_factory must be a callable (info) -> ExecutionContext, "
            f"got {type(factory).__name__}."
        )
        raise TypeError(msg)
    server_class = _sdk()
    handlers = Handlers(dispatcher, context_factory, trust=trust_meta_identity)
    server: Server[dict[str, Any]] = server_class(
        name,
        version=version,
        instructions=instructions,
        lifespan=connection_lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_subscriptions_listen=handlers.list_changed.listen,
    )
    server.middleware.append(handlers.middleware)
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


def _sdk() -> type[Server[dict[str, Any]]]:
    try:
        # Checked on every call: toolctx.mcp.lowlevel may be imported
        # already while the SDK itself is gone (or blocked) now.
        import mcp.server.lowlevel  # noqa: F401
        import mcp_types  # noqa: F401

        from toolctx.mcp.lowlevel import ToolctxServer
    except ImportError as exc:
        raise McpUnavailableError(f"{_INSTALL_HINT} ({exc})") from exc
    return ToolctxServer


async def run_stdio(server: Server[Any]) -> None:
    """Serve one MCP connection over this process's stdin and stdout.

    Returns when the client closes stdin. Nothing but the protocol reaches
    the wire: it is served on private duplicates of fd 0 and fd 1, and fd
    1 is pointed at stderr (fd 0 at the null device) for the rest of the
    process, so ``print``, ``os.write(1, ...)``, C libraries, child
    processes and output still buffered when the interpreter exits all
    land on stderr. The client's stream ends when this returns.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       Diverts at the file-descriptor level, for good (the SDK points fd 1
       back at the wire when it returns).
    """
    import anyio

    try:
        from mcp.server.stdio import stdio_server
    except ImportError as exc:  # pragma: no cover - checked by create_server
        raise McpUnavailableError(_INSTALL_HINT) from exc
    options = server.create_initialization_options()
    with claimed_stdio() as wire:
        if wire is None:  # pragma: no cover - no fd 0 or fd 1 to claim
            async with stdio_server() as (read, write):
                await server.run(read, write, options)
            return
        wire_in, wire_out = wire
        # Never closed: a worker thread may still be reading it.
        text_in = io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace")
        with io.TextIOWrapper(wire_out, encoding="utf-8") as text_out:
            async with stdio_server(
                anyio.wrap_file(text_in), anyio.wrap_file(text_out)
            ) as (read, write):
                await server.run(read, write, options)


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
        json_response: Answer with JSON instead of SSE streams (a JSON
            body carries the result alone: no progress notifications).
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
    stateless: bool = False,
    json_response: bool = False,
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
        stateless: HTTP only: no sessions (see :func:`run_http`).
        json_response: HTTP only: answer with JSON instead of SSE streams
            (progress notifications then have no stream to ride).
        ready: HTTP only: called with the endpoint URL once the server
            listens (to announce it; stdout belongs to stdio clients).
        **server_options: Passed to :func:`create_server`.

    Raises:
        ValueError: Unknown *transport*.
        McpUnavailableError: The ``mcp`` package is not installed.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0
       *stateless* and *json_response*.
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
                partial(
                    run_http,
                    server,
                    host=host,
                    port=port,
                    path=path,
                    stateless=stateless,
                    json_response=json_response,
                )
            )
            if ready is not None:
                ready(url)

    try:
        anyio.run(main)
    except asyncio.CancelledError:
        # Python 3.10: Ctrl-C cancels the main task, and the cancellation
        # escapes anyio.run instead of a KeyboardInterrupt (3.11+).
        raise KeyboardInterrupt from None
