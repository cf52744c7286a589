"""The codec: toolctx's records to JSON-safe data and back, with cattrs.

Every stored or sent record goes through one private, configured cattrs
:data:`converter`: :class:`~toolctx.ExecutionContext` and its typed
(``ContextKey``) values, :class:`~toolctx.Session`,
:class:`~toolctx.ToolResult`, :class:`~toolctx.ApprovalRequest`, the
content parts and the remote payloads. It is strict: a key that is not a
field (``"tunr"``, ``"usr_id"``) and a value of the wrong type are a
:class:`~toolctx.exceptions.ContextDataError` naming the field, and JSON
data (state, metadata, outputs, arguments) nested deeper than
``MAX_DATA_DEPTH`` (200) levels is refused before anything walks it.

Each record's data carries a ``"format"`` (``"toolctx.context/1"``,
``"toolctx.result/1"``, ``"toolctx.session/1"``, ...); ``scope`` and
exceptions are runtime-only and never written.

Typed values of types toolctx does not know (a host's own classes kept
in ``ContextKey`` slots) are written and read with hooks the host
registers with :func:`register_hooks`.

Example:
    >>> from toolctx import ExecutionContext
    >>> data = ExecutionContext(invocation_id="i1", turn=2).to_dict()
    >>> data["format"], data["turn"]
    ('toolctx.context/1', 2)
    >>> ExecutionContext.from_dict({**data, "tunr": 3})
    Traceback (most recent call last):
    ...
    toolctx.exceptions.ContextDataError: ExecutionContext data has an ...

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import base64
import binascii
import threading

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast, get_args

import attrs
import cattrs

from cattrs.cols import is_sequence, list_structure_factory
from cattrs.errors import (
    AttributeValidationNote,
    BaseValidationError,
    ForbiddenExtraKeysError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override
from cattrs.preconf.json import configure_converter

from toolctx._frozen import (
    CONTEXT_ENVELOPE,
    ENTRIES,
    depth_problem,
    freeze_mapping,
    thaw,
)
from toolctx._records import (
    APPROVAL_FORMAT,
    ApprovalRequest,
    ToolCall,
    ToolResult,
)
from toolctx._types.output import to_json as _output_to_json
from toolctx._types.values import structure_value, unstructure_value
from toolctx.content import PART_TYPES, File, Part, Text, parts_of
from toolctx.context.execution import ExecutionContext
from toolctx.context.keys import RawValue, known_key, matches, type_name
from toolctx.context.session import Session
from toolctx.exceptions import ContextDataError, ToolArgumentsError


__all__ = [
    "APPROVAL_FORMAT",
    "CONTEXT_FORMAT",
    "RESULT_FORMAT",
    "SESSION_FORMAT",
    "converter",
    "register_hooks",
]

T = TypeVar("T")

CONTEXT_FORMAT: Final = "toolctx.context/1"
"""The ``format`` of :meth:`ExecutionContext.to_dict` data."""
RESULT_FORMAT: Final = "toolctx.result/1"
"""The ``format`` of a stored :class:`~toolctx.ToolResult`."""
SESSION_FORMAT: Final = "toolctx.session/1"
"""The ``format`` of :func:`~toolctx.sessions.session_to_dict` data."""

converter: Final = cattrs.Converter(
    detailed_validation=True, forbid_extra_keys=True
)
"""toolctx's cattrs converter (strict; see the module's description).

Register hooks for the types kept in ``ContextKey`` slots with
:func:`register_hooks` rather than on this object directly: that also
tells the codec to route slot values of the type through the converter.

