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
exceptions are runtime-only and never written. The module holding each
record registers its strict hook here on first use
(:func:`record_hooks`), so that importing toolctx does not import
cattrs; writing uses small dict literals and the tools' compiled output
step for the JSON data inside (``json_data`` in ``toolctx._records``),
which is faster than a converter walk.

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
from cattrs.gen import make_dict_structure_fn
from cattrs.preconf.json import configure_converter

from toolctx._frozen import depth_problem
from toolctx.exceptions import ContextDataError


__all__ = ["converter", "register_hooks"]

T = TypeVar("T")

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
        >>> from fractions import Fraction
        >>> from toolctx import ContextKey, ExecutionContext
        >>> register_hooks(Fraction, str, lambda data, _: Fraction(data))
        >>> SHARE = ContextKey("codec_doc_share", Fraction)
        >>> ctx = ExecutionContext().with_value(SHARE, Fraction(1, 3))
        >>> ctx.to_dict()["values"]
        {'codec_doc_share': '1/3'}
        >>> ExecutionContext.from_dict(ctx.to_dict()).get(SHARE)
        Fraction(1, 3)

    .. versionadded:: 0.1.0
    """
    with _LOCK:
        converter.register_unstructure_hook(tp, unstructure)
        converter.register_structure_hook(tp, structure)
        _HOST_TYPES.add(tp)


def hosted(tp: object) -> bool:
    """Whether a host registered hooks for *tp* (:func:`register_hooks`)."""
    try:
        return tp in _HOST_TYPES
    except TypeError:  # an unhashable hint: never registered
        return False


def null_is_default(body: dict[str, Any], names: tuple[str, ...]) -> None:
    """Drop the *names* whose value is null, so their defaults apply."""
    for name in names:
        if name in body and body[name] is None:
            del body[name]
