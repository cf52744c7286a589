"""Strict cattrs hooks: JSON in, typed values out, nothing coerced.

:class:`StrictHooks` builds one structure hook per type expression and
plugs itself into a :class:`cattrs.Converter` (see :func:`configure`), so
``converter.structure`` and toolctx's own argument validation share the
same hooks. A failing hook raises :class:`InvalidValueError` carrying
*every* problem as ``(path, message)`` pairs, the path relative to the
value it was given; containers prefix the paths of their items.

The accepted types are those of :mod:`toolctx._types.model`; anything else
raises :class:`~toolctx.exceptions.SchemaError` when its hook is built.
Unstructuring (:meth:`StrictHooks.unstructure`) works from the runtime
type of each value and raises :class:`NotJSONError` (a ``TypeError``)
for values that have no JSON form.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import json
import math
import re
import threading
import types
import typing
import uuid

from functools import partial
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Final

import attrs
import typing_extensions

from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
)
from cattrs.gen import (
    make_dict_structure_fn,
    make_dict_unstructure_fn,
    override,
)

from toolctx._keys import type_name
from toolctx._text import exception_text, message_of
from toolctx._types.model import is_hashable
from toolctx.exceptions import MAX_REPORTED_PROBLEMS, SchemaError


if TYPE_CHECKING:
    from collections.abc import Callable

    import cattrs

    Hook = Callable[[Any, Any], Any]
    Unhook = Callable[[Any], Any]

PathParts = tuple[str | int, ...]
Problem = tuple[PathParts, str]

_NONE: Final = type(None)
_STRING: Final = "string"
_NUMBER: Final = "number"
_BOOLEAN: Final = "boolean"
_NULL: Final = "null"
_ARRAY: Final = "array"
_OBJECT: Final = "object"
ALL_KINDS: Final = frozenset(
    {_STRING, _NUMBER, _BOOLEAN, _NULL, _ARRAY, _OBJECT}
)
_MAX_SHOWN: Final = 60
_MAX_BITS: Final = 128  # larger integers are not shown in messages
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _unique(*candidates: object) -> tuple[Any, ...]:
    """The non-None *candidates*, without repeats, in order."""
    found: list[object] = []
    for item in candidates:
        if item is not None and not any(item is f for f in found):
            found.append(item)
    return tuple(found)


_ANNOTATED: Final = _unique(typing.Annotated, typing_extensions.Annotated)
_LITERAL: Final = _unique(typing.Literal, typing_extensions.Literal)
_UNION: Final = _unique(typing.Union, types.UnionType)
_ANY: Final = _unique(typing.Any, typing_extensions.Any, object)
_ALIAS_TYPES: Final = _unique(
    getattr(typing, "TypeAliasType", None), typing_extensions.TypeAliasType
)
_REQUIRED: Final = _unique(
    getattr(typing, "Required", None), typing_extensions.Required
)
_NOT_REQUIRED: Final = _unique(
    getattr(typing, "NotRequired", None), typing_extensions.NotRequired
)
_QUALIFIERS: Final = _unique(
    *_REQUIRED,
    *_NOT_REQUIRED,
    getattr(typing, "ReadOnly", None),
    typing_extensions.ReadOnly,
)
_ARRAYS: Final = (list, cabc.Sequence)
_SETS: Final = (set, frozenset, cabc.Set)
_MAPPINGS: Final = (dict, cabc.Mapping)
_BARE_TUPLES: Final = _unique(tuple, typing.Tuple)  # noqa: UP006
_JSON_SCALARS: Final = frozenset({str, int, float, bool, _NONE})

MAX_INT_DIGITS: Final = 4300
"""Most decimal digits of an integer, in arguments and in output.

CPython's default limit for converting ints to and from text
(``sys.get_int_max_str_digits()``, 3.11+); applied on 3.10 too, so a
number accepted on the way in can always be written out.
"""
MAX_INT: Final = 10**MAX_INT_DIGITS


def _is_in(item: object, candidates: tuple[object, ...]) -> bool:
    """Whether *item* is one of *candidates* (by identity)."""
    return any(item is candidate for candidate in candidates)


def union_members(tp: Any) -> tuple[Any, ...]:
    """The members of a union, in written order; ``(tp,)`` otherwise."""
    origin = typing_extensions.get_origin(tp)
    if origin is not None and _is_in(origin, _UNION):
        return typing_extensions.get_args(tp)
    return (tp,)


def literal_values(tp: Any) -> tuple[Any, ...] | None:
    """The values of a ``Literal``, or None for another type."""
    origin = typing_extensions.get_origin(tp)
    if origin is not None and _is_in(origin, _LITERAL):
        return typing_extensions.get_args(tp)
    return None


# -- errors -----------------------------------------------------------------


class InvalidValueError(ValueError):
    """A value does not fit its type; ``errors`` lists every problem.

    Attributes:
        errors: ``(path, message)`` pairs, the path a tuple of property
            names and array indices relative to the structured value.
    """

    def __init__(self, errors: list[Problem]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        return "; ".join(
            f"{render_path(p)}: {m}" if p else m for p, m in self.errors
        )


class NotJSONError(TypeError):
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


def render_path(parts: PathParts) -> str:
    """Render path parts: ``items[0].name``, ``tags[2]``, ``m["a b"]``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def problems_of(exc: BaseException) -> list[Problem]:
    """The ``(path, message)`` problems an exception from a hook stands for."""
    if isinstance(exc, InvalidValueError):
        return exc.errors
    if isinstance(exc, RecursionError):
        return [((), "the value is nested too deeply")]
    return [((), f"invalid value ({exception_text(exc, _MAX_DETAIL)})")]


