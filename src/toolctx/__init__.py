"""toolctx: a typed, contextvars-based tool SDK for LLM agents.

Tools learn *who* is calling, *where* and *in which turn* from an
:class:`ExecutionContext` bound for exactly the duration of each call,
without the model passing any of it.
"""

from __future__ import annotations

from typing import Any

from toolctx._context import ExecutionContext
from toolctx._current import (
    current_context,
    execution_context,
    publish,
    set_state,
    use_context,
)
from toolctx._diagnostics import (
    LostContextWarning,
    disable_lost_context_diagnostics,
    enable_lost_context_diagnostics,
    lost_context_diagnostics_enabled,
)
from toolctx._interceptors import (
    PERMISSIONS,
    AuditLog,
    AuditOutcome,
    AuditRecord,
    AuditSink,
    Authorization,
    GrantedPermissions,
    JsonLinesAuditSink,
    LoggerAuditSink,
    MemoryAuditSink,
    PermissionDenied,
    required_permissions,
)
from toolctx._keys import ContextKey
from toolctx._logging import CONTEXT_LOG_FIELDS, ContextLogFilter
from toolctx._mcp_meta import context_from_meta, context_meta
from toolctx._protocols import Interceptor, Tool
from toolctx._records import (
    ToolCall,
    ToolChunk,
    ToolDefinition,
    ToolResult,
)
from toolctx._registry import Registry
from toolctx._session import Session
from toolctx._session_codec import session_from_dict, session_to_dict
from toolctx._stores import (
    InMemorySessionStore,
    SessionAccessError,
    SessionConflictError,
    SessionSchemaError,
    SessionStore,
    SessionStoreError,
    SQLiteSessionStore,
    TenantOf,
    tenant_id_of,
)
from toolctx._threads import (
    ContextExecutor,
    ContextThreadPoolExecutor,
    bind_context,
)
from toolctx._tool import FunctionTool, tool
from toolctx._types.decode import ArgumentLimits
from toolctx.dispatch.dispatcher import Dispatcher
from toolctx.exceptions import (
    ArgumentError,
    ContextDataError,
    ContextKeyConflictError,
    ContextValueTypeError,
    DuplicateToolError,
    InvalidToolNameError,
    MissingContextValueError,
    NoExecutionContextError,
    SchemaError,
    ScopeError,
    ToolArgumentsError,
    ToolctxError,
    ToolDenied,
    ToolTimeoutError,
    UnknownToolError,
)


__all__ = [
    "CONTEXT_LOG_FIELDS",
    "PERMISSIONS",
    "ArgumentError",
    "ArgumentLimits",
    "AuditLog",
    "AuditOutcome",
    "AuditRecord",
    "AuditSink",
    "Authorization",
    "ContextDataError",
    "ContextExecutor",
    "ContextKey",
    "ContextKeyConflictError",
    "ContextLogFilter",
    "ContextThreadPoolExecutor",
    "ContextValueTypeError",
    "Dispatcher",
    "DuplicateToolError",
    "ExecutionContext",
    "FunctionTool",
    "GrantedPermissions",
    "InMemorySessionStore",
    "Interceptor",
    "InvalidToolNameError",
    "JsonLinesAuditSink",
    "LoggerAuditSink",
    "LostContextWarning",
    "MemoryAuditSink",
    "MissingContextValueError",
    "NoExecutionContextError",
    "PermissionDenied",
    "Registry",
    "SQLiteSessionStore",
    "SchemaError",
    "ScopeError",
    "Session",
    "SessionAccessError",
    "SessionConflictError",
    "SessionSchemaError",
    "SessionStore",
    "SessionStoreError",
    "TenantOf",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolChunk",
    "ToolDefinition",
    "ToolDenied",
    "ToolResult",
    "ToolTimeoutError",
    "ToolctxError",
    "UnknownToolError",
    "bind_context",
    "context_from_meta",
    "context_meta",
    "current_context",
    "disable_lost_context_diagnostics",
    "enable_lost_context_diagnostics",
    "execution_context",
    "lost_context_diagnostics_enabled",
    "publish",
    "required_permissions",
    "session_from_dict",
    "session_to_dict",
    "set_state",
    "tenant_id_of",
    "tool",
    "use_context",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("toolctx")
    msg = f"module 'toolctx' has no attribute {name!r}"
    raise AttributeError(msg)
