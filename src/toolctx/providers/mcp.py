"""Model Context Protocol: serve a registry's tools from an MCP server.

:func:`tools` gives the ``tools`` of a ``tools/list`` result,
:func:`parse_calls` reads ``tools/call`` requests, and
:func:`result_message` builds the ``CallToolResult`` to answer one with.
Everything is plain JSON-RPC data (camelCase keys, as on the wire); the
``mcp`` package's pydantic types accept it with ``model_validate`` and
its objects are accepted as payloads. The package is never imported.

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
from typing import Any

from toolctx._records import ToolCall, ToolResult
from toolctx.exceptions import ProviderPayloadError
from toolctx.providers._payload import as_list, as_mapping, load, make_call
from toolctx.providers._render import check_result, content_text, plain
from toolctx.tools.registry import Registry


__all__ = ["parse_calls", "result_message", "tools"]

_PROVIDER = "mcp"
_METHOD = "tools/call"


def tools(registry: Registry) -> list[dict[str, Any]]:
    """Return MCP ``Tool`` objects, in registration order.

    Each is ``{"name", "description", "inputSchema"}``, a fresh copy; put
    the list under ``"tools"`` in a ``tools/list`` result.

    .. versionadded:: 0.1.0
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
            ``CallToolRequest`` (no ``id``), or a list (a batch) of them;
            dicts or the ``mcp`` package's objects.

    Returns:
        One :class:`~toolctx.ToolCall` per request, in order, with the
        ``arguments`` object as arguments (absent means ``{}``) and ``id``
        set to the request id as a ``str`` (None when there is none).
        Answer with the request's own ``id``, which may be a number.

    Raises:
        ProviderPayloadError: A request is not a ``tools/call`` request or
            has no tool name.

    .. versionadded:: 0.1.0
    """
    data = load(payload)
    if isinstance(data, Mapping):
        return [_call(data, "the request")]
    requests = as_list(data, "a tools/call request or a list", _PROVIDER)
    return [
        _call(as_mapping(raw, f"request [{i}]", _PROVIDER), f"request [{i}]")
        for i, raw in enumerate(requests)
    ]


def _call(request: Mapping[str, Any], what: str) -> ToolCall:
    """One ``tools/call`` request as a ToolCall."""
    method = request.get("method")
    if method is not None and method != _METHOD:
        msg = (
            f"{what} calls the method {method!r}; parse_calls() reads "
            f"{_METHOD!r} requests only."
        )
        raise ProviderPayloadError(msg, provider=_PROVIDER)
    params = as_mapping(request.get("params"), f"{what}'s params", _PROVIDER)
    request_id = request.get("id")
    if isinstance(request_id, bool):
        request_id = None  # not a JSON-RPC id
    return make_call(
        params.get("name"),
        params.get("arguments"),
        request_id,
        what=what,
        provider=_PROVIDER,
    )


def result_message(result: ToolResult) -> dict[str, Any]:
    """Return the ``CallToolResult`` answering one call.

    ``{"content": [{"type": "text", "text": text}], "isError": bool}``
    where *text* is the error message for an error result, else the output
    (a ``str`` as is, anything else as compact JSON). When the output is a
    JSON object it is also sent as ``structuredContent``. Tool failures
    are results with ``"isError": true``, as MCP asks, never JSON-RPC
    errors. Host-only fields never appear.

    Raises:
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    result = check_result(result, "result_message")
    message: dict[str, Any] = {
        "content": [{"type": "text", "text": content_text(result)}],
        "isError": bool(result.is_error),
    }
    if not result.is_error and isinstance(result.output, Mapping):
        message["structuredContent"] = plain(result.output)
    return message
