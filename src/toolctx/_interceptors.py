"""Interceptors shipped with toolctx: authorization and an audit log.

:class:`Authorization` refuses a call, before the tool runs, when the
caller lacks a permission the tool declares (``@tool(requires=[...])``).
:class:`AuditLog` writes one :class:`AuditRecord` per call, denied and
failed calls included, to a sink: a logger, a list, a JSON-lines file or
any callable. Neither ever copies the context's ``scope`` anywhere.
"""

from __future__ import annotations

import json
import logging
import os
import threading

from collections.abc import Callable, Container, Iterable, Mapping
from datetime import datetime, timezone
from typing import IO, Any, Literal, TypeAlias, cast, final

import attrs

from toolctx._context import ExecutionContext
from toolctx._frozen import freeze_mapping
from toolctx._keys import ContextKey
from toolctx._protocols import Tool
from toolctx._records import ToolCall, ToolResult
from toolctx._registry import Registry
from toolctx._tool import FunctionTool
from toolctx._types.decode import decode_json
from toolctx.exceptions import ToolDenied


PERMISSIONS: ContextKey[frozenset[str]] = ContextKey(
    "toolctx.permissions", frozenset[str], default=frozenset()
)
"""The permissions the caller holds, read by :class:`Authorization`.

The host sets it on the template context::

    ctx = ExecutionContext(user_id="bob").with_value(
        PERMISSIONS, frozenset({"files:read"})
    )

Unset, it is empty: tools that require nothing still run.

.. versionadded:: 0.1.0
"""

GrantedPermissions: TypeAlias = Callable[
    [ExecutionContext], Container[str] | None
]
"""A policy: the permissions the caller of this context holds.

Return any container that answers ``permission in granted`` (a
``frozenset``, or your own object implementing wildcards or roles); None
means none.

.. versionadded:: 0.1.0
"""

AuditOutcome: TypeAlias = Literal["ok", "error", "denied"]
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


# -- authorization ----------------------------------------------------------


