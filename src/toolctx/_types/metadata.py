"""What ``Annotated`` metadata says: descriptions, examples, constraints.

Text comes from plain strings, ``annotated_types.doc()`` /
``typing_extensions.Doc`` and pydantic ``Field(description=...)``;
constraints from annotated-types (``Ge``, ``MaxLen``, ``Interval``...)
and pydantic (``Field(ge=...)``, ``StringConstraints``), read as JSON
Schema keywords that fit the node's kind. :func:`annotate` adds them to
a node. Attributes are read, never imported: neither pydantic nor
annotated-types is loaded here. Metadata toolctx cannot express or
enforce is a :class:`~toolctx.exceptions.SchemaError`, never dropped.
"""

from __future__ import annotations

import inspect

from typing import TYPE_CHECKING, Any, Final

import attrs

from toolctx._types.nodes import Kind
from toolctx._types.patterns import PatternError, pattern_text
from toolctx._types.schema_values import json_default, set_order


if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from toolctx._types.nodes import Node
    from toolctx.exceptions import SchemaError


def first_text(metadata: tuple[Any, ...]) -> str | None:
    """The first non-empty string in ``Annotated`` metadata, cleaned."""
    for item in metadata:
        if isinstance(item, str):
            text = inspect.cleandoc(item).strip()
            if text:
                return text
    return None


_NUMERIC: Final = frozenset(
    {
        "minimum",
        "exclusiveMinimum",
        "maximum",
        "exclusiveMaximum",
        "multipleOf",
    }
)
_NUMERIC_KINDS: Final = frozenset({Kind.INTEGER, Kind.NUMBER, Kind.DECIMAL})
_LENGTH: Final = frozenset({"min", "max"})
_LENGTH_KEYWORDS: Final = {
    Kind.STRING: "Length",
    Kind.ARRAY: "Items",
    Kind.TUPLE: "Items",
    Kind.SET: "Items",
    Kind.MAPPING: "Properties",
}
_BOUNDS: Final = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("multiple_of", "multipleOf"),
    ("min_length", "min"),
    ("max_length", "max"),
)
_TRANSFORMS: Final = (
    "strip_whitespace",
    "to_upper",
    "to_lower",
    "coerce_numbers_to_str",
    "allow_inf_nan",
    "max_digits",
    "decimal_places",
    "strict",
    "fail_fast",
    "union_mode",
)


@attrs.frozen
class FieldText:
    """What a pydantic ``FieldInfo`` adds to a type: text and bounds."""

    description: str | None
    examples: tuple[object, ...]
    metadata: tuple[object, ...]


def _from(item: object, package: str) -> bool:
    module = getattr(type(item), "__module__", "") or ""
    return module == package or module.startswith(f"{package}.")


def field_info(item: object) -> FieldText | None:
    """The text and metadata of a pydantic ``FieldInfo``, else None.

    Reads attributes only: pydantic is never imported here.
    """
    if not (_from(item, "pydantic") and type(item).__name__ == "FieldInfo"):
        return None
    description = getattr(item, "description", None)
    examples = getattr(item, "examples", None) or ()
    if isinstance(examples, (set, frozenset)):  # one order in any process
        examples = sorted(examples, key=lambda e: set_order(json_default(e)))
    return FieldText(
        description if isinstance(description, str) else None,
        tuple(examples),
        tuple(getattr(item, "metadata", ()) or ()),
    )


def doc_text(item: object) -> str | None:
    """The text of ``annotated_types.doc()`` or ``typing_extensions.Doc``."""
    if type(item).__name__ not in {"DocInfo", "Doc"}:
        return None
    text = getattr(item, "documentation", None)
    return inspect.cleandoc(text) if isinstance(text, str) else None


def is_constraint(item: object) -> bool:
    """Whether *item* is annotated-types or pydantic constraint metadata."""
    return _from(item, "annotated_types") or (
        _from(item, "pydantic") and type(item).__name__ != "FieldInfo"
    )


def flatten_metadata(items: Iterable[object]) -> list[object]:
    """*items*, grouped metadata expanded into its parts.

    ``Interval``, ``Len`` and ``StringConstraints`` are groups.
    """
    out: list[object] = []
    for item in items:
        if is_constraint(item) and hasattr(item, "__iter__"):
            out.extend(flatten_metadata(list(item)))
        else:
            out.append(item)
    return out


