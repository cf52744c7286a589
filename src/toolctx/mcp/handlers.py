"""How the MCP server answers: ``tools/list``, ``tools/call``, middleware.

:class:`Handlers` lists the registry's tools (built once per registry
change, see :mod:`toolctx.mcp.wire`), dispatches each ``tools/call`` in
the context its request gives (:mod:`toolctx.mcp.request`), answers with
:func:`toolctx.providers.mcp.result_message`, relays the call's progress
when the request asked for it, and tells connected clients when the
registry changes (:mod:`toolctx.mcp.notify`).

A call held for approval (``@tool(needs_approval=...)``) cannot wait for
a person here: it is answered with an ``isError`` result saying so, and
nothing runs.

Every failed call (an ``isError`` result) is logged once on the
``toolctx`` logger: by the dispatcher, like any failed call (see
:meth:`toolctx.Dispatcher.dispatch`), with the traceback of the exception
behind it; here only what the dispatcher did not see (a call held for
approval, a denial by the ``context_factory``). Host-side only: the
client sees the result's message. Whatever is raised *around* the tool
becomes a generic JSON-RPC error for the client, its traceback logged on
``toolctx.mcp.server`` under an error id.
"""

from __future__ import annotations

import inspect
import logging
import uuid
import weakref

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, cast, final

from toolctx._context.execution import ExecutionContext
from toolctx._records import ToolCall, ToolResult
from toolctx._text import bounded
from toolctx.exceptions import ToolDenied
from toolctx.mcp.notify import ListChanged, ProgressRelay, progress_token
from toolctx.mcp.request import request_info
from toolctx.mcp.wire import Listing
from toolctx.providers.mcp import result_message


if TYPE_CHECKING:
    from collections.abc import Iterator

    import mcp_types

    from mcp.server.context import (
        CallNext,
        HandlerResult,
        ServerRequestContext,
    )

    from toolctx._dispatch.dispatcher import Dispatcher
    from toolctx._records import ApprovalRequest
    from toolctx._tools.registry import Registry
    from toolctx.mcp.request import ContextFactory, McpRequestInfo


_INTERNAL_ERROR = -32603  # JSON-RPC 2.0: internal error
_INVALID_PARAMS = -32602  # JSON-RPC 2.0: invalid params
# The logger the documentation names (docs/mcp.md, SECURITY.md) for
# failures around the tool; failed calls go to the ``toolctx`` logger.
_log = logging.getLogger("toolctx.mcp.server")
_calls_log = logging.getLogger("toolctx")


