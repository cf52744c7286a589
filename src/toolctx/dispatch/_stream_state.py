"""A stream's call once prepared: its progress, its chunks, its one result.

The streaming shells in :mod:`toolctx.dispatch.stream` run the tool's
generator; everything else a stream does lives here: the progress
reports kept for the stream (and still sent to listeners) and drained as
it goes, each chunk through the tool's chunk step, and the one result,
built, seen by the interceptors' ``after`` and recorded in the session,
whichever way the stream ends.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from toolctx._records import ToolChunk, ToolProgress, ToolResult
from toolctx.context.execution import recorder_of
from toolctx.dispatch.core import Core
from toolctx.dispatch.prepared import Prepared
from toolctx.dispatch.steps import Failure, cancelled, error_result, ok_result


if TYPE_CHECKING:
    from toolctx.context.session import Session


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
