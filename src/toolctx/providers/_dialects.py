"""The shared core of the schema dialects: one walk over a tool's schema.

Two providers accept less than JSON Schema 2020-12, OpenAI strict mode
(``_dialects_openai``) and Gemini's ``parametersJsonSchema``
(``_dialects_gemini``); both rewrites walk the schema with a
:class:`Walker` (the root's ``$defs``, and errors naming the tool, the
place and a fix) and share the steps here: folding a one-element
``allOf``, splitting an enum by JSON type, moving a ``default`` into the
description and attaching the ``$defs`` still referenced. Dropping a
constraint only loosens what the model is told: the dispatcher still
validates the arguments against the tool's real parameters.
"""

from __future__ import annotations

import json

from collections.abc import Mapping
from typing import Any, Final

from toolctx._types.schema import json_type
from toolctx.exceptions import ProviderSchemaError
from toolctx.providers._render import plain


Schema = dict[str, Any]

DEF_CONTAINERS: Final = ("$defs", "definitions")

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


class Walker:
    """Shared state of one rewrite: the root, its ``$defs``, errors."""

    def __init__(self, provider: str, tool: str, root: Schema) -> None:
        self.provider = provider
        self.tool = tool
        self.defs: dict[str, Schema] = {}
        for container in DEF_CONTAINERS:
            found = root.get(container)
            if isinstance(found, Mapping):
                for name, sub in found.items():
                    self.defs[f"#/{container}/{escape(name)}"] = sub

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


def typed_enum(node: Schema, *, bool_enum: bool) -> Schema:
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


def attach_defs(out: Schema, defs: Mapping[str, Schema]) -> None:
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


def merge_all_of(walker: Walker, node: Schema, path: str) -> Schema:
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


def schemas(walker: Walker, value: object, path: str) -> list[Any]:
    """The subschemas of a list keyword, or an error."""
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
        return value
    raise walker.error(path, "a list of schemas is malformed", "Fix it.")


def note_default(out: Schema, source: Mapping[str, Any]) -> None:
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


def escape(name: str) -> str:
    """*name* escaped as one JSON Pointer token."""
    return name.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    """One JSON Pointer token back to the name it escapes."""
    return token.replace("~1", "/").replace("~0", "~")
