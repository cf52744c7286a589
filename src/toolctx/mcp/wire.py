"""The MCP shapes of a registry's tools and of a call's result.

Plain JSON (camelCase keys, as on the wire): the SDK validates it on the
way out, so the server's handlers return it as is.

- :func:`tool_entry`: one ``tools/list`` entry: ``name``, ``title``,
  ``description``, ``inputSchema``, ``outputSchema`` and ``annotations``
  (only the hints that are set).
- :func:`output_schema`: a tool's ``outputSchema``. MCP wants an object;
  any other schema is wrapped as ``{"type": "object", "properties":
  {"result": <schema>}, "required": ["result"]}``, as the SDK's
  ``MCPServer`` (and FastMCP) do, with ``$defs`` moved to the top so that
  every ``$ref`` still resolves.
- :func:`call_result`: the ``CallToolResult`` of one call: content parts
  as MCP text, image, audio and embedded-resource content; JSON output as
  text plus ``structuredContent`` (wrapped as ``{"result": value}`` when
  the schema was); an error as text with ``isError: true``. Host-only
  fields are never read.
"""

from __future__ import annotations

import base64

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote

import attrs

from toolctx.content import Audio, Image, Text, parts_of
from toolctx.providers._render import content_text, plain


if TYPE_CHECKING:
    from toolctx._records import ToolDefinition, ToolResult
    from toolctx.content import Part


_HINTS: Final = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)
_DEFS: Final = ("$defs", "definitions")


@attrs.frozen
class Listed:
    """A tool as listed, and how to shape its results.

    Attributes:
        entry: The ``tools/list`` entry.
        structured: Whether results carry ``structuredContent``: the tool
            has an output schema.
        wrapped: Whether ``structuredContent`` is ``{"result": output}``.
    """

    entry: dict[str, Any]
    structured: bool
    wrapped: bool


def tool_entry(definition: ToolDefinition) -> Listed:
    """Return the ``tools/list`` entry of *definition* and its result shape."""
    entry: dict[str, Any] = {"name": definition.name}
    if definition.title is not None:
        entry["title"] = definition.title
    entry["description"] = definition.description
    entry["inputSchema"] = plain(definition.parameters)
    schema, wrapped = output_schema(definition.output_schema)
    if schema is not None:
        entry["outputSchema"] = schema
    hints = hints_of(definition)
    if hints:
        entry["annotations"] = hints
    return Listed(entry, structured=schema is not None, wrapped=wrapped)


def hints_of(definition: ToolDefinition) -> dict[str, Any]:
    """The MCP ``ToolAnnotations`` of *definition*: only the hints set."""
    found = definition.annotations
    if found is None:
        return {}
    return {
        key: getattr(found, name)
        for name, key in _HINTS
        if getattr(found, name) is not None
    }


def output_schema(
    schema: Mapping[str, Any] | None,
) -> tuple[dict[str, Any] | None, bool]:
    """Return ``(outputSchema, wrapped)`` for a tool's output *schema*.

    An object schema is sent as it is, and so is the object a top-level
    ``$ref`` points to (a dataclass or model output), with the ``$defs``
    beside it. Any other schema is wrapped in an object with one required
    ``result`` property; its ``$defs`` move to the wrapper, where the
    ``#/$defs/...`` references point.

    Example:
        >>> output_schema({"type": "integer"})
        ({'type': 'object', 'properties': {'result': {'type': 'integer'}}, 'required': ['result']}, True)
        >>> output_schema({"type": "object"})
        ({'type': 'object'}, False)
        >>> output_schema(None)
        (None, False)
    """  # noqa: E501 - a doctest line
    if schema is None:
        return None, False
    copied: dict[str, Any] = plain(schema)
    if copied.get("type") == "object":
        return copied, False
    target = _object_ref(copied)
    if target is not None:  # {"$ref": "#/$defs/Model", "$defs": ...}
        return {**target, "$defs": copied["$defs"]}, False
    hoisted: dict[str, Any] = {
        key: copied.pop(key) for key in _DEFS if key in copied
    }
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": copied},
        "required": ["result"],
    }
    wrapper.update(hoisted)
    return wrapper, True


def _object_ref(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The object definition a ``{"$ref", "$defs"}`` schema points to."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if set(schema) != {"$ref", "$defs"} or not isinstance(defs, dict):
        return None
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return None
    target = cast("dict[str, Any]", defs).get(ref.removeprefix("#/$defs/"))
    if not isinstance(target, dict) or target.get("type") != "object":
        return None
    return cast("dict[str, Any]", target)


def call_result(result: ToolResult, listed: Listed | None) -> dict[str, Any]:
    """Return the ``CallToolResult`` answering *result*.

    ``resultType`` is always ``"complete"``: the 2026 protocol requires
    it, and the SDK drops it for older protocol versions.

    Args:
        result: The dispatcher's result.
        listed: How the tool was listed (None for a tool not in the
            registry, e.g. an unknown name).
    """
    if result.is_error:
        return {
            "content": [{"type": "text", "text": content_text(result)}],
            "isError": True,
            "resultType": "complete",
        }
    output = result.output
    parts = parts_of(output)
    if parts is not None:
        return {
            "content": [part_content(p, i) for i, p in enumerate(parts, 1)],
            "isError": False,
            "resultType": "complete",
        }
    message: dict[str, Any] = {
        "content": [{"type": "text", "text": content_text(result)}],
        "isError": False,
        "resultType": "complete",
    }
    if listed is not None and listed.structured:
        if listed.wrapped:
            message["structuredContent"] = {"result": plain(output)}
        elif isinstance(output, Mapping):
            message["structuredContent"] = plain(output)
    elif isinstance(output, Mapping):
        # No schema to promise, but an object is still useful to clients.
        message["structuredContent"] = plain(output)
    return message


def part_content(part: Part, index: int = 1) -> dict[str, Any]:
    """One content part as an MCP content block.

    ``Text`` is text content, ``Image`` and ``Audio`` are image and audio
    content (base64 ``data``), and ``File`` an embedded resource whose
    ``blob`` holds the bytes, at ``toolctx://part/<index>/<name>`` (the
    part's position in the result, 1 first; ``file`` without a name), the
    URI :func:`toolctx.providers.mcp.result_message` uses too.

    Example:
        >>> part_content(Image(b"abc", "image/png"))
        {'type': 'image', 'data': 'YWJj', 'mimeType': 'image/png'}
        >>> from toolctx.content import File
        >>> part_content(File(b"%PDF", "application/pdf", name="q3.pdf"))
        {'type': 'resource', 'resource': {'uri': 'toolctx://part/1/q3.pdf', 'mimeType': 'application/pdf', 'blob': 'JVBERg=='}}
    """  # noqa: E501 - doctest lines
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    data = base64.b64encode(part.data).decode("ascii")
    if isinstance(part, Image):
        return {"type": "image", "data": data, "mimeType": part.mime_type}
    if isinstance(part, Audio):
        return {"type": "audio", "data": data, "mimeType": part.mime_type}
    uri = f"toolctx://part/{index}/{quote(part.name or 'file', safe='')}"
    return {
        "type": "resource",
        "resource": {"uri": uri, "mimeType": part.mime_type, "blob": data},
    }
