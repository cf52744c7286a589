"""Pydantic models' JSON Schemas: pydantic's own, by toolctx's rules.

Generated once per model and mode (``validation`` for a parameter,
``serialization`` for a return type) by :func:`generate`: pydantic's
Draft 2020-12 schema with ``$defs`` named after the classes, every class
that does not allow extra keys closed (``additionalProperties: false``)
and descriptions by toolctx's docstring rules. :func:`settle` fits a
model's ``$defs`` into the ones a caller already holds (a clash is
renamed ``Name_2``); :func:`resolved` and :func:`children` walk a schema
to find the keys an object takes.
"""

from __future__ import annotations

import inspect
import json

from typing import TYPE_CHECKING, Any, Final, Literal

import pydantic

from pydantic.json_schema import GenerateJsonSchema

from toolctx._text import message_of
from toolctx._types.classes import class_doc
from toolctx._types.pydantic_check import UnsupportedModelError
from toolctx._types.schema_values import canonical_values, json_number


if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue
    from pydantic_core import core_schema


JSONSchema = dict[str, Any]
"""A JSON Schema, as a dict."""
Mode = Literal["validation", "serialization"]
"""Which schema of a model: what it accepts, or what it dumps."""

_KEY: Final = "model"


class _ToolctxJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema, closed and described by toolctx's rules."""

    ignored_warning_kinds = {"skipped-choice", "non-serializable-default"}  # noqa: RUF012 - pydantic's own class attribute

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        """A model: closed unless it allows extras; docstring texts."""
        json_schema = super().model_schema(schema)
        _close(json_schema, schema)
        _describe(json_schema, schema["cls"], self.mode, self.by_alias)
        return json_schema

    def typed_dict_schema(
        self, schema: core_schema.TypedDictSchema
    ) -> JsonSchemaValue:
        """A TypedDict inside a model: closed unless it allows extras."""
        json_schema = super().typed_dict_schema(schema)
        _close(json_schema, schema)
        return json_schema

    def dataclass_schema(
        self, schema: core_schema.DataclassSchema
    ) -> JsonSchemaValue:
        """A dataclass inside a model: closed unless it allows extras."""
        json_schema = super().dataclass_schema(schema)
        _close(json_schema, schema)
        return json_schema


def _close(json_schema: JsonSchemaValue, schema: Any) -> None:
    """``additionalProperties: false`` for a class that sets no ``extra``.

    pydantic writes ``true`` (or a schema) for ``extra="allow"`` and
    ``false`` for ``"forbid"``; its default (``"ignore"``) is unsaid, and
    toolctx refuses unknown keys then. A class that says ``"ignore"``
    itself (or inside one that does) stays open, as pydantic has it;
    one that inherits ``"forbid"`` is closed, which some pydantic
    versions leave unsaid.
    """
    config = schema.get("config") or {}
    if (
        config.get("extra_fields_behavior") in {None, "forbid"}
        and json_schema.get("type") == "object"
        and "additionalProperties" not in json_schema
    ):
        json_schema["additionalProperties"] = False


def _describe(
    json_schema: JsonSchemaValue, cls: Any, mode: str, by_alias: bool
) -> None:
    """Descriptions by toolctx's docstring rules (``Field`` texts win)."""
    own = cls.__dict__.get("__doc__")
    doc = class_doc(cls)
    given = json_schema.get("description")
    if isinstance(own, str) and given in {None, inspect.cleandoc(own)}:
        # pydantic's text is the whole docstring (before 2.10 it is added
        # later, and only when no description is there yet)
        if doc.summary:
            json_schema["description"] = doc.summary
        else:
            json_schema.pop("description", None)
    properties = json_schema.get("properties")
    if not doc.attributes or not isinstance(properties, dict):
        return
    for name, field in cls.model_fields.items():
        text = doc.attributes.get(name)
        prop = properties.get(_property_key(name, field, mode, by_alias))
        if text and isinstance(prop, dict) and "description" not in prop:
            prop["description"] = text


