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

import collections.abc as cabc
import dataclasses
import enum
import json
import threading

from functools import partial
from typing import TYPE_CHECKING, Any, Final
from typing import get_args as typing_get_args
from typing import get_origin as typing_get_origin

import attrs

from toolctx._types.classes import init_fields
from toolctx._types.output_scalars import (
    MAX_INT,
    MAX_INT_DIGITS,
    NotJSONError,
    checked_text,
    duration_text,
    not_finite,
    not_json,
    text_converter,
    too_long,
)
from toolctx._types.pydantic_check import is_model
from toolctx.exceptions import ToolOutputError


__all__ = [
    "MAX_INT",
    "MAX_INT_DIGITS",
    "NotJSONError",
    "convert",
    "duration_text",
    "output_step",
    "refuse",
    "to_json",
]

if TYPE_CHECKING:
    from collections.abc import Callable

    Convert = Callable[[Any], Any]

_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})

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
    if type(value) is str:
        return value if value.isascii() else checked_text(value)
    cls = type(value)
    if cls is bool or value is None:
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
    if cls is str:  # the commonest leaf: ASCII is always valid UTF-8
        return value if value.isascii() else checked_text(value)
    if cls in _JSON_SCALARS:
        if cls is float:
            if value - value != 0:  # NaN, or inf - inf
                raise not_finite(value)
        elif cls is int and not -MAX_INT < value < MAX_INT:
            raise too_long(value)
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
    return _container_converter(cls) or text_converter(cls) or not_json


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
        if not name.isascii():
            checked_text(name, "A key")
        try:
            out[name] = convert(item)
        except NotJSONError as exc:
            exc.path.insert(0, name)
            raise
    return out


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
            if type(value) is str and value.isascii():
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
