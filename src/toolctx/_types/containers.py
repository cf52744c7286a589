"""Checks of JSON arrays and objects with typed items: containers.

Arrays as lists or tuples (``list[T]``, ``tuple[T, ...]``), fixed
tuples (``tuple[A, B]``), sets (``set[T]``, ``frozenset[T]``: items
unique by JSON equality) and mappings (``dict[str, T]``). Each is built
from the checks of its items, compiled by
:class:`~toolctx._types.validate.Compiler`; an item's problems are
reported at its index or key.
"""

from __future__ import annotations

import collections.abc as cabc

from typing import TYPE_CHECKING, Any

import attrs

from toolctx._types.jsonvalues import json_key
from toolctx._types.messages import describe, mismatch
from toolctx._types.problems import InvalidValueError, prefixed
from toolctx._types.scalars import check_any, unchanged_types


if TYPE_CHECKING:
    from collections.abc import Callable

    from toolctx._types.messages import Desc
    from toolctx._types.nodes import Node
    from toolctx._types.problems import Check, Problem


def _loose_array(desc: Desc, make: Callable[[list[Any]], Any]) -> Check:
    """A JSON array of anything, as a list or tuple."""

    def check(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return make(list(value))
        raise mismatch(desc, value)

    return check


def array_check(node: Node, item_check: Check | None) -> Check:
    """A JSON array of the item, as a list or tuple.

    *item_check* is None when any item will do.
    """
    desc = describe(attrs.evolve(node, constraints=()))
    make: Callable[[list[Any]], Any] = (
        tuple if node.container is tuple else list
    )
    if item_check is None:
        return _loose_array(desc, make)
    same = unchanged_types(node.items[0])

    def check(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise mismatch(desc, value)
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
                problems.extend(prefixed(index, exc))
        if problems:
            raise InvalidValueError(problems)
        return make(out)

    return check


def tuple_check(node: Node, checks: list[Check]) -> Check:
    """A JSON array of exactly ``len(items)`` items, typed in order."""
    desc = describe(attrs.evolve(node, constraints=()))
    count = len(checks)
    noun = "item" if count == 1 else "items"

    def check(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise mismatch(desc, value)
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
                problems.extend(prefixed(index, exc))
        if problems:
            raise InvalidValueError(problems)
        return tuple(out)

    return check


def set_check(node: Node, item: Check | None) -> Check:
    """A JSON array of distinct items (JSON equality), as a set.

    *item* is None when any item will do.
    """
    desc = describe(attrs.evolve(node, constraints=()))
    make: Callable[[list[Any]], Any] = (
        set if node.container is set else frozenset
    )
    item_check = item or check_any

    def check(value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            raise mismatch(desc, value)
        out: list[Any] = []
        problems: list[Problem] = []
        seen: dict[object, int] = {}
        for index, element in enumerate(value):
            first = seen.setdefault(json_key(element), index)
            if first != index:
                message = f"duplicate of item {first} (items must be unique)"
                problems.append(((index,), message))
                continue
            try:
                out.append(item_check(element))
            except Exception as exc:  # noqa: BLE001 - reported
                problems.extend(prefixed(index, exc))
        if problems:
            raise InvalidValueError(problems)
        return make(out)

    return check


def mapping_check(node: Node, item: Check | None) -> Check:
    """A JSON object with string keys and checked values, as a dict.

    *item* is None when any value will do.
    """
    desc = describe(attrs.evolve(node, constraints=()))
    item_check = item or check_any

    def check(value: Any) -> Any:
        if not isinstance(value, cabc.Mapping):
            raise mismatch(desc, value)
        out: dict[str, Any] = {}
        problems: list[Problem] = []
        for key, element in value.items():
            if not isinstance(key, str):
                problems.append(((str(key),), "expected a string key (JSON)"))
                continue
            try:
                out[key] = item_check(element)
            except Exception as exc:  # noqa: BLE001 - reported
                problems.extend(prefixed(key, exc))
        if problems:
            raise InvalidValueError(problems)
        return out

    return check