def _property_key(name: str, field: Any, mode: str, by_alias: bool) -> str:
    """The JSON key pydantic writes a field under."""
    if not by_alias:
        return name
    if mode == "validation":
        alias = field.validation_alias
        if isinstance(alias, str):
            return alias
    elif isinstance(field.serialization_alias, str):
        return field.serialization_alias
    return field.alias if isinstance(field.alias, str) else name


def generate(
    source: Any, mode: Mode, by_alias: bool
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """``(schema, defs)`` of a model's core schema in *mode*."""
    generator = _ToolctxJsonSchema(
        by_alias=by_alias if mode == "serialization" else True,
        ref_template="#/$defs/{model}",
    )
    json_mode: JsonSchemaMode = mode
    try:
        refs, defs = generator.generate_definitions(
            [(_KEY, json_mode, source)]
        )
    except (pydantic.PydanticUserError, TypeError, ValueError) as exc:
        detail = message_of(exc, 300)
        msg = f"pydantic cannot write its JSON Schema ({detail})"
        raise UnsupportedModelError(msg) from None
    schema = dict(refs[_KEY, json_mode])
    named = {str(k): v for k, v in defs.items()}
    canonical_values(schema, named)  # sets pydantic wrote in hash order
    for body in named.values():
        canonical_values(body, named)
    return schema, named


def resolved(node: object, defs: Mapping[str, Any]) -> Iterator[JSONSchema]:
    """*node*, its ``$ref`` followed and ``anyOf``/``oneOf`` opened."""
    pending = [node]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        ref = current.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            pending.append(defs.get(ref.removeprefix("#/$defs/")))
        for key in ("anyOf", "oneOf", "allOf"):
            choices = current.get(key)
            if isinstance(choices, list):
                pending.extend(choices)
        yield current


def children(node: JSONSchema, part: str | int) -> list[object]:
    """The schemas of *node*'s property or item *part*."""
    if isinstance(part, str):
        properties = node.get("properties")
        if isinstance(properties, dict) and part in properties:
            return [properties[part]]
        extra = node.get("additionalProperties")
        return [extra] if isinstance(extra, dict) else []
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and 0 <= part < len(prefix):
        return [prefix[part]]
    items = node.get("items")
    return [items] if isinstance(items, dict) else []


def renamed(value: Any, renames: Mapping[str, str]) -> Any:
    """A copy of JSON Schema *value*, references to *renames* moved.

    ``Decimal`` bounds (``Field(ge=Decimal("0.01"))``), which pydantic
    leaves in the schema, become JSON numbers.
    """
    if isinstance(value, list):
        return [renamed(item, renames) for item in value]
    if not isinstance(value, dict):
        return json_number(value)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "$ref" and isinstance(item, str):
            name = item.removeprefix("#/$defs/")
            out[key] = f"#/$defs/{renames[name]}" if name in renames else item
        elif key in {"default", "examples", "const", "enum"}:
            out[key] = json.loads(json.dumps(item))
        else:
            out[key] = renamed(item, renames)
    return out


def settle(
    schema: JSONSchema,
    defs: dict[str, JSONSchema],
    taken: Mapping[str, JSONSchema],
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """Rename the *defs* whose names *taken* holds for another schema.

    A definition equal to the one *taken* holds under its name is shared
    (not returned again); another one gets the first free ``Name_2``,
    ``Name_3``...; references follow the renames.
    """
    renames: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, body in defs.items():
            if name in renames or name not in taken:
                continue
            if taken[name] != renamed(body, renames):
                renames[name] = _free_name(name, taken, defs, renames)
                changed = True
    settled: dict[str, JSONSchema] = {}
    for name, body in defs.items():
        new = renames.get(name, name)
        if new == name and name in taken:
            continue  # the very same definition: shared
        settled[new] = renamed(body, renames)
    return renamed(schema, renames), settled


def _free_name(
    name: str,
    taken: Mapping[str, object],
    defs: Mapping[str, object],
    renames: Mapping[str, str],
) -> str:
    used = set(renames.values())
    counter = 2
    while (
        f"{name}_{counter}" in taken
        or f"{name}_{counter}" in defs
        or f"{name}_{counter}" in used
    ):
        counter += 1
    return f"{name}_{counter}"
