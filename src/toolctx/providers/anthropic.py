"""Anthropic: the Messages API's client tools.

:func:`tools` gives the ``tools`` request parameter, :func:`parse_calls`
reads the ``tool_use`` blocks of a response, and :func:`result_message` /
:func:`results_message` build the ``user`` message carrying
``tool_result`` blocks. Anthropic wants *all* results of one assistant
turn in a single user message, in any order, so use
:func:`results_message` for parallel calls. Plain dicts and the
``anthropic`` package's objects are both accepted; the package is never
imported.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import anthropic
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> sorted(anthropic.tools(registry)[0])
    ['description', 'input_schema', 'name']
    >>> response = {
    ...     "role": "assistant",
    ...     "content": [
    ...         {"type": "text", "text": "Adding."},
    ...         {"type": "tool_use", "id": "toolu_1", "name": "add",
    ...          "input": {"a": 2, "b": 3}},
    ...     ],
    ... }
    >>> calls = anthropic.parse_calls(response)
    >>> results = Dispatcher(registry).dispatch_all(calls)
    >>> anthropic.results_message(results)
    {'role': 'user', 'content': [{'type': 'tool_result',
        'tool_use_id': 'toolu_1', 'content': '5'}]}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolctx._records import ToolCall, ToolResult
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    expect_keys,
    load,
    make_call,
)
from toolctx.providers._render import (
    check_result,
    check_turn_results,
    content_text,
    plain,
    require_call_id,
)
from toolctx.tools.registry import Registry


__all__ = [
    "parse_calls",
    "result_block",
    "result_message",
    "results_message",
    "tools",
]

_PROVIDER = "anthropic"


def tools(registry: Registry) -> list[dict[str, Any]]:
    """Return the Messages API ``tools`` list, in registration order.

    Each entry is ``{"name", "description", "input_schema"}``, a fresh
    copy: add ``"cache_control": {"type": "ephemeral"}`` to the last one
    to cache the tool definitions.

    .. versionadded:: 0.1.0
    """
    return [
        {
            "name": definition.name,
            "description": definition.description,
            "input_schema": plain(definition.parameters),
        }
        for definition in registry.definitions()
    ]


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the ``tool_use`` blocks of a response as calls, in order.

    Args:
        payload: A whole ``Message`` response or an assistant message
            (a dict with ``content``), or the ``content`` block list
            itself; plain dicts or the ``anthropic`` package's objects.

    Returns:
        One :class:`~toolctx.ToolCall` per ``tool_use`` block, with ``id``
        set to the block's ``id`` and the ``input`` object as arguments.
        Other blocks (text, thinking, server tools) are skipped; a string
        ``content`` gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is not a message or a block
            list, or a ``tool_use`` block has no name.

    .. versionadded:: 0.1.0
    """
    data = load(payload)
    if isinstance(data, Mapping):
        expect_keys(data, ("content",), "a Message", _PROVIDER)
        data = data["content"]
        if isinstance(data, str):
            return []
    blocks = as_list(data, "a Message or its content blocks", _PROVIDER)
    calls: list[ToolCall] = []
    for index, raw in enumerate(blocks):
        block = as_mapping(raw, f"content[{index}]", _PROVIDER)
        if block.get("type") != "tool_use":
            continue
        calls.append(
            make_call(
                block.get("name"),
                block.get("input"),
                block.get("id"),
                what=f"content[{index}]",
                provider=_PROVIDER,
            )
        )
    return calls


def result_block(result: ToolResult) -> dict[str, Any]:
    """Return the ``tool_result`` content block answering one call.

    ``{"type": "tool_result", "tool_use_id", "content": text}`` plus
    ``"is_error": true`` for an error result; *text* is the error message,
    or the output (a ``str`` as is, anything else as compact JSON).
    Host-only fields never appear.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    result = check_result(result, "result_block")
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": require_call_id(
            result, provider=_PROVIDER, field="tool_use_id"
        ),
        "content": content_text(result),
    }
    if result.is_error:
        block["is_error"] = True
    return block


def result_message(result: ToolResult) -> dict[str, Any]:
    """Return a ``user`` message carrying one ``tool_result`` block.

    When the assistant made several calls in one turn, send
    :func:`results_message` instead: Anthropic expects every result of the
    turn in one message.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.

    .. versionadded:: 0.1.0
    """
    return results_message([result])


def results_message(results: Iterable[ToolResult]) -> dict[str, Any]:
    """Return one ``user`` message with a ``tool_result`` block per result.

    Blocks follow the order of *results* (as
    :meth:`~toolctx.Dispatcher.dispatch_all` returns them). Append text
    blocks to ``content`` after them if you have more to say.

    Raises:
        ProviderPayloadError: A result has no ``call_id``.
        ValueError: *results* is empty (Anthropic rejects an empty
            message).
        TypeError: An item is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    checked = check_turn_results(
        results, "Anthropic rejects a user message without content."
    )
    return {"role": "user", "content": [result_block(r) for r in checked]}
