"""Streaming dispatch: chunks of generator tools, then the final result.

The tool's generator is resumed with the call's context bound and unbound
again before each chunk is handed to the consumer, so the tool sees its
own context on every resume while the consumer's context is untouched —
even when the consumer iterates from another task or thread. Python's
async generators resume in the *consumer's* context; binding around each
``__anext__`` is what makes this safe.
"""

from __future__ import annotations

import asyncio

from collections.abc import AsyncIterator, Iterator
from contextvars import copy_context
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, cast

from toolctx import _calls
from toolctx._arguments import unstructure_output
from toolctx._calls import Failure
from toolctx._context import ExecutionContext

# toolctx._diagnostics swaps set_current/reset_current here while
# lost-context diagnostics are on: bind call contexts only through them.
from toolctx._current import get_current, reset_current, set_current
from toolctx._records import ToolCall, ToolChunk, ToolResult
from toolctx._registry import ASYNC_STREAM, STREAM, ToolEntry
from toolctx._session import Session


if TYPE_CHECKING:
    from toolctx._dispatch import Dispatcher


class _Open:
    """What a stream needs once the call has been prepared."""

    __slots__ = ("ctx", "entry", "ran", "session", "start")

    def __init__(
        self,
        ctx: ExecutionContext,
        ran: int,
        session: Session | None,
        start: int,
        entry: ToolEntry | None,
    ) -> None:
        self.ctx = ctx
        self.ran = ran
        self.session = session
        self.start = start
        self.entry = entry


