"""Rewrite a tool's JSON Schema for OpenAI strict mode.

Strict mode (``strict: true``) needs every object closed
(``additionalProperties: false``) with *all* its properties required, a
type on every value, and no tuple (``prefixItems``) or conditional
keywords. :func:`openai_strict` makes optional properties required (the
model then always sends a value; the default moves into the
description), inlines ``$ref`` that carry sibling keywords, turns
``oneOf`` into ``anyOf`` and drops annotations strict mode rejects
(``default``, ``uniqueItems``, ``minLength``...). What it cannot express
(free-form ``dict[str, T]`` or ``Any`` values, tuples) raises
:class:`ProviderSchemaError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolctx.providers._dialects import (
    Schema,
    Walker,
    attach_defs,
    escape,
    merge_all_of,
    note_default,
    schemas,
    typed_enum,
)
from toolctx.providers._render import plain


# The string formats strict mode accepts; others are dropped.
_OPENAI_FORMATS: Final = frozenset(
    {
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    }
)
# Keywords strict mode takes over as they are. Any keyword not listed
# (nor rebuilt by the walker) is dropped: that only loosens what the model
# is told, never what the dispatcher accepts.
_OPENAI_KEEP: Final = frozenset(
    {
        "type",
        "description",
        "title",
        "enum",
        "const",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
# Keywords rebuilt by the OpenAI-strict walker.
_STRUCTURAL: Final = (
    "properties",
    "required",
    "additionalProperties",
    "items",
)


def openai_strict(parameters: Mapping[str, Any], *, tool: str) -> Schema:
    """*parameters* rewritten for OpenAI strict mode (a fresh dict).

    Raises:
        ProviderSchemaError: The schema needs something strict mode lacks.
    """
    root = plain(parameters)
    walker = Walker("openai", tool, root)
    if root.get("type") != "object":
        raise walker.error(
            "",
            "the parameters are not a JSON object schema",
            "Strict mode needs 'type': 'object' at the root.",
        )
    out = _strict(walker, root, "", is_root=True)
    defs = {
        ref: _strict(walker, dict(sub), ref[1:])
        for ref, sub in walker.defs.items()
    }
    attach_defs(out, defs)
    return out


def _strict(  # noqa: C901, PLR0912
    walker: Walker, node: Schema, path: str, *, is_root: bool = False
) -> Schema:
    """One OpenAI-strict subschema (``$defs`` handled by the caller)."""
    walker.refused(node, path)
    node = merge_all_of(walker, node, path)
    if "$ref" in node:
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if not _meaningful(siblings):
            return {"$ref": node["$ref"]}
        # Strict mode rejects "$ref" with siblings (a description, say):
        # inline one level; references inside the target stay references.
        merged = {**walker.target(node["$ref"], path), **siblings}
        return _strict(walker, merged, path, is_root=is_root)
    out: Schema = {}
    for key, value in node.items():
        if key in _OPENAI_KEEP:
            if key != "format" or value in _OPENAI_FORMATS:
                out[key] = value
        elif key in {"anyOf", "oneOf"}:
            if is_root:
                raise walker.error(
                    path,
                    "the root is a union (anyOf)",
                    "Strict mode needs a single object at the root.",
                )
            out["anyOf"] = [
                _strict(walker, dict(sub), f"{path}/{key}/{i}")
                for i, sub in enumerate(schemas(walker, value, path))
            ]
        elif key in _STRUCTURAL:
            out[key] = None  # a placeholder, to keep the key order
    if not any(k in out for k in ("type", "anyOf", "enum", "const")):
        raise walker.error(
            path,
            "the value has no type (an Any or object parameter)",
            "Strict mode needs a type for every value: annotate it with a "
            "concrete type, or pass strict=False.",
        )
    if "enum" in out and "type" not in out:
        out = typed_enum(out, bool_enum=True)
    types = _types(out.get("type"))
    if "object" in types:
        _strict_object(walker, node, out, path, is_root=is_root)
    if "array" in types:
        _strict_array(walker, node, out, path)
    for key in _STRUCTURAL:
        if key in out and out[key] is None:
            del out[key]
    note_default(out, node)
    return out


def _strict_object(
    walker: Walker,
    node: Schema,
    out: Schema,
    path: str,
    *,
    is_root: bool,
) -> None:
    """Close an object and make all its properties required."""
    extra = node.get("additionalProperties", False)
    if extra is not False:
        raise walker.error(
            path,
            "an object with free-form keys (additionalProperties, as "
            "for dict[str, T]) is not supported",
            "Strict mode needs every key listed: use a TypedDict or an "
            "attrs class, or pass strict=False.",
        )
    properties = node.get("properties")
    if not isinstance(properties, Mapping):
        if not is_root:
            raise walker.error(
                path,
                "an object without listed properties (a bare dict) is "
                "not supported",
                "Use a TypedDict or an attrs class, or pass strict=False.",
            )
        properties = {}
    out["properties"] = {
        name: _strict(walker, dict(sub), f"{path}/properties/{escape(name)}")
        for name, sub in properties.items()
    }
    out["required"] = list(properties)
    out["additionalProperties"] = False


def _strict_array(
    walker: Walker, node: Schema, out: Schema, path: str
) -> None:
    """Check and rewrite an array's ``items``."""
    if "prefixItems" in node:
        raise walker.error(
            f"{path}/prefixItems",
            "fixed-length tuples (prefixItems) are not supported",
            "Use list[T] or a TypedDict/attrs class, or pass strict=False.",
        )
    items = node.get("items")
    if not isinstance(items, Mapping):
        raise walker.error(
            path,
            "the array does not say what its items are",
            "Annotate the items (list[T]), or pass strict=False.",
        )
    out["items"] = _strict(walker, dict(items), f"{path}/items")


def _meaningful(siblings: Mapping[str, Any]) -> bool:
    """Whether ``$ref`` siblings say anything a dialect would keep."""
    return any(not key.startswith("$") for key in siblings)


def _types(value: object) -> set[str]:
    """The JSON types named by a ``type`` keyword (a string or a list)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {v for v in value if isinstance(v, str)}
    return set()
