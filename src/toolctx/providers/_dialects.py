"""Rewrite a tool's JSON Schema for a provider's dialect.

Two providers accept less than JSON Schema 2020-12:

* **OpenAI strict mode** (``strict: true``) needs every object closed
  (``additionalProperties: false``) with *all* its properties required,
  a type on every value, and no tuple (``prefixItems``) or conditional
  keywords. :func:`openai_strict` makes optional properties required (the
  model then always sends a value; the default moves into the
  description), inlines ``$ref`` that carry sibling keywords, turns
  ``oneOf`` into ``anyOf`` and drops annotations strict mode rejects
  (``default``, ``uniqueItems``, ``minLength``...). What it cannot express
  (free-form ``dict[str, T]`` or ``Any`` values, tuples) raises
  :class:`ProviderSchemaError`.
* **Gemini** ``parametersJsonSchema`` supports a documented subset:
  ``$id, $defs, $ref, $anchor, type, format, title, description, enum``
  (strings and numbers), ``items, prefixItems, minItems, maxItems,
  minimum, maximum, anyOf, oneOf, properties, additionalProperties,
  required`` and ``propertyOrdering``; a ``$ref`` may have no sibling
  keywords, and recursive references may only go through non-required
  properties. :func:`gemini` inlines every non-recursive ``$ref``, keeps
  ``$defs`` only for recursive classes (and checks the recursion rule),
  rewrites ``const`` and ``enum`` members that are not strings or numbers,
  and drops the other keywords (a ``default`` moves into the
  description).

Dropping a constraint only loosens what the model is told: the dispatcher
still validates the arguments against the tool's real parameters.
"""

from __future__ import annotations

import json

from collections.abc import Mapping
from typing import Any, Final

from toolctx._types.schema import json_type
from toolctx.exceptions import ProviderSchemaError
from toolctx.providers._render import plain


Schema = dict[str, Any]

_DEF_CONTAINERS: Final = ("$defs", "definitions")

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
# Keywords each dialect takes over as they are. Any keyword not listed
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
# Keywords rebuilt by the OpenAI-strict walker.
_STRUCTURAL: Final = (
    "properties",
    "required",
    "additionalProperties",
    "items",
)
# Keywords whose meaning no rewrite can keep: the schema is refused.
_UNSUPPORTED: Final = (
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
)


class _Walker:
    """Shared state of one rewrite: the root, its ``$defs``, errors."""

    def __init__(self, provider: str, tool: str, root: Schema) -> None:
        self.provider = provider
        self.tool = tool
        self.defs: dict[str, Schema] = {}
        for container in _DEF_CONTAINERS:
            found = root.get(container)
            if isinstance(found, Mapping):
                for name, sub in found.items():
                    self.defs[f"#/{container}/{_escape(name)}"] = sub

    def error(self, path: str, problem: str, fix: str) -> ProviderSchemaError:
        """A ProviderSchemaError naming the tool, the place and a fix."""
        where = f"at {path}" if path else "at the root"
        label = {
            "openai": "OpenAI strict mode",
            "gemini": "Gemini",
        }.get(self.provider, self.provider)
        msg = (
            f"The parameters of tool {self.tool!r} cannot be sent to "
            f"{label}: {where}, {problem}. {fix}"
        )
        return ProviderSchemaError(
            msg, provider=self.provider, tool=self.tool, path=path
        )

    def target(self, ref: object, path: str) -> Schema:
        """The ``$defs`` entry a local ``$ref`` points to."""
        found = self.defs.get(ref) if isinstance(ref, str) else None
        if not isinstance(found, Mapping):
            raise self.error(
                path,
                f"the reference {ref!r} does not point into the "
                "schema's own $defs",
                "Only local references such as '#/$defs/Name' are supported.",
            )
        return dict(found)

    def refused(self, node: Mapping[str, Any], path: str) -> None:
        """Raise for keywords no rewrite can keep."""
        for key in _UNSUPPORTED:
            if key in node:
                raise self.error(
                    f"{path}/{key}",
                    f"the keyword {key!r} is not supported",
                    "Describe the parameter without it, or pass strict=False."
                    if self.provider == "openai"
                    else "Describe the parameter without it.",
                )


def openai_strict(parameters: Mapping[str, Any], *, tool: str) -> Schema:
    """*parameters* rewritten for OpenAI strict mode (a fresh dict).

    Raises:
        ProviderSchemaError: The schema needs something strict mode lacks.
    """
    root = plain(parameters)
    walker = _Walker("openai", tool, root)
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
    _attach_defs(out, defs)
    return out


def _strict(  # noqa: C901, PLR0912
    walker: _Walker, node: Schema, path: str, *, is_root: bool = False
) -> Schema:
    """One OpenAI-strict subschema (``$defs`` handled by the caller)."""
    walker.refused(node, path)
    node = _merge_all_of(walker, node, path)
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
                for i, sub in enumerate(_schemas(walker, value, path))
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
        out = _typed_enum(out, bool_enum=True)
    types = _types(out.get("type"))
    if "object" in types:
        _strict_object(walker, node, out, path, is_root=is_root)
    if "array" in types:
        _strict_array(walker, node, out, path)
    for key in _STRUCTURAL:
        if key in out and out[key] is None:
            del out[key]
    _note_default(out, node)
    return out


def _strict_object(
    walker: _Walker,
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
        name: _strict(walker, dict(sub), f"{path}/properties/{_escape(name)}")
        for name, sub in properties.items()
    }
    out["required"] = list(properties)
    out["additionalProperties"] = False