def _open(
    dispatcher: Dispatcher,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> _Open | None:
    """Build the call's context; None when it is not a streaming tool."""
    entry = dispatcher.registry.entry(call.name)
    if (
        entry is None
        or entry.mode not in {STREAM, ASYNC_STREAM}
        or dispatcher.executor is not None  # remote streams arrive whole
    ):
        return None
    start = perf_counter_ns()
    bound = get_current()
    template, session = _calls.resolve_template(context, bound)
    ctx = _calls.call_context(call, template, bound)
    return _Open(ctx, 0, session, start, entry)


def _finish(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    result: ToolResult,
) -> ToolResult:
    if state.ran:
        result = dispatcher._after(call, state.ctx, state.ran, result)  # noqa: SLF001
    if state.session is not None:
        state.session.record(result)
    return result


def _refused(
    dispatcher: Dispatcher, call: ToolCall, state: _Open
) -> ToolResult | None:
    """Run the interceptors' ``before``; the finished result if one denies."""
    if not dispatcher.interceptors:
        return None
    state.ctx, state.ran, refused = dispatcher._before(  # noqa: SLF001
        call, state.ctx, state.start
    )
    return (
        None if refused is None else _finish(dispatcher, call, state, refused)
    )


def _start(
    dispatcher: Dispatcher,
    call: ToolCall,
    entry: ToolEntry,
    ctx: ExecutionContext,
) -> Any:
    """Validate the arguments and create the tool's generator, bound."""
    fn, args = _calls.prepare(call, entry, ctx, dispatcher._limits)  # noqa: SLF001
    token = set_current(ctx)
    try:
        return _calls.invoke(entry, fn, args)
    finally:
        reset_current(token)


def _chunk(
    call: ToolCall, ctx: ExecutionContext, chunks: list[Any], data: Any
) -> ToolChunk:
    """Record *data* as the next chunk and return it."""
    chunk = ToolChunk(
        name=call.name,
        call_id=call.id,
        invocation_id=ctx.invocation_id,
        index=len(chunks),
        data=data,
    )
    chunks.append(data)
    return chunk


def _ended(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    chunks: list[Any],
    failure: Failure | None,
) -> ToolResult:
    """The result of a stream that ran to its end (or failed)."""
    if failure is None:
        result = _calls.ok_result(call, state.ctx, chunks, state.start)
    else:
        result = _calls.error_result(
            call, state.ctx, failure, state.start, chunks
        )
    return _finish(dispatcher, call, state, result)


def _cancelled(
    dispatcher: Dispatcher, call: ToolCall, state: _Open, chunks: list[Any]
) -> None:
    """Record a stream its consumer closed before the end."""
    failure = _calls.cancelled(call)
    _finish(
        dispatcher,
        call,
        state,
        _calls.error_result(call, state.ctx, failure, state.start, chunks),
    )


def stream_sync(
    dispatcher: Dispatcher,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> Iterator[ToolChunk | ToolResult]:
    """Implementation of :meth:`Dispatcher.stream`."""
    if type(cast("object", call)) is not ToolCall:
        msg = f"stream() takes a ToolCall, got {type(call).__name__}."
        raise TypeError(msg)
    state = _open(dispatcher, call, context)
    if state is None:
        return iter([dispatcher.dispatch(call, context)])
    return _sync_chunks(dispatcher, call, state)


def _sync_chunks(
    dispatcher: Dispatcher, call: ToolCall, state: _Open
) -> Iterator[ToolChunk | ToolResult]:
    entry = state.entry
    assert entry is not None  # noqa: S101 - _open checked it
    refused = _refused(dispatcher, call, state)
    if refused is not None:
        yield refused
        return
    ctx = state.ctx
    chunks: list[Any] = []
    loop: asyncio.AbstractEventLoop | None = None
    gen: Any = None
    finished = False
    failure: Failure | None = None
    try:
        try:
            if entry.mode == ASYNC_STREAM:
                _calls.check_no_loop(entry)
                loop = asyncio.new_event_loop()
            gen = _start(dispatcher, call, entry, ctx)
            while True:
                token = set_current(ctx)
                try:
                    if loop is None:
                        item = next(gen)
                    else:
                        item = loop.run_until_complete(gen.__anext__())
                    data = unstructure_output(item)
                except (StopIteration, StopAsyncIteration):
                    break
                except Exception as exc:  # noqa: BLE001 - becomes the result
                    raise dispatcher._failure(call, exc) from None  # noqa: SLF001
                finally:
                    reset_current(token)
                yield _chunk(call, ctx, chunks, data)
        except Failure as exc:
            failure = exc
        finished = True
        yield _ended(dispatcher, call, state, chunks, failure)
    finally:
        _close_sync(gen, loop, ctx)
        if not finished:
            _cancelled(dispatcher, call, state, chunks)


def _close_sync(
    gen: Any, loop: asyncio.AbstractEventLoop | None, ctx: ExecutionContext
) -> None:
    """Close the tool's generator with its context bound, then the loop."""
    try:
        if gen is not None:
            token = set_current(ctx)
            try:
                if loop is None:
                    gen.close()
                else:
                    loop.run_until_complete(gen.aclose())
            finally:
                reset_current(token)
    finally:
        if loop is not None:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()


def stream_async(
    dispatcher: Dispatcher,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> AsyncIterator[ToolChunk | ToolResult]:
    """Implementation of :meth:`Dispatcher.astream`."""
    if type(cast("object", call)) is not ToolCall:
        msg = f"astream() takes a ToolCall, got {type(call).__name__}."
        raise TypeError(msg)
    state = _open(dispatcher, call, context)
    if state is None:
        return _single(dispatcher, call, context)
    return _async_chunks(dispatcher, call, state)


async def _single(
    dispatcher: Dispatcher,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> AsyncIterator[ToolChunk | ToolResult]:
    yield await dispatcher.adispatch(call, context)


async def _async_chunks(
    dispatcher: Dispatcher, call: ToolCall, state: _Open
) -> AsyncIterator[ToolChunk | ToolResult]:
    entry = state.entry
    assert entry is not None  # noqa: S101 - _open checked it
    refused = _refused(dispatcher, call, state)
    if refused is not None:
        yield refused
        return
    ctx = state.ctx
    chunks: list[Any] = []
    gen: Any = None
    finished = False
    failure: Failure | None = None
    is_async = entry.mode == ASYNC_STREAM
    loop = asyncio.get_running_loop()
    try:
        try:
            gen = _start(dispatcher, call, entry, ctx)
            while True:
                token = set_current(ctx)
                try:
                    if is_async:
                        item = await gen.__anext__()
                    else:
                        item = await loop.run_in_executor(
                            None, copy_context().run, _next_or_stop, gen
                        )
                        if item is _DONE:
                            break
                    data = unstructure_output(item)
                except StopAsyncIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - becomes the result
                    raise dispatcher._failure(call, exc) from None  # noqa: SLF001
                finally:
                    reset_current(token)
                yield _chunk(call, ctx, chunks, data)
        except Failure as exc:
            failure = exc
        finished = True
        yield _ended(dispatcher, call, state, chunks, failure)
    finally:
        await _close_async(gen, is_async, ctx)
        if not finished:
            _cancelled(dispatcher, call, state, chunks)


async def _close_async(
    gen: Any, is_async: bool, ctx: ExecutionContext
) -> None:
    """Close the tool's generator with its context bound."""
    if gen is None:
        return
    token = set_current(ctx)
    try:
        if is_async:
            await gen.aclose()
        else:
            gen.close()
    finally:
        reset_current(token)


_DONE = object()


def _next_or_stop(gen: Iterator[Any]) -> Any:
    try:
        return next(gen)
    except StopIteration:
        return _DONE
