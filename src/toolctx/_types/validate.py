"""Strict validators compiled from the type model's nodes: JSON in, values out.

:class:`Compiler` turns the :class:`~toolctx._types.nodes.Node` tree of a
type into one :data:`~toolctx._types.problems.Check`: a function from a
JSON value to the typed value, which never coerces (``"1"`` is not
``1``, ``true`` is not ``1``) beyond what JSON Schema itself does
(``1.0`` is the integer ``1``, an integer is a number). A failing check
raises :class:`~toolctx._types.problems.InvalidValueError` carrying
*every* problem as ``(path, message)`` pairs (:mod:`toolctx._types.problems`).

Checks dispatch on ``node.kind`` only; the types they accept are exactly
those :mod:`toolctx._types.model` analyses. The compiler recurses, keeps
one check per class and builds unions, ``Literal`` and enum checks
itself; the checks of each kind come from :mod:`~toolctx._types.scalars`,
:mod:`~toolctx._types.formats`, :mod:`~toolctx._types.containers` and
:mod:`~toolctx._types.objects`; constraints (``node.constraints``, JSON
Schema keywords) are enforced after the type check
(:mod:`~toolctx._types.constraints`); messages read as
:mod:`~toolctx._types.messages` words them. :func:`check_for` compiles
(and caches) the check of one type expression.
"""

from __future__ import annotations

import threading

from typing import TYPE_CHECKING, Any, Final

import attrs
import typing_extensions

from toolctx._types.constraints import constrained
from toolctx._types.containers import (
    array_check,
    mapping_check,
    set_check,
    tuple_check,
)
from toolctx._types.formats import PARSERS
from toolctx._types.jsonvalues import ARRAY, OBJECT, json_kind, option_key
from toolctx._types.messages import describe, mismatch, options_desc
from toolctx._types.model import Analysis
from toolctx._types.nodes import Kind
from toolctx._types.objects import instance_check, typeddict_check
from toolctx._types.problems import InvalidValueError, problems_of
from toolctx._types.scalars import SCALAR_CHECKS


if TYPE_CHECKING:
    from toolctx._types.messages import Desc
    from toolctx._types.nodes import Node
    from toolctx._types.problems import Check, Problem


_NOT_FOUND: Final = object()


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
            return constrained(self.analysis, node, check)
        return check

    def _bare(self, node: Node) -> Check:  # noqa: C901 - one per kind
        """The type check of *node*, without its constraints."""
        kind = node.kind
        scalar = SCALAR_CHECKS.get(kind)
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
            return array_check(node, self._item(node))
        if kind is Kind.TUPLE:
            return tuple_check(node, [self.check(i) for i in node.items])
        if kind is Kind.SET:
            return set_check(node, self._item(node))
        if kind is Kind.MAPPING:
            return mapping_check(node, self._item(node))
        if kind is Kind.TYPEDDICT or kind is Kind.CLASS:
            return self._class(node)
        raise self.analysis.error(node.tp)

    def _formatted(self, node: Node) -> Check:
        """A string parsed strictly by its format."""
        parse = PARSERS.get(node.format)
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
            raise mismatch(desc, value)

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
            if kind in {ARRAY, OBJECT} and tried:
                # The value has the right shape for some member: its
                # detailed problems help more than a list of types.
                raise InvalidValueError(min(tried, key=len))
            raise mismatch(desc, value)

        return check

    @staticmethod
    def _options(options: dict[object, object], desc: Desc) -> Check:
        """A check mapping JSON-equal scalars to *options*' values."""

        def check(value: Any) -> Any:
            if json_kind(value) in desc.kinds:
                found = options.get(option_key(value), _NOT_FOUND)
                if found is not _NOT_FOUND:
                    return found
            raise mismatch(desc, value)

        return check

    def _literal(self, node: Node) -> Check:
        """Equal to a listed value, JSON-wise (``1.0`` is ``1``, not true)."""
        options: dict[object, object] = {}
        for value in node.values:
            options.setdefault(option_key(value), value)
        return self._options(options, options_desc(list(node.values)))

    def _enum(self, node: Node) -> Check:
        """A member, by its value (same equality as ``Literal``)."""
        options: dict[object, object] = {}
        for member, value in zip(node.tp, node.values, strict=True):
            options.setdefault(option_key(value), member)
        return self._options(options, options_desc(list(node.values)))

    def _item(self, node: Node) -> Check | None:
        """The check of a container's item; None when any item will do."""
        if node.bare:
            return None
        item = node.items[0]
        if item.kind is Kind.ANY and not item.constraints:
            return None
        return self.check(item)

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
                typeddict_check(info, self.check)
                if node.kind is Kind.TYPEDDICT
                else instance_check(info, self.check)
            )
        except BaseException:
            del self._classes[cls]
            raise
        box.append(check)
        self._classes[cls] = check
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