def _strict_array(
    walker: _Walker, node: Schema, out: Schema, path: str
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


def gemini(parameters: Mapping[str, Any], *, tool: str) -> Schema:
    """*parameters* rewritten for Gemini's ``parametersJsonSchema``.

    Raises:
        ProviderSchemaError: A recursive type recurses only through
            required properties, or the schema uses an unsupported keyword.
    """
    root = plain(parameters)
    walker = _Walker("gemini", tool, root)
    recursive = _recursive_refs(walker)
    out = _gemini(walker, root, "", recursive)
    defs = {
        ref: _gemini(walker, dict(sub), ref[1:], recursive)
        for ref, sub in walker.defs.items()
        if ref in recursive
    }
    _attach_defs(out, defs)
    return out


def _gemini(  # noqa: C901
    walker: _Walker, node: Schema, path: str, recursive: frozenset[str]
) -> Schema:
    """One Gemini subschema (``$defs`` handled by the caller)."""
    walker.refused(node, path)
    node = _merge_all_of(walker, node, path)
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
                for i, sub in enumerate(_schemas(walker, value, path))
            ]
        elif key in {"items", "additionalProperties"}:
            if isinstance(value, Mapping):
                out[key] = _gemini(walker, dict(value), where, recursive)
            elif key == "additionalProperties" and isinstance(value, bool):
                out[key] = value
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {
                name: _gemini(
                    walker, dict(sub), f"{where}/{_escape(name)}", recursive
                )
                for name, sub in value.items()
            }
    if "enum" in out and not all(
        json_type(v) in {"string", "number", "integer"} for v in out["enum"]
    ):
        out = _typed_enum(out, bool_enum=False)
    _note_default(out, node)
    return out


def _typed_enum(node: Schema, *, bool_enum: bool) -> Schema:
    """Split an ``enum`` into one typed option per JSON type.

    ``{"enum": ["x", None, True]}`` becomes ``{"anyOf": [{"type":
    "string", "enum": ["x"]}, {"type": "null"}, {"type": "boolean",
    "enum": [True]}]}`` (a single option is used as it is). Gemini takes
    enums of strings and numbers only, so with *bool_enum* false the
    boolean option loses its ``enum``.
    """
    groups: dict[str, list[object]] = {}
    for value in node["enum"]:
        groups.setdefault(json_type(value), []).append(value)
    options: list[Schema] = []
    for kind, members in groups.items():
        if kind == "null" or (kind == "boolean" and not bool_enum):
            options.append({"type": kind})
        else:
            options.append({"type": kind, "enum": members})
    rest = {k: v for k, v in node.items() if k not in {"enum", "type"}}
    if len(options) == 1:
        return {**options[0], **rest}
    return {"anyOf": options, **rest}


def _attach_defs(out: Schema, defs: Mapping[str, Schema]) -> None:
    """Put the *defs* (keyed by ``$ref``) that *out* uses under ``$defs``.

    Definitions no reference reaches any more (inlined ones) are left out.
    """
    used: list[str] = []
    todo = _refs_in(out)
    while todo:
        ref = todo.pop(0)
        if ref in defs and ref not in used:
            used.append(ref)
            todo.extend(_refs_in(defs[ref]))
    for ref in sorted(used, key=list(defs).index):
        container, name = ref[2:].split("/", 1)
        out.setdefault(container, {})[_unescape(name)] = defs[ref]


def _refs_in(node: object) -> list[str]:
    """Every ``$ref`` string inside *node*, in document order."""
    if isinstance(node, list):
        return [ref for item in node for ref in _refs_in(item)]
    if not isinstance(node, Mapping):
        return []
    found: list[str] = []
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            found.append(value)
        else:
            found.extend(_refs_in(value))
    return found


def _recursive_refs(walker: _Walker) -> frozenset[str]:
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
        if key in _DEF_CONTAINERS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            for name, sub in value.items():
                _collect_refs(
                    sub,
                    f"{path}/properties/{_escape(name)}",
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


def _merge_all_of(walker: _Walker, node: Schema, path: str) -> Schema:
    """Fold a one-element ``allOf`` into *node*; refuse longer ones."""
    all_of = node.get("allOf")
    if all_of is None:
        return node
    if not isinstance(all_of, list) or len(all_of) != 1:
        raise walker.error(
            f"{path}/allOf",
            "an intersection (allOf) of several schemas is not supported",
            "Describe the parameter as one object.",
        )
    rest = {k: v for k, v in node.items() if k != "allOf"}
    return {**plain(all_of[0]), **rest}


def _schemas(walker: _Walker, value: object, path: str) -> list[Any]:
    """The subschemas of a list keyword, or an error."""
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return value
    raise walker.error(path, "a list of schemas is malformed", "Fix it.")


def _meaningful(siblings: Mapping[str, Any]) -> bool:
    """Whether ``$ref`` siblings say anything a dialect would keep."""
    return any(not key.startswith("$") for key in siblings)


def _note_default(out: Schema, source: Mapping[str, Any]) -> None:
    """Move a non-null ``default`` of *source* into *out*'s description."""
    if "default" not in source or source["default"] is None:
        return
    shown = json.dumps(
        source["default"], ensure_ascii=False, separators=(",", ":")
    )
    note = f"Default: {shown}."
    text = out.get("description")
    if isinstance(text, str) and note in text:
        return
    out["description"] = f"{text.rstrip()} {note}" if text else note


def _types(value: object) -> set[str]:
    """The JSON types named by a ``type`` keyword (a string or a list)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {v for v in value if isinstance(v, str)}
    return set()


def _escape(name: str) -> str:
    """*name* escaped as one JSON Pointer token."""
    return name.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    """One JSON Pointer token back to the name it escapes."""
    return token.replace("~1", "/").replace("~0", "~")
