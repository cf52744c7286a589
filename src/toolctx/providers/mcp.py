"""Model Context Protocol: serve a registry's tools from an MCP server.

:func:`tools` gives the ``tools`` of a ``tools/list`` result,
:func:`parse_calls` reads ``tools/call`` requests, and
:func:`result_message` builds the ``CallToolResult`` to answer one with.
Everything is plain JSON-RPC data (camelCase keys, as on the wire); the
``mcp`` package's pydantic types accept it with ``model_validate`` and
its objects are accepted as payloads. The package is never imported. The
values are typed (:class:`ToolDict`, :class:`CallToolResultDict`); a
content result's parts become MCP image, audio and embedded resource
content.

These are the shapes toolctx's own server (:mod:`toolctx.mcp`) sends:
a host that runs its own MCP server and answers with them sends exactly
what ``toolctx serve`` would.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import mcp
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> mcp.tools(registry)[0]["inputSchema"]["required"]
    ['a', 'b']
    >>> request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
    ...            "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}
    >>> [call] = mcp.parse_calls(request)
    >>> call.id
    '7'
    >>> result = Dispatcher(registry).dispatch(call)
    >>> message = mcp.result_message(result, registry)
    >>> message["content"], message["structuredContent"]
    ([{'type': 'text', 'text': '5'}], {'result': 5})
    >>> response = {"jsonrpc": "2.0", "id": request["id"], "result": message}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import quote

from toolctx._records import ToolCall, ToolResult
from toolctx._text import escaped
from toolctx.content import Audio, File, Image, Part, Text, parts_of
from toolctx.exceptions import ProviderPayloadError
from toolctx.providers._mcp_output import output_schema, wrapped
from toolctx.providers._mcp_params import (
    AudioContentDict,
    BlobResourceContentsDict,
    CallToolResultDict,
    ContentBlockDict,
    EmbeddedResourceDict,
    ImageContentDict,
    TextContentDict,
    TextResourceContentsDict,
    ToolAnnotationsDict,
    ToolDict,
)
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    keys_shown,
    load,
    make_call,
    refuse,
)
from toolctx.providers._render import (
    b64,
    check_result,
    content_text,
    error_text,
    plain,
    plain_output,
)


if TYPE_CHECKING:
    from toolctx._records import ToolDefinition
    from toolctx._tools.registry import Registry


__all__ = [
    "AudioContentDict",
    "BlobResourceContentsDict",
    "CallToolResultDict",
    "ContentBlockDict",
    "EmbeddedResourceDict",
    "ImageContentDict",
    "TextContentDict",
    "TextResourceContentsDict",
    "ToolAnnotationsDict",
    "ToolDict",
    "parse_calls",
    "result_message",
    "tools",
]

_PROVIDER = "mcp"
_METHOD = "tools/call"
_HINTS: Final = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)
_INPUT: Final = (
    "a tools/call JSON-RPC request, a CallToolRequest, its params "
    "(name and arguments) or a list of requests (dicts or mcp objects)"
)


def tools(registry: Registry) -> list[ToolDict]:
    """Return MCP ``Tool`` objects, in registration order.

    Each is ``{"name", "title", "description", "inputSchema",
    "outputSchema", "annotations"}``, a fresh copy, with ``title``,
    ``outputSchema`` and ``annotations`` only when the definition has
    them; put the list under ``"tools"`` in a ``tools/list`` result.
    ``annotations`` holds the hints that are set (``readOnlyHint``,
    ``destructiveHint``, ``idempotentHint``, ``openWorldHint``).
    ``outputSchema`` is the tool's output schema when it describes an
    object (also the object a top-level ``$ref`` points to, a dataclass
    or model output); MCP wants an object there, so any other schema is
    wrapped as ``{"type": "object", "properties": {"result": <schema>},
    "required": ["result"]}``, as the SDK's ``MCPServer`` and FastMCP do,
    with its ``$defs`` moved to the wrapper, where its references point.
    :func:`result_message` with the same registry then sends
    ``structuredContent`` to match.

    Example:
        >>> from toolctx import Registry, ToolAnnotations
        >>> registry = Registry()
        >>> @registry.tool(annotations=ToolAnnotations(read_only=True))
        ... def count(word: str) -> int:
        ...     '''Count the letters of a word.'''
        ...     return len(word)
        >>> [entry] = tools(registry)
        >>> entry["outputSchema"]["properties"], entry["annotations"]
        ({'result': {'type': 'integer'}}, {'readOnlyHint': True})

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed (:class:`ToolDict`); ``title``,
       ``outputSchema`` and ``annotations``.
    """
    return [_tool(definition) for definition in registry.definitions()]


def _tool(definition: ToolDefinition) -> ToolDict:
    """One ``tools/list`` entry, keys in the order MCP lists them."""
    entry: ToolDict
    if definition.title is None:
        entry = {
            "name": definition.name,
            "description": definition.description,
            "inputSchema": plain(definition.parameters),
        }
    else:
        entry = {
            "name": definition.name,
            "title": definition.title,
            "description": definition.description,
            "inputSchema": plain(definition.parameters),
        }
    schema = output_schema(definition.output_schema)
    if schema is not None:
        entry["outputSchema"] = schema
    annotations = definition.annotations
    if annotations is not None:
        hints = {
            key: getattr(annotations, name)
            for name, key in _HINTS
            if getattr(annotations, name) is not None
        }
        if hints:
            entry["annotations"] = cast("ToolAnnotationsDict", hints)
    return entry


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the calls of one ``tools/call`` request or of a list of them.

    Args:
        payload: A JSON-RPC request ``{"jsonrpc", "id", "method":
            "tools/call", "params": {"name", "arguments"}}``, a
            ``CallToolRequest`` (no ``id``), its ``params`` alone
            (``CallToolRequestParams``), or a list (a batch) of requests;
            dicts or the ``mcp`` package's objects.

    Returns:
        One :class:`~toolctx.ToolCall` per request, in order, with the
        ``arguments`` object as arguments (absent means ``{}``) and ``id``
        set to the request id as a ``str`` (None when there is none).
        Answer with the request's own ``id``, which may be a number.

    Raises:
        ProviderPayloadError: A request is not a ``tools/call`` request or
            has no tool name; the message says what to pass.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Also the params alone.
    """
    data = load(payload)
    if isinstance(data, Mapping):
        return [_call(data, "the request")]
    requests = as_list(data, _INPUT, _PROVIDER)
    return [
        _call(as_mapping(raw, f"request [{i}]", _PROVIDER), f"request [{i}]")
        for i, raw in enumerate(requests)
    ]


