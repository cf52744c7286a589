"""The type model's nodes: what one analysed type expression is.

A :class:`Node` holds a type's :class:`Kind`, its children (items, union
members, tuple positions), literal or enum values, the JSON string format
of datetimes and UUIDs, constraints and the description ``Annotated``
gave it. Class nodes name their class; what the class holds (its fields,
their nodes, its description) is a :class:`ClassInfo`, made once per
class by :class:`~toolctx._types.model.Analysis`.
"""

from __future__ import annotations

import enum
import typing

from typing import Any, Final

import attrs


class Missing(enum.Enum):
    """The type of :data:`MISSING`, for hints such as ``T | Missing``."""

    MISSING = enum.auto()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = Missing.MISSING
"""Sentinel for "no default"."""


def type_name(tp: object) -> str:
    """Render a type for an error message: ``int``, ``list[str]``..."""
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


SUPPORTED_TYPES: Final = (
    "str, int, float, bool, None, Optional/Union, Literal, Enum, "
    "list/tuple/set/frozenset, dict[str, T], TypedDict, attrs classes, "
    "dataclasses, pydantic models, datetime/date/time/timedelta, UUID, "
    "Decimal, Path, bytes, Annotated"
)
"""The supported types, as named in SchemaError messages."""


class Kind(enum.Enum):
    """What a :class:`Node` stands for."""

    ANY = "any"
    NULL = "null"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"
    STRING = "string"
    FORMATTED = "formatted"
    DECIMAL = "decimal"
    LITERAL = "literal"
    ENUM = "enum"
    ARRAY = "array"
    TUPLE = "tuple"
    SET = "set"
    MAPPING = "mapping"
    UNION = "union"
    TYPEDDICT = "typeddict"
    CLASS = "class"
    MODEL = "model"
    INSTANCE = "instance"


CLASS_KINDS: Final = frozenset({Kind.ENUM, Kind.TYPEDDICT, Kind.CLASS})
"""Kinds whose node names a class (``Node.tp``)."""


@attrs.frozen
class Node:
    """One analysed type expression.

    Attributes:
        kind: What the type is.
        tp: The type expression, without ``Annotated``, aliases and
            ``NewType`` (for class kinds: the class).
        items: Children: the item of an ``ARRAY``/``SET``, the value of a
            ``MAPPING``, the positions of a ``TUPLE``, the members of a
            ``UNION``; empty for a bare container.
        values: The values of a ``LITERAL``; the member values of an
            ``ENUM`` as JSON scalars.
        format: The JSON Schema ``format`` of a ``FORMATTED`` string.
        container: The Python type an ``ARRAY`` or ``SET`` builds (list,
            tuple, set, frozenset).
        bare: A container written without type arguments.
        description: From ``Annotated`` text, or given by the field or
            parameter the node describes.
        constraints: JSON Schema validation keywords and their values
            (``minimum``, ``exclusiveMaximum``, ``multipleOf``,
            ``minLength``, ``maxLength``, ``pattern``, ``minItems``,
            ``maxItems``, ``minProperties``, ``maxProperties``), from
            annotated-types or pydantic metadata; the schema shows them
            and the validator enforces them.
        examples: Example values (pydantic ``Field(examples=...)``).
    """

    kind: Kind
    tp: Any
    items: tuple[Node, ...] = ()
    values: tuple[object, ...] = ()
    format: str | None = None
    container: type | None = None
    bare: bool = False
    description: str | None = None
    constraints: tuple[tuple[str, object], ...] = ()
    examples: tuple[object, ...] = ()

    def described(self, text: str | None) -> Node:
        """This node with *text* as its description (None keeps it)."""
        if not text or text == self.description:
            return self
        return attrs.evolve(self, description=text)


@attrs.frozen
class Field:
    """One field of a TypedDict, attrs class or dataclass.

    Attributes:
        name: The Python name (attribute or TypedDict key).
        key: The JSON key (the attrs alias; the name otherwise).
        node: The field's type, described by the field's text.
        required: Whether the key must be present.
        default: The field's default, or ``MISSING`` (also for factories).
    """

    name: str
    key: str
    node: Node
    required: bool
    default: object = MISSING


@attrs.frozen
class ClassInfo:
    """What a class node's class holds.

    Attributes:
        cls: The class.
        description: The summary of the docstring the class defines itself.
        fields: The fields (TypedDicts, attrs classes, dataclasses), in
            declaration order; empty for enums.
        extra: The type of the keys beyond *fields* a TypedDict accepts
            (PEP 728 ``extra_items``); None when other keys are refused
            (``closed=True``, and toolctx's rule for every other class).
    """

    cls: type
    description: str
    fields: tuple[Field, ...] = ()
    extra: Node | None = None
