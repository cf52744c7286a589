"""``AuditLog``: one record per call, denied and failed calls included.

Records go to a sink (:mod:`toolctx.interceptors.sinks`): a logger, a
list, a JSON-lines file or any callable. The context's ``scope`` is never
copied anywhere.
"""

from __future__ import annotations

import logging

from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, Literal, TypeAlias, cast, final

import attrs

from toolctx._context.execution import ExecutionContext
from toolctx._frozen import freeze_mapping
from toolctx._records import ToolCall, ToolResult
from toolctx._types.decode import decode_json
from toolctx.exceptions import ApprovalDenied, ToolDenied


AuditOutcome: TypeAlias = Literal[
    "ok", "error", "denied", "pending", "declined"
]
"""How a call ended, as recorded by :class:`AuditLog`.

.. versionadded:: 0.1.0
"""

AuditSink: TypeAlias = Callable[["AuditRecord"], object]
"""Where :class:`AuditLog` sends each record: any ``sink(record)`` callable.

.. versionadded:: 0.1.0
"""

_NO_PERMISSIONS: frozenset[str] = frozenset()
_NO_EXTRA: Mapping[str, object] = freeze_mapping({}, "AuditRecord.extra")
_MAX_JSON_DEPTH = 64
_log = logging.getLogger("toolctx")


# -- audit ------------------------------------------------------------------


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


