"""Checks of JSON scalars, and which values a node's check leaves unchanged.

Strings, integers, numbers, booleans, null, decimals and ``Any``, never
coerced (``"1"`` is not ``1``, ``true`` is not ``1``) beyond what JSON
Schema itself does (``1.0`` is the integer ``1``, an integer is a
number). :func:`unchanged_types` tells callers which values they may
pass on without calling the check at all.
"""

from __future__ import annotations

import decimal
import math
import re

from typing import TYPE_CHECKING, Any, Final

from toolctx._types.jsonvalues import (
    ARRAY,
    BOOLEAN,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
)
from toolctx._types.messages import PLAIN_DESCS, describe, show_value
from toolctx._types.nodes import Kind
from toolctx._types.problems import fail
from toolctx._types.schema import DECIMAL_PATTERN


if TYPE_CHECKING:
    from toolctx._types.nodes import Node
    from toolctx._types.problems import Check


_NONE: Final = type(None)


def check_any(value: Any) -> Any:
    """``Any``/``object``: every value, as it is."""
    return value


def _check_str(value: Any) -> str:
    """A string, never a number."""
    if isinstance(value, str):
        return value if type(value) is str else str(value)
    raise fail(f"expected a string, got {show_value(value, 'json')}")


def _check_int(value: Any) -> int:
    """An integer, or a float with no fractional part; never a bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if type(value) is int else int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise fail(f"expected an integer, got {show_value(value, None)}")


def _check_float(value: Any) -> float:
    """A number (an integer becomes a float); never a bool."""
    if type(value) is float:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise fail(
                f"expected a number, got {show_value(value, None)} "
                f"(too large for a float)"
            ) from None
    raise fail(f"expected a number, got {show_value(value, None)}")


def _check_bool(value: Any) -> bool:
    """``true`` or ``false``, never ``0``/``1``."""
    if value is True or value is False:
        return bool(value)
    raise fail(f"expected a boolean, got {show_value(value, None)}")


def _check_none(value: Any) -> None:
    """``null`` only."""
    if value is not None:
        raise fail(f"expected null, got {show_value(value, None)}")


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
    desc = PLAIN_DESCS[Kind.DECIMAL]
    raise fail(f"expected {desc.text}, got {show_value(value, desc.style)}")


SCALAR_CHECKS: Final[dict[Kind, Check]] = {
    Kind.ANY: check_any,
    Kind.STRING: _check_str,
    Kind.INTEGER: _check_int,
    Kind.NUMBER: _check_float,
    Kind.BOOLEAN: _check_bool,
    Kind.NULL: _check_none,
    Kind.DECIMAL: _check_decimal,
}
"""The check of each scalar kind (and ``Any``)."""


_CANDIDATES: Final[dict[type, str]] = {
    str: STRING,
    int: NUMBER,
    float: NUMBER,
    bool: BOOLEAN,
    _NONE: NULL,
    list: ARRAY,
    dict: OBJECT,
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