_MAX_DETAIL: Final = 500


def _prefixed(key: str | int, exc: BaseException) -> list[Problem]:
    """The problems of *exc*, their paths prefixed with *key*."""
    return [((key, *path), msg) for path, msg in problems_of(exc)]


def _fail(message: str) -> InvalidValueError:
    """One problem at the current value."""
    return InvalidValueError([((), message)])


# -- describing types and values ---------------------------------------------


@attrs.frozen
class Desc:
    """How a type reads in messages, and which JSON values it may accept.

    Attributes:
        kinds: The JSON types (``"string"``, ``"number"``...) whose
            values the type may accept.
        text: ``"an integer"``, ``"one of 'c', 'f'"``...
        style: How to show a string that was given: ``"json"`` (the
            type takes free-form strings), ``"repr"`` (it takes listed
            strings) or None (it takes no strings: ``the string "3"``).
        anything: Whether the type accepts every value (``Any``).
    """

    kinds: frozenset[str]
    text: str
    style: str | None = None
    anything: bool = False


_SCALAR_DESCS: Final[dict[object, Desc]] = {
    str: Desc(frozenset({_STRING}), "a string", "json"),
    int: Desc(frozenset({_NUMBER}), "an integer"),
    float: Desc(frozenset({_NUMBER}), "a number"),
    bool: Desc(frozenset({_BOOLEAN}), "a boolean"),
    _NONE: Desc(frozenset({_NULL}), "null"),
    dt.datetime: Desc(
        frozenset({_STRING}), "a date-time string (ISO 8601)", "json"
    ),
    dt.date: Desc(frozenset({_STRING}), "a date string (YYYY-MM-DD)", "json"),
    dt.time: Desc(
        frozenset({_STRING}), "a time string (ISO 8601, HH:MM:SS)", "json"
    ),
    uuid.UUID: Desc(frozenset({_STRING}), "a UUID string", "json"),
}
_ANY_DESC: Final = Desc(ALL_KINDS, "any JSON value", "json", anything=True)
_OBJECT_DESC: Final = Desc(frozenset({_OBJECT}), "an object")


def json_kind(value: object) -> str | None:
    """The JSON type of *value*, or None when it is not JSON data."""
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return _BOOLEAN
    if isinstance(value, str):
        return _STRING
    if isinstance(value, (int, float)):
        return _NUMBER
    if isinstance(value, (list, tuple)):
        return _ARRAY
    if isinstance(value, cabc.Mapping):
        return _OBJECT
    return None


def _clip(text: str) -> str:
    """*text*, shortened to about ``_MAX_SHOWN`` characters."""
    if len(text) <= _MAX_SHOWN:
        return text
    return text[: _MAX_SHOWN - 3] + "..."