@final
@attrs.frozen(kw_only=True)
class AuditRecord:
    """What :class:`AuditLog` records about one call.

    Holds the call's ids and how it ended; never the scope, the context's
    metadata or state, or published result metadata. The arguments are
    only present when the audit log was built with
    ``include_arguments=True``; *extra* only holds what the host's
    ``extra`` hook returned.

    Attributes:
        tool: The called tool's name, as the model wrote it.
        call_id: The model's call id.
        invocation_id: The dispatcher's id for this invocation.
        parent_invocation_id: The calling invocation, for nested calls.
        session_id: The conversation.
        user_id: Who the call ran on behalf of.
        agent_id: Which agent made the call.
        turn: The turn within the session.
        outcome: ``"ok"``, ``"error"`` or ``"denied"`` (an interceptor or
            the tool raised :class:`~toolctx.ToolDenied`); for a call that
            needs approval, ``"pending"`` when it is held and
            ``"declined"`` when a person declines it (the run, if
            approved, is recorded as any call, with the same
            ``invocation_id``).
        error: The error message the model got, or None.
        error_type: The class name of the exception behind the error.
        duration_ns: How long the dispatch took, in nanoseconds.
        timestamp: When the call finished (timezone-aware, UTC).
        arguments: The model's arguments (decoded JSON when possible), or
            None unless requested.
        extra: Fields the host's ``extra`` hook added.

    .. versionadded:: 0.1.0
    """

    tool: str
    call_id: str | None
    invocation_id: str
    parent_invocation_id: str | None
    session_id: str | None
    user_id: str | None
    agent_id: str | None
    turn: int
    outcome: AuditOutcome
    error: str | None
    error_type: str | None
    duration_ns: int
    timestamp: datetime
    arguments: Any = None
    extra: Mapping[str, object] = _NO_EXTRA

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a dict; ``timestamp`` as ISO 8601 text.

        Example:
            >>> record = AuditRecord(
            ...     tool="add", call_id="c1", invocation_id="i1",
            ...     parent_invocation_id=None, session_id=None,
            ...     user_id="ada", agent_id=None, turn=0, outcome="ok",
            ...     error=None, error_type=None, duration_ns=1500,
            ...     timestamp=datetime(2025, 1, 2, tzinfo=timezone.utc),
            ... )
            >>> record.to_dict()["timestamp"]
            '2025-01-02T00:00:00+00:00'

        .. versionadded:: 0.1.0
        """
        data = {
            f.name: getattr(self, f.name) for f in attrs.fields(AuditRecord)
        }
        data["timestamp"] = self.timestamp.isoformat()
        data["extra"] = dict(self.extra)
        return data


def _outcome(result: ToolResult) -> AuditOutcome:
    if result.approval is not None:
        return "pending"
    if not result.is_error:
        return "ok"
    if isinstance(result.exception, ApprovalDenied):
        return "declined"
    if isinstance(result.exception, ToolDenied):
        return "denied"
    return "error"


def _arguments(call: ToolCall) -> Any:
    """The model's arguments: decoded as the dispatcher decodes them.

    Text the dispatcher refuses (invalid JSON, ``NaN``, a repeated key)
    is recorded as the text itself, so the record shows what was sent.
    """
    raw = call.arguments
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    if raw is None or not raw.strip():
        return {}
    try:
        return decode_json(raw)
    except (ValueError, RecursionError):
        return raw


@final
class AuditLog:
    """Send one :class:`AuditRecord` per dispatched call to a sink.

    Records are made in ``after``, so every call whose ``before`` hook ran
    is recorded: successes, errors, unknown tools, invalid arguments and
    denials. Put the audit log **first** in the interceptor list so that
    it also sees calls a later interceptor (such as
    :class:`Authorization`) denies.

    A failing audit never costs the call its result: if the sink or the
    *extra* hook raises, the error is logged with its traceback on the
    ``"toolctx"`` logger (level ``ERROR``, naming the tool, the call id
    and the invocation id, with the record, when there is one, as the
    log record's ``toolctx_audit_record`` attribute) and the dispatch
    returns the result as usual.

    Args:
        sink: Where records go: any ``sink(record)`` callable (see
            :class:`MemoryAuditSink`, :class:`JsonLinesAuditSink`), or a
            :class:`logging.Logger` (wrapped in :class:`LoggerAuditSink`).
            Defaults to the ``"toolctx.audit"`` logger.
        include_arguments: Record the model's arguments. Off by default:
            arguments may hold personal data.
        extra: ``extra(context, result)`` returns more fields for the
            record (a tenant id from the scope, a published result
            value...). Nothing else from the scope or metadata is copied.
        clock: Returns the current time (timezone-aware); for tests.

    Example:
        >>> from toolctx import Dispatcher, ExecutionContext, Registry
        >>> from toolctx import ToolCall
        >>> from toolctx.interceptors import AuditLog, MemoryAuditSink
        >>> registry = Registry()
        >>> @registry.tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> sink = MemoryAuditSink()
        >>> dispatcher = Dispatcher(registry, interceptors=[AuditLog(sink)])
        >>> ctx = ExecutionContext(user_id="ada")
        >>> _ = dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 2}'), ctx)
        >>> [(r.tool, r.user_id, r.outcome, r.arguments) for r in sink.records]
        [('add', 'ada', 'ok', None)]

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_clock", "_extra", "_include_arguments", "_sink")

    def __init__(
        self,
        sink: AuditSink | logging.Logger | None = None,
        *,
        include_arguments: bool = False,
        extra: Callable[[ExecutionContext, ToolResult], Mapping[str, object]]
        | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if sink is None or isinstance(sink, logging.Logger):
            from toolctx.interceptors.sinks import LoggerAuditSink

            sink = LoggerAuditSink(sink)
        elif not callable(cast("object", sink)):
            msg = (
                "AuditLog() takes a sink(record) callable or a "
                f"logging.Logger, got {type(sink).__name__}."
            )
            raise TypeError(msg)
        self._sink: AuditSink = sink
        self._include_arguments = include_arguments
        self._extra = extra
        self._clock = _utc_now if clock is None else clock

    def __repr__(self) -> str:
        return (
            f"<toolctx.interceptors.AuditLog(sink={self._sink!r}, "
            f"include_arguments={self._include_arguments})>"
        )

    def before(
        self,
        call: ToolCall,  # noqa: ARG002 - the Interceptor protocol
        context: ExecutionContext,
    ) -> ExecutionContext:
        """Return *context* unchanged; the record is made in ``after``.

        .. versionadded:: 0.1.0
        """
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Send the call's record to the sink; return *result* unchanged.

        Never raises for a failing sink or *extra* hook: the failure is
        logged (see :class:`AuditLog`) and *result* returned all the same.

        .. versionadded:: 0.1.0
        """
        try:
            record = self.build_record(call, context, result)
        except Exception:  # noqa: BLE001 - logged: the result must survive
            what = "building the record (the extra hook, the clock)"
            _audit_failed(call, context, result, None, what)
            return result
        try:
            self._sink(record)
        except Exception:  # noqa: BLE001 - logged: the result must survive
            what = f"the sink {self._sink!r}"
            _audit_failed(call, context, result, record, what)
        return result

    def on_approval(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> None:
        """Record a call held for approval, or declined, like a finished one.

        The dispatcher calls this (interceptors' ``before``/``after`` see a
        call only when it really runs); the record's outcome is
        ``"pending"`` or ``"declined"``, its ``invocation_id`` the one the
        approved run will have.

        .. versionadded:: 0.2.0
        """
        self.after(call, context, result)

    def build_record(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> AuditRecord:
        """Return the record for one finished call (without sending it).

        .. versionadded:: 0.1.0
        """
        exc = result.exception
        return AuditRecord(
            tool=call.name,
            call_id=call.id,
            invocation_id=result.invocation_id or context.invocation_id,
            parent_invocation_id=context.parent_invocation_id,
            session_id=context.session_id,
            user_id=context.user_id,
            agent_id=context.agent_id,
            turn=context.turn,
            outcome=_outcome(result),
            error=result.error,
            error_type=None if exc is None else type(exc).__name__,
            duration_ns=result.duration_ns,
            timestamp=self._clock(),
            arguments=_arguments(call) if self._include_arguments else None,
            extra=_NO_EXTRA
            if self._extra is None
            else freeze_mapping(
                self._extra(context, result), "AuditRecord.extra"
            ),
        )


def _audit_failed(
    call: ToolCall,
    context: ExecutionContext,
    result: ToolResult,
    record: AuditRecord | None,
    what: str,
) -> None:
    """Log, with the traceback, that a call's audit failed in *what*."""
    _log.exception(
        "AuditLog could not record tool call %r (call id %r, invocation "
        "%s): %s failed. The call's result was returned as usual.",
        call.name,
        call.id,
        result.invocation_id or context.invocation_id,
        what,
        extra={"toolctx_audit_record": record},
    )
