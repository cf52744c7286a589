"""Run tool calls in other processes: process pools, Dask clusters.

Most hosts only pass ``executor=`` (and ``scope_loader=``) to
:class:`toolctx.Dispatcher`. The names here are the pieces underneath,
for hosts with their own transport (a queue, a job system): build a
:class:`RemoteCall`, run :func:`run_remote` in the worker, and turn the
:class:`RemoteOutcome` back into a :class:`toolctx.ToolResult`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctx.exceptions import ToolReferenceError
from toolctx.remote.payloads import RemoteCall, RemoteOutcome
from toolctx.remote.references import resolve_tool, tool_reference


if TYPE_CHECKING:
    from toolctx._dispatch.worker import run_remote


__all__ = [
    "RemoteCall",
    "RemoteOutcome",
    "ToolReferenceError",
    "resolve_tool",
    "run_remote",
    "tool_reference",
]


def __getattr__(name: str) -> Any:
    # run_remote lives in toolctx._dispatch.worker, which imports this
    # package's payloads: importing it here eagerly would be a cycle
    # whenever the worker module is imported first.
    if name == "run_remote":
        from toolctx._dispatch.worker import run_remote

        globals()[name] = run_remote
        return run_remote
    msg = f"module 'toolctx.remote' has no attribute {name!r}"
    raise AttributeError(msg)
