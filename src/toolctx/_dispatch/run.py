"""The shells that run a prepared call's body, here and now.

These are the only places (with the streaming shells of
:mod:`toolctx._dispatch.stream`) that bind a dispatched call's context,
through the one bind seam (:data:`toolctx._context.current.SEAM`), and the only
places whose code differs by ``await``. Everything the result depends on
is decided by :class:`~toolctx._dispatch.core.Core` before and after.

Here too, the primitives the shells use to await a tool's awaitable
(telling the caller's cancellation from the tool's own), to run an
awaitable on a private event loop, with a time limit, and to run a
generator tool to its end. Whatever a tool raises comes back through
:func:`thread_result`, which carries what cannot travel as itself in a
:class:`RaisedError`.

One switch on the tool's mode picks how the body runs. Under
:func:`run_sync`: a sync function is called; an ``async def`` runs on a
private event loop; a generator (sync or async) runs to its end. Under
:func:`run_async`: a sync function runs in a worker thread
(:mod:`toolctx._dispatch.workers`; called in the loop's thread if the tool
is ``inline``), as does a sync generator, run to its end; an ``async def``
and an async generator run in the awaiting task.
"""

from __future__ import annotations

import asyncio
import inspect
import sys

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

from toolctx._context.current import SEAM
from toolctx._dispatch import workers
from toolctx._tools.function import (
    ASYNC,
    ASYNC_STREAM,
    STREAM,
    SYNC,
    ToolEntry,
)
from toolctx.exceptions import ToolctxError, ToolTimeoutError


if TYPE_CHECKING:
    from toolctx._dispatch.core import Core, Prepared
    from toolctx._records import ToolResult


_NEED_A_LOOP: Final = frozenset({ASYNC, ASYNC_STREAM})
"""The modes whose body needs an event loop to run to its end."""


def run_sync(
    core: Core,
    p: Prepared,
    await_with: Callable[[Awaitable[Any]], Any] | None = None,
) -> ToolResult:
    """Run *p*'s body in this thread with its context bound; the result.

    An awaitable the body returns runs to its end with *await_with*, by
    default on a private event loop (refused, as a host error, when a
    loop is running in this thread).
    """
    entry = p.entry
    mode = entry.mode
    if await_with is None:
        if mode in _NEED_A_LOOP:
            try:
                check_no_loop(entry)
            except BaseException:
                core.abandon(p)
                raise
        await_with = run_to_end
    token = SEAM.bind(p.ctx)
    try:
        value = entry.fn(**p.args) if entry.spread else entry.fn(p.args)
        if mode == SYNC:
            if not entry.spread and inspect.isawaitable(value):
                value = await_with(value)
        elif mode == ASYNC:
            value = await_with(value)
        elif mode == STREAM:
            value = collect(value, entry.chunk)
        else:
            value = await_with(acollect(value, entry.chunk))
    except BaseException as exc:  # noqa: BLE001 - core.finish decides
        ok, value = False, exc
    else:
        ok = True
    finally:
        SEAM.unbind(token)
    return core.finish(p, ok, value)


async def run_async(
    core: Core, p: Prepared, timeout: float | None
) -> ToolResult:
    """Run *p*'s body from async code with its context bound; the result.

    Async bodies run in this task, sync ones in a worker thread that sees
    the same context (unless the tool is ``inline``); *timeout* bounds the
    wait, after which the call is an error result.
    """
    entry = p.entry
    mode = entry.mode
    awaited = True
    token = SEAM.bind(p.ctx)
    try:
        if mode == SYNC and entry.inline:
            awaited = False
            value = entry.fn(**p.args) if entry.spread else entry.fn(p.args)
        else:
            if mode == ASYNC:
                work = entry.fn(**p.args) if entry.spread else entry.fn(p.args)
            elif mode == ASYNC_STREAM:
                work = acollect(
                    entry.fn(**p.args) if entry.spread else entry.fn(p.args),
                    entry.chunk,
                )
            else:
                work = _in_worker(_body(entry, p.args))
            if timeout is not None:
                # A worker thread (sync tools) cannot be stopped.
                work = with_timeout(
                    work,
                    timeout,
                    p.call.name,
                    unstoppable=mode not in _NEED_A_LOOP,
                )
            value = await (work if AWAIT_DIRECTLY else await_tool(work))
            if (
                mode == SYNC
                and not entry.spread
                and inspect.isawaitable(value)
            ):
                value = await await_tool(value)
    except BaseException as exc:  # noqa: BLE001 - core.finish decides
        ok, value = False, exc
    else:
        ok = True
    finally:
        SEAM.unbind(token)
    return core.finish(p, ok, value, awaited=awaited)


