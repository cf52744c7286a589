"""The ``outputSchema`` MCP lists for a tool, and whether it is wrapped.

MCP wants an object as a tool's ``outputSchema``: :func:`output_schema`
lists an object schema as it is (also the object a top-level ``$ref``
points to), and wraps any other as ``{"type": "object", "properties":
{"result": <schema>}, "required": ["result"]}`` with its ``$defs`` moved
to the wrapper; :func:`wrapped` tells
:func:`toolctx.providers.mcp.result_message` when to send
``structuredContent`` as ``{"result": output}`` to match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from toolctx.providers._render import plain


_DEFS: Final = ("$defs", "definitions")


def output_schema(
    schema: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """The ``outputSchema`` listed for a tool's output *schema*.

    Example:
        >>> output_schema({"type": "integer"})
        {'type': 'object', 'properties': {'result': {'type': 'integer'}}, 'required': ['result']}
        >>> output_schema({"type": "object"})
        {'type': 'object'}
        >>> output_schema(None) is None
        True
    """  # noqa: E501 - a doctest line
    if schema is None:
        return None
    copied: dict[str, Any] = plain(schema)
    if not wrapped(copied):
        target = _object_ref(copied)
        if target is None:
            return copied
        # {"$ref": "#/$defs/Model", "$defs": ...}: the model's object
        return {**plain(target), "$defs": copied["$defs"]}
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": copied},
        "required": ["result"],
    }
    for key in _DEFS:  # where the "#/$defs/..." references point
        if key in copied:
            wrapper[key] = copied.pop(key)
    return wrapper


def wrapped(schema: Mapping[str, Any]) -> bool:
    """Whether :func:`output_schema` wraps *schema* (nothing copied)."""
    return schema.get("type") != "object" and _object_ref(schema) is None


def _object_ref(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object definition a ``{"$ref", "$defs"}`` schema points to."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if len(schema) != 2 or not isinstance(defs, Mapping):  # noqa: PLR2004
        return None
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return None
    target = cast("Mapping[str, Any]", defs).get(ref.removeprefix("#/$defs/"))
    if not isinstance(target, Mapping):
        return None
    target = cast("Mapping[str, Any]", target)
    return target if target.get("type") == "object" else None
