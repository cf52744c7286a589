"""Constraints enforced after the type check: bounds, counts, patterns.

:func:`constrained` wraps a node's type check with the tests of its
constraints (``node.constraints``, JSON Schema keywords), compiled once:
bounds and ``multipleOf`` on the built number (exact, as decimals),
lengths and ``pattern`` on the JSON value given (an ECMA-262 regular
expression, as JSON Schema says: :mod:`~toolctx._types.patterns`). A
constraint that cannot be enforced (a bound that is not a finite
number, a pattern that is not ECMA-262 or that ``re`` cannot run the
same way) is a :class:`~toolctx.exceptions.SchemaError` at compile
time.
"""

from __future__ import annotations

import decimal
import math

from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from toolctx._types.jsonvalues import ARRAY, OBJECT, json_kind
from toolctx._types.messages import (
    BOUNDS,
    COUNTS,
    bare_desc,
    clip,
    counted,
    show_bound,
    show_value,
)
from toolctx._types.nodes import Kind
from toolctx._types.patterns import PatternError, compile_pattern, pattern_text
from toolctx._types.problems import InvalidValueError


if TYPE_CHECKING:
    from collections.abc import Callable, Sized

    from toolctx._types.model import Analysis
    from toolctx._types.nodes import Node
    from toolctx._types.problems import Check, Problem
    from toolctx.exceptions import SchemaError


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
    bound = BOUNDS.get(keyword)
    if bound is not None:
        if not _finite_number(value):
            raise _bad_constraint(analysis, node, keyword, value)
        symbol, holds = bound
        noun = bare_desc(node).text if node.kind in _NUMBERS else "a number"
        expected = f"expected {noun} {symbol} {show_bound(value)}"
        style = bare_desc(node).style
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
        expected = f"expected a multiple of {show_bound(value)}"
        style = bare_desc(node).style

        def multiple_problem(given: Any, built: Any) -> str | None:
            if not _is_number(built) or _is_multiple(built, value):
                return None
            return f"{expected}, got {show_value(given, style)}"

        return multiple_problem
    count = COUNTS.get(keyword)
    if count is not None:
        if type(value) is not int or value < 0:
            raise _bad_constraint(analysis, node, keyword, value)
        side, noun, json_types = count
        at_least = side == "at least"
        expected = f"expected {side} {counted(value, noun)}"

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
            regex = compile_pattern(pattern_text(value))
        except PatternError as exc:
            raise _bad_constraint(
                analysis, node, keyword, value, exc
            ) from None
        expected = f"expected a string matching {clip(str(value))!r}"

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


def constrained(analysis: Analysis, node: Node, inner: Check) -> Check:
    """*inner*, then every constraint of *node* on what it accepted.

    A container whose items fail still has its own size checked, so
    that every problem is reported at once.
    """
    tests = [
        _constraint(analysis, node, keyword, value)
        for keyword, value in node.constraints
    ]

    def check(value: Any) -> Any:
        try:
            built = inner(value)
        except InvalidValueError as exc:
            if json_kind(value) not in {ARRAY, OBJECT}:
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
