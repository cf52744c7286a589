"""The shells that run a prepared call's body in another process.

With a dispatcher's ``executor`` (a process pool, a Dask client's
executor), the call is prepared here as any other (context, interceptors,
argument checks: bad arguments fail fast, without a round trip), then
described as data (:class:`~toolctx.remote.RemoteCall`) and run by the
worker function :func:`~toolctx.remote.run_remote`, which runs the body
with :func:`toolctx.dispatch.run.run_sync`. What the worker recorded
(published metadata, state changes) is copied onto this call, and
:class:`~toolctx.dispatch.core.Core` builds the result.
"""

from __future__ import annotations

import asyncio

from concurrent.futures import Executor
from typing import TYPE_CHECKING

from toolctx.context.execution import recorder_of
from toolctx.dispatch.awaiting import with_timeout
from toolctx.dispatch.steps import Failure
from toolctx.dispatch.worker import run_remote
from toolctx.exceptions import ToolTimeoutError
from toolctx.remote.payloads import RemoteCall, RemoteOutcome


if TYPE_CHECKING:
    from toolctx._records import ToolResult
    from toolctx.dispatch.core import Core
    from toolctx.dispatch.prepared import Prepared


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
    core: Core, p: Prepared, executor: Executor, remote: RemoteCall
) -> ToolResult:
    """Run *remote* in *executor* and wait; the call's result."""
    try:
        outcome = executor.submit(run_remote, remote).result()
    except Exception as exc:  # noqa: BLE001 - executor failures are results
        return core.failed(p, _executor_failure(p, exc))
    except BaseException:
        core.abandon(p)
        raise
    return _applied(core, p, outcome)


async def arun_elsewhere(
    core: Core,
    p: Prepared,
    executor: Executor,
    remote: RemoteCall,
    timeout: float | None,
) -> ToolResult:
    """Run *remote* in *executor* from async code; the call's result."""
    submitted = executor.submit(run_remote, remote)
    future = asyncio.wrap_future(submitted)
    try:
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
        return core.failed(p, _executor_failure(p, exc))
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


def _executor_failure(p: Prepared, exc: Exception) -> Failure:
    # Executor errors name hosts, ports and pids (Dask's CommClosedError,
    # a broken pool): the host gets them on ToolResult.exception.
    return Failure(
        f"Tool {p.call.name!r} could not run: its worker process failed "
        f"({type(exc).__name__}). Try again; if it keeps failing, tell the "
        "user the tool is unavailable right now.",
        exc,
    )