def constraint_keywords(item: object) -> list[tuple[str, object]]:
    """``(keyword, value)`` pairs of one constraint.

    Lengths come as ``min``/``max``, resolved per kind by the caller.
    Metadata toolctx cannot enforce raises ``_UnenforceableError``.
    """
    found: list[tuple[str, object]] = []
    for attribute, keyword in _BOUNDS:
        value = getattr(item, attribute, None)
        if value is not None:
            found.append((keyword, value))
    pattern = getattr(item, "pattern", None)
    if pattern is not None:
        try:
            found.append(("pattern", pattern_text(pattern)))
        except PatternError as exc:
            msg = f"cannot be enforced ({exc})"
            raise _UnenforceableError(msg) from None
    transforms = [
        name
        for name in _TRANSFORMS
        if getattr(item, name, None) not in {None, False}
    ]
    if transforms or not found:
        unknown = ", ".join(transforms) or type(item).__name__
        msg = f"asks for {unknown}, which toolctx cannot enforce"
        raise _UnenforceableError(msg)
    return found


class _UnenforceableError(ValueError):
    """Constraint metadata toolctx cannot express or enforce."""


def annotate(
    node: Node,
    metadata: tuple[Any, ...],
    refuse: Callable[[object, object, str], SchemaError],
) -> Node:
    """*node* with what ``Annotated`` metadata adds to it.

    Descriptions (text, ``doc()``), constraints and examples
    (annotated-types, pydantic ``Field``, ``StringConstraints``).
    Metadata toolctx cannot express or enforce is a ``SchemaError``:
    a constraint is never dropped silently. Other objects (markers of
    other libraries) are left alone.

    *refuse* makes that SchemaError, ``refuse(tp, item, reason)``
    (:meth:`~toolctx._types.model.Analysis.constraint_error`, which
    names the function, parameter and path).
    """
    text = first_text(metadata)
    constraints = dict(node.constraints)
    examples = list(node.examples)
    for item in metadata:
        info = field_info(item)
        documented = doc_text(item)
        if documented is not None:
            text = text or documented
        elif info is not None:
            text = text or info.description
            examples.extend(info.examples)
            constraints.update(_constraints(node, info.metadata, refuse))
        elif is_constraint(item):
            constraints.update(_constraints(node, (item,), refuse))
    if constraints == dict(node.constraints) and not examples:
        return node.described(text)
    return attrs.evolve(
        node.described(text),
        constraints=tuple(constraints.items()),
        examples=tuple(examples),
    )


def _constraints(
    node: Node,
    items: Iterable[object],
    refuse: Callable[[object, object, str], SchemaError],
) -> dict[str, object]:
    """JSON Schema keywords for annotated-types/pydantic *items*."""
    out: dict[str, object] = {}
    for group in items:  # a group's own pattern: pydantic 2.7 drops flags
        pattern = getattr(group, "pattern", None)
        if pattern is not None and is_constraint(group):
            try:
                pattern_text(pattern)
            except PatternError as exc:
                reason = f"cannot be enforced ({exc})"
                raise refuse(node.tp, group, reason) from None
    for item in flatten_metadata(items):
        try:
            pairs = constraint_keywords(item)
        except _UnenforceableError as exc:
            raise refuse(node.tp, item, str(exc)) from None
        for keyword, value in pairs:
            out[_keyword_for(node, keyword, item, refuse)] = value
    return out


def _keyword_for(
    node: Node,
    keyword: str,
    item: object,
    refuse: Callable[[object, object, str], SchemaError],
) -> str:
    """The keyword *node*'s kind takes for *keyword*, or SchemaError."""
    kind = node.kind
    if keyword in _NUMERIC and kind in _NUMERIC_KINDS:
        return keyword
    if keyword in _LENGTH:
        target = _LENGTH_KEYWORDS.get(kind)
        if target is not None:
            return f"{keyword}{target}"
    if keyword == "pattern" and kind is Kind.STRING:
        return keyword
    raise refuse(
        node.tp,
        item,
        "does not apply to it; put a constraint on the type it bounds, "
        "e.g. `Annotated[int, Ge(0)] | None` rather than "
        "`Annotated[int | None, Ge(0)]`",
    )