class PermissionDenied(ToolDenied):
    """Raised by :class:`Authorization` when the caller lacks permissions.

    The dispatcher turns it into an error result (the tool does not run);
    hosts find it on ``ToolResult.exception``.

    Attributes:
        tool_name: The tool that was called.
        missing: The permissions the caller lacks, sorted.
        user_id: The caller's ``user_id``, if the context has one.

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        tool_name: str,
        missing: Iterable[str],
        user_id: str | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.missing = tuple(sorted(missing))
        self.user_id = user_id
        super().__init__(_denial_reason(self.missing, user_id))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool_name, self.missing, self.user_id))


def _denial_reason(missing: tuple[str, ...], user_id: str | None) -> str:
    quoted = [repr(p) for p in missing]
    if len(quoted) == 1:
        needs = f"the permission {quoted[0]}"
        tail = "the permission is missing"
    else:
        needs = f"the permissions {', '.join(quoted[:-1])} and {quoted[-1]}"
        tail = "these permissions are missing"
    who = "the caller" if user_id is None else f"user {user_id!r}"
    return (
        f"it requires {needs}, which {who} lacks. Do not retry; tell the "
        f"user {tail}."
    )


def required_permissions(tool: Tool) -> frozenset[str]:
    """Return the permissions *tool* declares it needs.

    A :class:`~toolctx.FunctionTool` declares them with
    ``@tool(requires=[...])``. Any other tool may define a
    ``permissions()`` method or a ``requires`` attribute (an iterable of
    strings, or a method returning one). Tools declaring nothing need
    nothing.

    Raises:
        TypeError: The declaration is a single string or holds non-strings.

    Example:
        >>> from toolctx import tool
        >>> @tool(requires=["files:delete"])
        ... def rm(path: str) -> None:
        ...     '''Delete a file.'''
        >>> sorted(required_permissions(rm))
        ['files:delete']

    .. versionadded:: 0.1.0
    """
    if isinstance(tool, FunctionTool):
        return tool.requires
    method = getattr(tool, "permissions", None)
    if callable(method):
        declared = method()
    else:
        declared = getattr(tool, "requires", None)
        if callable(declared):
            declared = declared()
    if declared is None:
        return _NO_PERMISSIONS
    return _permission_set(declared, f"Tool {_tool_label(tool)}")


def _tool_label(tool: Tool) -> str:
    try:
        return repr(tool.definition().name)
    except Exception:  # noqa: BLE001 - only for an error message
        return type(tool).__name__


def _permission_set(declared: object, owner: str) -> frozenset[str]:
    if isinstance(declared, str) or not isinstance(declared, Iterable):
        msg = (
            f"{owner} declares its permissions as {declared!r}; declare "
            "an iterable of strings instead, e.g. ['files:delete']."
        )
        raise TypeError(msg)
    result = frozenset(declared)
    for p in result:
        if not isinstance(p, str) or not p:
            msg = (
                f"{owner} declares the permission {p!r}; permissions are "
                "non-empty strings such as 'files:delete'."
            )
            raise TypeError(msg)
    return result


def _permissions_from_key(context: ExecutionContext) -> frozenset[str]:
    return context.get(PERMISSIONS, _NO_PERMISSIONS)


@final
class Authorization:
    """Deny calls whose caller lacks a permission the tool requires.

    Before a call runs, the tool's declared permissions (see
    :func:`required_permissions`, plus any given in *requirements*) are
    checked against what *granted* says the caller holds. A missing one
    raises :class:`PermissionDenied`, which the dispatcher turns into an
    error result naming the missing permissions; the tool does not run.
    Tools that declare nothing are allowed; unknown tools pass through
    (the dispatcher reports them). The reason never mentions the scope.

    Args:
        registry: Where to look up the called tool's declaration.
        granted: The policy: ``granted(context)`` returns the permissions
            the caller holds, typically read from ``context.scope`` or a
            typed value the host set. Defaults to the :data:`PERMISSIONS`
            value of the context.
        requirements: Extra permissions per tool name, for tools that
            cannot declare their own; added to what the tool declares.

    Raises:
        TypeError: *registry* is not a Registry, or a requirement is not
            an iterable of strings.

    Example:
        >>> from toolctx import Dispatcher, Registry, ToolCall
        >>> registry = Registry()
        >>> @registry.tool(requires=["files:delete"])
        ... def rm(path: str) -> str:
        ...     '''Delete a file.'''
        ...     return f"deleted {path}"
        >>> dispatcher = Dispatcher(
        ...     registry, interceptors=[Authorization(registry)]
        ... )
        >>> bob = ExecutionContext(user_id="bob")
        >>> call = ToolCall("rm", {"path": "a"})
        >>> print(dispatcher.dispatch(call, bob).error)
        Call to tool 'rm' was denied: it requires the permission
        'files:delete', which user 'bob' lacks. Do not retry; tell the
        user the permission is missing.
        >>> admin = bob.with_value(PERMISSIONS, frozenset({"files:delete"}))
        >>> dispatcher.dispatch(call, admin).output
        'deleted a'

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_granted", "_registry", "_requirements")

    def __init__(
        self,
        registry: Registry,
        granted: GrantedPermissions | None = None,
        *,
        requirements: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        if not isinstance(cast("object", registry), Registry):
            msg = (
                "Authorization() takes the toolctx.Registry whose tools it "
                f"guards, got {type(registry).__name__}."
            )
            raise TypeError(msg)
        self._registry = registry
        self._granted: GrantedPermissions = (
            _permissions_from_key if granted is None else granted
        )
        self._requirements = {
            name: _permission_set(perms, f"requirements[{name!r}]")
            for name, perms in (requirements or {}).items()
        }

    def __repr__(self) -> str:
        return (
            f"<toolctx.Authorization(num_requirements="
            f"{len(self._requirements)})>"
        )

    def required(self, name: str) -> frozenset[str] | None:
        """Return what a call of tool *name* needs; None if it is unknown.

        .. versionadded:: 0.1.0
        """
        tool = self._registry.get(name)
        if tool is None:
            return None
        declared = required_permissions(tool)
        extra = self._requirements.get(name)
        return declared if extra is None else declared | extra

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Raise :class:`PermissionDenied` unless the caller may run the tool.

        Raises:
            PermissionDenied: A required permission is not granted.
            TypeError: The policy returned a string (``"a" in "abc"`` is a
                substring test, so it is refused rather than trusted).

        .. versionadded:: 0.1.0
        """
        required = self.required(call.name)
        if not required:
            return context
        held = self._granted(context)
        if isinstance(held, str):
            msg = (
                "The Authorization policy returned a string; return a "
                "collection of permissions such as frozenset({'a', 'b'})."
            )
            raise TypeError(msg)
        missing = (
            required
            if held is None
            else [p for p in required if p not in held]
        )
        if missing:
            raise PermissionDenied(call.name, missing, context.user_id)
        return context

    def after(
        self,
        call: ToolCall,  # noqa: ARG002 - the Interceptor protocol
        context: ExecutionContext,  # noqa: ARG002 - ditto
        result: ToolResult,
    ) -> ToolResult:
        """Return *result* unchanged.

        .. versionadded:: 0.1.0
        """
        return result


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
            the tool raised :class:`~toolctx.ToolDenied`).
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
    if not result.is_error:
        return "ok"
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
        >>> from toolctx import Dispatcher, Registry, ToolCall
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
            f"<toolctx.AuditLog(sink={self._sink!r}, "
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


# -- sinks ------------------------------------------------------------------


@final
class MemoryAuditSink:
    """Keep audit records in a list, for tests.

    Attributes:
        records: The records, in the order they arrived.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_lock", "records")

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []
        self._lock = threading.Lock()

    def __call__(self, record: AuditRecord) -> None:
        """Append *record*."""
        with self._lock:
            self.records.append(record)

    def __repr__(self) -> str:
        return f"<toolctx.MemoryAuditSink(num_records={len(self.records)})>"

    def clear(self) -> None:
        """Forget all records.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            self.records.clear()


@final
class LoggerAuditSink:
    r"""Log each audit record as one structured :mod:`logging` record.

    The message reads ``tool call add: ok in 0.12 ms`` (plus the error for
    failed calls); every field of the record is attached with ``extra=``
    as an attribute named *prefix* + field (``record.audit_user_id``...),
    ready for a JSON formatter. Text that cannot be written as UTF-8 (a
    lone surrogate in a model-chosen tool name or call id) is escaped, as
    ``\ud800``, in the message and in the text fields, so that no handler
    fails on it.

    Args:
        logger: A logger or a logger name.
        level: The level for successful calls.
        error_level: The level for errors and denials.
        prefix: Prefix of the attributes added to the log record.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("error_level", "level", "logger", "prefix")

    def __init__(
        self,
        logger: logging.Logger | str | None = None,
        *,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        prefix: str = "audit_",
    ) -> None:
        if logger is None or isinstance(logger, str):
            logger = logging.getLogger(logger or "toolctx.audit")
        self.logger = logger
        self.level = level
        self.error_level = error_level
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"<toolctx.LoggerAuditSink(logger={self.logger.name!r})>"

    def __call__(self, record: AuditRecord) -> None:
        """Log *record* (skipped cheaply if the level is disabled)."""
        level = self.level if record.outcome == "ok" else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        fields = {
            k: escaped(v) if type(v) is str else v
            for k, v in record.to_dict().items()
        }
        msg = "tool call %s: %s in %.2f ms"
        args: tuple[object, ...] = (
            fields["tool"],
            record.outcome,
            record.duration_ns / 1e6,
        )
        if record.error is not None:
            msg += ": %s"
            args = (*args, fields["error"])
        self.logger.log(
            level,
            msg,
            *args,
            extra={self.prefix + k: v for k, v in fields.items()},
        )


@final
class JsonLinesAuditSink:
    r"""Append each audit record as one JSON line to a file or stream.

    With a path, the file is opened in append mode for each record and
    closed again, so no handle stays open and rotation tools can move the
    file. With a text stream, the line is written and the stream flushed;
    the caller keeps ownership of it. Thread-safe.

    Every line is valid JSON and valid UTF-8, whatever the record holds:
    a lone surrogate (which a model can put in a tool name, a call id or
    the arguments) is written as the JSON escape ``\ud800``; values that
    are not JSON (odd argument types) are written with ``str()``; and
    what JSON cannot carry (``NaN``, infinities, integers too long to
    print, keys that are not strings, cycles, nesting too deep to write)
    is written as text.

    Args:
        target: A file path, or a text stream such as ``sys.stdout``.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_lock", "target")

    def __init__(self, target: str | os.PathLike[str] | IO[str]) -> None:
        self.target = target
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<toolctx.JsonLinesAuditSink(target={self.target!r})>"

    def __call__(self, record: AuditRecord) -> None:
        """Write *record* as one line of JSON."""
        line = json_line(record.to_dict()) + "\n"
        target = self.target
        with self._lock:
            if isinstance(target, (str, os.PathLike)):
                with open(target, "a", encoding="utf-8") as f:  # noqa: PTH123
                    f.write(line)
            else:
                target.write(line)
                target.flush()


def escaped(text: str) -> str:
    r"""*text*, with any lone surrogate written as ``\udxxx``.

    Such text cannot be encoded as UTF-8 (it raises
    ``UnicodeEncodeError``). Inside a JSON string the escape is the JSON
    escape of the same code point, so JSON text stays valid JSON.

    Example:
        >>> escaped("add\ud800")
        'add\\ud800'
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def json_line(data: Mapping[str, Any]) -> str:
    """One line of JSON for *data*, valid UTF-8; never fails on values.

    Readable text (``ensure_ascii=False``), objects JSON does not know as
    ``str()``; if that still fails (``NaN``, an integer too long to print,
    a key that is not text, deep or circular nesting, a ``__str__`` that
    raises), the parts that fail are written as text.
    """
    try:
        line = _dumps(data)
    except Exception:  # noqa: BLE001 - any value: fall back to safe data
        line = _dumps(_json_safe(data, 0, set()))
    return escaped(line)


def _dumps(data: object) -> str:
    return json.dumps(
        data,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
        default=str,
    )


def _json_safe(value: object, depth: int, path: set[int]) -> Any:
    """*value* as data :func:`json.dumps` accepts; odd parts as text."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        try:
            int.__repr__(value)  # what json.dumps writes
        except ValueError:  # over sys.get_int_max_str_digits()
            return f"<int of {value.bit_length()} bits>"
        return value
    if isinstance(value, float):
        return value if value - value == 0 else repr(value)
    if not isinstance(value, (Mapping, list, tuple)):
        return _text(value)
    if id(value) in path:
        return "<cycle>"
    if depth >= _MAX_JSON_DEPTH:
        return "<nested too deep>"
    path.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {
                (k if type(k) is str else _text(k)): _json_safe(
                    v, depth + 1, path
                )
                for k, v in value.items()
            }
        return [_json_safe(v, depth + 1, path) for v in value]
    finally:
        path.discard(id(value))


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a value's text must never fail
        return f"<{type(value).__name__}>"
