"""Values become JSON data, by their runtime type: a tool's output.

:func:`to_json` converts what a tool returns: strings, numbers, bools and
None as they are; attrs classes and dataclasses dicts keyed by their
``__init__`` names; enums their value; ``datetime``/``date``/``time``
ISO 8601 strings, ``timedelta`` ISO 8601 durations (``P1DT2H``), UUIDs,
paths and decimals strings, bytes base64 text; tuples, lists, sets and
frozensets lists (sets sorted); mappings dicts with string keys.

What must never be converted is registered from above with
:func:`refuse` (the package knows no toolctx domain class). A value with
no JSON form raises :class:`NotJSONError` (a ``TypeError``) naming its
type and where it sits.
"""

from __future__ import annotations

import base64
import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import json
import threading
import uuid

from functools import partial
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final
from typing import get_args as typing_get_args
from typing import get_origin as typing_get_origin

import attrs

from toolctx._types.classes import init_fields
from toolctx._types.problems import render_path
from toolctx._types.pydantic_check import is_model
from toolctx.exceptions import ToolOutputError


if TYPE_CHECKING:
    from collections.abc import Callable

    Convert = Callable[[Any], Any]

MAX_INT_DIGITS: Final = 4300
"""Most decimal digits of an integer, in arguments and in output.

CPython's default limit for converting ints to and from text
(``sys.get_int_max_str_digits()``, 3.11+); applied on 3.10 too, so a
number accepted on the way in can always be written out.
"""
MAX_INT: Final = 10**MAX_INT_DIGITS
"""The smallest integer too long to convert (its negative likewise)."""

_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_MICROSECOND: Final = dt.timedelta(microseconds=1)


class NotJSONError(ToolOutputError):
    """A value (or one nested in it) has no JSON form.

    Attributes:
        path: Where the value sits inside the one being converted.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.path: list[str | int] = []

    def __str__(self) -> str:
        where = f" (at {render_path(tuple(self.path))})" if self.path else ""
        return f"{self.args[0]}{where}"


_refusals: list[tuple[Callable[[type], bool], Callable[[type], str]]] = []
_converters: dict[type, Convert] = {}
_lock: Final = threading.RLock()


def refuse(
    match: type | tuple[type, ...] | Callable[[type], bool],
    message: str | Callable[[type], str],
) -> None:
    """Never convert instances of *match*: raise :class:`NotJSONError`.

    Args:
        match: A class, a tuple of classes (subclasses match too), or a
            predicate on the value's class.
        message: The error's text, or a function of the value's class
            that returns it.
    """
    test = (
        partial(_is_subclass, match)
        if isinstance(match, (type, tuple))
        else match
    )
    text = message if callable(message) else (lambda _: message)
    with _lock:
        _refusals.append((test, text))
        _converters.clear()


def _is_subclass(classes: type | tuple[type, ...], cls: type) -> bool:
    return issubclass(cls, classes)


def to_json(value: object) -> object:
    """Return *value* as JSON data, by its runtime type.

    Raises:
        NotJSONError: *value*, or a value inside it, has no JSON form
            (a ``TypeError``, as is a reference cycle or a value nested
            too deeply).
    """
    cls = type(value)
    if cls is str or cls is bool or value is None:
        return value
    try:
        return convert(value)
    except RecursionError:
        msg = (
            f"Cannot convert a {cls.__qualname__} to JSON: it is nested "
            f"too deeply or contains a reference cycle."
        )
        raise TypeError(msg) from None


def convert(value: Any) -> Any:
    """:func:`to_json` without the guard against deep nesting."""
    cls = type(value)
    if cls in _JSON_SCALARS:
        if cls is float:
            if value - value != 0:  # NaN, or inf - inf
                raise _not_finite(value)
        elif cls is int and not -MAX_INT < value < MAX_INT:
            raise _too_long(value)
        return value
    try:
        converter = _converters[cls]
    except KeyError:
        with _lock:
            converter = _converter(cls)
            _converters[cls] = converter
    return converter(value)


def _dump_model(value: object) -> object:
    """A pydantic model in pydantic's JSON mode (imported only now)."""
    from toolctx._types.pydantic import dump

    return dump(value)


def _converter(cls: type) -> Convert:
    """How to convert instances of exactly *cls*."""
    for test, text in _refusals:
        if test(cls):
            return partial(_refused, text(cls))
    if issubclass(cls, enum.Enum):
        return lambda v: convert(v.value)
    if is_model(cls):
        return _dump_model
    if attrs.has(cls) or dataclasses.is_dataclass(cls):
        return _fields_converter(cls)
    if issubclass(cls, bool):
        return bool
    for base in (str, int, float):
        if issubclass(cls, base):
            return partial(_as_base, base)
    return _container_converter(cls) or _text_converter(cls) or _not_json


