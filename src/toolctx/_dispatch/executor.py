"""The shells that run a prepared call's body in another process.

With a dispatcher's ``executor`` (a process pool, a Dask client's
executor), the call is prepared here as any other (context, interceptors,
argument checks: bad arguments fail fast, without a round trip), then
described as data (:class:`~toolctx.remote.RemoteCall`) and run by the
worker function :func:`~toolctx.remote.run_remote`, which runs the body
with :func:`toolctx._dispatch.run.run_sync`. What the worker recorded
(published metadata, state changes) is copied onto this call, and
:class:`~toolctx._dispatch.core.Core` builds the result.

A ``concurrent.futures.ProcessPoolExecutor`` is unusable for good once
one of its worker processes dies (``BrokenProcessPool``).
:class:`RemoteExecutor` replaces such a pool with a new one built the same
way, so that one crash does not fail every later call: the calls that
were running in it are reported as dead (they may have partly run), and
a call sent to it after it broke is sent to the new pool (nothing of it
had run).
"""

from __future__ import annotations

import asyncio
import logging
import threading

from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, final

from toolctx._context.execution import recorder_of
from toolctx._dispatch.core import Failure
from toolctx._dispatch.run import with_timeout
from toolctx._dispatch.worker import run_remote
from toolctx.exceptions import ToolTimeoutError
from toolctx.remote.payloads import RemoteCall, RemoteOutcome


if TYPE_CHECKING:
    from toolctx._dispatch.core import Core, Prepared
    from toolctx._records import ToolResult


_log = logging.getLogger("toolctx")


@final
class RemoteExecutor:
    """A dispatcher's executor, replaced when it is a broken process pool.

    Args:
        executor: Where the tool bodies run.
    """

    __slots__ = ("_lock", "executor")

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._lock = threading.Lock()

    def submit(self, remote: RemoteCall) -> tuple[Executor, Future[Any]]:
        """Send *remote* to the executor; the executor used, the future.

        A process pool that broke before this call was sent gets replaced
        first (nothing of the call ran), when it can be.

        Raises:
            BrokenProcessPool: The pool is broken and cannot be replaced.
        """
        executor = self.executor
        try:
            return executor, executor.submit(run_remote, remote)
        except BrokenProcessPool:
            fresh = self.replace(executor)
            if fresh is None:
                raise
            return fresh, fresh.submit(run_remote, remote)

    def replace(self, broken: Executor) -> Executor | None:
        """Replace *broken*, a process pool one of whose workers died.

        Returns the executor to use from now on (another call may have
        replaced it already), or None when *broken* cannot be rebuilt:
        only a plain ``ProcessPoolExecutor`` can be, with its
        ``max_workers``, ``mp_context``, ``initializer``, ``initargs`` and
        ``max_tasks_per_child``.
        """
        with self._lock:
            if self.executor is not broken:
                return self.executor
            fresh = _rebuilt(broken)
            if fresh is None:
                return None
            self.executor = fresh
        broken.shutdown(wait=False)
        _log.warning(
            "A worker process of %r died and the pool cannot run calls any "
            "more; toolctx replaced it with %r (Dispatcher.executor), which "
            "the host shuts down when it is done.",
            broken,
            fresh,
        )
        return fresh


def _rebuilt(pool: Executor) -> Executor | None:
    """A new pool made like *pool*, or None if toolctx cannot make one.

    Reads the private attributes ``ProcessPoolExecutor`` keeps its
    arguments in (missing ones, where a Python version lacks them, are
    left to their defaults).
    """
    if type(pool) is not ProcessPoolExecutor:
        return None
    options: dict[str, Any] = {}
    for name in (
        "max_workers",
        "mp_context",
        "initializer",
        "initargs",
        "max_tasks_per_child",
    ):
        if hasattr(pool, f"_{name}"):
            options[name] = getattr(pool, f"_{name}")
    try:
        return ProcessPoolExecutor(**options)
    except Exception:  # noqa: BLE001 - the host's pool stays broken
        _log.exception("Could not replace the broken process pool %r", pool)
        return None


