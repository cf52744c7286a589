"""The streaming shells: chunks of generator tools, then the final result.

The tool's generator is resumed with the call's context bound and unbound
again before each chunk is handed to the consumer, so the tool sees its
own context on every resume while the consumer's context is untouched —
even when the consumer iterates from another task or thread. Python's
async generators resume in the *consumer's* context; binding around each
``__anext__`` is what makes this safe.

The call is prepared and its result built by
:class:`~toolctx._dispatch.core.Core`, as for every other call; each chunk
goes through the tool's chunk step (declared yield type, then JSON).
Every way a stream can stop ends the same way: the tool's generator is
closed with the call's context bound (after the step that is running, if
any, has returned), then the one result is built, seen by the
interceptors' ``after`` and recorded in the session. What the tool raises
in a step or while it closes is a tool failure on that result; only the
consumer's own cancellation (and ``KeyboardInterrupt``-like exceptions)
propagate.

The call's state, once prepared, is an :class:`Open`: the progress
reports kept for the stream (and still sent to listeners) and drained as
it goes, each chunk through the tool's chunk step, and the one result.
"""

from __future__ import annotations

import asyncio

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import partial
from time import perf_counter_ns
from types import GeneratorType
from typing import TYPE_CHECKING, Any

from toolctx._context.current import SEAM, get_current
from toolctx._context.execution import recorder_of
from toolctx._dispatch import workers
from toolctx._dispatch.approvals import Checking, asettle, settle
from toolctx._dispatch.core import (
    Core,
    Failure,
    Prepared,
    cancelled,
    error_result,
    ok_result,
    resolve_template,
)
from toolctx._dispatch.run import await_tool, check_no_loop, thread_result
from toolctx._records import ToolCall, ToolChunk, ToolProgress, ToolResult
from toolctx._tools.function import ASYNC_STREAM, STREAM


if TYPE_CHECKING:
    from concurrent.futures import Executor

    from toolctx._context.execution import ExecutionContext
    from toolctx._context.session import Session


__all__ = [
    "areplay",
    "check_call",
    "collect_progress",
    "replay",
    "stream_async",
    "stream_sync",
    "streams",
]


def _create(state: Open) -> Any:
    """Create the tool's generator with the call's context bound."""
    p = state.p
    entry = p.entry
    token = SEAM.bind(p.ctx)
    try:
        return entry.fn(**p.args) if entry.spread else entry.fn(p.args)
    except BaseException as exc:  # noqa: BLE001 - failure re-raises
        raise state.core.failure(p.call, exc) from None
    finally:
        SEAM.unbind(token)


_DONE: Any = object()
"""What a step returns once the tool's generator has ended."""


# -- stream() ----------------------------------------------------------------


def streams(core: Core, executor: Executor | None, call: ToolCall) -> bool:
    """Whether *call* streams chunks (else it yields only its result)."""
    entry = core.entries(call.name)
    return (
        entry is not None
        and (entry.mode == STREAM or entry.mode == ASYNC_STREAM)  # noqa: PLR1714
        and executor is None  # remote streams arrive whole
    )


def check_call(call: object, what: str) -> None:
    """Refuse what is not a :class:`ToolCall` (a host bug)."""
    if type(call) is not ToolCall:
        msg = f"{what}() takes a ToolCall, got {type(call).__name__}."
        raise TypeError(msg)