def _show_number(value: float) -> str:
    """A number as JSON writes it (or close: NaN and infinities)."""
    if isinstance(value, int):
        if value.bit_length() > _MAX_BITS:
            return "a very large integer"
        return str(int(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(float(value))


def show_value(value: object, style: str | None) -> str:
    """Show a given *value* in an error message, in JSON words."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        text = _clip(str(value))
        if style == "repr":
            return repr(text)
        quoted = json.dumps(text, ensure_ascii=False)
        return quoted if style == "json" else f"the string {quoted}"
    if isinstance(value, (int, float)):
        return _show_number(value)
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, cabc.Mapping):
        return "an object"
    return f"a Python {type(value).__qualname__} object"


def show_option(value: object) -> str:
    """Show an allowed ``Literal``/enum value: ``'c'``, ``1``, ``true``."""
    if isinstance(value, str):
        return repr(_clip(value))
    return show_value(value, None)


def _join(texts: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(texts) <= 1:
        return "".join(texts)
    return ", ".join(texts[:-1]) + " or " + texts[-1]


def _options_desc(values: list[object]) -> Desc:
    """The description of a ``Literal`` or enum with these JSON values."""
    kinds = frozenset(k for k in map(json_kind, values) if k is not None)
    shown = ", ".join(map(show_option, values))
    text = f"one of {shown}" if len(values) > 1 else shown
    return Desc(kinds, text, "repr" if _STRING in kinds else None)


def describe(tp: Any) -> Desc:  # noqa: C901
    """How the type expression *tp* reads in messages (never raises)."""
    tp = unwrap(tp)
    try:
        found = _SCALAR_DESCS.get(tp)
    except TypeError:  # unhashable metadata somewhere inside
        found = None
    if found is not None:
        return found
    if _is_in(tp, _ANY):
        return _ANY_DESC
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is not None and _is_in(origin, _UNION):
        members = [describe(arg) for arg in args]
        texts: list[str] = []
        for member in members:
            if member.text not in texts:
                texts.append(member.text)
        styles = {m.style for m in members}
        style = next((s for s in ("json", "repr") if s in styles), None)
        return Desc(
            frozenset().union(*(m.kinds for m in members)),
            _join(texts),
            style,
            anything=any(m.anything for m in members),
        )
    if origin is not None and _is_in(origin, _LITERAL):
        return _options_desc(list(args))
    base = origin or tp
    if _is_in(base, _ARRAYS) or _is_in(base, _BARE_TUPLES):
        fixed = _fixed_tuple(tp)
        if fixed is not None:
            count = len(fixed)
            items = "item" if count == 1 else "items"
            return Desc(frozenset({_ARRAY}), f"an array of {count} {items}")
        return Desc(frozenset({_ARRAY}), "an array")
    if _is_in(base, _SETS):
        return Desc(frozenset({_ARRAY}), "an array of unique items")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _options_desc([_scalar(m.value) for m in tp])
    return _OBJECT_DESC


def unwrap(tp: Any) -> Any:
    """Peel ``Annotated``, ``NewType``, type aliases and qualifiers off."""
    while True:
        origin = typing_extensions.get_origin(tp)
        if origin is not None and (
            _is_in(origin, _ANNOTATED) or _is_in(origin, _QUALIFIERS)
        ):
            tp = typing_extensions.get_args(tp)[0]
        elif isinstance(tp, _ALIAS_TYPES):
            tp = tp.__value__
        elif hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        elif tp is None:
            return _NONE
        else:
            return tp


def _cache_key(tp: Any) -> object:
    """A cache key for *tp* that keeps what ``==`` on types ignores.

    ``int | float == float | int`` and ``Literal[1] == Literal[True]``
    hold for typing, yet their hooks differ.
    """
    args = typing_extensions.get_args(tp)
    if not args:
        return (type(tp), tp)
    origin = typing_extensions.get_origin(tp)
    return (type(tp), origin, tuple(map(_cache_key, args)))


def _fixed_tuple(tp: Any) -> tuple[Any, ...] | None:
    """The item types of a fixed-length ``tuple[A, B]``, else None."""
    if typing_extensions.get_origin(tp) is not tuple or _is_in(
        tp, _BARE_TUPLES
    ):
        return None
    args = typing_extensions.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004
        return None
    return () if args == ((),) else args


def _scalar(value: object) -> object:
    """An enum value as a plain JSON scalar; ``_NOT_SCALAR`` otherwise."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else _NOT_SCALAR
    if isinstance(value, str):
        return str(value)
    return _NOT_SCALAR


_NOT_SCALAR: Final = object()


def _option_key(value: object) -> tuple[str | None, object]:
    """A key under which JSON-equal scalars meet: ``1 == 1.0 != True``."""
    return (json_kind(value), value)


def json_key(value: object) -> object:
    """A hashable key equal for JSON-equal values (``1``, ``1.0``)."""
    if isinstance(value, bool):
        return (_BOOLEAN, value)
    if isinstance(value, (list, tuple)):
        return (_ARRAY, tuple(json_key(item) for item in value))
    if isinstance(value, cabc.Mapping):
        return (
            _OBJECT,
            frozenset((k, json_key(v)) for k, v in value.items()),
        )
    return value


# -- scalar hooks ------------------------------------------------------------


def _structure_any(value: Any, _: Any) -> Any:
    """``Any``/``object``: every value, as it is."""
    return value


def _structure_str(value: Any, _: Any) -> str:
    """A string, never a number."""
    if isinstance(value, str):
        return value if type(value) is str else str(value)
    raise _fail(f"expected a string, got {show_value(value, 'json')}")


def _structure_int(value: Any, _: Any) -> int:
    """An integer, or a float with no fractional part; never a bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if type(value) is int else int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _fail(f"expected an integer, got {show_value(value, None)}")


def _structure_float(value: Any, _: Any) -> float:
    """A number (an integer becomes a float); never a bool."""
    if type(value) is float:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise _fail(
                f"expected a number, got {show_value(value, None)} "
                f"(too large for a float)"
            ) from None
    raise _fail(f"expected a number, got {show_value(value, None)}")


def _structure_bool(value: Any, _: Any) -> bool:
    """``true`` or ``false``, never ``0``/``1``."""
    if value is True or value is False:
        return bool(value)
    raise _fail(f"expected a boolean, got {show_value(value, None)}")


def _structure_none(value: Any, _: Any) -> None:
    """``null`` only."""
    if value is not None:
        raise _fail(f"expected null, got {show_value(value, None)}")


_OFFSET = r"(?P<tz>[Zz]|[+-][0-9]{2}:[0-9]{2})?"
_CLOCK = (
    r"(?P<H>[0-9]{2}):(?P<M>[0-9]{2})"
    r"(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?"
)
_DATE_RE: Final = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
)
_TIME_RE: Final = re.compile(_CLOCK + _OFFSET)
_DATETIME_RE: Final = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})[Tt ]" + _CLOCK + _OFFSET
)
_UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{12}"
)


def _clock(
    match: re.Match[str],
) -> tuple[int, int, int, int, dt.tzinfo | None]:
    """Hour, minute, second, microsecond and zone of a matched clock."""
    frac = match["f"] or ""
    zone = match["tz"]
    tz: dt.tzinfo | None = None
    if zone in {"Z", "z"}:
        tz = dt.timezone.utc
    elif zone:
        sign = -1 if zone[0] == "-" else 1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if minutes >= 60:  # noqa: PLR2004
            raise ValueError(zone)
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    return (
        int(match["H"]),
        int(match["M"]),
        int(match["S"] or 0),
        int(frac[:6].ljust(6, "0")),
        tz,
    )


def _parse_datetime(text: str) -> dt.datetime:
    """RFC 3339 / ISO 8601 ``YYYY-MM-DDTHH:MM[:SS[.f]][Z|±HH:MM]``."""
    match = _DATETIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    hour, minute, second, micro, tz = _clock(match)
    return dt.datetime(
        int(match["y"]),
        int(match["m"]),
        int(match["d"]),
        hour,
        minute,
        second,
        micro,
        tzinfo=tz,
    )


def _parse_date(text: str) -> dt.date:
    """``YYYY-MM-DD``."""
    match = _DATE_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    return dt.date(int(match["y"]), int(match["m"]), int(match["d"]))


def _parse_time(text: str) -> dt.time:
    """``HH:MM[:SS[.f]][Z|±HH:MM]``."""
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    hour, minute, second, micro, tz = _clock(match)
    return dt.time(hour, minute, second, micro, tzinfo=tz)


def _parse_uuid(text: str) -> uuid.UUID:
    """The canonical hyphenated form, any case."""
    if _UUID_RE.fullmatch(text) is None:
        raise ValueError(text)
    return uuid.UUID(text)


def _string_hook(tp: type, parse: Callable[[str], Any]) -> Hook:
    """A hook parsing a string strictly with *parse*."""
    text = _SCALAR_DESCS[tp].text

    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, str):
            try:
                return parse(value)
            except ValueError:
                pass
        raise _fail(f"expected {text}, got {show_value(value, 'json')}")

    return hook


_SCALAR_HOOKS: Final[dict[object, Hook]] = {
    str: _structure_str,
    int: _structure_int,
    float: _structure_float,
    bool: _structure_bool,
    _NONE: _structure_none,
    dt.datetime: _string_hook(dt.datetime, _parse_datetime),
    dt.date: _string_hook(dt.date, _parse_date),
    dt.time: _string_hook(dt.time, _parse_time),
    uuid.UUID: _string_hook(uuid.UUID, _parse_uuid),
}


def _mismatch(desc: Desc, value: object) -> InvalidValueError:
    """``expected <desc>, got <value>``."""
    return _fail(f"expected {desc.text}, got {show_value(value, desc.style)}")


def _options_hook(options: dict[object, object], desc: Desc) -> Hook:
    """A hook mapping JSON-equal scalars to *options*' values."""

    def hook(value: Any, _: Any) -> Any:
        if json_kind(value) in desc.kinds:
            found = options.get(_option_key(value), _NOT_SCALAR)
            if found is not _NOT_SCALAR:
                return found
        raise _mismatch(desc, value)

    return hook


# -- the hook factory --------------------------------------------------------


class StrictHooks:
    """Builds and caches the strict hooks of one converter.

    Args:
        converter: The converter whose attrs/dataclass structuring
            functions (``cattrs.gen``) the class hooks wrap.
    """

    def __init__(self, converter: cattrs.Converter) -> None:
        self.converter = converter
        self._cache: dict[Any, Hook] = {}
        self._building: dict[Any, Hook] = {}
        self._session: list[Any] = []
        self._unstructure: dict[type, Unhook] = {}
        self._lock = threading.RLock()

    # structuring

    def hook_for(self, tp: Any) -> Hook:
        """The strict structure hook of *tp*, built once.

        Raises:
            SchemaError: *tp* (or a type inside it) is not supported.
        """
        tp = unwrap(tp)
        try:
            key = _cache_key(tp)
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:  # unhashable Annotated metadata inside
            with self._lock:
                return self._build(tp)
        with self._lock:
            return self._cached_build(tp, key)

    def redirect(self, value: Any, tp: Any) -> Any:
        """A hook for any type: look the real one up, then call it."""
        return self.hook_for(tp)(value, tp)

    def factory(self, tp: Any) -> Hook:
        """The converter's hook factory: check *tp*, then redirect.

        cattrs caches hooks by type equality, under which ``int | float``
        equals ``float | int``; :meth:`redirect` looks the hook up again
        with the written order.
        """
        self.hook_for(tp)
        return self.redirect

    def _cached_build(self, tp: Any, key: object) -> Hook:
        """Build *tp*'s hook; references back to it get a forwarder."""
        found = self._cache.get(key) or self._building.get(key)
        if found is not None:
            return found
        box: list[Hook] = []

        def forward(value: Any, t: Any) -> Any:
            return box[0](value, t)

        self._building[key] = forward
        try:
            hook = self._build(tp)
        except BaseException:
            del self._building[key]
            if not self._building:  # forget hooks that point at stubs
                for done in self._session:
                    self._cache.pop(done, None)
                self._session.clear()
            raise
        box.append(hook)
        del self._building[key]
        self._cache[key] = hook
        if self._building:
            self._session.append(key)
        else:
            self._session.clear()
        return hook

    def _build(self, tp: Any) -> Hook:  # noqa: C901
        """Build the hook of the unwrapped type *tp*."""
        try:
            scalar = _SCALAR_HOOKS.get(tp)
        except TypeError:
            scalar = None
        if scalar is not None:
            return scalar
        if _is_in(tp, _ANY):
            return _structure_any
        origin = typing_extensions.get_origin(tp)
        args = typing_extensions.get_args(tp)
        if origin is not None and _is_in(origin, _UNION):
            return self._union_hook(tp, args)
        if origin is not None and _is_in(origin, _LITERAL):
            return self._literal_hook(tp, args)
        if origin is not None or _is_in(
            tp, (*_ARRAYS, *_SETS, *_MAPPINGS, tuple)
        ):
            return self._generic_hook(tp, origin or tp, args)
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return self._enum_hook(tp)
            if typing_extensions.is_typeddict(tp):
                return self._typeddict_hook(tp)
            if attrs.has(tp) or dataclasses.is_dataclass(tp):
                return self._class_hook(tp)
        raise unsupported(tp)

    def _union_hook(self, tp: Any, args: tuple[Any, ...]) -> Hook:
        """Try the members in written order; the first that accepts wins."""
        desc = describe(tp)
        members = [(self.hook_for(arg), arg, describe(arg)) for arg in args]

        def hook(value: Any, _: Any) -> Any:
            kind = json_kind(value)
            tried: list[tuple[Desc, list[Problem]]] = []
            for member, arg, member_desc in members:
                if member_desc.anything or kind in member_desc.kinds:
                    try:
                        return member(value, arg)
                    except Exception as exc:  # noqa: BLE001 - reported
                        tried.append((member_desc, problems_of(exc)))
            if kind in {_ARRAY, _OBJECT} and tried:
                # The value has the right shape for some member: its
                # detailed problems help more than a list of types.
                best = min(tried, key=lambda t: len(t[1]))[1]
                raise InvalidValueError(best)
            raise _mismatch(desc, value)

        return hook

    @staticmethod
    def _literal_hook(tp: Any, args: tuple[Any, ...]) -> Hook:
        """Equal to a listed value, JSON-wise (``1.0`` is ``1``, not true)."""
        for value in args:
            if type(value) not in {str, int, bool, _NONE}:
                raise unsupported(
                    tp,
                    f"Literal values must be str, int, bool or None, "
                    f"not {value!r}",
                )
        options: dict[object, object] = {}
        for value in args:
            options.setdefault(_option_key(value), value)
        return _options_hook(options, describe(tp))

    @staticmethod
    def _enum_hook(enum_cls: type[enum.Enum]) -> Hook:
        """A member, by its value (same equality as ``Literal``)."""
        if issubclass(enum_cls, enum.Flag):
            raise unsupported(enum_cls, "Flag enums are not")
        options: dict[object, object] = {}
        for member in enum_cls:
            value = _scalar(member.value)
            if value is _NOT_SCALAR:
                raise unsupported(
                    enum_cls,
                    f"member {member.name} has value {member.value!r}; "
                    f"values must be str, int, float, bool or None",
                )
            options.setdefault(_option_key(value), member)
        return _options_hook(options, describe(enum_cls))

    def _generic_hook(
        self, tp: Any, origin: Any, args: tuple[Any, ...]
    ) -> Hook:
        """Arrays, tuples, sets and string-keyed objects."""
        item = args[0] if args else Any
        if _is_in(origin, _ARRAYS):
            return self._array_hook(tp, item, list)
        if origin is tuple:
            fixed = _fixed_tuple(tp)
            if fixed is None:
                return self._array_hook(tp, item, tuple)
            return self._tuple_hook(tp, fixed)
        if _is_in(origin, _SETS):
            if not is_hashable(item):
                raise unsupported(tp, "set items must be of a hashable type")
            return self._set_hook(
                tp, item, set if origin is set else frozenset
            )
        if _is_in(origin, _MAPPINGS):
            if args and args[0] is not str:
                raise unsupported(tp, "JSON object keys are strings")
            return self._mapping_hook(tp, args[1] if args else Any)
        raise unsupported(tp)

    def _array_hook(
        self, tp: Any, item: Any, make: Callable[[list[Any]], Any]
    ) -> Hook:
        """A JSON array of *item*, as a list or tuple."""
        desc = describe(tp)
        if _is_in(unwrap(item), _ANY):

            def loose(value: Any, _: Any) -> Any:
                if isinstance(value, (list, tuple)):
                    return make(list(value))
                raise _mismatch(desc, value)

            return loose
        item_hook = self.hook_for(item)

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise _mismatch(desc, value)
            out: list[Any] = []
            problems: list[Problem] = []
            for index, element in enumerate(value):
                try:
                    out.append(item_hook(element, item))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return make(out)

        return hook

    def _tuple_hook(self, tp: Any, items: tuple[Any, ...]) -> Hook:
        """A JSON array of exactly ``len(items)`` items, typed in order."""
        desc = describe(tp)
        hooks = [(self.hook_for(item), item) for item in items]
        count = len(hooks)
        noun = "item" if count == 1 else "items"

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise _mismatch(desc, value)
            problems: list[Problem] = []
            if len(value) != count:
                got = f"{len(value)} item{'' if len(value) == 1 else 's'}"
                expected = f"an array of exactly {count} {noun}"
                problems.append(((), f"expected {expected}, got {got}"))
            out: list[Any] = []
            for index, ((item_hook, item), element) in enumerate(
                zip(hooks, value, strict=False)
            ):
                try:
                    out.append(item_hook(element, item))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return tuple(out)

        return hook

    def _set_hook(
        self, tp: Any, item: Any, make: Callable[[list[Any]], Any]
    ) -> Hook:
        """A JSON array of distinct items (JSON equality), as a set."""
        desc = describe(tp)
        item_hook = self.hook_for(item)

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise _mismatch(desc, value)
            out: list[Any] = []
            problems: list[Problem] = []
            seen: dict[object, int] = {}
            for index, element in enumerate(value):
                first = seen.setdefault(json_key(element), index)
                if first != index:
                    message = (
                        f"duplicate of item {first} (items must be unique)"
                    )
                    problems.append(((index,), message))
                    continue
                try:
                    out.append(item_hook(element, item))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return make(out)

        return hook

    def _mapping_hook(self, tp: Any, item: Any) -> Hook:
        """A JSON object with string keys and *item* values, as a dict."""
        desc = describe(tp)
        item_hook = self.hook_for(item)

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, cabc.Mapping):
                raise _mismatch(desc, value)
            out: dict[str, Any] = {}
            problems: list[Problem] = []
            for key, element in value.items():
                if not isinstance(key, str):
                    problems.append(
                        ((str(key),), "expected a string key (JSON)")
                    )
                    continue
                try:
                    out[key] = item_hook(element, item)
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(key, exc))
            if problems:
                raise InvalidValueError(problems)
            return out

        return hook

    def _typeddict_hook(self, cls: Any) -> Hook:
        """Exactly the TypedDict's keys; the required ones present."""
        try:
            hints = typing_extensions.get_type_hints(cls, include_extras=True)
        except (NameError, AttributeError, TypeError, SyntaxError) as exc:
            raise unsupported(
                cls, f"its field annotations cannot be resolved ({exc})"
            ) from exc
        required_keys = getattr(cls, "__required_keys__", frozenset(hints))
        fields: list[tuple[str, Hook, Any, bool]] = []
        for key, hint in hints.items():
            marked = _required_marker(hint)
            needed = key in required_keys if marked is None else marked
            key_hook = self._field_hook(cls, key, hint)
            fields.append((key, key_hook, unwrap(hint), needed))
        names = frozenset(hints)
        allowed = _allowed(list(hints))

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, cabc.Mapping):
                raise _mismatch(_OBJECT_DESC, value)
            out: dict[str, Any] = {}
            problems: list[Problem] = []
            for key, field_hook, field_tp, needed in fields:
                if key in value:
                    try:
                        out[key] = field_hook(value[key], field_tp)
                    except Exception as exc:  # noqa: BLE001 - reported
                        problems.extend(_prefixed(key, exc))
                elif needed:
                    problems.append(_missing(key, field_tp))
            problems.extend(
                unexpected(
                    [key for key in value if key not in names],
                    f"unexpected property ({allowed})",
                )
            )
            if problems:
                raise InvalidValueError(problems)
            return out

        return hook

    def _field_hook(self, cls: type, name: str, hint: Any) -> Hook:
        """The hook of a class field; a SchemaError names the field."""
        try:
            return self.hook_for(hint)
        except SchemaError as exc:
            msg = f"{exc} (in field {cls.__qualname__}.{name})"
            raise SchemaError(msg) from exc

    def _class_hook(self, cls: type) -> Hook:
        """An attrs class or dataclass, through ``cattrs.gen``.

        The generated function (detailed validation, extra keys
        forbidden, keys are the ``__init__`` names) collects every
        problem into a :class:`cattrs.ClassValidationError`; this hook
        checks the value is an object first and turns that group into
        an :class:`InvalidValueError`.
        """
        keys, hints = _class_keys(cls)
        overrides = {
            name: override(
                struct_hook=self._field_hook(cls, name, hints[name])
            )
            for name in keys
        }
        options: dict[str, Any] = {
            "_cattrs_forbid_extra_keys": True,
            "_cattrs_detailed_validation": True,
            "_cattrs_use_alias": True,
            **overrides,
        }
        inner: Hook = make_dict_structure_fn(cls, self.converter, **options)
        allowed = _allowed(list(keys.values()))
        name = cls.__name__

        def hook(value: Any, _: Any) -> Any:
            if not isinstance(value, cabc.Mapping):
                raise _mismatch(_OBJECT_DESC, value)
            try:
                return inner(value, cls)
            except ClassValidationError as group:
                raise InvalidValueError(
                    _group_problems(group, value, keys, allowed, name)
                ) from None

        return hook

    # unstructuring

    def unstructure(self, value: Any) -> Any:
        """*value* as JSON data, by its runtime type.

        Raises:
            NotJSONError: *value*, or a value inside it, has no JSON form.
        """
        cls = type(value)
        if cls in _JSON_SCALARS:
            if cls is float:
                if value - value != 0:  # NaN, or inf - inf
                    raise _not_finite(value)
            elif cls is int and not -MAX_INT < value < MAX_INT:
                raise _too_long(value)
            return value
        try:
            hook = self._unstructure[cls]
        except KeyError:
            with self._lock:
                hook = self._unstructure_hook(cls)
                self._unstructure[cls] = hook
        return hook(value)

    def unstructure_factory(self, _: Any) -> Unhook:
        """The converter's unstructure hook for any type: runtime dispatch."""
        return self.unstructure

    def _unstructure_hook(self, cls: type) -> Unhook:  # noqa: C901
        """How to convert instances of exactly *cls*."""
        if _is_host_only(cls):
            return _host_only
        if issubclass(cls, enum.Enum):
            return lambda v: self.unstructure(v.value)
        if attrs.has(cls) or dataclasses.is_dataclass(cls):
            options: dict[str, Any] = {
                f.name: override(unstruct_hook=self._field_unhook(f.name))
                for f in _plain_fields(cls)
            }
            options["_cattrs_use_alias"] = True
            return make_dict_unstructure_fn(cls, self.converter, **options)
        if issubclass(cls, bool):
            return bool
        for base in (str, int, float):
            if issubclass(cls, base):
                return partial(self._unstructure_as, base)
        if issubclass(cls, cabc.Mapping):
            return self._unstructure_mapping
        if issubclass(cls, cabc.Set):
            return self._unstructure_set
        if issubclass(cls, (list, tuple, cabc.Sequence)) and not issubclass(
            cls, (bytes, bytearray, memoryview)
        ):
            return self._unstructure_items
        if issubclass(cls, (dt.date, dt.time)):
            return lambda v: v.isoformat()
        if issubclass(cls, (uuid.UUID, PurePath)):
            return str
        return _not_json

    def _unstructure_as(self, base: type, value: Any) -> Any:
        """A subclass of a JSON scalar, as its base type."""
        return self.unstructure(base(value))

    def _field_unhook(self, key: str) -> Unhook:
        """Unstructure a field's value, naming *key* in a failure."""

        def unhook(value: Any) -> Any:
            try:
                return self.unstructure(value)
            except NotJSONError as exc:
                exc.path.insert(0, key)
                raise

        return unhook

    def _unstructure_items(self, items: Any) -> list[Any]:
        """A list of the unstructured items."""
        out: list[Any] = []
        for index, item in enumerate(items):
            try:
                out.append(self.unstructure(item))
            except NotJSONError as exc:
                exc.path.insert(0, index)
                raise
        return out

    def _unstructure_set(self, items: Any) -> list[Any]:
        """A list of the unstructured items, sorted when they sort."""
        out = self._unstructure_items(items)
        try:
            out.sort()
        except TypeError:
            out.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return out

    def _key(self, key: object) -> str:
        """A mapping key as JSON text, as ``json.dumps`` writes it."""
        try:
            data = self.unstructure(key)
        except NotJSONError:
            data = _NOT_SCALAR
        if isinstance(data, str):
            return data
        if data is None or isinstance(data, bool):
            return show_value(data, None)
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

    def _unstructure_mapping(self, mapping: Any) -> dict[str, Any]:
        """A dict with string keys and unstructured values."""
        out: dict[str, Any] = {}
        for key, item in mapping.items():
            name = key if type(key) is str else self._key(key)
            try:
                out[name] = self.unstructure(item)
            except NotJSONError as exc:
                exc.path.insert(0, name)
                raise
        return out


