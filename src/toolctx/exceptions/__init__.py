"""Exceptions raised by toolctx.

Every exception toolctx raises on purpose inherits :class:`ToolctxError`,
so ``except toolctx.ToolctxError`` catches them all. Some also inherit a
builtin base so that code written against the builtin keeps working::

    ToolctxError
    ├── NoExecutionContextError        (also LookupError)
    ├── MissingContextValueError       (also LookupError)
    ├── ScopeError                     (also TypeError)
    ├── ContextKeyConflictError        (also TypeError)
    ├── ContextValueTypeError          (also TypeError)
    ├── ContextDataError               (also ValueError)
    ├── DuplicateToolError             (also ValueError)
    ├── UnknownToolError               (also KeyError)
    ├── InvalidToolNameError           (also ValueError)
    ├── SchemaError                    (also TypeError)
    ├── ToolArgumentsError             (also ValueError)
    ├── ToolOutputError                (also TypeError)
    ├── ToolTimeoutError               (also TimeoutError)
    ├── ApprovalError                  (also ValueError)
    ├── ApprovalDenied                 (on a declined call's result)
    └── ToolDenied
        └── PermissionDenied           (toolctx.interceptors.Authorization)

Tool-level failures (an unknown tool, bad arguments, a denial, the tool
raising) never escape :meth:`toolctx.Dispatcher.dispatch`: they become
error results. The exceptions above reach *host* code only.
"""

from __future__ import annotations

from toolctx.exceptions._base import ToolctxError
from toolctx.exceptions._base import (  # pickles name it here
    _unpickle as _unpickle,
)
from toolctx.exceptions._calls import (
    MAX_PROBLEM_LENGTH,
    MAX_REPORTED_PROBLEMS,
    ApprovalDenied,
    ApprovalError,
    ArgumentError,
    PermissionDenied,
    ToolArgumentsError,
    ToolDenied,
    ToolOutputError,
    ToolTimeoutError,
)
from toolctx.exceptions._context import (
    ContextDataError,
    ContextKeyConflictError,
    ContextValueTypeError,
    LostContextWarning,
    MissingContextValueError,
    NoExecutionContextError,
    ScopeError,
)
from toolctx.exceptions._integrations import (
    McpUnavailableError,
    ProviderPayloadError,
    ProviderSchemaError,
)
from toolctx.exceptions._sessions import (
    SessionAccessError,
    SessionConflictError,
    SessionSchemaError,
    SessionStoreError,
)
from toolctx.exceptions._tools import (
    MAX_LISTED_TOOLS,
    DuplicateToolError,
    InvalidToolNameError,
    SchemaError,
    ToolReferenceError,
    UnknownToolError,
)


__all__ = [
    "MAX_LISTED_TOOLS",
    "MAX_PROBLEM_LENGTH",
    "MAX_REPORTED_PROBLEMS",
    "ApprovalDenied",
    "ApprovalError",
    "ArgumentError",
    "ContextDataError",
    "ContextKeyConflictError",
    "ContextValueTypeError",
    "DuplicateToolError",
    "InvalidToolNameError",
    "LostContextWarning",
    "McpUnavailableError",
    "MissingContextValueError",
    "NoExecutionContextError",
    "PermissionDenied",
    "ProviderPayloadError",
    "ProviderSchemaError",
    "SchemaError",
    "ScopeError",
    "SessionAccessError",
    "SessionConflictError",
    "SessionSchemaError",
    "SessionStoreError",
    "ToolArgumentsError",
    "ToolDenied",
    "ToolOutputError",
    "ToolReferenceError",
    "ToolTimeoutError",
    "ToolctxError",
    "UnknownToolError",
]
