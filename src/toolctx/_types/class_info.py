"""The classes a hint names, read into their fields' nodes.

An enum's members are checked (JSON scalar values, no ``Flag``), a
TypedDict's keys and an attrs class's or dataclass's ``__init__`` fields
become :class:`~toolctx._types.nodes.Field` nodes with their
descriptions, all into a :class:`~toolctx._types.nodes.ClassInfo`. The
:class:`~toolctx._types.model.Analysis` that meets the class runs these
once per class, and analyses each field's type.
"""

from __future__ import annotations

import dataclasses
import enum
import typing

from typing import TYPE_CHECKING, Any, Final, Protocol

import typing_extensions

from toolctx._types.classes import class_doc, init_fields
from toolctx._types.forms import strip_qualifiers
from toolctx._types.jsonvalues import json_scalar
from toolctx._types.nodes import MISSING, ClassInfo, Field, Node
from toolctx.exceptions import SchemaError


if TYPE_CHECKING:
    from collections.abc import Callable


_NO_EXTRA_ITEMS: Final = getattr(typing_extensions, "NoExtraItems", object())


class FieldAnalysis(Protocol):
    """What the readers use of the analysis that meets the class."""

    def field_node(self, cls: type, name: str, tp: Any) -> Node:
        """The node of the type *tp* of field *name* of *cls*."""

    def error(self, tp: object, reason: str = "") -> SchemaError:
        """A SchemaError naming the owner, parameter and nested path."""


def enum_info(analysis: FieldAnalysis, cls: type[enum.Enum]) -> ClassInfo:
    """An enum's description; its members' values checked."""
    if issubclass(cls, enum.Flag):
        raise analysis.error(cls, "Flag enums are not supported")
    for member in cls:
        if json_scalar(member.value) is MISSING:
            raise analysis.error(
                cls,
                f"member {member.name} has value "
                f"{member.value!r}; values must be str, int, float, "
                f"bool or None",
            )
    return ClassInfo(cls, class_doc(cls).summary)


def typeddict_info(analysis: FieldAnalysis, cls: Any) -> ClassInfo:
    """A TypedDict's keys (required or not) and its extra items."""
    hints = _hints(analysis, cls, typing_extensions.get_type_hints)
    required_keys = getattr(cls, "__required_keys__", frozenset(hints))
    doc = class_doc(cls)
    fields: list[Field] = []
    for name, hint in hints.items():
        tp, outer, marked = strip_qualifiers(hint)
        needed = name in required_keys if marked is None else marked
        node = analysis.field_node(cls, name, tp)
        if outer is not None:
            node = node.described(outer)
        elif node.description is None:
            node = node.described(doc.attributes.get(name))
        fields.append(Field(name, name, node, needed))
    extra = getattr(cls, "__extra_items__", _NO_EXTRA_ITEMS)
    extra_node = None
    if extra is not None and extra is not _NO_EXTRA_ITEMS:
        tp, _, _ = strip_qualifiers(extra)
        extra_node = analysis.field_node(cls, "<extra items>", tp)
    return ClassInfo(cls, doc.summary, tuple(fields), extra_node)


def fields_info(analysis: FieldAnalysis, cls: Any) -> ClassInfo:
    """An attrs class's or dataclass's ``__init__`` fields."""
    hints = _hints(analysis, cls, typing.get_type_hints)
    if any(isinstance(h, dataclasses.InitVar) for h in hints.values()):
        raise analysis.error(cls, "InitVar fields are not supported")
    doc = class_doc(cls)
    fields: list[Field] = []
    for name, key, default, required, metadata in init_fields(cls):
        if name not in hints:
            raise analysis.error(cls, f"field {name!r} has no annotation")
        text = metadata.get("description")
        if not isinstance(text, str) or not text:
            # an attrs field's ``Args:`` entry names its __init__ alias
            text = doc.attributes.get(name) or doc.attributes.get(key)
        node = analysis.field_node(cls, name, hints[name])
        if node.description is None:
            node = node.described(text)
        fields.append(Field(name, key, node, required, default))
    return ClassInfo(cls, doc.summary, tuple(fields))


def _hints(
    analysis: FieldAnalysis,
    cls: type,
    get_hints: Callable[..., dict[str, Any]],
) -> dict[str, Any]:
    """*cls*'s resolved field hints (``Annotated`` kept)."""
    try:
        return get_hints(cls, include_extras=True)
    except (NameError, AttributeError, TypeError, SyntaxError) as exc:
        raise analysis.error(
            cls, f"its field annotations cannot be resolved ({exc})"
        ) from exc
