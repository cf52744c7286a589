"""The values a JSON Schema carries, as JSON data: defaults and bounds.

:func:`json_default` writes a parameter's or field's default (and an
example a type carries) as JSON data, or says it has none;
:func:`json_number` writes a constraint's bound, a ``Decimal`` included,
as a JSON number.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import decimal
import enum
import json
import uuid

import attrs

from toolctx._types.classes import init_fields
from toolctx._types.jsonvalues import json_scalar
from toolctx._types.nodes import MISSING
from toolctx._types.pydantic_check import is_model


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
            items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return items
    if is_model(type(value)):
        from toolctx._types.output import NotJSONError
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
