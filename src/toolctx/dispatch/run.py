"""The shells that run a prepared call's body, here and now.

These are the only places (with the streaming shells of
:mod:`toolctx.dispatch.stream`) that bind a dispatched call's context,
through the one bind seam (:data:`toolctx.context.current.SEAM`), and the only
places whose code differs by ``await``. Everything the result depends on
is decided by :class:`~toolctx.dispatch.core.Core` before and after.

One switch on the tool's mode picks how the body runs. Under
:func:`run_sync`: a sync function is called; an ``async def`` runs on a
private event loop; a generator (sync or async) runs to its end. Under
:func:`run_async`: a sync function runs in a worker thread
(:mod:`toolctx.dispatch.workers`; called in the loop's thread if the tool
is ``inline``), as does a sync generator, run to its end; an ``async def``
and an async generator run in the awaiting task.
"""

from __future__ import annotations

import inspect

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from toolctx.context.current import SEAM
from toolctx.dispatch import workers
from toolctx.dispatch.awaiting import (
    AWAIT_DIRECTLY,
    acollect,
    await_tool,
    check_no_loop,
    collect,
    run_to_end,
    thread_result,
    with_timeout,
)
from toolctx.tools.function import ASYNC, ASYNC_STREAM, STREAM, SYNC, ToolEntry


if TYPE_CHECKING:
    from toolctx._records import ToolResult
    from toolctx.dispatch.core import Core
    from toolctx.dispatch.prepared import Prepared


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
    as itself: see :func:`~toolctx.dispatch.awaiting.thread_result`).
    """
    return thread_result(await workers.submit(body))