def unsupported(tp: object, reason: str = "") -> SchemaError:
    """The SchemaError for a type the validator cannot structure."""
    because = f" ({reason})" if reason else ""
    return SchemaError(
        f"Cannot validate arguments of type {type_name(tp)}: it is not "
        f"supported{because}."
    )


def _required_marker(hint: Any) -> bool | None:
    """True/False for a ``Required``/``NotRequired`` marker, else None."""
    while True:
        origin = typing_extensions.get_origin(hint)
        if origin is None:
            return None
        if _is_in(origin, _REQUIRED):
            return True
        if _is_in(origin, _NOT_REQUIRED):
            return False
        if not (_is_in(origin, _QUALIFIERS) or _is_in(origin, _ANNOTATED)):
            return None
        hint = typing_extensions.get_args(hint)[0]


def unexpected(
    keys: list[Any], message: str, what: str = "properties"
) -> list[Problem]:
    """One problem per unexpected key, for the first few of them.

    The rest are counted in one more problem, so that a flood of unknown
    keys cannot make a flood of text (and leaves room in the message for
    the other problems).
    """
    shown = MAX_REPORTED_PROBLEMS // 2
    problems: list[Problem] = [((str(key),), message) for key in keys[:shown]]
    more = len(keys) - shown
    if more > 0:
        problems.append(
            ((), f"{more} more unexpected {what}: send only the {what} listed")
        )
    return problems


