"""Whether a Python value is of a type: the check behind ``ContextKey``.

The type is analysed by the one type model
(:class:`~toolctx._types.model.Analysis` with ``python=True``: Python
values, not JSON) and compiled once per type into a predicate. ``int``
refuses ``bool``; ``float`` takes ``int`` (as type checkers do);
``Literal`` values compare by type and value; containers check their
items; any other class is an ``isinstance`` check.
"""

from __future__ import annotations

import threading

from collections.abc import Callable
from typing import Any, Final

from toolctx._types.model import Analysis
from toolctx._types.nodes import Kind, Node


Predicate = Callable[[object], bool]

_CACHE: dict[object, Predicate] = {}
_LOCK: Final = threading.Lock()


def matches(value: object, tp: Any) -> bool:
    """Whether *value* is an instance of the type expression *tp*."""
    try:
        predicate = _CACHE.get(tp)
    except TypeError:  # an unhashable type expression
        return predicate_for(tp)(value)
    if predicate is None:
        predicate = predicate_for(tp)
        with _LOCK:
            _CACHE.setdefault(tp, predicate)
    return predicate(value)


def predicate_for(tp: Any) -> Predicate:
    """The compiled check of *tp* (not cached)."""
    return _compile(Analysis("a ContextKey", python=True).node(tp))


def _always(_: object) -> bool:
    return True


def _none(value: object) -> bool:
    return value is None


def _bool(value: object) -> bool:
    return isinstance(value, bool)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _str(value: object) -> bool:
    return isinstance(value, str)


_PLAIN: Final[dict[Kind, Predicate]] = {
    Kind.ANY: _always,
    Kind.NULL: _none,
    Kind.BOOLEAN: _bool,
    Kind.INTEGER: _int,
    Kind.NUMBER: _number,
    Kind.STRING: _str,
}


def _instance(cls: Any) -> Predicate:
    def check(value: object) -> bool:
        try:
            return isinstance(value, cls)
        except TypeError:  # not a runtime-checkable class
            return True

    return check


def _compile(node: Node) -> Predicate:  # noqa: C901 - one branch per kind
    kind = node.kind
    plain = _PLAIN.get(kind)
    if plain is not None:
        return plain
    if kind is Kind.LITERAL:
        values = node.values

        def literal(value: object) -> bool:
            return any(type(value) is type(v) and value == v for v in values)

        return literal
    if kind is Kind.UNION:
        members = [_compile(item) for item in node.items]
        return lambda value: any(member(value) for member in members)
    container = node.container or node.tp
    is_container = _instance(container)
    if kind is Kind.TUPLE:
        items = [_compile(item) for item in node.items]

        def fixed(value: Any) -> bool:
            return (
                is_container(value)
                and len(value) == len(items)
                and all(c(v) for c, v in zip(items, value, strict=True))
            )

        return fixed
    if kind is Kind.MAPPING:
        value_ok, key_ok = (_compile(item) for item in node.items)

        def mapping(value: Any) -> bool:
            return is_container(value) and all(
                key_ok(k) and value_ok(v) for k, v in value.items()
            )

        return mapping
    if kind in {Kind.ARRAY, Kind.SET} and node.items:
        item_ok = _compile(node.items[0])

        def each(value: Any) -> bool:
            return is_container(value) and all(item_ok(v) for v in value)

        return each
    return _instance(node.tp if kind is not Kind.ARRAY else container)
