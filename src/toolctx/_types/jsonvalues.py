"""JSON values as JSON sees them: their types, equality and scalars.

:func:`json_kind` names the JSON type of a Python value (``"string"``,
``"number"``...); :func:`json_key` and :func:`option_key` are keys under
which JSON-equal values meet (``1`` and ``1.0``, never ``true`` and
``1``); :func:`json_scalar` turns a Python scalar into a plain JSON one.
"""

from __future__ import annotations

import collections.abc as cabc
import math

from typing import Final

from toolctx._types.nodes import MISSING


STRING: Final = "string"
"""The JSON type of strings."""
NUMBER: Final = "number"
"""The JSON type of numbers (integers too)."""
BOOLEAN: Final = "boolean"
"""The JSON type of ``true`` and ``false``."""
NULL: Final = "null"
"""The JSON type of ``null``."""
ARRAY: Final = "array"
"""The JSON type of arrays."""
OBJECT: Final = "object"
"""The JSON type of objects."""
ALL_KINDS: Final = frozenset({STRING, NUMBER, BOOLEAN, NULL, ARRAY, OBJECT})
"""Every JSON type name."""


def json_kind(value: object) -> str | None:
    """The JSON type of *value*, or None when it is not JSON data."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, str):
        return STRING
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, (list, tuple)):
        return ARRAY
    if isinstance(value, cabc.Mapping):
        return OBJECT
    return None


def option_key(value: object) -> tuple[str | None, object]:
    """A key under which JSON-equal scalars meet: ``1 == 1.0 != True``."""
    return (json_kind(value), value)


def json_key(value: object) -> object:
    """A hashable key equal for JSON-equal values (``1``, ``1.0``)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value  # the common items, without the Mapping check
    if isinstance(value, bool):
        return (BOOLEAN, value)
    if isinstance(value, (list, tuple)):
        return (ARRAY, tuple(json_key(item) for item in value))
    if isinstance(value, cabc.Mapping):
        return (
            OBJECT,
            frozenset((k, json_key(v)) for k, v in value.items()),
        )
    return value


def json_scalar(value: object) -> object:
    """*value* as a plain JSON scalar, or ``MISSING``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else MISSING
    if isinstance(value, str):
        return str(value)
    return MISSING