def _call(request: Mapping[str, Any], what: str) -> ToolCall:
    """One ``tools/call`` request (or its params) as a ToolCall."""
    method = request.get("method")
    if method is not None and method != _METHOD:
        msg = (
            f"{what} calls the method {method!r}; parse_calls() reads "
            f"{_METHOD!r} requests only."
        )
        raise ProviderPayloadError(msg, provider=_PROVIDER)
    if "params" in request:
        params = as_mapping(request["params"], f"{what}'s params", _PROVIDER)
    elif method is None and "name" in request:
        params = request  # CallToolRequestParams
    else:
        raise refuse(
            "parse_calls",
            f"{what} without params (keys {keys_shown(request)})",
            _INPUT,
            _PROVIDER,
        )
    request_id = request.get("id") if params is not request else None
    if isinstance(request_id, bool):
        request_id = None  # not a JSON-RPC id
    return make_call(
        params.get("name"),
        params.get("arguments"),
        request_id,
        what=what,
        provider=_PROVIDER,
    )


def result_message(
    result: ToolResult, registry: Registry | None = None
) -> CallToolResultDict:
    """Return the ``CallToolResult`` answering one call.

    ``{"content": [{"type": "text", "text": text}], "isError": bool,
    "resultType": "complete"}`` where *text* is the error message for an
    error result, else the output (a ``str`` as is, anything else as
    compact JSON). ``resultType`` is required by the 2026-07-28 protocol
    and ignored by clients of earlier versions.

    JSON output is also sent as ``structuredContent``, shaped by the
    ``outputSchema`` that :func:`tools` lists for the tool in *registry*:
    ``{"result": output}`` when that schema is wrapped (a non-object
    output), the output itself when it is an object. Without *registry*,
    or for a tool that is not in it or has no output schema, an object
    output is sent as it is and any other output has none. Pass the
    registry you listed: a client such as the SDK's checks
    ``structuredContent`` against the listed ``outputSchema`` and rejects
    a result without it.

    A content result sends one block per part, and no
    ``structuredContent``: ``text``, ``image`` and ``audio`` blocks
    (base64 data) and, for a file, an embedded ``resource`` at
    ``toolctx://part/<n>/<name>`` (*n* counts the parts from 1; ``file``
    without a name): a text resource for a ``text/*`` file in UTF-8 (the
    model reads it as text, and the bytes round-trip exactly), a base64
    ``blob`` for any other file. Tool failures are results with
    ``"isError": true``, as MCP asks, never JSON-RPC errors. Host-only
    fields never appear.

    Args:
        result: The dispatcher's result.
        registry: The registry whose tools :func:`tools` listed.

    Raises:
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.
        ValueError: *result* is waiting for approval (``result.approval``
            is set): nothing ran; send the result of
            :meth:`Dispatcher.resume <toolctx.Dispatcher.resume>` instead.

    Example:
        >>> from toolctx import Registry, ToolResult
        >>> registry = Registry()
        >>> @registry.tool
        ... def count(word: str) -> int:
        ...     '''Count the letters of a word.'''
        ...     return len(word)
        >>> result_message(ToolResult(name="count", output=4), registry)
        {'content': [{'type': 'text', 'text': '4'}], 'isError': False, 'resultType': 'complete', 'structuredContent': {'result': 4}}

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed; content results; *registry*;
       ``resultType``.
    """  # noqa: E501 - a doctest line
    result = check_result(result, "result_message")
    if result.is_error:
        return {
            "content": [{"type": "text", "text": error_text(result)}],
            "isError": True,
            "resultType": "complete",
        }
    output = result.output
    parts = parts_of(output)
    if parts is not None:
        return {
            "content": [_block(part, i) for i, part in enumerate(parts, 1)],
            "isError": False,
            "resultType": "complete",
        }
    message: CallToolResultDict = {
        "content": [{"type": "text", "text": content_text(result)}],
        "isError": False,
        "resultType": "complete",
    }
    entry = None if registry is None else registry.entry(result.name)
    schema = None if entry is None else entry.definition.output_schema
    if schema is not None and wrapped(schema):
        message["structuredContent"] = {"result": plain_output(output)}
    elif isinstance(output, Mapping):
        message["structuredContent"] = plain_output(output)
    return message


