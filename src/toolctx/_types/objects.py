"""Checks of JSON objects with declared fields: TypedDicts and classes.

An object's keys are checked against the fields of its class
(:class:`~toolctx._types.nodes.ClassInfo`): wrong values, missing
required keys and keys beyond the fields (refused, or checked against a
TypedDict's ``extra_items``) are each a problem at the key. A TypedDict
is built as a dict; an attrs class or dataclass with ``cls(**values)``.
"""

from __future__ import annotations

import collections.abc as cabc

from typing import TYPE_CHECKING, Any

from toolctx._text import message_of
from toolctx._types.messages import OBJECT_DESC, describe, mismatch
from toolctx._types.problems import (
    MAX_DETAIL,
    InvalidValueError,
    fail,
    prefixed,
    unexpected,
)


if TYPE_CHECKING:
    from collections.abc import Callable

    from toolctx._types.nodes import ClassInfo, Node
    from toolctx._types.problems import Check, Problem


def _allowed(names: list[str]) -> str:
    """``allowed: a, b`` for an unexpected-key message."""
    if not names:
        return "no properties are allowed"
    return "allowed: " + ", ".join(names)


def fields_check(
    info: ClassInfo, compile_node: Callable[[Node], Check]
) -> Callable[[Any], tuple[dict[str, Any], list[Problem]]]:
    """Check an object's keys against *info*'s fields.

    *compile_node* compiles the check of a field's node.

    The returned function gives the checked values by JSON key and
    every problem: wrong values, missing required keys, and keys
    beyond the fields (checked against ``info.extra`` when the class
    takes extra items, unexpected otherwise).
    """
    fields = [
        (
            f.key,
            compile_node(f.node),
            f.required,
            (f"missing required property (expected {describe(f.node).text})"),
        )
        for f in info.fields
    ]
    keys = frozenset(f.key for f in info.fields)
    extra = None if info.extra is None else compile_node(info.extra)
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
                    problems.extend(prefixed(key, exc))
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
                problems.extend(prefixed(str(key), exc))
        return out, problems

    return check_fields


def typeddict_check(
    info: ClassInfo, compile_node: Callable[[Node], Check]
) -> Check:
    """An object with the TypedDict's keys, as a dict."""
    check_fields = fields_check(info, compile_node)

    def check(value: Any) -> Any:
        if not isinstance(value, cabc.Mapping):
            raise mismatch(OBJECT_DESC, value)
        out, problems = check_fields(value)
        if problems:
            raise InvalidValueError(problems)
        return out

    return check


def instance_check(
    info: ClassInfo, compile_node: Callable[[Node], Check]
) -> Check:
    """An object of an attrs class's or dataclass's ``__init__`` keys.

    The instance is built with ``cls(**values)``: the JSON keys are the
    ``__init__`` parameter names (an attrs alias is both). Anything
    ``__init__`` raises (a validator, ``__post_init__``) is one problem
    for the object: ``invalid Range: high must be >= low``.
    """
    check_fields = fields_check(info, compile_node)
    cls = info.cls
    name = cls.__name__

    def check(value: Any) -> Any:
        if not isinstance(value, cabc.Mapping):
            raise mismatch(OBJECT_DESC, value)
        out, problems = check_fields(value)
        if problems:
            raise InvalidValueError(problems)
        try:
            return cls(**out)
        except Exception as exc:  # noqa: BLE001 - reported
            detail = message_of(exc, MAX_DETAIL) or type(exc).__name__
            raise fail(f"invalid {name}: {detail}") from None

    return check
