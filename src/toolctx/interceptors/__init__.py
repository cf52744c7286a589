"""Interceptors shipped with toolctx: authorization, an audit log, logging.

- :class:`Authorization` refuses a call, before the tool runs, when the
  caller lacks a permission the tool declares (``@tool(requires=[...])``).
- :class:`AuditLog` writes one :class:`AuditRecord` per call, denied and
  failed calls included, to a sink (:class:`MemoryAuditSink`,
  :class:`LoggerAuditSink`, :class:`JsonLinesAuditSink`, or any callable).
- :class:`ContextLogFilter` puts the running call's ids on log records.

None of them ever copies the context's ``scope`` anywhere.
"""

from __future__ import annotations

from toolctx.exceptions import PermissionDenied
from toolctx.interceptors.audit import (
    AuditLog,
    AuditOutcome,
    AuditRecord,
    AuditSink,
)
from toolctx.interceptors.authorization import (
    PERMISSIONS,
    Authorization,
    GrantedPermissions,
    required_permissions,
)
from toolctx.interceptors.logging import CONTEXT_LOG_FIELDS, ContextLogFilter
from toolctx.interceptors.sinks import (
    JsonLinesAuditSink,
    LoggerAuditSink,
    MemoryAuditSink,
)


__all__ = [
    "CONTEXT_LOG_FIELDS",
    "PERMISSIONS",
    "AuditLog",
    "AuditOutcome",
    "AuditRecord",
    "AuditSink",
    "Authorization",
    "ContextLogFilter",
    "GrantedPermissions",
    "JsonLinesAuditSink",
    "LoggerAuditSink",
    "MemoryAuditSink",
    "PermissionDenied",
    "required_permissions",
]