def _body(entry: ToolEntry, args: dict[str, Any]) -> Callable[[], Any]:
    """What a worker thread runs for a sync or generator tool."""
    fn = entry.fn
    if entry.mode == STREAM:
        chunk = entry.chunk
        if entry.spread:
            return lambda: collect(fn(**args), chunk)
        return lambda: collect(fn(args), chunk)
    if entry.spread:
        return lambda: fn(**args)
    return lambda: fn(args)


async def _in_worker(body: Callable[[], Any]) -> Any:
    """*body*'s value from a worker thread that sees this context.

    What the body raised is raised here (wrapped where it cannot travel
    as itself: see :func:`~toolctx._dispatch.run.thread_result`).
    """
    return thread_result(await workers.submit(body))


AWAIT_DIRECTLY: Final = sys.version_info >= (3, 11)
"""Whether a tool's awaitable is awaited as it is, not through
:func:`await_tool` (which is then the identity)."""

if sys.version_info >= (3, 11):

    def caller_cancelled() -> bool:
        """Whether the running task has been asked to cancel."""
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return False
        return task is not None and task.cancelling() > 0

    def await_tool(work: Awaitable[Any]) -> Awaitable[Any]:
        """What to await for a tool's awaitable: *work* itself.

        :func:`caller_cancelled` tells the caller's cancellation from the
        tool's own ``CancelledError`` here, so no wrapper is needed.
        """
        return work

else:  # pragma: no cover - CPython 3.10

    def caller_cancelled() -> bool:
        """Whether the running task has been asked to cancel.

        CPython 3.10 keeps no count of cancel requests: any
        ``CancelledError`` seen at an ``await`` is taken for the caller's;
        :func:`await_tool` makes a tool's own one distinguishable.
        """
        return True

    async def await_tool(work: Awaitable[Any]) -> Any:
        """Await a tool's awaitable in a child task.

        ``asyncio.wait`` raises ``CancelledError`` only when the awaiting
        task itself is cancelled; a tool that ends with a
        ``CancelledError`` of its own comes back as a finished task, whose
        error is wrapped so that it becomes a tool failure. The child runs
        :func:`captured`, so that a tool's ``SystemExit`` never reaches the
        event loop (a task re-raises it there).
        """
        task = asyncio.ensure_future(captured(work))
        try:
            await asyncio.wait({task})
        except BaseException:
            await _cancel_and_wait(task)
            raise
        return thread_result(task.result())


async def captured(work: Awaitable[Any]) -> tuple[bool, Any]:
    """Await *work*; ``(True, value)`` or ``(False, exc)``, like a thread.

    For awaitables run in a task of their own (timeouts): a task re-raises
    a ``SystemExit`` or ``KeyboardInterrupt`` into the event loop, which
    would stop it.
    """
    try:
        return True, await work
    except BaseException as exc:  # noqa: BLE001 - re-raised by thread_result
        return False, exc


async def _cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel the tool's *task* because the caller was cancelled.

    As when the tool is awaited directly, the caller's ``CancelledError``
    is raised once the tool's own cleanup has run (its ``finally`` blocks
    may await); a worker thread cannot be stopped, so its future is
    cancelled at once and the thread finishes on its own.
    """
    task.cancel()
    try:
        await asyncio.wait({task})
    finally:
        task.cancel()


def thread_result(outcome: tuple[bool, Any]) -> Any:
    """The value of an *outcome*, or raise it.

    See :func:`toolctx._dispatch.workers.in_thread`.
    """
    ok, value = outcome
    if ok:
        return value
    if isinstance(value, (asyncio.CancelledError, StopIteration)):
        # Neither may cross a coroutine frame as itself.
        raise RaisedError(value) from None
    raise value


class RaisedError(Exception):
    """What a tool raised, carried where it could not travel as itself.

    A ``StopIteration`` cannot leave a coroutine frame (it becomes a
    ``RuntimeError``), and a tool's own ``CancelledError`` must not pass
    for the caller's; :func:`~toolctx._dispatch.core.tool_failure`
    unwraps it.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original


