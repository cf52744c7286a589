"""toolctx: a typed, contextvars-based tool SDK for LLM agents.

Tools learn *who* is calling, *where* and *in which turn* from an
:class:`ExecutionContext` bound for exactly the duration of each call,
without the model passing any of it.

The core names live here; features live in public subpackages:
:mod:`toolctx.exceptions`, :mod:`toolctx.sessions`,
:mod:`toolctx.interceptors`, :mod:`toolctx.diagnostics`,
:mod:`toolctx.mcp`, :mod:`toolctx.remote`, :mod:`toolctx.otel`,
:mod:`toolctx.providers`, :mod:`toolctx.content`, :mod:`toolctx.adapters`.
"""

from __future__ import annotations

from typing import Any

# Imported for its effect: TOOLCTX_DEBUG_LOST_CONTEXT is read at import.
import toolctx.diagnostics  # noqa: F401

from toolctx._context.current import (
    current_context,
    execution_context,
    publish,
    report_progress,
    set_state,
    use_context,
)
from toolctx._context.execution import ExecutionContext
from toolctx._context.keys import ContextKey
from toolctx._context.session import Session
from toolctx._context.threads import (
    ContextExecutor,
    ContextThreadPoolExecutor,
    bind_context,
)
from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._records import (
    ApprovalRequest,
    ToolAnnotations,
    ToolCall,
    ToolChunk,
    ToolDefinition,
    ToolProgress,
    ToolResult,
)
from toolctx._tools.function import FunctionTool, tool
from toolctx._tools.protocols import Interceptor, Tool
from toolctx._tools.registry import Registry
from toolctx.exceptions import (
    DuplicateToolError,
    InvalidToolNameError,
    MissingContextValueError,
    NoExecutionContextError,
    SchemaError,
    ScopeError,
    ToolArgumentsError,
    ToolctxError,
    ToolDenied,
    UnknownToolError,
)


__all__ = [
    "ApprovalRequest",
    "ContextExecutor",
    "ContextKey",
    "ContextThreadPoolExecutor",
    "Dispatcher",
    "DuplicateToolError",
    "ExecutionContext",
    "FunctionTool",
    "Interceptor",
    "InvalidToolNameError",
    "MissingContextValueError",
    "NoExecutionContextError",
    "Registry",
    "SchemaError",
    "ScopeError",
    "Session",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentsError",
    "ToolCall",
    "ToolChunk",
    "ToolDefinition",
    "ToolDenied",
    "ToolProgress",
    "ToolResult",
    "ToolctxError",
    "UnknownToolError",
    "bind_context",
    "current_context",
    "execution_context",
    "publish",
    "report_progress",
    "set_state",
    "tool",
    "use_context",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("toolctx")
    msg = f"module 'toolctx' has no attribute {name!r}"
    raise AttributeError(msg)