def stream_sync(
    core: Core,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> Iterator[Item]:
    """Stream one call of a streaming tool (:meth:`Dispatcher.stream`)."""
    start = perf_counter_ns()
    bound = get_current()
    template, session = resolve_template(context, bound)
    return _sync_chunks(core, call, template, bound, session, start)


def _sync_chunks(  # noqa: PLR0917 - the parts of a call
    core: Core,
    call: ToolCall,
    template: ExecutionContext,
    bound: ExecutionContext | None,
    session: Session | None,
    start: int,
) -> Iterator[Item]:
    p = core.prepare(call, template, bound, start)
    if type(p) is Checking:
        p = settle(core, p)
    state = begin(core, p, session)
    if isinstance(state, ToolResult):
        yield state
        return
    ctx = state.p.ctx
    loop: asyncio.AbstractEventLoop | None = None
    gen: Any = None
    failure: Failure | None = None
    try:
        try:
            if state.p.entry.mode == ASYNC_STREAM:
                check_no_loop(state.p.entry)
                loop = asyncio.new_event_loop()
            gen = _create(state)
            while True:
                item = _sync_next(state, ctx, gen, loop)
                yield from drained(state.pending)
                if item is _DONE:
                    break
                yield state.chunk(item)
        except Failure as exc:
            failure = exc
        closing = _close_sync(state, gen, loop)
        result = state.ended_with(failure or closing)
    except BaseException as exc:
        if not state.ended:
            _abandon_sync(state, gen, loop, stop=exc)
        raise
    finally:
        _shut(loop)
    yield from drained(state.pending)
    yield result


def _sync_next(
    state: Open,
    ctx: ExecutionContext,
    gen: Any,
    loop: asyncio.AbstractEventLoop | None,
) -> Any:
    """The tool's next item, resumed with *ctx* bound, or ``_DONE``."""
    token = SEAM.bind(ctx)
    try:
        if loop is None:
            return next(gen, _DONE)
        try:
            return loop.run_until_complete(gen.__anext__())
        except StopAsyncIteration:
            return _DONE
    except BaseException as exc:  # noqa: BLE001 - failure re-raises
        # Not at an await of the consumer's: a CancelledError is the tool's.
        raise state.core.failure(state.p.call, exc) from None
    finally:
        SEAM.unbind(token)


def _close_sync(
    state: Open, gen: Any, loop: asyncio.AbstractEventLoop | None
) -> Failure | None:
    """Close the tool's generator with its context bound; its failure."""
    if gen is None:
        return None
    token = SEAM.bind(state.p.ctx)
    try:
        if loop is None:
            gen.close()
        else:
            loop.run_until_complete(gen.aclose())
    except BaseException as exc:  # noqa: BLE001 - failure re-raises
        return state.core.failure(state.p.call, exc)
    finally:
        SEAM.unbind(token)
    return None


def _abandon_sync(
    state: Open,
    gen: Any,
    loop: asyncio.AbstractEventLoop | None,
    *,
    stop: BaseException,
) -> None:
    """Close the tool's generator and record a stream *stop* ended."""
    try:
        failure = _close_sync(state, gen, loop)
    except BaseException:
        state.abandoned(None, unwinding=True)
        raise
    state.abandoned(failure, unwinding=not isinstance(stop, GeneratorExit))


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
    core: Core,
    call: ToolCall,
    context: ExecutionContext | Session | None,
) -> AsyncIterator[Item]:
    """Stream one call of a streaming tool (:meth:`Dispatcher.astream`)."""
    start = perf_counter_ns()
    bound = get_current()
    template, session = resolve_template(context, bound)
    return _async_chunks(core, call, template, bound, session, start)


async def _async_chunks(  # noqa: PLR0917 - the parts of a call
    core: Core,
    call: ToolCall,
    template: ExecutionContext,
    bound: ExecutionContext | None,
    session: Session | None,
    start: int,
) -> AsyncIterator[Item]:
    p = core.prepare(call, template, bound, start)
    if type(p) is Checking:
        p = await asettle(core, p)
    state = begin(core, p, session)
    if isinstance(state, ToolResult):
        yield state
        return
    ctx = state.p.ctx
    step = _async_next if state.p.entry.mode == ASYNC_STREAM else _thread_next
    gen: Any = None
    failure: Failure | None = None
    try:
        try:
            gen = _create(state)
            while True:
                item = await step(state, ctx, gen)
                for report in drained(state.pending):
                    yield report
                if item is _DONE:
                    break
                yield state.chunk(item)
        except Failure as exc:
            failure = exc
        closing = await _close_async(state, gen)
        result = state.ended_with(failure or closing)
    except BaseException as exc:
        if not state.ended:
            await _abandon_async(state, gen, stop=exc)
        raise
    for report in drained(state.pending):
        yield report
    yield result


