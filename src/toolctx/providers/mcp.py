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
    >>> result = mcp.result_message(Dispatcher(registry).dispatch(call))
    >>> result
    {'content': [{'type': 'text', 'text': '5'}], 'isError': False}
    >>> response = {"jsonrpc": "2.0", "id": request["id"], "result": result}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

from toolctx._records import ToolCall, ToolResult
from toolctx.content import Audio, File, Image, Part, Text
from toolctx.exceptions import ProviderPayloadError
from toolctx.providers._mcp_params import (
    AudioContentDict,
    BlobResourceContentsDict,
    CallToolResultDict,
    ContentBlockDict,
    EmbeddedResourceDict,
    ImageContentDict,
    TextContentDict,
    TextResourceContentsDict,
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
    content_parts,
    content_text,
    plain,
)
from toolctx.tools.registry import Registry


__all__ = [
    "AudioContentDict",
    "BlobResourceContentsDict",
    "CallToolResultDict",
    "ContentBlockDict",
    "EmbeddedResourceDict",
    "ImageContentDict",
    "TextContentDict",
    "TextResourceContentsDict",
    "ToolDict",
    "parse_calls",
    "result_message",
    "tools",
]

_PROVIDER = "mcp"
_METHOD = "tools/call"
_INPUT: Final = (
    "a tools/call JSON-RPC request, a CallToolRequest, its params "
    "(name and arguments) or a list of requests (dicts or mcp objects)"
)


def tools(registry: Registry) -> list[ToolDict]:
    """Return MCP ``Tool`` objects, in registration order.

    Each is ``{"name", "description", "inputSchema"}``, a fresh copy; put
    the list under ``"tools"`` in a ``tools/list`` result.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed (:class:`ToolDict`).
    """
    return [
        {
            "name": definition.name,
            "description": definition.description,
            "inputSchema": plain(definition.parameters),
        }
        for definition in registry.definitions()
    ]


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


def result_message(result: ToolResult) -> CallToolResultDict:
    """Return the ``CallToolResult`` answering one call.

    ``{"content": [{"type": "text", "text": text}], "isError": bool}``
    where *text* is the error message for an error result, else the output
    (a ``str`` as is, anything else as compact JSON). When the output is a
    JSON object it is also sent as ``structuredContent``. A content result
    sends one block per part: ``text``, ``image`` and ``audio`` blocks
    (base64 data) and, for a file, an embedded ``resource`` (its text for
    a UTF-8 ``text/*`` file, else a base64 ``blob``) at
    ``toolctx://part/<n>/<name>``. Tool failures are results with
    ``"isError": true``, as MCP asks, never JSON-RPC errors. Host-only
    fields never appear.

    Raises:
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed; content results.
    """
    result = check_result(result, "result_message")
    parts = content_parts(result)
    content: list[ContentBlockDict]
    if parts is None:
        content = [{"type": "text", "text": content_text(result)}]
    else:
        content = [_block(part, i) for i, part in enumerate(parts, 1)]
    message: CallToolResultDict = {
        "content": content,
        "isError": bool(result.is_error),
    }
    if not result.is_error and isinstance(result.output, Mapping):
        message["structuredContent"] = plain(result.output)
    return message


def _block(part: Part, index: int) -> ContentBlockDict:
    """One content block for *part*."""
    if isinstance(part, Text):
        text: TextContentDict = {"type": "text", "text": part.text}
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
    uri = f"toolctx://part/{index}/{quote(part.name or 'file', safe='')}"
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
