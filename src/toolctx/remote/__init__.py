"""Run tool calls in other processes: process pools, Dask clusters.

Most hosts only pass ``executor=`` (and ``scope_loader=``) to
:class:`toolctx.Dispatcher`. The names here are the pieces underneath,
for hosts with their own transport (a queue, a job system): build a
:class:`RemoteCall`, run :func:`run_remote` in the worker, and turn the
:class:`RemoteOutcome` back into a :class:`toolctx.ToolResult`.
"""

from __future__ import annotations

from toolctx.exceptions import ToolReferenceError
from toolctx.remote.payloads import (
    RemoteCall,
    RemoteOutcome,
    resolve_tool,
    run_remote,
    tool_reference,
)


__all__ = [
    "RemoteCall",
    "RemoteOutcome",
    "ToolReferenceError",
    "resolve_tool",
    "run_remote",
    "tool_reference",
]