async def _async_next(state: Open, ctx: ExecutionContext, gen: Any) -> Any:
    """An async generator's next item, resumed with *ctx* bound."""
    token = SEAM.bind(ctx)
    try:
        return await await_tool(gen.__anext__())
    except StopAsyncIteration:
        return _DONE
    except BaseException as exc:  # noqa: BLE001 - failure re-raises
        raise state.core.failure(state.p.call, exc, awaited=True) from None
    finally:
        SEAM.unbind(token)


async def _thread_next(state: Open, ctx: ExecutionContext, gen: Any) -> Any:
    """A sync generator's next item, from a worker thread seeing *ctx*."""
    return _thread_value(
        state, await _run_in_thread(ctx, partial(next, gen, _DONE))
    )


def _thread_value(state: Open, outcome: tuple[bool, Any]) -> Any:
    """The value of a worker-thread step; what the tool raised, a failure."""
    try:
        return thread_result(outcome)
    except BaseException as exc:  # noqa: BLE001 - failure re-raises
        # Raised by the tool in the thread: never the consumer's own.
        raise state.core.failure(state.p.call, exc) from None


async def _run_in_thread(
    ctx: ExecutionContext, body: Callable[[], Any]
) -> tuple[bool, Any]:
    """Run *body* in a worker thread that sees *ctx*; its outcome.

    A step in a thread cannot be interrupted, and the generator cannot be
    closed while a step runs. Cancelling the awaiting task therefore takes
    effect once the step has returned (however often it is cancelled): the
    ``CancelledError`` is raised then, and the generator can be closed.
    """
    token = SEAM.bind(ctx)
    try:
        step = workers.submit(body)
    finally:
        SEAM.unbind(token)
    cancelled_by: asyncio.CancelledError | None = None
    while not step.done():
        try:
            await asyncio.wait({step})
        except asyncio.CancelledError as exc:
            cancelled_by = exc
    if cancelled_by is not None:
        raise cancelled_by
    return step.result()


async def _close_async(state: Open, gen: Any) -> Failure | None:
    """Close the tool's generator with its context bound; its failure.

    An async generator closes in the consumer's task, a sync one in a
    worker thread (like its steps); one that has ended has nothing to run.
    """
    if gen is None:
        return None
    p = state.p
    if not isinstance(gen, GeneratorType):
        if gen.ag_frame is None:
            return None
        token = SEAM.bind(p.ctx)
        try:
            await await_tool(gen.aclose())
        except BaseException as exc:  # noqa: BLE001 - failure re-raises
            return state.core.failure(p.call, exc, awaited=True)
        finally:
            SEAM.unbind(token)
        return None
    if gen.gi_frame is None:
        return None
    try:
        _thread_value(state, await _run_in_thread(p.ctx, gen.close))
    except Failure as failure:
        return failure
    return None


async def _abandon_async(
    state: Open, gen: Any, *, stop: BaseException
) -> None:
    """Close the tool's generator and record a stream *stop* ended."""
    try:
        failure = await _close_async(state, gen)
    except BaseException:
        state.abandoned(None, unwinding=True)
        raise
    state.abandoned(failure, unwinding=not isinstance(stop, GeneratorExit))


Item = ToolChunk | ToolProgress | ToolResult
"""What a stream yields."""


def collect_progress(core: Core, p: Prepared) -> deque[ToolProgress]:
    """Keep *p*'s progress reports for its stream, still sent to listeners.

    Reports may come from threads the tool started: a deque's ``append``
    and ``popleft`` are atomic, so the stream drains it as it goes.
    """
    pending: deque[ToolProgress] = deque()
    recorder = recorder_of(p.ctx)
    assert recorder is not None  # noqa: S101 - every prepared call has one
    forward = core.progress
    if forward is None:
        recorder.progress = pending.append
    else:

        def both(report: ToolProgress) -> None:
            pending.append(report)
            forward(report)

        recorder.progress = both
    return pending