def _container_converter(cls: type) -> Convert | None:
    """Mappings, sets and sequences (bytes are not a sequence here)."""
    if issubclass(cls, cabc.Mapping):
        return _mapping
    if issubclass(cls, cabc.Set):
        return _set
    if issubclass(cls, (list, tuple, cabc.Sequence)) and not issubclass(
        cls, (bytes, bytearray, memoryview)
    ):
        return _items
    return None


def _text_converter(cls: type) -> Convert | None:
    """The types JSON writes as strings: dates, durations, UUIDs..."""
    if issubclass(cls, (dt.date, dt.time)):
        return lambda v: v.isoformat()
    if issubclass(cls, dt.timedelta):
        return duration_text
    if issubclass(cls, decimal.Decimal):
        return _decimal
    if issubclass(cls, (uuid.UUID, PurePath)):
        return str
    if issubclass(cls, bytes):
        return _base64
    return None


def _refused(message: str, _: object) -> Any:
    """Raise: instances of a refused class never become JSON."""
    raise NotJSONError(message)


def _as_base(base: type, value: Any) -> Any:
    """A subclass of a JSON scalar, as its base type."""
    return convert(base(value))


def _fields_converter(cls: type) -> Convert:
    """An attrs class or dataclass: its ``__init__`` fields, by JSON key."""
    fields = [(name, key) for name, key, *_ in init_fields(cls)]

    def fields_to_json(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key in fields:
            try:
                out[key] = convert(getattr(value, name))
            except NotJSONError as exc:
                exc.path.insert(0, key)
                raise
        return out

    return fields_to_json


def _items(items: Any) -> list[Any]:
    """A list of the converted items."""
    out: list[Any] = []
    for index, item in enumerate(items):
        try:
            out.append(convert(item))
        except NotJSONError as exc:
            exc.path.insert(0, index)
            raise
    return out


def _set(items: Any) -> list[Any]:
    """A list of the converted items, sorted when they sort."""
    out = _items(items)
    try:
        out.sort()
    except TypeError:
        out.sort(key=lambda v: json.dumps(v, sort_keys=True))
    return out


_NO_KEY: Final = object()


def _key(key: object) -> str:
    """A mapping key as JSON text, as ``json.dumps`` writes it."""
    try:
        data = convert(key)
    except NotJSONError:
        data = _NO_KEY
    if isinstance(data, str):
        return data
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "true" if data else "false"
    if isinstance(data, int):
        return str(data)
    if isinstance(data, float):
        return repr(data)
    cls = type(key)
    msg = (
        f"Cannot use a key of type {cls.__module__}.{cls.__qualname__} "
        f"in a JSON object (keys become strings: use str, int, float, "
        f"bool, None, an Enum, a date or a UUID)"
    )
    raise NotJSONError(msg)


def _mapping(mapping: Any) -> dict[str, Any]:
    """A dict with string keys and converted values."""
    out: dict[str, Any] = {}
    for key, item in mapping.items():
        name = key if type(key) is str else _key(key)
        try:
            out[name] = convert(item)
        except NotJSONError as exc:
            exc.path.insert(0, name)
            raise
    return out


def _base64(value: bytes) -> str:
    """Bytes as standard base64 text (with padding)."""
    return base64.b64encode(value).decode("ascii")


def _decimal(value: decimal.Decimal) -> str:
    """A finite decimal as its exact text (``"0.1"``, ``"1E+3"``)."""
    if not value.is_finite():
        msg = (
            f"The decimal {value} has no JSON form (a decimal is written "
            "as a string that reads back as a number). Return a finite "
            "decimal, or None for a missing value."
        )
        raise NotJSONError(msg)
    return str(value)


def duration_text(value: dt.timedelta) -> str:
    """A ``timedelta`` as an ISO 8601 duration: ``P1DT2H3M4.5S``, ``-PT30S``.

    Days, hours, minutes and seconds (with a fraction for microseconds);
    a negative duration has a leading ``-``; zero is ``PT0S``.
    """
    total = value // _MICROSECOND
    sign = "-" if total < 0 else ""
    seconds, micros = divmod(abs(total), 1_000_000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    clock = ""
    if hours:
        clock += f"{hours}H"
    if minutes:
        clock += f"{minutes}M"
    if seconds or micros or not (days or clock):
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        clock += f"{seconds}{fraction}S"
    text = f"{sign}P{days}D" if days else f"{sign}P"
    return f"{text}T{clock}" if clock else text


def _not_finite(value: float) -> NotJSONError:
    """The error for NaN or an infinity in output."""
    return NotJSONError(
        f"The number {value!r} has no JSON form (JSON has no NaN or "
        "infinities). Return a finite number, or None for a missing value."
    )


def _too_long(value: int) -> NotJSONError:
    """The error for an integer too long to write out."""
    digits = int(value.bit_length() * 0.30103) + 1
    return NotJSONError(
        f"An integer of about {digits} digits is too large (the limit is "
        f"{MAX_INT_DIGITS} digits). Return it as a string, or in a "
        "scientific notation of your own."
    )


def _not_json(value: object) -> Any:
    """Raise: *value* has no JSON form."""
    cls = type(value)
    msg = (
        f"Cannot convert a value of type {cls.__module__}.{cls.__qualname__} "
        f"to JSON. Return JSON data (dict, list, str, int, float, bool, "
        f"None), an attrs class or dataclass, an Enum, a datetime, date, "
        f"time, timedelta, UUID, Path, Decimal or bytes, or convert the "
        f"value yourself."
    )
    raise NotJSONError(msg)


# -- the output step of one tool ---------------------------------------------

_STREAM_ORIGINS: Final = (
    cabc.Iterator,
    cabc.Iterable,
    cabc.Generator,
    cabc.AsyncIterator,
    cabc.AsyncIterable,
    cabc.AsyncGenerator,
)


def output_step(hint: Any, *, owner: str, stream: bool = False) -> Convert:
    """Compile one tool's output step: the declared type checked, then JSON.

    The step returns what :func:`to_json` returns, after checking that the
    value is of *hint*, the tool's return annotation, as the type model
    reads Python values (``int`` refuses ``bool``, ``float`` takes
    ``int``, containers check their items, ``Literal`` compares values;
    classes whose instances cannot be checked at runtime, such as a
    ``TypedDict``, are not checked). With *stream* (a generator tool) the
    step converts one chunk, checked against the yielded type. No hint,
    ``Any`` or ``object`` means no check.

    Raises (from the step):
        ToolOutputError: The value does not match the declared type, or
            it has no JSON form (:class:`NotJSONError`).
    """
    from toolctx._types.instance import predicate_for
    from toolctx._types.nodes import MISSING, Kind, type_name

    if stream:
        origin = typing_get_origin(hint)
        args = typing_get_args(hint)
        hint = args[0] if origin in _STREAM_ORIGINS and args else MISSING
    if hint is MISSING or hint is object:
        return to_json
    try:
        from toolctx._types.model import Analysis

        node = Analysis(owner, python=True).node(hint)
        if node.kind is Kind.ANY:
            return to_json
        matches = predicate_for(hint)
    except Exception:  # noqa: BLE001 - a hint with no runtime check
        return to_json
    declared = type_name(hint)
    what = "yielded" if stream else "returned"

    def step(value: object) -> object:
        if not matches(value):
            raise _mismatch(owner, what, value, declared)
        return to_json(value)

    return _with_shortcut(node.kind, step)


def _with_shortcut(kind: object, step: Convert) -> Convert:  # noqa: C901
    """*step*, with the common exact scalar returned at once.

    For a declared ``int``, ``str``, ``float`` or ``bool``, a value of
    exactly that type that JSON carries as it is needs neither the check
    nor the conversion; anything else takes *step*.
    """
    from toolctx._types.nodes import Kind

    if kind is Kind.INTEGER:

        def integer(value: Any) -> Any:
            if type(value) is int and -MAX_INT < value < MAX_INT:
                return value
            return step(value)

        return integer
    if kind is Kind.STRING:

        def string(value: Any) -> Any:
            if type(value) is str:
                return value
            return step(value)

        return string
    if kind is Kind.NUMBER:

        def number(value: Any) -> Any:
            if type(value) is float and value - value == 0:
                return value
            return step(value)

        return number
    if kind is Kind.BOOLEAN:

        def boolean(value: Any) -> Any:
            if type(value) is bool:
                return value
            return step(value)

        return boolean
    return step


def _mismatch(
    owner: str, what: str, value: object, declared: str
) -> ToolOutputError:
    got = "None" if value is None else f"a {type(value).__qualname__}"
    kind = "yield" if what == "yielded" else "return"
    subject = "A chunk" if what == "yielded" else "The output"
    return ToolOutputError(
        f"{subject} ({got}) does not match the declared {kind} type "
        f"{declared} of {owner}. Return a value of that type, or fix the "
        "annotation."
    )
