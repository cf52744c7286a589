"""The spellings of typing forms, across ``typing`` and ``typing_extensions``.

Which objects mean ``Annotated``, ``Literal``, a union, ``Any``, a type
alias or a TypedDict qualifier (``Required``, ``NotRequired``,
``ReadOnly``), which origins are arrays, sets and mappings, which types
are JSON scalars; :func:`strip_qualifiers` peels qualifiers off a
TypedDict hint and :func:`is_hashable` says whether a type's values can
be set items. All compared by identity (:func:`is_in`).
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import types
import typing
import uuid

from pathlib import PurePath
from typing import Any, Final

import attrs
import typing_extensions

from toolctx._types.metadata import first_text
from toolctx._types.nodes import Kind
from toolctx._types.pydantic_check import is_model


def _unique(*candidates: object) -> tuple[Any, ...]:
    """The non-None *candidates*, without repeats, in order."""
    found: list[object] = []
    for item in candidates:
        if item is not None and not any(item is f for f in found):
            found.append(item)
    return tuple(found)


ANNOTATED: Final = _unique(typing.Annotated, typing_extensions.Annotated)
LITERAL: Final = _unique(typing.Literal, typing_extensions.Literal)
UNION: Final = _unique(typing.Union, types.UnionType)
ANY: Final = _unique(typing.Any, typing_extensions.Any, object)
ALIAS_TYPES: Final = _unique(
    getattr(typing, "TypeAliasType", None), typing_extensions.TypeAliasType
)
REQUIRED: Final = _unique(
    getattr(typing, "Required", None), typing_extensions.Required
)
NOT_REQUIRED: Final = _unique(
    getattr(typing, "NotRequired", None), typing_extensions.NotRequired
)
QUALIFIERS: Final = _unique(
    *REQUIRED,
    *NOT_REQUIRED,
    getattr(typing, "ReadOnly", None),
    typing_extensions.ReadOnly,
)
ARRAYS: Final = (list, cabc.Sequence)
SETS: Final = (set, frozenset, cabc.Set)
MAPPINGS: Final = (dict, cabc.Mapping)
BARE_TUPLES: Final = _unique(tuple, typing.Tuple)  # noqa: UP006 - bare alias
SCALARS: Final[tuple[tuple[object, Kind, str | None], ...]] = (
    (str, Kind.STRING, None),
    (int, Kind.INTEGER, None),
    (float, Kind.NUMBER, None),
    (bool, Kind.BOOLEAN, None),
    (None, Kind.NULL, None),
    (type(None), Kind.NULL, None),
    (dt.datetime, Kind.FORMATTED, "date-time"),
    (dt.date, Kind.FORMATTED, "date"),
    (dt.time, Kind.FORMATTED, "time"),
    (uuid.UUID, Kind.FORMATTED, "uuid"),
    (dt.timedelta, Kind.FORMATTED, "duration"),
    (bytes, Kind.FORMATTED, None),
    (decimal.Decimal, Kind.DECIMAL, None),
)
"""The scalar types: ``(type, kind, JSON string format)``."""


def is_in(item: object, candidates: tuple[object, ...]) -> bool:
    """Whether *item* is one of *candidates* (by identity)."""
    return any(item is candidate for candidate in candidates)


def strip_qualifiers(hint: Any) -> tuple[Any, str | None, bool | None]:
    """Peel ``Required``/``NotRequired``/``ReadOnly`` off a TypedDict hint.

    Returns the bare type, the description of an ``Annotated`` that
    wrapped a qualifier (lost with the wrapper otherwise), and True/False
    for a ``Required``/``NotRequired`` marker (None without one). The
    marker beats ``__required_keys__``, which misses markers written as
    strings (``from __future__ import annotations``) before Python 3.14.
    """
    text: str | None = None
    marked: bool | None = None
    while True:
        origin = typing_extensions.get_origin(hint)
        args = typing_extensions.get_args(hint)
        if origin is not None and is_in(origin, QUALIFIERS):
            if marked is None and is_in(origin, REQUIRED):
                marked = True
            elif marked is None and is_in(origin, NOT_REQUIRED):
                marked = False
            hint = args[0]
        elif (
            origin is not None
            and is_in(origin, ANNOTATED)
            and is_in(typing_extensions.get_origin(args[0]), QUALIFIERS)
        ):
            text = text or first_text(args[1:])
            hint = args[0]
        else:
            return hint, text, marked


def is_hashable(tp: Any, aliases: tuple[object, ...] = ()) -> bool:  # noqa: C901
    """Whether every value of the supported type *tp* is hashable.

    True for scalars, ``Literal``, enums, the datetime types, UUIDs,
    tuples and frozensets of hashable types, unions of them, and attrs
    classes and dataclasses whose ``__hash__`` is not None (their fields
    are not inspected). False for ``Any``, lists, dicts, sets, TypedDicts.
    """
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is not None and is_in(origin, ANNOTATED):
        return is_hashable(args[0], aliases)
    if isinstance(tp, ALIAS_TYPES):
        return not is_in(tp, aliases) and is_hashable(
            tp.__value__, (*aliases, tp)
        )
    if hasattr(tp, "__supertype__"):
        return is_hashable(tp.__supertype__, aliases)
    if any(tp is scalar for scalar, _, _ in SCALARS):
        return True
    if isinstance(tp, type) and issubclass(tp, PurePath):
        return True
    if origin is not None and is_in(origin, LITERAL):
        return True
    if origin is not None and is_in(origin, UNION):
        return all(is_hashable(arg, aliases) for arg in args)
    if origin is tuple and not is_in(tp, BARE_TUPLES):
        return all(
            arg is Ellipsis or arg == () or is_hashable(arg, aliases)
            for arg in args
        )
    if origin is frozenset:
        return bool(args) and is_hashable(args[0], aliases)
    if origin is not None or not isinstance(tp, type):
        return False
    if issubclass(tp, enum.Enum):
        return True
    if attrs.has(tp) or dataclasses.is_dataclass(tp) or is_model(tp):
        return getattr(tp, "__hash__", None) is not None
    return False