def drained(pending: deque[ToolProgress]) -> Iterator[ToolProgress]:
    """The reports kept so far, oldest first, removed as they go."""
    while pending:
        yield pending.popleft()


def replay(pending: deque[ToolProgress], result: ToolResult) -> Iterator[Item]:
    """The stream of a call that has run: its progress, then its result."""
    yield from drained(pending)
    yield result


async def areplay(
    run: Callable[[], Awaitable[tuple[deque[ToolProgress], ToolResult]]],
) -> AsyncIterator[Item]:
    """The async stream of a call that runs when iterated."""
    pending, result = await run()
    for report in drained(pending):
        yield report
    yield result


class Open:
    """A stream's call once prepared, and the chunks it has handed over."""

    __slots__ = ("chunks", "core", "ended", "p", "pending", "session")

    def __init__(
        self, core: Core, p: Prepared, session: Session | None
    ) -> None:
        self.core = core
        self.p = p
        self.session = session
        self.pending = collect_progress(core, p)
        self.chunks: list[Any] = []
        # Set once the call's one result is being built: nothing else is
        # recorded for it afterwards, whatever happens.
        self.ended = False

    def record(self, result: ToolResult) -> ToolResult:
        """Finish with *result*: interceptors' ``after``, then the session."""
        self.ended = True
        p = self.p
        result = self.core.end(p.call, p.ctx, p.ran, result)
        if self.session is not None:
            self.session.record(result)
        return result

    def chunk(self, item: Any) -> ToolChunk:
        """Record *item* as the next chunk (through the chunk step)."""
        p = self.p
        try:
            data = p.entry.chunk(item)
        except BaseException as exc:  # noqa: BLE001 - failure re-raises
            raise self.core.failure(p.call, exc) from None
        chunks = self.chunks
        chunk = ToolChunk(
            name=p.call.name,
            call_id=p.call.id,
            invocation_id=p.ctx.invocation_id,
            index=len(chunks),
            data=data,
        )
        chunks.append(data)
        return chunk

    def ended_with(self, failure: Failure | None) -> ToolResult:
        """The result of a stream that ran to its end (or failed).

        An error result holds the chunks so far, or None if there are
        none (as dispatch gives for a first step that fails).
        """
        p = self.p
        if failure is None:
            result = ok_result(p.call, p.ctx, self.chunks, p.start)
        else:
            result = self.core.error(
                p.call, p.ctx, failure, p.start, self.chunks or None
            )
        return self.record(result)

    def abandoned(self, failure: Failure | None, *, unwinding: bool) -> None:
        """Record a stream that stopped before its end.

        The result is the tool's own *failure* if closing its generator
        raised, else a cancelled call; either way it holds the chunks so
        far (None if there are none) and applies no state change.
        *unwinding*: an exception other than the consumer's ``close()``
        propagates, and the interceptors' ``after`` must not replace it.
        """
        core, p = self.core, self.p
        # Stopped by the consumer: not a failure of the call's, not logged;
        # the tool's own failure while it closed is.
        result = (error_result if failure is None else core.error)(
            p.call,
            p.ctx,
            cancelled(p.call) if failure is None else failure,
            p.start,
            self.chunks or None,
        )
        if not unwinding:
            self.record(result)
            return
        self.ended = True
        if p.ran:
            core.chain.unwind(p.call, p.ctx, p.ran, result)
        if self.session is not None:
            self.session.record(result)


def begin(
    core: Core, p: Prepared | ToolResult, session: Session | None
) -> Open | ToolResult:
    """Open the prepared call *p*; the finished result if it cannot run."""
    if type(p) is not Prepared:
        if session is not None:
            session.record(p)
        return p
    return Open(core, p, session)
