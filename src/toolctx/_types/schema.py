"""JSON Schema (Draft 2020-12), rendered from the type model's nodes.

:func:`parameters_schema` turns a tool's parameters into the
``parameters`` object providers ask for; :func:`type_schema` renders one
type. Both analyse the hints with
:class:`~toolctx._types.model.Analysis` and render the nodes:

=========================================  ==============================
Node kind                                  JSON Schema
=========================================  ==============================
``STRING``, ``INTEGER``, ``NUMBER`` ...    ``{"type": "string"}`` ...
``NULL``                                   ``{"type": "null"}``
``ANY``                                    ``{}``
``UNION``                                  ``{"anyOf": [A, B]}``
``LITERAL``                                ``{"enum": [...]}`` (+ type)
``ENUM``                                   ``$ref`` to ``{"enum": [...]}``
``ARRAY``                                  ``array`` of the item
``TUPLE``                                  ``array`` with ``prefixItems``
``SET``                                    ``array`` with ``uniqueItems``
``MAPPING``                                ``object`` of the value
``TYPEDDICT``, ``CLASS``                   ``$ref`` to a closed ``object``
``FORMATTED``                              ``string`` with ``format``
=========================================  ==============================

Classes go to the root ``$defs`` under their ``__name__``, in
first-encounter order, and are referenced with
``{"$ref": "#/$defs/Name"}``, so recursive classes work. When two
different classes share a ``__name__``, the later one is named
``module.qualname`` (characters outside ``[A-Za-z0-9_.-]`` become ``_``).

Descriptions, strongest first: the first non-empty string in
``Annotated`` metadata, then the docstring's (``Param.description``; for
class fields ``metadata={"description": ...}`` and then the class
docstring's ``Attributes`` entry). A class's own docstring (not one it
inherits, nor one Python generates) describes its ``$defs`` entry.
Defaults become ``"default"`` when
:func:`~toolctx._types.schema_values.json_default` can convert them.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING, Any, Final, Protocol

import typing_extensions

from toolctx._types.forms import ANY, is_in
from toolctx._types.model import Analysis
from toolctx._types.nodes import MISSING, Kind, Node
from toolctx._types.schema_values import (
    canonical_values,
    json_default,
    json_number,
)
from toolctx.exceptions import SchemaError


if TYPE_CHECKING:
    from collections.abc import Sequence


class Param(Protocol):
    """What :func:`parameters_schema` reads of one parameter.

    The tools layer's ``Param`` has these attributes; the type model
    knows no more of it.
    """

    @property
    def name(self) -> str:
        """The parameter's name."""

    @property
    def annotation(self) -> Any:
        """Its type hint."""

    @property
    def description(self) -> str | None:
        """Its description, if any."""

    @property
    def default(self) -> object:
        """Its default, or ``MISSING``."""

    @property
    def required(self) -> bool:
        """Whether the model must send it."""


JSONSchema = dict[str, Any]

_PLAIN: dict[Kind, JSONSchema] = {
    Kind.STRING: {"type": "string"},
    Kind.INTEGER: {"type": "integer"},
    Kind.NUMBER: {"type": "number"},
    Kind.BOOLEAN: {"type": "boolean"},
    Kind.NULL: {"type": "null"},
    Kind.ANY: {},
}
_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")
"""Characters a ``$defs`` name may not hold."""


def parameters_schema(params: Sequence[Param], *, owner: str) -> JSONSchema:
    """Return the JSON Schema of a tool's arguments object.

    The result is ``{"type": "object", "properties": ..., "required":
    [...], "additionalProperties": False, "$defs": ...}``: properties in
    parameter order, ``required`` only when some parameter has no
    default, ``$defs`` only when a class is referenced.

    Args:
        params: The tool's model-visible parameters, annotations resolved.
        owner: The function's qualified name, used in error messages.

    Raises:
        SchemaError: A parameter's type (or a type nested in it) has no
            JSON Schema; the message names *owner*, the parameter and,
            for nested classes, the field path.
    """
    analysis = Analysis(owner)
    renderer = _Renderer(analysis)
    properties: JSONSchema = {}
    required: list[str] = []
    for param in params:
        analysis.parameter = param.name
        node = analysis.node(param.annotation)
        properties[param.name] = renderer.property(
            node, param.description, param.default
        )
        if param.required:
            required.append(param.name)
    schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if renderer.defs:
        schema["$defs"] = renderer.defs
    canonical_values(schema, renderer.defs)
    return schema