def _block(part: Part, index: int) -> ContentBlockDict:
    """One content block for *part*."""
    if isinstance(part, Text):
        text: TextContentDict = {"type": "text", "text": escaped(part.text)}
        return text
    if isinstance(part, Image):
        image: ImageContentDict = {
            "type": "image",
            "data": b64(part),
            "mimeType": part.mime_type,
        }
        return image
    if isinstance(part, Audio):
        audio: AudioContentDict = {
            "type": "audio",
            "data": b64(part),
            "mimeType": part.mime_type,
        }
        return audio
    return _resource(part, index)


def _resource(part: File, index: int) -> EmbeddedResourceDict:
    """An embedded resource carrying a file part."""
    name = quote(escaped(part.name or "file"), safe="")
    uri = f"toolctx://part/{index}/{name}"
    contents: TextResourceContentsDict | BlobResourceContentsDict
    text = _utf8(part) if part.mime_type.startswith("text/") else None
    if text is not None:
        contents = {"uri": uri, "mimeType": part.mime_type, "text": text}
    else:
        contents = {"uri": uri, "mimeType": part.mime_type, "blob": b64(part)}
    return {"type": "resource", "resource": contents}


def _utf8(part: File) -> str | None:
    """The file's text if it is UTF-8, else None."""
    try:
        return part.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
