"""Strict validators compiled from the type model's nodes: JSON in, values out.

:class:`Compiler` turns the :class:`~toolctx._types.model.Node` tree of a
type into one :data:`Check`: a function from a JSON value to the typed
value, which never coerces (``"1"`` is not ``1``, ``true`` is not ``1``)
beyond what JSON Schema itself does (``1.0`` is the integer ``1``, an
integer is a number). A failing check raises :class:`InvalidValueError`
carrying *every* problem as ``(path, message)`` pairs, the path relative
to the value it was given; containers prefix the paths of their items::

    [1]: expected an integer, got the string "2"
    name: missing required property (expected a string)
    size: expected an integer >= 0, got -3

Checks dispatch on ``node.kind`` only; the types they accept are exactly
those :mod:`toolctx._types.model` analyses. Constraints
(``node.constraints``, JSON Schema keywords) are enforced after the type
check. :func:`describe` says how a node reads in messages.
:func:`check_for` compiles (and caches) the check of one type expression.
"""

from __future__ import annotations

import base64
import collections.abc as cabc
import datetime as dt
import decimal
import json
import math
import operator
import re
import threading
import uuid

from typing import TYPE_CHECKING, Any, Final, cast

import attrs
import typing_extensions

from toolctx._text import exception_text, message_of
from toolctx._types.model import Analysis, Kind, Node
from toolctx._types.schema import DECIMAL_PATTERN
from toolctx.exceptions import MAX_REPORTED_PROBLEMS, SchemaError


if TYPE_CHECKING:
    from collections.abc import Callable, Sized

    from toolctx._types.model import ClassInfo

    Check = Callable[[Any], Any]
    """Validate one JSON value; return the typed value."""

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
"""Every JSON type name."""
_MAX_SHOWN: Final = 60
_MAX_BITS: Final = 128  # larger integers are not shown in messages
_MAX_DETAIL: Final = 500
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


# -- errors -----------------------------------------------------------------