def _allowed(names: list[str]) -> str:
    """``allowed: a, b`` for an unexpected-key message."""
    if not names:
        return "no properties are allowed"
    return "allowed: " + ", ".join(names)


def _missing(key: str, tp: Any) -> Problem:
    """``missing required property (expected ...)``."""
    return (
        (key,),
        f"missing required property (expected {describe(tp).text})",
    )


def _plain_fields(cls: type) -> list[Any]:
    """The attrs (or dataclass) fields of *cls*."""
    if attrs.has(cls):
        return list(attrs.fields(cls))
    return list(dataclasses.fields(cls))


def _class_keys(cls: type) -> tuple[dict[str, str], dict[str, Any]]:
    """Field name -> ``__init__`` key of a class, and its type hints."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except (NameError, AttributeError, TypeError, SyntaxError) as exc:
        raise unsupported(
            cls, f"its field annotations cannot be resolved ({exc})"
        ) from exc
    if attrs.has(cls):
        attrs.resolve_types(cls)
        fields = [
            (f.name, f.alias or f.name.lstrip("_"), f.init)
            for f in attrs.fields(cls)
        ]
    else:
        if any(isinstance(h, dataclasses.InitVar) for h in hints.values()):
            raise unsupported(cls, "InitVar fields are not supported")
        fields = [(f.name, f.name, f.init) for f in _plain_fields(cls)]
    keys: dict[str, str] = {}
    for name, key, init in fields:
        if not init:
            continue
        if name not in hints:
            raise unsupported(cls, f"field {name!r} has no type annotation")
        keys[name] = key
    return keys, hints


def _group_problems(
    group: ClassValidationError,
    value: cabc.Mapping[Any, Any],
    keys: dict[str, str],
    allowed: str,
    name: str,
) -> list[Problem]:
    """Walk a ``ClassValidationError``: one problem per field failure."""
    problems: list[Problem] = []
    for exc in group.exceptions:
        if isinstance(exc, ForbiddenExtraKeysError):
            extra = exc.extra_fields
            problems.extend(
                unexpected(
                    [k for k in value if k in extra],
                    f"unexpected property ({allowed})",
                )
            )
            continue
        note = next(
            (
                n
                for n in getattr(exc, "__notes__", ())
                if isinstance(n, AttributeValidationNote)
            ),
            None,
        )
        if note is None:  # raised by __init__: a validator, __post_init__
            detail = message_of(exc, _MAX_DETAIL) or type(exc).__name__
            problems.append(((), f"invalid {name}: {detail}"))
        elif isinstance(exc, KeyError):
            problems.append(
                _missing(keys.get(note.name, note.name), note.type)
            )
        else:
            problems.extend(_prefixed(keys.get(note.name, note.name), exc))
    return problems


def _is_host_only(cls: type) -> bool:
    """Whether *cls* carries host-only data that must not reach a model."""
    from toolctx._context import CallRecorder, ExecutionContext
    from toolctx._records import ToolResult
    from toolctx._session import Session

    return issubclass(
        cls, (ExecutionContext, ToolResult, Session, CallRecorder)
    )


def _host_only(value: object) -> Any:
    """Raise: contexts, results and sessions never become tool output."""
    name = type(value).__qualname__
    msg = (
        f"A tool may not return {name} objects: they carry host-only "
        f"data (scope, published metadata, state, exceptions) that must not "
        f"reach the model. Return the fields you need, e.g. "
        f"{{'invocation_id': ctx.invocation_id}}."
    )
    raise NotJSONError(msg)


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
        f"time or UUID, or convert the value yourself."
    )
    raise NotJSONError(msg)


def configure(converter: cattrs.Converter) -> StrictHooks:
    """Make *converter* strict: its hooks become :class:`StrictHooks`'.

    A catch-all hook factory takes over dispatch for every type; the
    classes cattrs (and the JSON preconf) register by class (``int``,
    ``str``, ``datetime``...) get a redirect to the same hooks, since
    class registrations are consulted before factories.
    """
    hooks = StrictHooks(converter)
    converter.register_structure_hook_factory(lambda _: True, hooks.factory)
    for cls in (str, bytes, int, float, bool, dt.datetime, dt.date, Path):
        converter.register_structure_hook(cls, hooks.redirect)
    converter.register_unstructure_hook_factory(
        lambda _: True, hooks.unstructure_factory
    )
    for cls in (str, bytes, dt.datetime, dt.date, Path):
        converter.register_unstructure_hook(cls, hooks.unstructure)
    return hooks