def loop_running() -> bool:
    """Whether an event loop is running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def check_no_loop(entry: ToolEntry) -> None:
    """Refuse to run an async tool from sync code inside a running loop."""
    if loop_running():
        msg = (
            f"Tool {entry.definition.name!r} is async and an event loop is "
            "running in this thread: use `await dispatcher.adispatch(call, "
            "context)` instead of dispatch()."
        )
        raise ToolctxError(msg)


# -- running to the end -----------------------------------------------------


def run_to_end(value: Awaitable[Any]) -> Any:
    """Run *value* on a private event loop (``asyncio.run``); its result.

    The loop's main task never ends with the tool's exception: it is
    carried out by :func:`captured` and raised here. (``asyncio.run`` in
    the main thread reprs what the task raised while restoring its SIGINT
    handler; an exception whose ``repr`` fails would leave that handler
    installed and break every later ``asyncio.run`` of the process.)
    """
    return thread_result(asyncio.run(captured(value)))


async def with_timeout(
    value: Awaitable[Any],
    timeout: float,
    name: str,
    *,
    unstoppable: bool = False,
    cancel: Callable[[], bool] | None = None,
) -> Any:
    """Await *value* for at most *timeout* seconds.

    When the time runs out the work is cancelled, and the error says
    whether the tool may still be running, as it is: a worker thread
    (*unstoppable*) cannot be stopped; *cancel*, for work another process
    runs, cancels it there and returns whether it had not started yet (a
    ``concurrent.futures.Future.cancel``); an awaitable is stopped unless
    it is still running one loop iteration after being cancelled (it
    ignores the cancellation or awaits in its cleanup).

    Raises:
        ToolTimeoutError: The time ran out.
    """
    task = asyncio.ensure_future(captured(value))
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:
        await _cancel_and_wait(task)
        raise
    if task in done:
        return thread_result(task.result())
    task.cancel()
    started = True
    if cancel is not None:
        started = not cancel()
        running = started
    elif unstoppable:
        running = True
    else:
        await asyncio.sleep(0)  # the cancelled task's turn to end
        running = not task.done()
    raise timed_out(name, timeout, running=running, started=started)


def timed_out(
    name: str, timeout: float, *, running: bool, started: bool = True
) -> ToolTimeoutError:
    """The error of a call to tool *name* that ran past *timeout*.

    The model reads whether the call may still be running (do not repeat
    a call with side effects blindly), was stopped, or never started.
    """
    after = f"Tool {name!r} timed out after {timeout:g} seconds"
    if not started:
        message = (
            f"{after} before it started, and did not run. Try again later, "
            "or tell the user the tool is busy right now."
        )
    elif running:
        message = (
            f"{after} and may still be running: it could not be stopped, "
            "and what it does may still take effect. Do not repeat this "
            "call if it has side effects (such as sending a message or "
            "making a payment) before checking whether it took effect; tell "
            "the user the tool is slow right now."
        )
    else:
        message = (
            f"{after} and was stopped before it finished; what it did until "
            "then may have taken effect. Check that before repeating a call "
            "with side effects; otherwise try again with a smaller request, "
            "or tell the user the tool is slow right now."
        )
    return ToolTimeoutError(
        message,
        tool_name=name,
        timeout=timeout,
        may_still_run=running,
        started=started,
    )


def collect(gen: Iterator[Any], step: Callable[[Any], Any]) -> list[Any]:
    """Run a sync generator tool to the end; its chunks through *step*."""
    return [step(item) for item in gen]


async def acollect(
    agen: AsyncIterator[Any], step: Callable[[Any], Any]
) -> list[Any]:
    """Run an async generator tool to the end; its chunks through *step*."""
    return [step(item) async for item in agen]
