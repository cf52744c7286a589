"""What the server tells its clients unasked: list changes and progress.

:class:`ListChanged` sends ``notifications/tools/list_changed`` to every
connected client after the registry changes (``Registry.on_change``,
called in whatever thread changed it): on handshake-era connections
(stdio, streamable HTTP with a session) on the connection's own stream,
and on the 2026 protocol to every ``subscriptions/listen`` stream that
asked for tool changes. A burst of changes made in one go reaches each
client as one notification.

:class:`ProgressRelay` turns the ``report_progress`` calls of a
``tools/call`` whose request carried ``_meta.progressToken`` into
``notifications/progress`` for that request, in order, all sent before
the result.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import threading
import weakref

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, final

from toolctx._records import ToolProgress


if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Coroutine

    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.server.context import ServerRequestContext


_log = logging.getLogger("toolctx.mcp.server")


@final
class _Targets:
    """The connections and listen streams of one event loop."""

    __slots__ = ("bus", "connections", "listen", "scheduled", "tasks")

    def __init__(self) -> None:
        self.connections: set[Any] = set()
        self.bus: Any = None
        self.listen: Any = None
        self.scheduled = False
        self.tasks: set[asyncio.Task[None]] = set()


@final
class ListChanged:
    """Fans ``notifications/tools/list_changed`` out to connected clients."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, _Targets
        ] = weakref.WeakKeyDictionary()

    def watch(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Notify the connection of *ctx* from now on, until it closes.

        Called when a handshake-era client's ``initialize`` has been
        answered. The SDK does not expose a request's
        connection; it keeps it on the session, as the transport's session
        id is read in :mod:`toolctx.mcp.request`.
        """
        connection = getattr(ctx.session, "_connection", None)
        if connection is None or not getattr(
            connection, "has_standalone_channel", False
        ):
            return
        loop = asyncio.get_running_loop()
        with self._lock:
            targets = self._loops.get(loop)
            if targets is None:
                targets = self._loops[loop] = _Targets()
            targets.connections.add(connection)
        connection.exit_stack.callback(self._forget, loop, connection)

    def _forget(
        self, loop: asyncio.AbstractEventLoop, connection: Any
    ) -> None:
        with self._lock:
            targets = self._loops.get(loop)
            if targets is not None:
                targets.connections.discard(connection)

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: Any
    ) -> Any:
        """Serve ``subscriptions/listen``: the 2026 protocol's events."""
        from mcp.server.subscriptions import (
            InMemorySubscriptionBus,
            ListenHandler,
        )

        loop = asyncio.get_running_loop()
        with self._lock:
            targets = self._loops.get(loop)
            if targets is None:
                targets = self._loops[loop] = _Targets()
            if targets.listen is None:
                targets.bus = InMemorySubscriptionBus()
                targets.listen = ListenHandler(targets.bus)
            handler = targets.listen
        return await handler(ctx, params)

    def changed(self) -> None:
        """The registry changed: schedule a notification on every loop.

        Safe to call from any thread, the loop's own included.
        """
        with self._lock:
            due = [
                (loop, targets)
                for loop, targets in self._loops.items()
                if not targets.scheduled
                and (targets.connections or targets.bus is not None)
            ]
            for _, targets in due:
                targets.scheduled = True
        for loop, targets in due:
            try:
                loop.call_soon_threadsafe(self._send, loop, targets)
            except RuntimeError:  # the loop is closed: nobody to tell
                with self._lock:
                    self._loops.pop(loop, None)

    def _send(
        self, loop: asyncio.AbstractEventLoop, targets: _Targets
    ) -> None:
        """On *loop*: one notification to each of its clients."""
        with self._lock:
            targets.scheduled = False
            sends: list[Coroutine[Any, Any, None]] = [
                c.send_tool_list_changed() for c in targets.connections
            ]
            if targets.bus is not None:
                from mcp.server.subscriptions import ToolsListChanged

                sends.append(targets.bus.publish(ToolsListChanged()))
        for send in sends:
            task = loop.create_task(_quietly(send))
            targets.tasks.add(task)
            task.add_done_callback(targets.tasks.discard)


async def _quietly(send: Coroutine[Any, Any, None]) -> None:
    """Await one notification; a failure to deliver it is only logged."""
    try:
        await send
    except Exception:  # noqa: BLE001 - best effort, like the SDK's notify
        _log.debug("A tools/list_changed notification failed", exc_info=True)


_SINK: contextvars.ContextVar[_Sink | None] = contextvars.ContextVar(
    "toolctx.mcp.progress_sink", default=None
)


@final
class _Sink:
    """Where one call's progress reports go: its request's pump."""

    __slots__ = ("closed", "loop", "send", "thread")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        send: MemoryObjectSendStream[ToolProgress],
    ) -> None:
        self.loop = loop
        self.send = send
        self.thread = threading.get_ident()
        self.closed = False

    def put(self, progress: ToolProgress) -> None:
        if self.closed:
            return
        if threading.get_ident() == self.thread:
            self._put(progress)
            return
        try:
            self.loop.call_soon_threadsafe(self._put, progress)
        except RuntimeError:  # pragma: no cover - the loop is gone
            return

    def _put(self, progress: ToolProgress) -> None:
        import anyio

        if self.closed:
            return
        try:
            self.send.send_nowait(progress)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.closed = True


@final
class ProgressRelay:
    """Sends a call's progress reports to the client that asked for them."""

    def report(self, progress: ToolProgress) -> None:
        """The dispatcher's progress listener (any thread, during a call).

        Runs in the context of the reporting tool, where the call's sink,
        if the request asked for progress, is bound.
        """
        sink = _SINK.get()
        if sink is not None:
            sink.put(progress)

    @asynccontextmanager
    async def relaying(
        self, ctx: ServerRequestContext[Any, Any]
    ) -> AsyncIterator[None]:
        """Relay the progress of the call dispatched inside to *ctx*'s client.

        Every report made before the call returns is sent, in order,
        before this block exits (and so before the result).
        """
        import anyio

        send, receive = anyio.create_memory_object_stream[ToolProgress](
            math.inf
        )
        sink = _Sink(asyncio.get_running_loop(), send)

        async def pump() -> None:
            async with receive:
                async for item in receive:
                    try:
                        await ctx.session.report_progress(
                            item.progress, item.total, item.message
                        )
                    except (
                        anyio.ClosedResourceError,
                        anyio.BrokenResourceError,
                    ):
                        sink.closed = True  # the client is gone

        token = _SINK.set(sink)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(pump)
                try:
                    yield
                finally:
                    # Reports scheduled from worker threads were queued on
                    # the loop before the call's own completion, so they are
                    # all in the stream now; a late one is dropped.
                    sink.closed = True
                    send.close()
        finally:
            _SINK.reset(token)


def progress_token(ctx: ServerRequestContext[Any, Any]) -> object:
    """The request's ``_meta.progressToken``, or None."""
    params = ctx.params
    meta = params.get("_meta") if params is not None else None
    if isinstance(meta, dict):
        return meta.get("progressToken")
    return None