class InvalidValueError(ValueError):
    """A value does not fit its type; ``errors`` lists every problem.

    Attributes:
        errors: ``(path, message)`` pairs, the path a tuple of property
            names and array indices relative to the checked value.
    """

    def __init__(self, errors: list[Problem]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        return "; ".join(
            f"{render_path(p)}: {m}" if p else m for p, m in self.errors
        )


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
    """The ``(path, message)`` problems an exception from a check means."""
    if isinstance(exc, InvalidValueError):
        return exc.errors
    if isinstance(exc, RecursionError):
        return [((), "the value is nested too deeply")]
    return [((), f"invalid value ({exception_text(exc, _MAX_DETAIL)})")]


def _prefixed(key: str | int, exc: BaseException) -> list[Problem]:
    """The problems of *exc*, their paths prefixed with *key*."""
    return [((key, *path), msg) for path, msg in problems_of(exc)]


def _fail(message: str) -> InvalidValueError:
    """One problem at the current value."""
    return InvalidValueError([((), message)])


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


# -- describing nodes and values ---------------------------------------------


@attrs.frozen
class Desc:
    """How a node reads in messages, and which JSON values it may accept.

    Attributes:
        kinds: The JSON types (``"string"``, ``"number"``...) whose
            values the node may accept.
        text: ``"an integer"``, ``"one of 'c', 'f'"``...
        style: How to show a string that was given: ``"json"`` (the
            node takes free-form strings), ``"repr"`` (it takes listed
            strings) or None (it takes no strings: ``the string "3"``).
        anything: Whether the node accepts every value (``Any``).
    """

    kinds: frozenset[str]
    text: str
    style: str | None = None
    anything: bool = False


_STRING_KINDS: Final = frozenset({_STRING})
_PLAIN_DESCS: Final[dict[Kind, Desc]] = {
    Kind.ANY: Desc(ALL_KINDS, "any JSON value", "json", anything=True),
    Kind.STRING: Desc(_STRING_KINDS, "a string", "json"),
    Kind.INTEGER: Desc(frozenset({_NUMBER}), "an integer"),
    Kind.NUMBER: Desc(frozenset({_NUMBER}), "a number"),
    Kind.BOOLEAN: Desc(frozenset({_BOOLEAN}), "a boolean"),
    Kind.NULL: Desc(frozenset({_NULL}), "null"),
    Kind.DECIMAL: Desc(
        frozenset({_NUMBER, _STRING}),
        "a decimal number (a number or a numeric string)",
        "json",
    ),
    Kind.ARRAY: Desc(frozenset({_ARRAY}), "an array"),
    Kind.SET: Desc(frozenset({_ARRAY}), "an array of unique items"),
}
_OBJECT_DESC: Final = Desc(frozenset({_OBJECT}), "an object")
_FORMAT_TEXTS: Final[dict[str | None, str]] = {
    "date-time": "a date-time string (ISO 8601)",
    "date": "a date string (YYYY-MM-DD)",
    "time": "a time string (ISO 8601, HH:MM:SS)",
    "uuid": "a UUID string",
    "duration": "a duration string (ISO 8601, e.g. PT30S or P1DT2H)",
    "path": "a path string",
    None: "a base64 string",
}


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


def describe(node: Node) -> Desc:
    """How *node* reads in messages, constraints included (never raises)."""
    desc = _bare_desc(node)
    if not node.constraints:
        return desc
    phrases = ", ".join(_phrase(k, v) for k, v in node.constraints)
    return attrs.evolve(desc, text=f"{desc.text} ({phrases})")


def _bare_desc(node: Node) -> Desc:
    """How *node* reads in messages, without its constraints."""
    kind = node.kind
    plain = _PLAIN_DESCS.get(kind)
    if plain is not None:
        return plain
    if kind is Kind.FORMATTED:
        text = _FORMAT_TEXTS.get(node.format, "a string")
        return Desc(_STRING_KINDS, text, "json")
    if kind is Kind.UNION:
        members = [describe(item) for item in node.items]
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
    if kind is Kind.LITERAL or kind is Kind.ENUM:
        return _options_desc(list(node.values))
    if kind is Kind.TUPLE:
        count = len(node.items)
        items = "item" if count == 1 else "items"
        return Desc(frozenset({_ARRAY}), f"an array of {count} {items}")
    return _OBJECT_DESC


_CANDIDATES: Final[dict[type, str]] = {
    str: _STRING,
    int: _NUMBER,
    float: _NUMBER,
    bool: _BOOLEAN,
    _NONE: _NULL,
    list: _ARRAY,
    dict: _OBJECT,
}
_UNCHANGED: Final[dict[Kind, type]] = {
    Kind.STRING: str,
    Kind.INTEGER: int,
    Kind.NUMBER: float,
    Kind.BOOLEAN: bool,
    Kind.NULL: _NONE,
}
"""The kinds whose check returns a value of this exact type as it is."""
_NO_TYPES: Final[frozenset[type]] = frozenset()


def unchanged_types(node: Node) -> frozenset[type]:
    """The Python types of JSON values *node*'s check returns as they are.

    A type qualifies when the first member of *node* (a union, or *node*
    alone) that takes values of that JSON type returns them unchanged:
    that very scalar type, or ``Any``, without constraints. ``float`` is
    not in ``int``'s set (``1.0`` becomes ``1``), nor ``int`` in
    ``float``'s (``1`` becomes ``1.0``). Callers may skip the check for
    values of these types.
    """
    if node.constraints:
        return _NO_TYPES
    members = node.items if node.kind is Kind.UNION else (node,)
    found: set[type] = set()
    for candidate, kind in _CANDIDATES.items():
        for member in members:
            desc = describe(member)
            if not member.constraints and (
                desc.anything or _UNCHANGED.get(member.kind) is candidate
            ):
                found.add(candidate)
                break
            if desc.anything or kind in desc.kinds:
                break
    return frozenset(found)


# -- constraints -------------------------------------------------------------

_BOUNDS: Final[dict[str, tuple[str, Callable[[Any, Any], bool]]]] = {
    "minimum": (">=", operator.ge),
    "exclusiveMinimum": (">", operator.gt),
    "maximum": ("<=", operator.le),
    "exclusiveMaximum": ("<", operator.lt),
}
_COUNTS: Final[dict[str, tuple[str, str, type | tuple[type, ...]]]] = {
    "minLength": ("at least", "character", str),
    "maxLength": ("at most", "character", str),
    "minItems": ("at least", "item", (list, tuple)),
    "maxItems": ("at most", "item", (list, tuple)),
    "minProperties": ("at least", "property", cabc.Mapping),
    "maxProperties": ("at most", "property", cabc.Mapping),
}


def _show_bound(value: object) -> str:
    """A constraint's number or count, as JSON writes it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _show_number(value)
    return str(value)


def _counted(count: object, noun: str) -> str:
    """``1 item``, ``2 items``, ``3 properties``."""
    if count == 1:
        return f"1 {noun}"
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{_show_bound(count)} {plural}"


def _phrase(keyword: str, value: object) -> str:
    """How one constraint reads in a description: ``>= 0``."""
    bound = _BOUNDS.get(keyword)
    if bound is not None:
        return f"{bound[0]} {_show_bound(value)}"
    count = _COUNTS.get(keyword)
    if count is not None:
        return f"{count[0]} {_counted(value, count[1])}"
    if keyword == "multipleOf":
        return f"a multiple of {_show_bound(value)}"
    if keyword == "pattern":
        return f"matching {_clip(str(value))!r}"
    return f"{keyword} {value!r}"


def _is_number(value: object) -> bool:
    """A JSON number or a Decimal (never a bool)."""
    return isinstance(value, (int, float, decimal.Decimal)) and not (
        isinstance(value, bool)
    )


_EXACT: Final = decimal.Context(
    prec=4300, traps=[decimal.InvalidOperation, decimal.DivisionByZero]
)
"""Decimal arithmetic for ``multipleOf``: quotients of up to 4300 digits."""


def _as_decimal(value: Any) -> decimal.Decimal:
    """A number as the decimal JSON writes (a float by its shortest text)."""
    if isinstance(value, float):
        return decimal.Decimal(repr(value))
    return decimal.Decimal(value)


def _is_multiple(value: Any, step: Any) -> bool:
    """Whether *value* is a multiple of *step*, as decimal numbers.

    Numbers are taken as JSON writes them, so ``0.3`` is a multiple of
    ``0.1`` (binary floats would say no); integers stay exact integers.
    A quotient of more than 4300 digits counts as not a multiple.
    """
    if type(value) is int and type(step) is int:
        return value % step == 0
    try:
        return bool(
            _EXACT.remainder(_as_decimal(value), _as_decimal(step)) == 0
        )
    except ArithmeticError:
        return False


def _finite_number(value: object) -> bool:
    """A number (not a bool) that is neither NaN nor infinite."""
    if not _is_number(value):
        return False
    if isinstance(value, decimal.Decimal):
        return value.is_finite()
    return math.isfinite(value)  # type: ignore[arg-type]


def _constraint(  # noqa: C901 - one branch per keyword family
    analysis: Analysis, node: Node, keyword: str, value: object
) -> Callable[[Any, Any], str | None]:
    """The test of one constraint: ``(given, built) -> problem or None``.

    Bounds and ``multipleOf`` look at the built value when it is a
    number (so a Decimal given as a string is bounded too); lengths and
    ``pattern`` at the JSON value given, when it has the keyword's JSON
    type (JSON Schema: a keyword ignores values of other types).
    """
    bound = _BOUNDS.get(keyword)
    if bound is not None:
        if not _finite_number(value):
            raise _bad_constraint(analysis, node, keyword, value)
        symbol, holds = bound
        noun = _bare_desc(node).text if node.kind in _NUMBERS else "a number"
        expected = f"expected {noun} {symbol} {_show_bound(value)}"
        style = _bare_desc(node).style
        exact = _as_decimal(value)
        decimal_bound = isinstance(value, decimal.Decimal)

        def bound_problem(given: Any, built: Any) -> str | None:
            if not _is_number(built):
                return None
            if decimal_bound or isinstance(built, decimal.Decimal):
                # a Decimal meets a float as the decimal JSON writes
                # (0.1 >= Decimal("0.1")), as in multipleOf
                if holds(_as_decimal(built), exact):
                    return None
            elif holds(built, value):
                return None
            return f"{expected}, got {show_value(given, style)}"

        return bound_problem
    if keyword == "multipleOf":
        if not _finite_number(value) or not value > 0:  # type: ignore[operator]
            raise _bad_constraint(analysis, node, keyword, value)
        expected = f"expected a multiple of {_show_bound(value)}"
        style = _bare_desc(node).style

        def multiple_problem(given: Any, built: Any) -> str | None:
            if not _is_number(built) or _is_multiple(built, value):
                return None
            return f"{expected}, got {show_value(given, style)}"

        return multiple_problem
    count = _COUNTS.get(keyword)
    if count is not None:
        if type(value) is not int or value < 0:
            raise _bad_constraint(analysis, node, keyword, value)
        side, noun, json_types = count
        at_least = side == "at least"
        expected = f"expected {side} {_counted(value, noun)}"

        def count_problem(given: Any, _: Any) -> str | None:
            if not isinstance(given, json_types):
                return None
            size = len(cast("Sized", given))
            if (size >= value) if at_least else (size <= value):
                return None
            return f"{expected}, got {size}"

        return count_problem
    if keyword == "pattern":
        try:
            regex = re.compile(str(value))
        except re.error as exc:
            raise _bad_constraint(
                analysis, node, keyword, value, exc
            ) from None
        expected = f"expected a string matching {_clip(str(value))!r}"

        def pattern_problem(given: Any, _: Any) -> str | None:
            if not isinstance(given, str) or regex.search(given):
                return None
            return f"{expected}, got {show_value(given, 'json')}"

        return pattern_problem
    raise _bad_constraint(analysis, node, keyword, value)


@attrs.frozen
class _Keyword:
    """A constraint keyword and its value, shown as ``maxLength=3``."""

    keyword: str
    value: object

    def __repr__(self) -> str:
        return f"{self.keyword}={self.value!r}"


def _bad_constraint(
    analysis: Analysis,
    node: Node,
    keyword: str,
    value: object,
    reason: object = None,
) -> SchemaError:
    """The SchemaError for a constraint the validator cannot enforce."""
    because = f" ({reason})" if reason is not None else ""
    return analysis.constraint_error(
        node.tp, _Keyword(keyword, value), f"cannot be enforced{because}"
    )


_NUMBERS: Final = frozenset({Kind.INTEGER, Kind.NUMBER, Kind.DECIMAL})


# -- scalar checks -----------------------------------------------------------


def _check_any(value: Any) -> Any:
    """``Any``/``object``: every value, as it is."""
    return value


def _check_str(value: Any) -> str:
    """A string, never a number."""
    if isinstance(value, str):
        return value if type(value) is str else str(value)
    raise _fail(f"expected a string, got {show_value(value, 'json')}")


def _check_int(value: Any) -> int:
    """An integer, or a float with no fractional part; never a bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if type(value) is int else int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _fail(f"expected an integer, got {show_value(value, None)}")


def _check_float(value: Any) -> float:
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


def _check_bool(value: Any) -> bool:
    """``true`` or ``false``, never ``0``/``1``."""
    if value is True or value is False:
        return bool(value)
    raise _fail(f"expected a boolean, got {show_value(value, None)}")


def _check_none(value: Any) -> None:
    """``null`` only."""
    if value is not None:
        raise _fail(f"expected null, got {show_value(value, None)}")


_DECIMAL_RE: Final = re.compile(DECIMAL_PATTERN, re.ASCII)


def _check_decimal(value: Any) -> decimal.Decimal:
    """A JSON number, or a string holding a decimal number; never a bool.

    A float goes through its shortest text (``0.1`` stays ``0.1``); NaN
    and infinities, as numbers or strings, are refused.
    """
    if isinstance(value, str):
        if _DECIMAL_RE.fullmatch(value):
            return decimal.Decimal(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        return decimal.Decimal(int(value))
    elif isinstance(value, float) and math.isfinite(value):
        return decimal.Decimal(repr(float(value)))
    desc = _PLAIN_DESCS[Kind.DECIMAL]
    raise _fail(f"expected {desc.text}, got {show_value(value, desc.style)}")


_SCALAR_CHECKS: Final[dict[Kind, Check]] = {
    Kind.ANY: _check_any,
    Kind.STRING: _check_str,
    Kind.INTEGER: _check_int,
    Kind.NUMBER: _check_float,
    Kind.BOOLEAN: _check_bool,
    Kind.NULL: _check_none,
    Kind.DECIMAL: _check_decimal,
}


# -- string formats ----------------------------------------------------------

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
_DURATION_RE: Final = re.compile(
    r"(?P<sign>-)?P(?!$)"
    r"(?:(?P<w>[0-9]+)W)?(?:(?P<d>[0-9]+)D)?"
    r"(?:T(?=[0-9])(?:(?P<h>[0-9]+)H)?(?:(?P<m>[0-9]+)M)?"
    r"(?:(?P<s>[0-9]+)(?:\.(?P<f>[0-9]+))?S)?)?"
)


def _micros(fraction: str | None) -> int:
    """The microseconds of a decimal fraction of a second (truncated)."""
    return int((fraction or "")[:6].ljust(6, "0"))


def _clock(
    match: re.Match[str],
) -> tuple[int, int, int, int, dt.tzinfo | None]:
    """Hour, minute, second, microsecond and zone of a matched clock."""
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
        _micros(match["f"]),
        tz,
    )


def _parse_datetime(_: type, text: str) -> dt.datetime:
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


def _parse_date(_: type, text: str) -> dt.date:
    """``YYYY-MM-DD``."""
    match = _DATE_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    return dt.date(int(match["y"]), int(match["m"]), int(match["d"]))


def _parse_time(_: type, text: str) -> dt.time:
    """``HH:MM[:SS[.f]][Z|±HH:MM]``."""
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    hour, minute, second, micro, tz = _clock(match)
    return dt.time(hour, minute, second, micro, tzinfo=tz)


def _parse_uuid(_: type, text: str) -> uuid.UUID:
    """The canonical hyphenated form, any case."""
    if _UUID_RE.fullmatch(text) is None:
        raise ValueError(text)
    return uuid.UUID(text)


def _parse_duration(_: type, text: str) -> dt.timedelta:
    """ISO 8601 ``[-]PnWnDTnHnMn[.f]S`` (no years or months: not exact)."""
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    try:
        value = dt.timedelta(
            weeks=int(match["w"] or 0),
            days=int(match["d"] or 0),
            hours=int(match["h"] or 0),
            minutes=int(match["m"] or 0),
            seconds=int(match["s"] or 0),
            microseconds=_micros(match["f"]),
        )
    except OverflowError:
        raise ValueError(text) from None
    return -value if match["sign"] else value


def _parse_path(tp: type, text: str) -> object:
    """A ``pathlib`` path of the declared class."""
    return tp(text)


def _parse_base64(_: type, text: str) -> bytes:
    """Strict base64 (padding required, no whitespace)."""
    return base64.b64decode(text, validate=True)


_PARSERS: Final[dict[str | None, Callable[[Any, str], Any]]] = {
    "date-time": _parse_datetime,
    "date": _parse_date,
    "time": _parse_time,
    "uuid": _parse_uuid,
    "duration": _parse_duration,
    "path": _parse_path,
    None: _parse_base64,
}


# -- the compiler ------------------------------------------------------------


def _mismatch(desc: Desc, value: object) -> InvalidValueError:
    """``expected <desc>, got <value>``."""
    return _fail(f"expected {desc.text}, got {show_value(value, desc.style)}")


def _option_key(value: object) -> tuple[str | None, object]:
    """A key under which JSON-equal scalars meet: ``1 == 1.0 != True``."""
    return (json_kind(value), value)


def json_key(value: object) -> object:
    """A hashable key equal for JSON-equal values (``1``, ``1.0``)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value  # the common items, without the Mapping check
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


_NOT_FOUND: Final = object()


def _allowed(names: list[str]) -> str:
    """``allowed: a, b`` for an unexpected-key message."""
    if not names:
        return "no properties are allowed"
    return "allowed: " + ", ".join(names)


def _loose_array(desc: Desc, make: Callable[[list[Any]], Any]) -> Check:
    """A JSON array of anything, as a list or tuple."""

    def check(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return make(list(value))
        raise _mismatch(desc, value)

    return check


class Compiler:
    """Compiles the nodes of one analysis into checks.

    Each class (TypedDict, attrs class, dataclass) is compiled once; a
    class met again while its own check is being built (a recursive
    class) gets a forwarder to the finished check.

    Args:
        analysis: The analysis that made the nodes: it holds the fields
            of their classes, and names the owner in a SchemaError.
    """

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._classes: dict[type, Check] = {}

    def check(self, node: Node) -> Check:
        """The check of *node*, its constraints included.

        Raises:
            SchemaError: A constraint (or a format) cannot be enforced.
        """
        check = self._bare(node)
        if node.constraints:
            return self._constrained(node, check)
        return check

    def _bare(self, node: Node) -> Check:  # noqa: C901 - one per kind
        """The type check of *node*, without its constraints."""
        kind = node.kind
        scalar = _SCALAR_CHECKS.get(kind)
        if scalar is not None:
            return scalar
        if kind is Kind.FORMATTED:
            return self._formatted(node)
        if kind is Kind.MODEL:
            from toolctx._types.pydantic import compile_validator

            return compile_validator(node.tp)
        if kind is Kind.UNION:
            return self._union(node)
        if kind is Kind.LITERAL:
            return self._literal(node)
        if kind is Kind.ENUM:
            return self._enum(node)
        if kind is Kind.ARRAY:
            return self._array(node)
        if kind is Kind.TUPLE:
            return self._tuple(node)
        if kind is Kind.SET:
            return self._set(node)
        if kind is Kind.MAPPING:
            return self._mapping(node)
        if kind is Kind.TYPEDDICT or kind is Kind.CLASS:
            return self._class(node)
        raise self.analysis.error(node.tp)

    def _constrained(self, node: Node, inner: Check) -> Check:
        """*inner*, then every constraint of *node* on what it accepted.

        A container whose items fail still has its own size checked, so
        that every problem is reported at once.
        """
        tests = [
            _constraint(self.analysis, node, keyword, value)
            for keyword, value in node.constraints
        ]

        def check(value: Any) -> Any:
            try:
                built = inner(value)
            except InvalidValueError as exc:
                if json_kind(value) not in {_ARRAY, _OBJECT}:
                    raise
                found = [t(value, None) for t in tests]
                if not any(found):
                    raise
                problems: list[Problem] = [((), m) for m in found if m]
                raise InvalidValueError(problems + exc.errors) from None
            found = [t(value, built) for t in tests]
            if any(found):
                raise InvalidValueError([((), m) for m in found if m])
            return built

        return check

    def _formatted(self, node: Node) -> Check:
        """A string parsed strictly by its format."""
        parse = _PARSERS.get(node.format)
        if parse is None or (node.format is None and node.tp is not bytes):
            raise self.analysis.error(node.tp, "unknown string format")
        tp = node.tp
        desc = describe(attrs.evolve(node, constraints=()))

        def check(value: Any) -> Any:
            if isinstance(value, str):
                try:
                    return parse(tp, value)
                except ValueError:
                    pass
            raise _mismatch(desc, value)

        return check

    def _union(self, node: Node) -> Check:
        """Try the members in written order; the first that accepts wins."""
        desc = describe(attrs.evolve(node, constraints=()))
        members = [(self.check(item), describe(item)) for item in node.items]

        def check(value: Any) -> Any:
            kind = json_kind(value)
            tried: list[list[Problem]] = []
            for member, member_desc in members:
                if member_desc.anything or kind in member_desc.kinds:
                    try:
                        return member(value)
                    except Exception as exc:  # noqa: BLE001 - reported
                        tried.append(problems_of(exc))
            if kind in {_ARRAY, _OBJECT} and tried:
                # The value has the right shape for some member: its
                # detailed problems help more than a list of types.
                raise InvalidValueError(min(tried, key=len))
            raise _mismatch(desc, value)

        return check

    @staticmethod
    def _options(options: dict[object, object], desc: Desc) -> Check:
        """A check mapping JSON-equal scalars to *options*' values."""

        def check(value: Any) -> Any:
            if json_kind(value) in desc.kinds:
                found = options.get(_option_key(value), _NOT_FOUND)
                if found is not _NOT_FOUND:
                    return found
            raise _mismatch(desc, value)

        return check

    def _literal(self, node: Node) -> Check:
        """Equal to a listed value, JSON-wise (``1.0`` is ``1``, not true)."""
        options: dict[object, object] = {}
        for value in node.values:
            options.setdefault(_option_key(value), value)
        return self._options(options, _options_desc(list(node.values)))

    def _enum(self, node: Node) -> Check:
        """A member, by its value (same equality as ``Literal``)."""
        options: dict[object, object] = {}
        for member, value in zip(node.tp, node.values, strict=True):
            options.setdefault(_option_key(value), member)
        return self._options(options, _options_desc(list(node.values)))

    def _item(self, node: Node) -> Check | None:
        """The check of a container's item; None when any item will do."""
        if node.bare:
            return None
        item = node.items[0]
        if item.kind is Kind.ANY and not item.constraints:
            return None
        return self.check(item)

    def _array(self, node: Node) -> Check:
        """A JSON array of the item, as a list or tuple."""
        desc = describe(attrs.evolve(node, constraints=()))
        make: Callable[[list[Any]], Any] = (
            tuple if node.container is tuple else list
        )
        item_check = self._item(node)
        if item_check is None:
            return _loose_array(desc, make)
        same = unchanged_types(node.items[0])

        def check(value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise _mismatch(desc, value)
            for element in value:
                if type(element) not in same:
                    break
            else:  # every item is already what its check would return
                return make(list(value))
            out: list[Any] = []
            problems: list[Problem] = []
            for index, element in enumerate(value):
                try:
                    out.append(item_check(element))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return make(out)

        return check

    def _tuple(self, node: Node) -> Check:
        """A JSON array of exactly ``len(items)`` items, typed in order."""
        desc = describe(attrs.evolve(node, constraints=()))
        checks = [self.check(item) for item in node.items]
        count = len(checks)
        noun = "item" if count == 1 else "items"

        def check(value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                raise _mismatch(desc, value)
            problems: list[Problem] = []
            if len(value) != count:
                got = f"{len(value)} item{'' if len(value) == 1 else 's'}"
                expected = f"an array of exactly {count} {noun}"
                problems.append(((), f"expected {expected}, got {got}"))
            out: list[Any] = []
            for index, (item_check, element) in enumerate(
                zip(checks, value, strict=False)
            ):
                try:
                    out.append(item_check(element))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return tuple(out)

        return check

    def _set(self, node: Node) -> Check:
        """A JSON array of distinct items (JSON equality), as a set."""
        desc = describe(attrs.evolve(node, constraints=()))
        make: Callable[[list[Any]], Any] = (
            set if node.container is set else frozenset
        )
        item_check = self._item(node) or _check_any

        def check(value: Any) -> Any:
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
                    out.append(item_check(element))
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(index, exc))
            if problems:
                raise InvalidValueError(problems)
            return make(out)

        return check

    def _mapping(self, node: Node) -> Check:
        """A JSON object with string keys and checked values, as a dict."""
        desc = describe(attrs.evolve(node, constraints=()))
        item_check = self._item(node) or _check_any

        def check(value: Any) -> Any:
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
                    out[key] = item_check(element)
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(key, exc))
            if problems:
                raise InvalidValueError(problems)
            return out

        return check

    def _class(self, node: Node) -> Check:
        """The check of a TypedDict or class, built once per class."""
        cls = node.tp
        found = self._classes.get(cls)
        if found is not None:
            return found
        box: list[Check] = []

        def forward(value: Any) -> Any:
            return box[0](value)

        self._classes[cls] = forward
        info = self.analysis.info(cls)
        try:
            check = (
                self._typeddict(info)
                if node.kind is Kind.TYPEDDICT
                else self._instance(info)
            )
        except BaseException:
            del self._classes[cls]
            raise
        box.append(check)
        self._classes[cls] = check
        return check

    def _fields(
        self, info: ClassInfo
    ) -> Callable[[Any], tuple[dict[str, Any], list[Problem]]]:
        """Check an object's keys against *info*'s fields.

        The returned function gives the checked values by JSON key and
        every problem: wrong values, missing required keys, and keys
        beyond the fields (checked against ``info.extra`` when the class
        takes extra items, unexpected otherwise).
        """
        fields = [
            (
                f.key,
                self.check(f.node),
                f.required,
                (
                    "missing required property (expected "
                    f"{describe(f.node).text})"
                ),
            )
            for f in info.fields
        ]
        keys = frozenset(f.key for f in info.fields)
        extra = None if info.extra is None else self.check(info.extra)
        refusal = f"unexpected property ({_allowed([f[0] for f in fields])})"

        def check_fields(
            value: Any,
        ) -> tuple[dict[str, Any], list[Problem]]:
            out: dict[str, Any] = {}
            problems: list[Problem] = []
            found = 0
            for key, field_check, needed, missing in fields:
                if key in value:
                    found += 1
                    try:
                        out[key] = field_check(value[key])
                    except Exception as exc:  # noqa: BLE001 - reported
                        problems.extend(_prefixed(key, exc))
                elif needed:
                    problems.append(((key,), missing))
            if found == len(value):
                return out, problems
            others = [key for key in value if key not in keys]
            if extra is None:
                problems.extend(unexpected(others, refusal))
                return out, problems
            for key in others:
                try:
                    out[key] = extra(value[key])
                except Exception as exc:  # noqa: BLE001 - reported
                    problems.extend(_prefixed(str(key), exc))
            return out, problems

        return check_fields

    def _typeddict(self, info: ClassInfo) -> Check:
        """An object with the TypedDict's keys, as a dict."""
        check_fields = self._fields(info)

        def check(value: Any) -> Any:
            if not isinstance(value, cabc.Mapping):
                raise _mismatch(_OBJECT_DESC, value)
            out, problems = check_fields(value)
            if problems:
                raise InvalidValueError(problems)
            return out

        return check

    def _instance(self, info: ClassInfo) -> Check:
        """An object of an attrs class's or dataclass's ``__init__`` keys.

        The instance is built with ``cls(**values)``: the JSON keys are the
        ``__init__`` parameter names (an attrs alias is both). Anything
        ``__init__`` raises (a validator, ``__post_init__``) is one problem
        for the object: ``invalid Range: high must be >= low``.
        """
        check_fields = self._fields(info)
        cls = info.cls
        name = cls.__name__

        def check(value: Any) -> Any:
            if not isinstance(value, cabc.Mapping):
                raise _mismatch(_OBJECT_DESC, value)
            out, problems = check_fields(value)
            if problems:
                raise InvalidValueError(problems)
            try:
                return cls(**out)
            except Exception as exc:  # noqa: BLE001 - reported
                detail = message_of(exc, _MAX_DETAIL) or type(exc).__name__
                raise _fail(f"invalid {name}: {detail}") from None

        return check


# -- checks by type ----------------------------------------------------------


def _cache_key(tp: Any) -> object:
    """A cache key for *tp* that keeps what ``==`` on types ignores.

    ``int | float == float | int`` and ``Literal[1] == Literal[True]``
    hold for typing, yet their checks differ.
    """
    args = typing_extensions.get_args(tp)
    if not args:
        return (type(tp), tp)
    origin = typing_extensions.get_origin(tp)
    return (type(tp), origin, tuple(map(_cache_key, args)))


_BY_TYPE: dict[object, Check] = {}
_BY_TYPE_LOCK: Final = threading.Lock()


def check_for(tp: Any, *, owner: str = "a typed value") -> Check:
    """The check of the type expression *tp*, compiled once per type.

    For values checked at run time by type (``ContextKey`` values read
    back); tools compile their own checks with a :class:`Compiler`.

    Raises:
        SchemaError: *tp* (or a type inside it) is not supported.
    """
    try:
        key = _cache_key(tp)
        found = _BY_TYPE.get(key)
    except TypeError:  # unhashable Annotated metadata inside
        analysis = Analysis(owner)
        return Compiler(analysis).check(analysis.node(tp))
    if found is not None:
        return found
    analysis = Analysis(owner)
    check = Compiler(analysis).check(analysis.node(tp))
    with _BY_TYPE_LOCK:
        return _BY_TYPE.setdefault(key, check)
