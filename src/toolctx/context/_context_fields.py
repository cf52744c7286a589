"""The conversions of :class:`~toolctx.ExecutionContext`'s mappings.

What its mapping fields go through on the way in (the attrs converters
freeze them) and what a stored typed value goes through on the way out
(raw data restored as its key's type). attrs gives the context's
``__init__`` the converters' parameter hints, resolved in
:mod:`toolctx.context.execution`: they name only types imported there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from toolctx._frozen import freeze_mapping
from toolctx.context.keys import ContextKey, RawValue


T = TypeVar("T")


def freeze_metadata(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.metadata``: a deeply frozen copy."""
    return freeze_mapping(value, "ExecutionContext.metadata")


def freeze_state(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.state``: a deeply frozen copy."""
    return freeze_mapping(value, "ExecutionContext.state")


def freeze_values(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.values``: frozen, the values as they are."""
    return freeze_mapping(value, "ExecutionContext.values", deep=False)


def typed_value(value: object, key: ContextKey[T]) -> T:
    """Return a stored value as the key's type (restoring raw data)."""
    if type(value) is RawValue:
        from toolctx._types.values import structure_value

        return structure_value(value.data, key.type)  # type: ignore[return-value]
    return value  # type: ignore[return-value]