@final
class Handlers:
    """The request handlers and middleware of one server."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        factory: ContextFactory | None,
        *,
        trust: bool,
    ) -> None:
        self.dispatcher = dispatcher
        self.factory = factory
        self.trust = trust
        self.list_changed = ListChanged()
        self.progress = ProgressRelay()
        self._listing: Listing | None = None
        self._generation = 0
        _subscribe(self, dispatcher)

    # -- tools/list -------------------------------------------------------

    def registry_changed(self) -> None:
        """The registry changed (any thread): relist, tell the clients."""
        self._generation += 1
        self._listing = None
        self.list_changed.changed()

    def listing(self) -> Listing:
        """The current listing, built once per registry change."""
        listing = self._listing
        if listing is not None:
            return listing
        generation = self._generation
        listing = Listing.of(self.dispatcher.registry)
        if generation == self._generation:  # no change while building
            self._listing = listing
        return listing

    async def list_tools(
        self,
        _ctx: ServerRequestContext[dict[str, Any]],
        params: mcp_types.PaginatedRequestParams | None,
    ) -> mcp_types.ListToolsResult:
        """``tools/list``: every tool in one page; a cursor is an error."""
        cursor = None if params is None else params.cursor
        if cursor is not None:
            _invalid_cursor(cursor)
        with _answering("tools/list"):
            return self.listing().result

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Watch new connections; keep our schemas' key order; check answers.

        A handshake-era connection is told of changes from its
        ``initialize`` on (before the answer is sent, so no change made
        after the client's ``initialize()`` returns is missed). The SDK
        re-validates
        ``tools/list`` results against the protocol version's model, which
        moves ``type`` after ``properties``; when a schema is otherwise
        unchanged, ours is sent, byte for byte.

        Every answer is checked before the transport writes it: one that
        cannot be sent (text that is not valid Unicode, which the renderers
        escape and the dispatcher refuses, or any other value JSON cannot
        carry) would stop a stdio server or leave an HTTP request
        unanswered. A ``tools/call`` gets an ``isError`` result instead,
        any other request a generic error, and the log the traceback under
        an error id.
        """
        method = ctx.method
        result = await call_next(ctx)
        if method == "initialize":
            self.list_changed.watch(ctx)
        elif method == "tools/list" and isinstance(result, dict):
            with _answering("tools/list"):
                self.listing().restore_schemas(result)
        problem = _unsendable(result)
        if problem is None:
            return result
        params = ctx.params or {}
        name = params.get("name") if method == "tools/call" else None
        if not isinstance(name, str):
            _internal_error(problem, method, None)
        return cast("HandlerResult", _unsent(problem, name))

    # -- tools/call -------------------------------------------------------

    async def call_tool(
        self,
        ctx: ServerRequestContext[dict[str, Any]],
        params: mcp_types.CallToolRequestParams,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """``tools/call``: dispatch in the context the request gives."""
        name = params.name
        with _answering("tools/call", name):
            info = request_info(ctx, name, trust=self.trust)
            call = ToolCall(name, params.arguments, id=info.request_id)
            try:
                template = await self._template(info)
            except ToolDenied as exc:
                result = ToolResult(
                    name=name,
                    call_id=info.request_id,
                    is_error=True,
                    error=(
                        f"Call to tool {name!r} was denied: "
                        f"{bounded(exc.reason)}"
                    ),
                    exception=exc,
                )
                _log_refusal(result, logging.INFO)
            else:
                if progress_token(ctx) is None:
                    result = await self.dispatcher.adispatch(call, template)
                else:
                    async with self.progress.relaying(ctx):
                        result = await self.dispatcher.adispatch(
                            call, template
                        )
            held = result.approval
            if held is not None:
                result = _unapprovable(result)
                _log_refusal(result, logging.WARNING, held)
            message = result_message(result, self.dispatcher.registry)
        # A dict is a valid handler result; the SDK validates it on the way
        # out (filling resultType on the 2026 protocol), so building the
        # pydantic model here would be done twice.
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


def _subscribe(handlers: Handlers, dispatcher: Dispatcher) -> None:
    """Follow the registry's changes and the dispatcher's progress.

    The listeners hold the handlers weakly and remove themselves once the
    server is gone, so that serving one registry many times leaks nothing.
    """
    ref = weakref.ref(handlers)
    registry: Registry = dispatcher.registry

    def changed() -> None:
        alive = ref()
        if alive is None:
            stop_changes()
            return
        alive.registry_changed()

    relay = weakref.ref(handlers.progress)

    def progressed(progress: Any) -> None:
        alive = relay()
        if alive is None:
            stop_progress()
            return
        alive.report(progress)

    stop_changes = registry.on_change(changed)
    stop_progress = dispatcher.on_progress(progressed)


def _unapprovable(held: ToolResult) -> ToolResult:
    """The error result answering a call held for approval over MCP.

    The client cannot wait for a person through this server, and nothing
    ran: the model is told so, and the operator what to do about it.
    """
    name = held.name[:100]
    error = (
        f"Tool {name!r} needs a person's approval before it runs, and "
        "this MCP server cannot ask for it, so the call did not run "
        f"(invocation {held.invocation_id}). Tell the user that it needs "
        "approval; do not retry it. The server's operator can approve it "
        "out of band and resume it with Dispatcher.resume, or serve the "
        "tool without needs_approval."
    )
    return ToolResult(
        name=held.name,
        call_id=held.call_id,
        invocation_id=held.invocation_id,
        is_error=True,
        error=error,
        duration_ns=held.duration_ns,
    )


def _log_refusal(
    result: ToolResult, level: int, held: ApprovalRequest | None = None
) -> None:
    """Log a call refused here, which the dispatcher did not log.

    A call refused because it needs approval is logged (at WARNING) with
    its :class:`~toolctx.ApprovalRequest` as the record's ``approval``,
    for a handler that keeps it to resume later; a denial by the
    ``context_factory`` at INFO, like the dispatcher logs a denial. No
    traceback: nothing failed.
    """
    _calls_log.log(
        level,
        "MCP tools/call of %r failed (call id %s, invocation %s): %s",
        result.name[:100],
        result.call_id,
        result.invocation_id or None,
        result.error,
        extra=None if held is None else {"approval": held},
    )


def _unsendable(result: object) -> Exception | None:
    """Why *result* cannot be written as JSON text, None if it can.

    The transport's own serialization raises outside any request (a stdio
    server stops; an HTTP request stays unanswered); this check runs here,
    where the request can still be answered. JSON data (what toolctx's
    handlers return) is walked, its strings checked cheaply (ASCII needs
    no encoding: a megabyte of base64 costs microseconds); anything else
    is serialized by pydantic, as the transport would.
    """
    pending = [result]
    while pending:
        value = pending.pop()
        cls = type(value)
        if cls is str:
            text = cast("str", value)
            if not text.isascii():
                try:
                    text.encode()
                except UnicodeEncodeError as exc:
                    return exc
        elif cls is dict:
            data = cast("dict[object, object]", value)
            pending.extend(data.keys())
            pending.extend(data.values())
        elif cls is list or cls is tuple:
            pending.extend(cast("list[object]", value))
        elif value is not None and cls not in _JSON_NUMBERS:
            problem = _serializes(value)
            if problem is not None:
                return problem
    return None


_JSON_NUMBERS = frozenset({int, float, bool})


def _serializes(value: object) -> Exception | None:
    """Why pydantic cannot serialize *value* (a model...), None if it can."""
    import pydantic_core

    try:
        pydantic_core.to_json(value)
    except (pydantic_core.PydanticSerializationError, ValueError) as exc:
        return exc
    return None


def _unsent(problem: Exception, name: str) -> dict[str, Any]:
    """The ``isError`` result answering a call whose result was unsendable."""
    error_id = uuid.uuid4().hex[:16]
    shown = name[:100]
    _log.error(
        "The result of MCP tools/call of %r could not be sent (error id %s)",
        shown,
        error_id,
        exc_info=problem,
    )
    error = (
        f"The result of tool {shown!r} could not be sent: it is not valid "
        f"JSON text (error id {error_id}; the server's log has the "
        "details). Report the error id to the server's operator."
    )
    result = ToolResult(name=name, is_error=True, error=error)
    return cast("dict[str, Any]", result_message(result))


def _invalid_cursor(cursor: str) -> NoReturn:
    from mcp.shared.exceptions import MCPError

    message = (
        f"Invalid cursor {cursor[:80]!r} for tools/list: this server lists "
        "every tool in one page and never returns a nextCursor. Call "
        "tools/list without a cursor."
    )
    raise MCPError(code=_INVALID_PARAMS, message=message)


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
