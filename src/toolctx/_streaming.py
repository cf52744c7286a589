"""Streaming dispatch: chunks of generator tools, then the final result.

The tool's generator is resumed with the call's context bound and unbound
again before each chunk is handed to the consumer, so the tool sees its
own context on every resume while the consumer's context is untouched —
even when the consumer iterates from another task or thread. Python's
async generators resume in the *consumer's* context; binding around each
``__anext__`` is what makes this safe.

Every way a stream can stop ends the same way: the tool's generator is
closed with the call's context bound (after the step that is running, if
any, has returned), then the one result is built, seen by the
interceptors' ``after`` and recorded in the session. What the tool raises
in a step or while it closes is a tool failure on that result; only the
consumer's own cancellation (and ``KeyboardInterrupt``-like exceptions)
propagate.
"""

from __future__ import annotations

import asyncio

from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import copy_context
from functools import partial
from time import perf_counter_ns
from types import GeneratorType
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
    """A stream's call once prepared, and the chunks it has handed over."""

    __slots__ = ("chunks", "ctx", "ended", "entry", "ran", "session", "start")

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
        self.chunks: list[Any] = []
        # Set once the call's one result is being built: nothing else is
        # recorded for it afterwards, whatever happens.
        self.ended = False


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
    state.ended = True
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
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        raise dispatcher._failure(call, exc) from None  # noqa: SLF001
    finally:
        reset_current(token)


_DONE: Any = object()
"""What a step returns once the tool's generator has ended."""


def _chunk(
    dispatcher: Dispatcher, call: ToolCall, state: _Open, item: Any
) -> ToolChunk:
    """Record *item* as the next chunk (JSON-safe) and return it."""
    try:
        data = unstructure_output(item)
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        raise dispatcher._failure(call, exc) from None  # noqa: SLF001
    chunks = state.chunks
    chunk = ToolChunk(
        name=call.name,
        call_id=call.id,
        invocation_id=state.ctx.invocation_id,
        index=len(chunks),
        data=data,
    )
    chunks.append(data)
    return chunk


def _ended(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    failure: Failure | None,
) -> ToolResult:
    """The result of a stream that ran to its end (or failed).

    An error result holds the chunks so far, or None if there are none
    (as dispatch gives for bad arguments or a first step that fails).
    """
    if failure is None:
        result = _calls.ok_result(call, state.ctx, state.chunks, state.start)
    else:
        result = _calls.error_result(
            call, state.ctx, failure, state.start, state.chunks or None
        )
    return _finish(dispatcher, call, state, result)


def _abandoned(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    failure: Failure | None,
    *,
    unwinding: bool,
) -> None:
    """Record a stream that stopped before its end.

    The result is the tool's own *failure* if closing its generator
    raised, else a cancelled call; either way it holds the chunks so far
    (None if there are none) and applies no state change. *unwinding*:
    an exception other than the consumer's ``close()`` propagates, and
    the interceptors' ``after`` must not replace it.
    """
    result = _calls.error_result(
        call,
        state.ctx,
        _calls.cancelled(call) if failure is None else failure,
        state.start,
        state.chunks or None,
    )
    if not unwinding:
        _finish(dispatcher, call, state, result)
        return
    state.ended = True
    if state.ran:
        dispatcher._unwind(call, state.ctx, state.ran, result)  # noqa: SLF001
    if state.session is not None:
        state.session.record(result)


# -- stream() ----------------------------------------------------------------


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
        return _one(dispatcher.dispatch(call, context))
    return _sync_chunks(dispatcher, call, state)


def _one(result: ToolResult) -> Iterator[ToolChunk | ToolResult]:
    """The stream of a tool that does not stream: a generator, closable."""
    yield result


def _sync_chunks(
    dispatcher: Dispatcher, call: ToolCall, state: _Open
) -> Iterator[ToolChunk | ToolResult]:
    entry = state.entry
    assert entry is not None  # noqa: S101 - _open checked it
    refused = _refused(dispatcher, call, state)
    if refused is not None:
        yield refused
        return
    loop: asyncio.AbstractEventLoop | None = None
    gen: Any = None
    failure: Failure | None = None
    try:
        try:
            if entry.mode == ASYNC_STREAM:
                _calls.check_no_loop(entry)
                loop = asyncio.new_event_loop()
            gen = _start(dispatcher, call, entry, state.ctx)
            while True:
                item = _sync_next(dispatcher, call, state.ctx, gen, loop)
                if item is _DONE:
                    break
                yield _chunk(dispatcher, call, state, item)
        except Failure as exc:
            failure = exc
        closing = _close_sync(dispatcher, call, state.ctx, gen, loop)
        result = _ended(dispatcher, call, state, failure or closing)
    except BaseException as exc:
        if not state.ended:
            _abandon_sync(dispatcher, call, state, gen, loop, stop=exc)
        raise
    finally:
        _shut(loop)
    yield result


def _sync_next(
    dispatcher: Dispatcher,
    call: ToolCall,
    ctx: ExecutionContext,
    gen: Any,
    loop: asyncio.AbstractEventLoop | None,
) -> Any:
    """The tool's next item, resumed with *ctx* bound, or ``_DONE``."""
    token = set_current(ctx)
    try:
        if loop is None:
            return next(gen, _DONE)
        try:
            return loop.run_until_complete(gen.__anext__())
        except StopAsyncIteration:
            return _DONE
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        # Not at an await of the consumer's: a CancelledError is the tool's.
        raise dispatcher._failure(call, exc) from None  # noqa: SLF001
    finally:
        reset_current(token)


