"""The values a JSON Schema carries, as JSON data: defaults and bounds.

:func:`json_default` writes a parameter's or field's default (and an
example a type carries) as JSON data, or says it has none;
:func:`json_number` writes a constraint's bound, a ``Decimal`` included,
as a JSON number; :func:`canonical_values` puts the arrays that sets
became in a finished schema's values in one order, whatever order the
sets had in this process (``PYTHONHASHSEED``).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import decimal
import enum
import json
import uuid

from typing import TYPE_CHECKING, Any, Final

import attrs

from toolctx._types.classes import init_fields
from toolctx._types.jsonvalues import json_scalar
from toolctx._types.nodes import MISSING
from toolctx._types.pydantic_check import is_model


if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping


def json_number(value: object) -> object:
    """A constraint's value as JSON data: a ``Decimal`` becomes a number.

    An integral ``Decimal`` becomes the integer, another one the float of
    its text (``Decimal("0.1")`` is ``0.1``); other values are returned
    as they are.
    """
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
        return float(value)
    return value


def set_order(item: object) -> str:
    """The sort key of a set's items as JSON writes them: their JSON text."""
    return json.dumps(item, sort_keys=True, default=repr)


def json_default(value: object) -> object:
    """Return *value* as JSON data, or ``MISSING`` if it has no JSON form.

    Enum members become their value, tuples lists, sets and frozensets
    lists sorted by their JSON text, ``datetime``/``date``/``time``
    ISO 8601 strings, UUIDs strings, str-keyed mappings objects, attrs
    and dataclass instances objects of their ``__init__`` fields. NaN,
    infinities, other keys and other objects have no JSON form.
    """
    return _to_json(value, ())


def _to_json(  # noqa: C901, PLR0912
    value: object, active: tuple[int, ...]
) -> object:
    """:func:`json_default`, with the ids of the containers being walked."""
    if isinstance(value, enum.Enum):
        return _to_json(value.value, active)
    scalar = json_scalar(value)
    if scalar is not MISSING or value is None:
        return scalar
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if id(value) in active:
        return MISSING
    inner = (*active, id(value))
    items: list[object]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_to_json(item, inner) for item in value]
        if any(item is MISSING for item in items):
            return MISSING
        if isinstance(value, (set, frozenset)):
            items.sort(key=set_order)
        return items
    if is_model(type(value)):
        from toolctx._types.output_scalars import NotJSONError
        from toolctx._types.pydantic import dump

        try:
            return dump(value)
        except NotJSONError:
            return MISSING
    pairs: list[tuple[object, object]]
    if isinstance(value, collections.abc.Mapping):
        pairs = list(value.items())
    elif attrs.has(type(value)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        pairs = [
            (key, getattr(value, name))
            for name, key, *_ in init_fields(type(value))
        ]
    else:
        return MISSING
    result: dict[str, object] = {}
    for key, item in pairs:
        converted = _to_json(item, inner)
        if not isinstance(key, str) or converted is MISSING:
            return MISSING
        result[key] = converted
    return result


_VALUE_KEYWORDS: Final = ("default", "const")
_VALUES_KEYWORDS: Final = ("examples", "enum")
_ONE_SCHEMA: Final = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "contentSchema",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SCHEMA_LISTS: Final = ("prefixItems", "anyOf", "oneOf", "allOf")
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
)
_DEPTH: Final = 64
"""How deep the walk goes into schemas and values (cycles end there)."""


def canonical_values(schema: Any, defs: Mapping[str, Any]) -> None:
    """Sort, in place, the arrays sets became in *schema*'s values.

    ``default``, ``const`` and each of ``examples`` and ``enum`` is
    walked along the schema it belongs to: an array where the schema
    says ``uniqueItems`` (a set, which Python iterates in an order that
    depends on ``PYTHONHASHSEED``) is sorted by its items' JSON text,
    inner sets first. *defs* resolves ``#/$defs/...`` references.
    """
    for node in _schemas(schema, 0):
        for key in _VALUE_KEYWORDS:
            if key in node:
                node[key] = _canonical(node[key], node, defs, 0)
        for key in _VALUES_KEYWORDS:
            values = node.get(key)
            if isinstance(values, list):
                node[key] = [_canonical(v, node, defs, 0) for v in values]


def _schemas(node: Any, depth: int) -> Iterator[dict[str, Any]]:
    """*node* and every schema inside it (not the values it carries)."""
    if not isinstance(node, dict) or depth > _DEPTH:
        return
    yield node
    for key in _ONE_SCHEMA:
        yield from _schemas(node.get(key), depth + 1)
    for key in _SCHEMA_LISTS:
        items = node.get(key)
        if isinstance(items, list):
            for item in items:
                yield from _schemas(item, depth + 1)
    for key in _SCHEMA_MAPS:
        members = node.get(key)
        if isinstance(members, dict):
            for item in members.values():
                yield from _schemas(item, depth + 1)


def _branches(
    schema: Any, defs: Mapping[str, Any], depth: int
) -> list[dict[str, Any]]:
    """*schema* (references resolved) and the branches it combines."""
    out: list[dict[str, Any]] = []
    todo = [schema]
    while todo and len(out) < _DEPTH:
        node = todo.pop(0)
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            todo.append(defs.get(ref.removeprefix("#/$defs/")))
        out.append(node)
        for key in ("anyOf", "oneOf", "allOf"):
            items = node.get(key)
            if isinstance(items, list) and depth < _DEPTH:
                todo.extend(items)
    return out


def _canonical(
    value: Any, schema: Any, defs: Mapping[str, Any], depth: int
) -> Any:
    """*value* with the sets its *schema* describes sorted (a copy)."""
    if depth > _DEPTH or not isinstance(value, (list, dict)):
        return value
    branches = _branches(schema, defs, depth)
    if isinstance(value, list):
        return _canonical_array(value, branches, defs, depth)
    out: dict[Any, Any] = {}
    for key, given in value.items():
        member = given
        for branch in branches:
            properties = branch.get("properties")
            if isinstance(properties, dict) and key in properties:
                member = _canonical(member, properties[key], defs, depth + 1)
            elif isinstance(branch.get("additionalProperties"), dict):
                extra = branch["additionalProperties"]
                member = _canonical(member, extra, defs, depth + 1)
        out[key] = member
    return out


def _canonical_array(
    value: list[Any],
    branches: list[dict[str, Any]],
    defs: Mapping[str, Any],
    depth: int,
) -> list[Any]:
    """The array *value*, items first, sorted if a branch is a set."""
    items = []
    for index, given in enumerate(value):
        item = given
        for branch in branches:
            prefix = branch.get("prefixItems")
            if isinstance(prefix, list) and index < len(prefix):
                item = _canonical(item, prefix[index], defs, depth + 1)
            elif isinstance(branch.get("items"), dict):
                item = _canonical(item, branch["items"], defs, depth + 1)
        items.append(item)
    if any(branch.get("uniqueItems") is True for branch in branches):
        items.sort(key=set_order)
    return items
