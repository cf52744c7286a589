"""Rewrite a tool's JSON Schema for Gemini's ``parametersJsonSchema``.

Gemini supports a documented subset of JSON Schema: ``$id, $defs, $ref,
$anchor, type, format, title, description, enum`` (strings and numbers),
``items, prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf,
properties, additionalProperties, required`` and ``propertyOrdering``; a
``$ref`` may have no sibling keywords, and recursive references may only
go through non-required properties. :func:`gemini` inlines every
non-recursive ``$ref``, keeps ``$defs`` only for recursive classes (and
checks the recursion rule), rewrites ``const`` and ``enum`` members that
are not strings or numbers, and drops the other keywords (a ``default``
moves into the description).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolctx._types.schema import json_type
from toolctx.providers._dialects import (
    DEF_CONTAINERS,
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


# Keywords Gemini takes over as they are. Any keyword not listed (nor
# rebuilt by the walker) is dropped: that only loosens what the model is
# told, never what the dispatcher accepts.
_GEMINI_KEEP: Final = frozenset(
    {
        "$id",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "required",
        "propertyOrdering",
    }
)


def gemini(parameters: Mapping[str, Any], *, tool: str) -> Schema:
    """*parameters* rewritten for Gemini's ``parametersJsonSchema``.

    Raises:
        ProviderSchemaError: A recursive type recurses only through
            required properties, or the schema uses an unsupported keyword.
    """
    root = plain(parameters)
    walker = Walker("gemini", tool, root)
    recursive = _recursive_refs(walker)
    out = _gemini(walker, root, "", recursive)
    defs = {
        ref: _gemini(walker, dict(sub), ref[1:], recursive)
        for ref, sub in walker.defs.items()
        if ref in recursive
    }
    attach_defs(out, defs)
    return out


def _gemini(  # noqa: C901
    walker: Walker, node: Schema, path: str, recursive: frozenset[str]
) -> Schema:
    """One Gemini subschema (``$defs`` handled by the caller)."""
    walker.refused(node, path)
    node = merge_all_of(walker, node, path)
    if "$ref" in node:
        ref = node["$ref"]
        if ref in recursive:
            # Gemini allows no siblings next to "$ref" except "$..." keys.
            return {k: v for k, v in node.items() if k.startswith("$")}
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**walker.target(ref, path), **siblings}
        return _gemini(walker, merged, path, recursive)
    out: Schema = {}
    for key, value in node.items():
        where = f"{path}/{key}"
        if key in _GEMINI_KEEP:
            out[key] = value
        elif key == "const":
            out.setdefault("enum", [value])
        elif key in {"anyOf", "oneOf", "prefixItems"}:
            out[key] = [
                _gemini(walker, dict(sub), f"{where}/{i}", recursive)
                for i, sub in enumerate(schemas(walker, value, path))
            ]
        elif key in {"items", "additionalProperties"}:
            if isinstance(value, Mapping):
                out[key] = _gemini(walker, dict(value), where, recursive)
            elif key == "additionalProperties" and isinstance(value, bool):
                out[key] = value
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {
                name: _gemini(
                    walker, dict(sub), f"{where}/{escape(name)}", recursive
                )
                for name, sub in value.items()
            }
    if "enum" in out and not all(
        json_type(v) in {"string", "number", "integer"} for v in out["enum"]
    ):
        out = typed_enum(out, bool_enum=False)
    note_default(out, node)
    return out


def _recursive_refs(walker: Walker) -> frozenset[str]:
    """The ``$ref`` targets that can reach themselves.

    Also enforces Gemini's rule that a cycle must pass through at least
    one non-required property (Gemini unrolls recursion a few levels and
    then drops the property, which a required one forbids).
    """
    edges: dict[str, list[tuple[str, bool, str]]] = {}
    for ref, sub in walker.defs.items():
        found: list[tuple[str, bool, str]] = []
        _collect_refs(sub, ref[1:], optional=False, found=found)
        edges[ref] = found
    recursive = {ref for ref in edges if _reaches(edges, ref, ref)}
    required_only = {
        ref: [(t, False, p) for t, opt, p in found if not opt]
        for ref, found in edges.items()
    }
    for ref in sorted(recursive):
        if _reaches(required_only, ref, ref):
            name = ref.rsplit("/", 1)[-1]
            place = next(
                p for t, opt, p in edges[ref] if not opt and t in recursive
            )
            raise walker.error(
                place,
                f"the recursive type {name!r} refers to itself only "
                "through required fields",
                "Gemini unrolls recursive types a few levels deep and "
                "needs an optional field to stop at: give the recursive "
                "field a default (for example `= None` with "
                f"`{name} | None`).",
            )
    return frozenset(recursive)


def _collect_refs(
    node: object,
    path: str,
    *,
    optional: bool,
    found: list[tuple[str, bool, str]],
) -> None:
    """Append ``(ref, through_optional, path)`` for every ``$ref``."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _collect_refs(item, f"{path}/{i}", optional=optional, found=found)
        return
    if not isinstance(node, Mapping):
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        found.append((ref, optional, path))
    required = node.get("required") or []
    for key, value in node.items():
        if key in DEF_CONTAINERS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            for name, sub in value.items():
                _collect_refs(
                    sub,
                    f"{path}/properties/{escape(name)}",
                    optional=optional or name not in required,
                    found=found,
                )
        elif isinstance(value, (Mapping, list)):
            _collect_refs(
                value, f"{path}/{key}", optional=optional, found=found
            )


def _reaches(
    edges: Mapping[str, list[tuple[str, bool, str]]], start: str, goal: str
) -> bool:
    """Whether *goal* is reachable from *start* in one step or more."""
    seen: set[str] = set()
    todo = [target for target, _, _ in edges.get(start, [])]
    while todo:
        current = todo.pop()
        if current == goal:
            return True
        if current not in seen:
            seen.add(current)
            todo.extend(target for target, _, _ in edges.get(current, []))
    return False
