"""How nodes and values read in messages: ``expected <node>, got <value>``.

:func:`describe` says how a node reads (``an integer (>= 0)``, ``one of
'c', 'f'``) and which JSON types it may accept (:class:`Desc`);
:func:`show_value` shows a given value in JSON words (``the string
"3"``, ``an array``), shortened; :func:`phrase` says how one constraint
reads. Never raises: a message is built for any node.
"""

from __future__ import annotations

import collections.abc as cabc
import json
import math
import operator

from typing import TYPE_CHECKING, Any, Final

import attrs

from toolctx._types.jsonvalues import (
    ALL_KINDS,
    ARRAY,
    BOOLEAN,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
    json_kind,
)
from toolctx._types.nodes import Kind
from toolctx._types.problems import fail


if TYPE_CHECKING:
    from collections.abc import Callable

    from toolctx._types.nodes import Node
    from toolctx._types.problems import InvalidValueError


_MAX_SHOWN: Final = 60
_MAX_BITS: Final = 128  # larger integers are not shown in messages


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


_STRING_KINDS: Final = frozenset({STRING})
PLAIN_DESCS: Final[dict[Kind, Desc]] = {
    Kind.ANY: Desc(ALL_KINDS, "any JSON value", "json", anything=True),
    Kind.STRING: Desc(_STRING_KINDS, "a string", "json"),
    Kind.INTEGER: Desc(frozenset({NUMBER}), "an integer"),
    Kind.NUMBER: Desc(frozenset({NUMBER}), "a number"),
    Kind.BOOLEAN: Desc(frozenset({BOOLEAN}), "a boolean"),
    Kind.NULL: Desc(frozenset({NULL}), "null"),
    Kind.DECIMAL: Desc(
        frozenset({NUMBER, STRING}),
        "a decimal number (a number or a numeric string)",
        "json",
    ),
    Kind.ARRAY: Desc(frozenset({ARRAY}), "an array"),
    Kind.SET: Desc(frozenset({ARRAY}), "an array of unique items"),
}
"""How the kinds that read the same for every node read."""
OBJECT_DESC: Final = Desc(frozenset({OBJECT}), "an object")
"""How objects (TypedDicts, classes, models) read."""
_FORMAT_TEXTS: Final[dict[str | None, str]] = {
    "date-time": "a date-time string (ISO 8601)",
    "date": "a date string (YYYY-MM-DD)",
    "time": "a time string (ISO 8601, HH:MM:SS)",
    "uuid": "a UUID string",
    "duration": "a duration string (ISO 8601, e.g. PT30S or P1DT2H)",
    "path": "a path string",
    None: "a base64 string",
}


def clip(text: str) -> str:
    """*text*, shortened to about ``_MAX_SHOWN`` characters."""
    if len(text) <= _MAX_SHOWN:
        return text
    return text[: _MAX_SHOWN - 3] + "..."


def show_number(value: float) -> str:
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
        text = clip(str(value))
        if style == "repr":
            return repr(text)
        quoted = json.dumps(text, ensure_ascii=False)
        return quoted if style == "json" else f"the string {quoted}"
    if isinstance(value, (int, float)):
        return show_number(value)
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, cabc.Mapping):
        return "an object"
    return f"a Python {type(value).__qualname__} object"


def show_option(value: object) -> str:
    """Show an allowed ``Literal``/enum value: ``'c'``, ``1``, ``true``."""
    if isinstance(value, str):
        return repr(clip(value))
    return show_value(value, None)


def _join(texts: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(texts) <= 1:
        return "".join(texts)
    return ", ".join(texts[:-1]) + " or " + texts[-1]


def options_desc(values: list[object]) -> Desc:
    """The description of a ``Literal`` or enum with these JSON values."""
    kinds = frozenset(k for k in map(json_kind, values) if k is not None)
    shown = ", ".join(map(show_option, values))
    text = f"one of {shown}" if len(values) > 1 else shown
    return Desc(kinds, text, "repr" if STRING in kinds else None)


def describe(node: Node) -> Desc:
    """How *node* reads in messages, constraints included (never raises)."""
    desc = bare_desc(node)
    if not node.constraints:
        return desc
    phrases = ", ".join(phrase(k, v) for k, v in node.constraints)
    return attrs.evolve(desc, text=f"{desc.text} ({phrases})")


def bare_desc(node: Node) -> Desc:
    """How *node* reads in messages, without its constraints."""
    kind = node.kind
    plain = PLAIN_DESCS.get(kind)
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
        return options_desc(list(node.values))
    if kind is Kind.TUPLE:
        count = len(node.items)
        items = "item" if count == 1 else "items"
        return Desc(frozenset({ARRAY}), f"an array of {count} {items}")
    return OBJECT_DESC


BOUNDS: Final[dict[str, tuple[str, Callable[[Any, Any], bool]]]] = {
    "minimum": (">=", operator.ge),
    "exclusiveMinimum": (">", operator.gt),
    "maximum": ("<=", operator.le),
    "exclusiveMaximum": ("<", operator.lt),
}
"""Bound keywords: ``(symbol, holds(value, bound))``."""
COUNTS: Final[dict[str, tuple[str, str, type | tuple[type, ...]]]] = {
    "minLength": ("at least", "character", str),
    "maxLength": ("at most", "character", str),
    "minItems": ("at least", "item", (list, tuple)),
    "maxItems": ("at most", "item", (list, tuple)),
    "minProperties": ("at least", "property", cabc.Mapping),
    "maxProperties": ("at most", "property", cabc.Mapping),
}
"""Count keywords: ``(side, noun, the JSON values they count)``."""


def show_bound(value: object) -> str:
    """A constraint's number or count, as JSON writes it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return show_number(value)
    return str(value)


def counted(count: object, noun: str) -> str:
    """``1 item``, ``2 items``, ``3 properties``."""
    if count == 1:
        return f"1 {noun}"
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{show_bound(count)} {plural}"


def phrase(keyword: str, value: object) -> str:
    """How one constraint reads in a description: ``>= 0``."""
    bound = BOUNDS.get(keyword)
    if bound is not None:
        return f"{bound[0]} {show_bound(value)}"
    count = COUNTS.get(keyword)
    if count is not None:
        return f"{count[0]} {counted(value, count[1])}"
    if keyword == "multipleOf":
        return f"a multiple of {show_bound(value)}"
    if keyword == "pattern":
        return f"matching {clip(str(value))!r}"
    return f"{keyword} {value!r}"


def mismatch(desc: Desc, value: object) -> InvalidValueError:
    """``expected <desc>, got <value>``."""
    return fail(f"expected {desc.text}, got {show_value(value, desc.style)}")