def type_schema(
    tp: Any,
    *,
    owner: str,
    parameter: str | None = None,
    mode: str = "validation",
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """Return ``(schema, defs)`` for the type expression *tp*.

    *schema* may hold ``{"$ref": "#/$defs/Name"}`` references to entries
    of *defs*, which the caller must place under the root ``"$defs"`` of
    the document. *owner* and *parameter* only feed error messages;
    *mode* ``"serialization"`` describes output (pydantic models differ).

    Raises:
        SchemaError: *tp* (or a type nested in it) has no JSON Schema.
    """
    analysis = Analysis(owner, parameter)
    renderer = _Renderer(analysis, mode)
    schema = renderer.schema(analysis.node(tp))
    return schema, renderer.defs


_STREAMS = (
    "Iterator",
    "Iterable",
    "Generator",
    "AsyncIterator",
    "AsyncIterable",
    "AsyncGenerator",
)


def output_schema(
    hint: Any, *, owner: str, stream: bool = False
) -> JSONSchema | None:
    """The JSON Schema of a tool's output, from its return annotation.

    None when *hint* says nothing a model could use (``Any``, ``None``,
    ``object``) or has no JSON Schema. For a streaming tool (*stream*),
    the output is the list of its chunks: an array of the yielded type.
    """
    if stream:
        args = typing_extensions.get_args(hint)
        origin = typing_extensions.get_origin(hint)
        if origin is None or getattr(origin, "__name__", "") not in _STREAMS:
            return None
        hint = args[0] if args else Any
    if hint is None or hint is type(None) or is_in(hint, ANY):
        return None
    try:
        schema, defs = type_schema(hint, owner=owner, mode="serialization")
    except SchemaError:
        return None
    if stream:
        schema = {"type": "array", "items": schema}
    if defs:
        schema["$defs"] = defs
    canonical_values(schema, defs)
    return schema


class _Renderer:
    """Renders nodes of one analysis, collecting ``$defs``."""

    def __init__(self, analysis: Analysis, mode: str = "validation") -> None:
        self.analysis = analysis
        self.mode: Any = mode  # pydantic models: "validation"/"serialization"
        self.defs: dict[str, JSONSchema] = {}
        self._names: dict[type, str] = {}

    def property(
        self, node: Node, description: str | None, default: object
    ) -> JSONSchema:
        """A property: *node*, a fallback description and a default."""
        schema = self.schema(node)
        if description and "description" not in schema:
            schema["description"] = description
        if default is not MISSING:
            value = json_default(default)
            if value is not MISSING:
                schema["default"] = value
        return schema

    def schema(self, node: Node) -> JSONSchema:
        """The schema of *node* (a fresh dict)."""
        schema = self._bare(node)
        if node.constraints:
            target = (
                schema["anyOf"][0] if node.kind is Kind.DECIMAL else schema
            )
            target.update((k, json_number(v)) for k, v in node.constraints)
        if node.description:
            schema["description"] = node.description
        if node.examples:
            examples = [json_default(e) for e in node.examples]
            schema["examples"] = [e for e in examples if e is not MISSING]
        return schema

    def _bare(self, node: Node) -> JSONSchema:  # noqa: C901, PLR0912
        kind = node.kind
        plain = _PLAIN.get(kind)
        if plain is not None:
            return dict(plain)
        if kind is Kind.FORMATTED:
            if node.format is None:  # bytes
                return {"type": "string", "contentEncoding": "base64"}
            return {"type": "string", "format": node.format}
        if kind is Kind.DECIMAL:
            return {
                "anyOf": [
                    {"type": "number"},
                    {"type": "string", "pattern": DECIMAL_PATTERN},
                ]
            }
        if kind is Kind.UNION:
            return {"anyOf": [self.schema(item) for item in node.items]}
        if kind is Kind.LITERAL:
            return enum_schema(list(node.values))
        if kind is Kind.ARRAY:
            return {"type": "array", "items": self._item(node)}
        if kind is Kind.TUPLE:
            if not node.items:
                return {"type": "array", "maxItems": 0}
            return {
                "type": "array",
                "prefixItems": [self.schema(item) for item in node.items],
                "items": False,
                "minItems": len(node.items),
                "maxItems": len(node.items),
            }
        if kind is Kind.SET:
            return {
                "type": "array",
                "items": self._item(node),
                "uniqueItems": True,
            }
        if kind is Kind.MODEL:
            from toolctx._types.pydantic import model_schema

            schema, defs = model_schema(
                node.tp, mode=self.mode, taken=self.defs
            )
            self.defs.update(defs)
            return schema
        if kind is Kind.MAPPING:
            if node.bare:
                return {"type": "object"}
            return {
                "type": "object",
                "additionalProperties": self.schema(node.items[0]),
            }
        return self._ref(node)

    def _item(self, node: Node) -> JSONSchema:
        return {} if node.bare else self.schema(node.items[0])

    def _ref(self, node: Node) -> JSONSchema:
        """A ``$ref`` to the ``$defs`` entry of a class node's class."""
        cls = node.tp
        name = self._names.get(cls)
        if name is None:
            name = self._name_for(cls)
            self._names[cls] = name
            self.defs[name] = {}  # reserve the slot: order, and recursion
            self.defs[name] = self._definition(node)
        return {"$ref": f"#/$defs/{name}"}

    def _definition(self, node: Node) -> JSONSchema:
        info = self.analysis.info(node.tp)
        if node.kind is Kind.ENUM:
            schema = enum_schema(list(node.values))
        else:
            schema = {
                "type": "object",
                "properties": {
                    f.key: self.property(f.node, None, f.default)
                    for f in info.fields
                },
            }
            required = [f.key for f in info.fields if f.required]
            if required:
                schema["required"] = required
            schema["additionalProperties"] = (
                False if info.extra is None else self.schema(info.extra)
            )
        if info.description:
            schema["description"] = info.description
        return schema

    def _name_for(self, cls: type) -> str:
        """A ``$defs`` name for *cls* that no other class has taken."""
        name = _UNSAFE_NAME.sub("_", cls.__name__)
        if name not in self.defs:
            return name
        full = _UNSAFE_NAME.sub("_", f"{cls.__module__}.{cls.__qualname__}")
        name, counter = full, 2
        while name in self.defs:
            name, counter = f"{full}_{counter}", counter + 1
        return name


DECIMAL_PATTERN = r"^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$"
"""The strings a ``Decimal`` parameter accepts: decimal numbers."""


def json_type(value: object) -> str:
    """The JSON Schema ``type`` of a scalar *value* (``object`` otherwise)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def enum_schema(values: list[object]) -> JSONSchema:
    """``{"enum": values}``, plus ``type`` when all share one JSON type."""
    schema: JSONSchema = {"enum": values}
    kinds = [json_type(value) for value in values]
    if kinds and all(kind == kinds[0] for kind in kinds):
        schema["type"] = kinds[0]
    return schema