.. versionadded:: 0.1.0
"""
configure_converter(converter)

_FLATTEN: Final = " Flatten the data."
_HOST_TYPES: set[object] = set()
_LOCK = threading.Lock()


# -- strict scalars, JSON data and errors -------------------------------------


class _WrongTypeError(TypeError):
    """A JSON value of the wrong type; the codec names the field."""

    def __init__(self, expected: str, value: object) -> None:
        super().__init__(f"must be {expected}, got {value!r:.40}")
        self.expected, self.value = expected, value


def _strict(tp: type, expected: str) -> Callable[[object, object], Any]:
    def hook(value: object, _: object) -> Any:
        if type(value) is tp:
            return value
        raise _WrongTypeError(expected, value)

    return hook


def _float(value: object, _: object) -> float:
    if type(value) is float or type(value) is int:
        return float(cast("float", value))
    raise _WrongTypeError("a number", value)


for _tp, _expected in (
    (str, "a string"),
    (int, "an integer"),
    (bool, "a boolean"),
):
    converter.register_structure_hook(_tp, _strict(_tp, _expected))
converter.register_structure_hook(float, _float)


def _sequences(tp: Any) -> Callable[[Any, object], Any]:
    """Lists and homogenous tuples from JSON arrays only (not objects)."""
    args = get_args(tp)
    tuples = getattr(tp, "__origin__", tp) is tuple
    inner = list_structure_factory(
        list[args[0]] if args else list,  # type: ignore[valid-type]
        converter,
    )

    def hook(value: Any, tp: object) -> Any:
        if type(value) is not list and type(value) is not tuple:
            raise _WrongTypeError("a list", value)
        items = inner(value, tp)
        return tuple(items) if tuples else items

    return hook


converter.register_structure_hook_factory(is_sequence, _sequences)


def _messages(
    exc: BaseException, what: str, path: str, tp: object, allowed: str
) -> list[str]:
    """What is wrong, one message per leaf of a cattrs error group."""
    if isinstance(exc, BaseValidationError):
        out: list[str] = []
        for sub in exc.exceptions:
            where, sub_tp = path, tp
            for note in getattr(sub, "__notes__", ()):
                if isinstance(note, AttributeValidationNote):
                    where = f"{path}.{note.name}" if path else note.name
                    sub_tp = note.type
                elif isinstance(note, IterableValidationNote):
                    where, sub_tp = f"{path}[{note.index!r}]", note.type
            out += _messages(sub, what, where, sub_tp, allowed)
        return out
    field = f"{what} field {path!r}"
    if isinstance(exc, ForbiddenExtraKeysError):
        names = ", ".join(repr(k) for k in sorted(exc.extra_fields))
        plural = "s" if len(exc.extra_fields) > 1 else ""
        at = (
            f"{field} "
            if path
            else f"{what} data ".replace("data data", "data")
        )
        msg = (
            f"{at}has an unknown field{plural} {names}; check the "
            f"spelling (the fields are {allowed})."
        )
        return [msg]
    if isinstance(exc, ContextDataError):
        nested = "[" in path  # a record inside a list names itself
        return [f"{field}: {exc}" if nested else str(exc)]
    if isinstance(exc, _WrongTypeError):
        null = " or null" if type(None) in get_args(tp) else ""
        return [
            f"{field} must be {exc.expected}{null}, got {exc.value!r:.40}."
        ]
    if isinstance(exc, KeyError):
        return [f"{field} is missing."]
    return [f"{field}: {exc}" if path else f"{what}: {exc}"]


def data_hook(
    what: str,
    name: str,
    *,
    envelope: int = 0,
    finish: Callable[[Any], Any] | None = None,
) -> Callable[[Any, object], Any]:
    """A structure hook for the JSON data in field *name* of *what*.

    With *envelope* (``ENTRIES`` for a mapping whose entries are the
    data) the value must be an object (null reads as ``{}``); data nested
    past ``MAX_DATA_DEPTH`` is a :class:`ContextDataError` naming the
    field (and the entry); *finish* turns the checked value into the
    field's value (``dict`` for a mapping by default).
    """
    subject = f"{what} field {name!r}"
    done = finish if finish is not None else (dict if envelope else None)

    def hook(value: Any, _: object) -> Any:
        if envelope:
            if value is None:
                value = {}
            elif not isinstance(value, Mapping):
                raise _WrongTypeError("an object", value)
        problem = depth_problem(value, subject, envelope=envelope)
        if problem is not None:
            raise ContextDataError(problem)
        return value if done is None else done(value)

    return hook


def json_data(value: object, where: str, *, envelope: int = 0) -> Any:
    """Return *value* as JSON data; a ContextDataError names *where*.

    Uses the tools' compiled output step (faster than a converter walk
    for arbitrary data); data nested past the limit is refused too, so
    that what is written can be read back.
    """
    try:
        data = _output_to_json(value)
    except TypeError as exc:
        msg = f"Cannot serialize {where}: {exc}"
        raise ContextDataError(msg) from None
    subject = f"Cannot serialize {where}:" + ("" if envelope else " it")
    problem = depth_problem(data, subject, envelope=envelope)
    if problem is not None:
        raise ContextDataError(problem + _FLATTEN)
    return data


def record_hooks(
    cl: type[T],
    fmt: str | None,
    what: str,
    *,
    before: Callable[[dict[str, Any]], None] | None = None,
    noun: str = "",
    **overrides: Any,
) -> Callable[..., T]:
    """Register the strict structure hook of the attrs record *cl*.

    The hook takes a mapping in format *fmt* (checked first, then
    removed; None for a record without one), applies *before* to a
    copy of the rest and structures it with
    :func:`cattrs.gen.make_dict_structure_fn` and *overrides*. Any
    problem is one :class:`ContextDataError` naming *what* and the
    fields. Returns the hook as a one-argument function.
    """
    generated = make_dict_structure_fn(cl, converter, **overrides)
    allowed = ", ".join(
        repr(a.name)
        for a in attrs.fields(cast("Any", cl))
        if a.init and not getattr(overrides.get(a.name), "omit", False)
    )
    noun = noun or f"{what} data"

    def structure(data: Any, tp: object = None) -> T:
        if not isinstance(data, Mapping):
            if tp is not None:
                raise _WrongTypeError("an object", data)
            msg = (
                f"{what}.from_dict() takes a mapping, got "
                f"{type(data).__name__}."
            )
            raise ContextDataError(msg)
        body = dict(data)
        if fmt is not None:
            found = body.pop("format", None)
            if found != fmt:
                msg = (
                    f"Unsupported {noun} format {found!r:.40}; this "
                    f"version of toolctx reads format {fmt!r}. Data "
                    "written by a newer toolctx needs that version."
                )
                raise ContextDataError(msg)
        try:
            if before is not None:
                before(body)
            return generated(body, cl)
        except ContextDataError:
            raise
        except (BaseValidationError, TypeError, ValueError) as exc:
            msg = " ".join(_messages(exc, what, "", cl, allowed))
            raise ContextDataError(msg) from None

    converter.register_structure_hook(cl, structure)
    return structure


# -- typed values -------------------------------------------------------------


def register_hooks(
    tp: type[T],
    unstructure: Callable[[T], Any],
    structure: Callable[[Any, type[T]], T],
) -> None:
    """Teach the codec to store values of *tp* kept in ``ContextKey`` slots.

    Out of the box the codec stores the types toolctx validates tool
    arguments of (scalars, containers, enums, attrs classes,
    dataclasses, TypedDicts, ``datetime``...). For any other type, give
    the conversion both ways: *unstructure* returns JSON data for a
    value, *structure* ``(data, tp)`` rebuilds it and raises
    ``ValueError`` or ``TypeError`` for data that does not fit (the
    codec reports it as a :class:`ContextDataError` naming the slot).
    Register once, at import time, in every process that reads or writes
    the data.

    Args:
        tp: The type, exactly as the ``ContextKey`` declares it.
        unstructure: The value to JSON data.
        structure: JSON data (and *tp*) back to a value.

    Example:
        >>> from decimal import Decimal
        >>> from toolctx import ContextKey, ExecutionContext
        >>> register_hooks(Decimal, str, lambda data, _: Decimal(data))
        >>> PRICE = ContextKey("codec_doc_price", Decimal)
        >>> ctx = ExecutionContext().with_value(PRICE, Decimal("9.99"))
        >>> ctx.to_dict()["values"]
        {'codec_doc_price': '9.99'}
        >>> ExecutionContext.from_dict(ctx.to_dict()).get(PRICE)
        Decimal('9.99')

    .. versionadded:: 0.1.0
    """
    with _LOCK:
        converter.register_unstructure_hook(tp, unstructure)
        converter.register_structure_hook(tp, structure)
        _HOST_TYPES.add(tp)


def _hosted(tp: object) -> bool:
    """Whether a host registered hooks for *tp* (:func:`register_hooks`)."""
    try:
        return tp in _HOST_TYPES
    except TypeError:  # an unhashable hint: never registered
        return False


def value_to_json(name: str, value: object) -> Any:
    """Return a typed value as JSON data by its key's type.

    A :class:`RawValue` (a slot whose key was unknown when it was loaded)
    is written back unchanged; a value without a known key is written as
    plain JSON data.

    Raises:
        ContextDataError: The value does not match its key's type or has
            no JSON form.
    """
    if type(value) is RawValue:
        return value.data
    key = known_key(name)
    if key is None:
        return json_data(value, f"the typed value {name!r}")
    where = f"Cannot serialize the typed value {name!r}"
    if not matches(value, key.type):
        msg = (
            f"{where}: its key holds {type_name(key.type)}, got "
            f"{value!r} ({type(value).__name__})."
        )
        raise ContextDataError(msg)
    try:
        if _hosted(key.type):
            data = converter.unstructure(value, key.type)
        else:
            data = unstructure_value(value, key.type)
    except (TypeError, ValueError) as exc:
        msg = f"{where}: {exc}"
        raise ContextDataError(msg) from None
    problem = depth_problem(data, f"{where}: it")
    if problem is not None:
        raise ContextDataError(problem + _FLATTEN)
    return data


def value_from_json(name: str, raw: object) -> object:
    """Return a typed value read back as its key's type (or a RawValue).

    Raises:
        ContextDataError: The data does not fit the key's type.
    """
    key = known_key(name)
    if key is None:
        return RawValue(raw)
    problem = depth_problem(raw, f"Typed value {name!r}")
    if problem is not None:
        raise ContextDataError(problem)
    try:
        if _hosted(key.type):
            return converter.structure(raw, key.type)
        return structure_value(raw, key.type)
    except (ToolArgumentsError, TypeError, ValueError) as exc:
        msg = f"Typed value {name!r} does not fit its key: {exc}"
        raise ContextDataError(msg) from None


def _values_hook(what: str) -> Callable[[Any, object], dict[str, object]]:
    entries = data_hook(what, "values", envelope=ENTRIES)

    def hook(data: Any, tp: object) -> dict[str, object]:
        return {
            name: value_from_json(name, raw)
            for name, raw in entries(data, tp).items()
        }

    return hook


def values_to_json(values: Mapping[str, object]) -> dict[str, Any]:
    """The typed values of a context or session as JSON data."""
    return {name: value_to_json(name, v) for name, v in values.items()}


# -- content parts ------------------------------------------------------------


def _bytes(value: object, _: object) -> bytes:
    if type(value) is str:
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            pass
    msg = "A content part's 'data' must be base64 text."
    raise ContextDataError(msg)


converter.register_structure_hook(bytes, _bytes)
converter.register_unstructure_hook(
    bytes, lambda data: base64.b64encode(data).decode("ascii")
)

_TAGS: Final[dict[type, str]] = {cl: cl.__name__.lower() for cl in PART_TYPES}
_PART_HOOKS: Final[dict[object, Callable[..., Part]]] = {
    tag: record_hooks(cl, None, "A content part") for cl, tag in _TAGS.items()
}


def part_to_dict(part: Part) -> dict[str, Any]:
    """Return *part* as JSON-safe data (``data`` as base64 text)."""
    if type(part) is Text:
        return {"type": "text", "text": part.text}
    data = {
        "type": _TAGS[type(part)],
        "data": base64.b64encode(part.data).decode("ascii"),
        "mime_type": part.mime_type,
    }
    if type(part) is File and part.name is not None:
        data["name"] = part.name
    return data


def part_from_dict(data: Any, _: object = None) -> Part:
    """Rebuild a part from :func:`part_to_dict` output.

    Raises:
        ContextDataError: *data* is not a part (a ``ValueError``; names
            what is wrong).
    """
    if not isinstance(data, Mapping):
        msg = f"A content part must be a mapping, got {type(data).__name__}."
        raise ContextDataError(msg)
    hook = _PART_HOOKS.get(data.get("type"))
    if hook is None:
        msg = (
            "A content part's 'type' must be 'text', 'image', 'audio' or "
            f"'file', got {data.get('type')!r:.40}."
        )
        raise ContextDataError(msg)
    part: Part = hook({k: v for k, v in data.items() if k != "type"})
    return part


def content_from_json(data: dict[str, Any], what: str) -> None:
    """Move stored parts (``"content"``) into ``"output"``, in place."""
    content = data.pop("content", None)
    if content is None:
        return
    if not isinstance(content, list) or not content:
        msg = f"{what} field 'content' must be a non-empty list of parts."
        raise ContextDataError(msg)
    try:
        data["output"] = tuple(part_from_dict(item) for item in content)
    except ContextDataError as exc:
        msg = f"{what} field 'content' holds a bad part: {exc}"
        raise ContextDataError(msg) from None


def output_to_json(output: object, data: dict[str, Any], where: str) -> None:
    """Store *output* in *data*: parts under ``"content"``, else JSON."""
    parts = parts_of(output)
    if parts is None:
        data["output"] = json_data(output, where)
    else:
        data["output"] = None
        data["content"] = [part_to_dict(part) for part in parts]


# -- results, approvals, contexts, sessions -----------------------------------


def result_to_dict(result: ToolResult) -> dict[str, Any]:
    """Return *result* as JSON-safe data; ``exception`` is dropped.

    A content output (a tuple of parts) is stored under ``"content"``
    (:func:`part_to_dict` each), ``"output"`` then None.
    """
    data: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": None,
        "is_error": result.is_error,
        "error": result.error,
        "metadata": json_data(
            result.metadata, "the result metadata", envelope=ENTRIES
        ),
        "state_changes": json_data(
            result.state_changes, "the state changes", envelope=ENTRIES
        ),
        "duration_ns": result.duration_ns,
    }
    output_to_json(result.output, data, "the result output")
    return data


_RESULT = "ToolResult"
result_from_dict: Final = record_hooks(
    ToolResult,
    RESULT_FORMAT,
    _RESULT,
    before=lambda body: content_from_json(body, _RESULT),
    exception=override(omit=True),
    approval=override(omit=True),
    output=override(struct_hook=data_hook(_RESULT, "output")),
    metadata=override(
        struct_hook=data_hook(_RESULT, "metadata", envelope=ENTRIES)
    ),
    state_changes=override(
        struct_hook=data_hook(_RESULT, "state_changes", envelope=ENTRIES)
    ),
)
"""Rebuild a result from :func:`result_to_dict` output."""


def approval_to_dict(request: ApprovalRequest) -> dict[str, Any]:
    """Return *request* as JSON data (format ``toolctx.approval/1``)."""
    call = request.call
    return {
        "format": APPROVAL_FORMAT,
        "call": {
            "name": call.name,
            "arguments": thaw(call.arguments),
            "id": call.id,
        },
        "invocation_id": request.invocation_id,
        "parent_invocation_id": request.parent_invocation_id,
        "context": thaw(request.context),
        "tool_fingerprint": request.tool_fingerprint,
        "requested_at": request.requested_at,
        "expires_at": request.expires_at,
        "signature": request.signature,
    }


_APPROVAL = "ApprovalRequest"
record_hooks(
    ToolCall,
    None,
    "ApprovalRequest call",
    arguments=override(
        struct_hook=data_hook(
            _APPROVAL,
            "arguments",
            envelope=ENTRIES,
            finish=lambda d: freeze_mapping(
                d, "ApprovalRequest.call.arguments"
            ),
        )
    ),
)
_approval_fields: Final = record_hooks(
    ApprovalRequest,
    APPROVAL_FORMAT,
    _APPROVAL,
    context=override(
        struct_hook=data_hook(
            _APPROVAL,
            "context",
            envelope=CONTEXT_ENVELOPE,
            finish=lambda d: freeze_mapping(d, "ApprovalRequest.context"),
        )
    ),
)


def approval_from_dict(data: Any) -> ApprovalRequest:
    """Rebuild a request from :func:`approval_to_dict` output.

    Every field is required, as written; the ids are then checked (see
    :meth:`ApprovalRequest.from_dict`).
    """
    if isinstance(data, Mapping):
        missing = [name for name in _APPROVAL_KEYS if name not in data]
        if missing:
            msg = f"{_APPROVAL} data lacks the field {missing[0]!r}."
            raise ContextDataError(msg)
    return _approval_fields(data)


_APPROVAL_KEYS: Final = (
    "call",
    "invocation_id",
    "context",
    "tool_fingerprint",
    "requested_at",
)


def context_to_dict(ctx: ExecutionContext) -> dict[str, Any]:
    """Return *ctx* as JSON-safe data; ``scope`` is dropped."""
    return {
        "format": CONTEXT_FORMAT,
        "invocation_id": ctx.invocation_id,
        "session_id": ctx.session_id,
        "turn": ctx.turn,
        "user_id": ctx.user_id,
        "agent_id": ctx.agent_id,
        "tool_name": ctx.tool_name,
        "tool_call_id": ctx.tool_call_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "metadata": json_data(ctx.metadata, "metadata", envelope=ENTRIES),
        "state": json_data(ctx.state, "state", envelope=ENTRIES),
        "prior_results": [result_to_dict(r) for r in ctx.prior_results],
        "values": values_to_json(ctx.values),
    }


def _null_is_default(body: dict[str, Any], names: tuple[str, ...]) -> None:
    for name in names:
        if name in body and body[name] is None:
            del body[name]


_CONTEXT = "ExecutionContext"
_context_from_dict: Final = record_hooks(
    ExecutionContext,
    CONTEXT_FORMAT,
    _CONTEXT,
    before=lambda body: _null_is_default(
        body, ("invocation_id", "prior_results")
    ),
    scope=override(omit=True),
    _recorder=override(omit=True),
    metadata=override(
        struct_hook=data_hook(_CONTEXT, "metadata", envelope=ENTRIES)
    ),
    state=override(struct_hook=data_hook(_CONTEXT, "state", envelope=ENTRIES)),
    values=override(struct_hook=_values_hook(_CONTEXT)),
)


def context_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> ExecutionContext:
    """Rebuild a context from :func:`context_to_dict` output."""
    ctx = _context_from_dict(data)
    if scope is None:
        return ctx
    return attrs.evolve(ctx, scope=scope)


def session_to_dict(session: Session) -> dict[str, Any]:
    """Return *session* as JSON-safe data (see :mod:`toolctx.sessions`)."""
    snap = session.snapshot()
    return {
        "format": SESSION_FORMAT,
        "id": snap["id"],
        "user_id": snap["user_id"],
        "turn": snap["turn"],
        "agent_id": snap["agent_id"],
        "state": json_data(
            snap["state"], "the session state", envelope=ENTRIES
        ),
        "metadata": json_data(
            snap["metadata"], "the session metadata", envelope=ENTRIES
        ),
        "values": values_to_json(snap["values"]),
        "results": [result_to_dict(result) for result in snap["results"]],
        "pending": [approval_to_dict(item) for item in snap["pending"]],
    }


def _session_fields() -> type:
    """The fields of stored session data, as an attrs class."""

    def check_id(_: object, __: object, value: object) -> None:
        if type(value) is not str or not value:
            msg = f"must be a non-empty string, got {value!r:.40}."
            raise ContextDataError(f"{_SESSION} field 'id' {msg}")

    return attrs.make_class(
        "SessionData",
        {
            "id": attrs.field(type=Any, validator=check_id),
            "user_id": attrs.field(
                type=cast("type", str | None), default=None
            ),
            "turn": attrs.field(type=int, default=0),
            "agent_id": attrs.field(
                type=cast("type", str | None), default=None
            ),
            "state": attrs.field(type=dict, factory=dict),
            "metadata": attrs.field(type=dict, factory=dict),
            "values": attrs.field(type=dict, factory=dict),
            "results": attrs.field(type=list[ToolResult], factory=list),
            "pending": attrs.field(type=list[ApprovalRequest], factory=list),
        },
        kw_only=True,
        frozen=True,
    )


_SESSION = "Session data"
_SessionData: Final = _session_fields()
_session_data: Final[Callable[..., Any]] = record_hooks(
    _SessionData,
    SESSION_FORMAT,
    _SESSION,
    before=lambda body: _null_is_default(body, ("pending", "results")),
    noun="session data",
    state=override(struct_hook=data_hook(_SESSION, "state", envelope=ENTRIES)),
    metadata=override(
        struct_hook=data_hook(_SESSION, "metadata", envelope=ENTRIES)
    ),
    values=override(struct_hook=_values_hook(_SESSION)),
)


def session_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> Session:
    """Rebuild a session from :func:`session_to_dict` output."""
    if not isinstance(cast("object", data), Mapping):
        msg = (
            f"session_from_dict() takes a mapping, got {type(data).__name__}."
        )
        raise ContextDataError(msg)
    fields = _session_data(data)
    return Session(
        fields.id,
        user_id=fields.user_id,
        turn=fields.turn,
        agent_id=fields.agent_id,
        state=fields.state,
        metadata=fields.metadata,
        values=fields.values,
        results=fields.results,
        pending=fields.pending,
        scope=scope,
    )