def remote_call(
    core: Core, p: Prepared, scope_loader: str | None, timeout: float | None
) -> RemoteCall:
    """Describe *p* as data for a worker.

    Raises:
        TypeError: The workers cannot import the tool (a host bug); the
            interceptors that ran see the call abandoned first.
    """
    try:
        return RemoteCall.for_tool(
            p.entry.tool,
            p.decoded,
            p.ctx,
            scope_loader=scope_loader,
            timeout=timeout,
            include_exception_messages=core.detail,
        )
    except BaseException:
        core.abandon(p)
        raise


def run_elsewhere(
    core: Core, p: Prepared, executor: RemoteExecutor, remote: RemoteCall
) -> ToolResult:
    """Run *remote* in *executor* and wait; the call's result."""
    used: Executor | None = None
    try:
        used, future = executor.submit(remote)
        outcome = future.result()
    except Exception as exc:  # noqa: BLE001 - executor failures are results
        return core.failed(p, _executor_failure(p, exc, executor, used))
    except BaseException:
        core.abandon(p)
        raise
    return _applied(core, p, outcome)


async def arun_elsewhere(
    core: Core,
    p: Prepared,
    executor: RemoteExecutor,
    remote: RemoteCall,
    timeout: float | None,
) -> ToolResult:
    """Run *remote* in *executor* from async code; the call's result."""
    used: Executor | None = None
    try:
        used, submitted = executor.submit(remote)
        future = asyncio.wrap_future(submitted)
        outcome = (
            await future
            if timeout is None
            else await with_timeout(
                future, timeout, p.call.name, cancel=submitted.cancel
            )
        )
    except ToolTimeoutError as exc:
        return core.failed(p, Failure(str(exc), exc))
    except Exception as exc:  # noqa: BLE001 - executor failures are results
        return core.failed(p, _executor_failure(p, exc, executor, used))
    except BaseException:
        core.abandon(p)
        raise
    return _applied(core, p, outcome)


def _applied(core: Core, p: Prepared, outcome: RemoteOutcome) -> ToolResult:
    """Copy what the worker recorded onto this call; the call's result."""
    recorder = recorder_of(p.ctx)
    assert recorder is not None  # noqa: S101 - a dispatched call
    if outcome.metadata:
        recorder.metadata = outcome.typed_metadata()
    if outcome.error is not None:
        return core.failed(p, Failure(outcome.error, outcome.exception))
    if outcome.state_changes:
        recorder.state_changes = outcome.typed_state_changes()
    return core.succeeded(p, outcome.output)


def _executor_failure(
    p: Prepared,
    exc: Exception,
    executor: RemoteExecutor,
    used: Executor | None,
) -> Failure:
    """The failure of a call whose executor failed; *used* ran it.

    Executor errors name hosts, ports and pids (Dask's CommClosedError,
    a broken pool): the host gets them on ToolResult.exception.
    """
    name = p.call.name
    if isinstance(exc, BrokenProcessPool):
        if used is None:  # broken before the call, and not replaceable
            return Failure(
                f"Tool {name!r} could not run: the host's worker processes "
                "are unavailable (BrokenProcessPool), and nothing of the "
                "call ran. Tell the user the tool is unavailable right now.",
                exc,
            )
        replaced = executor.replace(used) is not None
        then = (
            "The host has started new worker processes, so another call "
            "can run."
            if replaced
            else "Tell the user the tool is unavailable right now."
        )
        return Failure(
            f"Tool {name!r} did not finish: the worker process running it "
            "died (BrokenProcessPool), so it may have partly run. Check "
            "whether it took effect before repeating a call with side "
            f"effects. {then}",
            exc,
        )
    return Failure(
        f"Tool {name!r} could not run: its worker process failed "
        f"({type(exc).__name__}). Try again; if it keeps failing, tell the "
        "user the tool is unavailable right now.",
        exc,
    )