def _close_sync(
    dispatcher: Dispatcher,
    call: ToolCall,
    ctx: ExecutionContext,
    gen: Any,
    loop: asyncio.AbstractEventLoop | None,
) -> Failure | None:
    """Close the tool's generator with *ctx* bound; its failure, if any."""
    if gen is None:
        return None
    token = set_current(ctx)
    try:
        if loop is None:
            gen.close()
        else:
            loop.run_until_complete(gen.aclose())
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        return dispatcher._failure(call, exc)  # noqa: SLF001
    finally:
        reset_current(token)
    return None


def _abandon_sync(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    gen: Any,
    loop: asyncio.AbstractEventLoop | None,
    *,
    stop: BaseException,
) -> None:
    """Close the tool's generator and record a stream *stop* ended."""
    try:
        failure = _close_sync(dispatcher, call, state.ctx, gen, loop)
    except BaseException:
        _abandoned(dispatcher, call, state, None, unwinding=True)
        raise
    unwinding = not isinstance(stop, GeneratorExit)
    _abandoned(dispatcher, call, state, failure, unwinding=unwinding)


def _shut(loop: asyncio.AbstractEventLoop | None) -> None:
    """Close the private loop an async generator tool ran on."""
    if loop is None or loop.is_closed():
        return
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


# -- astream() ---------------------------------------------------------------


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
    is_async = entry.mode == ASYNC_STREAM
    gen: Any = None
    failure: Failure | None = None
    try:
        try:
            gen = _start(dispatcher, call, entry, state.ctx)
            step = _async_next if is_async else _thread_next
            while True:
                item = await step(dispatcher, call, state.ctx, gen)
                if item is _DONE:
                    break
                yield _chunk(dispatcher, call, state, item)
        except Failure as exc:
            failure = exc
        closing = await _close_async(dispatcher, call, state.ctx, gen)
        result = _ended(dispatcher, call, state, failure or closing)
    except BaseException as exc:
        if not state.ended:
            await _abandon_async(dispatcher, call, state, gen, stop=exc)
        raise
    yield result


async def _async_next(
    dispatcher: Dispatcher, call: ToolCall, ctx: ExecutionContext, gen: Any
) -> Any:
    """An async generator's next item, resumed with *ctx* bound."""
    token = set_current(ctx)
    try:
        return await _calls.await_tool(gen.__anext__())
    except StopAsyncIteration:
        return _DONE
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        raise dispatcher._failure(call, exc, awaited=True) from None  # noqa: SLF001
    finally:
        reset_current(token)


async def _thread_next(
    dispatcher: Dispatcher, call: ToolCall, ctx: ExecutionContext, gen: Any
) -> Any:
    """A sync generator's next item, from a worker thread seeing *ctx*."""
    return _thread_value(
        dispatcher, call, await _run_in_thread(ctx, partial(next, gen, _DONE))
    )


def _thread_value(
    dispatcher: Dispatcher, call: ToolCall, outcome: tuple[bool, Any]
) -> Any:
    """The value of a worker-thread step; what the tool raised, a failure."""
    try:
        return _calls.thread_result(outcome)
    except BaseException as exc:  # noqa: BLE001 - _failure re-raises
        # Raised by the tool in the thread: never the consumer's own.
        raise dispatcher._failure(call, exc) from None  # noqa: SLF001


async def _run_in_thread(
    ctx: ExecutionContext, body: Callable[[], Any]
) -> tuple[bool, Any]:
    """Run *body* in a worker thread that sees *ctx*; its outcome.

    A step in a thread cannot be interrupted, and the generator cannot be
    closed while a step runs. Cancelling the awaiting task therefore takes
    effect once the step has returned (however often it is cancelled): the
    ``CancelledError`` is raised then, and the generator can be closed.
    """
    token = set_current(ctx)
    try:
        step = asyncio.get_running_loop().run_in_executor(
            None, copy_context().run, _calls.in_thread, body
        )
    finally:
        reset_current(token)
    cancelled: asyncio.CancelledError | None = None
    while not step.done():
        try:
            await asyncio.wait({step})
        except asyncio.CancelledError as exc:
            cancelled = exc
    if cancelled is not None:
        raise cancelled
    return step.result()


async def _close_async(
    dispatcher: Dispatcher, call: ToolCall, ctx: ExecutionContext, gen: Any
) -> Failure | None:
    """Close the tool's generator with *ctx* bound; its failure, if any.

    An async generator closes in the consumer's task, a sync one in a
    worker thread (like its steps); one that has ended has nothing to run.
    """
    if gen is None:
        return None
    if not isinstance(gen, GeneratorType):
        if gen.ag_frame is None:
            return None
        token = set_current(ctx)
        try:
            await _calls.await_tool(gen.aclose())
        except BaseException as exc:  # noqa: BLE001 - _failure re-raises
            return dispatcher._failure(call, exc, awaited=True)  # noqa: SLF001
        finally:
            reset_current(token)
        return None
    if gen.gi_frame is None:
        return None
    try:
        _thread_value(dispatcher, call, await _run_in_thread(ctx, gen.close))
    except Failure as failure:
        return failure
    return None


async def _abandon_async(
    dispatcher: Dispatcher,
    call: ToolCall,
    state: _Open,
    gen: Any,
    *,
    stop: BaseException,
) -> None:
    """Close the tool's generator and record a stream *stop* ended."""
    try:
        failure = await _close_async(dispatcher, call, state.ctx, gen)
    except BaseException:
        _abandoned(dispatcher, call, state, None, unwinding=True)
        raise
    unwinding = not isinstance(stop, GeneratorExit)
    _abandoned(dispatcher, call, state, failure, unwinding=unwinding)
