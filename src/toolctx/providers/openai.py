"""OpenAI: the Chat Completions API and the Responses API.

Chat Completions
    :func:`tools` (the ``tools`` request parameter), :func:`parse_calls`
    (``choices[0].message.tool_calls``) and :func:`result_message` (a
    ``{"role": "tool"}`` message per result).
Responses API
    :func:`responses_tools`, :func:`parse_responses_calls` (the
    ``function_call`` items of ``output``) and :func:`responses_result_item`
    (a ``function_call_output`` input item per result).

Both accept plain dicts shaped as the API documents them and the
``openai`` package's response objects; the package itself is never
imported. With ``strict=True`` each tool's schema is rewritten for
Structured Outputs' strict mode: every property becomes required (the
model then always sends a value; a default is named in the description),
and schemas strict mode cannot express raise
:class:`~toolctx.providers.ProviderSchemaError`.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import openai
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> openai.tools(registry)[0]["function"]["name"]
    'add'
    >>> message = {
    ...     "role": "assistant",
    ...     "tool_calls": [{
    ...         "id": "call_1",
    ...         "type": "function",
    ...         "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
    ...     }],
    ... }
    >>> [call] = openai.parse_calls(message)
    >>> openai.result_message(Dispatcher(registry).dispatch(call))
    {'role': 'tool', 'tool_call_id': 'call_1', 'content': '5'}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolctx._records import ToolCall, ToolDefinition, ToolResult
from toolctx.providers._dialects import openai_strict
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    expect_keys,
    load,
    make_call,
)
from toolctx.providers._render import (
    check_result,
    content_text,
    plain,
    require_call_id,
)
from toolctx.tools.registry import Registry


__all__ = [
    "parse_calls",
    "parse_responses_calls",
    "responses_result_item",
    "responses_tools",
    "result_message",
    "tools",
]

_PROVIDER = "openai"


def _parameters(definition: ToolDefinition, *, strict: bool) -> Any:
    """The definition's parameters, rewritten for strict mode if asked."""
    if strict:
        return openai_strict(definition.parameters, tool=definition.name)
    return plain(definition.parameters)


# -- Chat Completions --------------------------------------------------------


def tools(registry: Registry, *, strict: bool = False) -> list[dict[str, Any]]:
    """Return the Chat Completions ``tools`` list, in registration order.

    Each entry is ``{"type": "function", "function": {"name",
    "description", "parameters"}}``, plus ``"strict": true`` inside
    ``function`` when *strict* is set. The dicts are fresh copies. An empty
    registry gives ``[]``: leave ``tools`` out of the request then.

    Args:
        registry: The tools to offer.
        strict: Enable Structured Outputs for the calls, rewriting every
            schema for strict mode (all properties required, defaults named
            in descriptions, unsupported annotations dropped).

    Raises:
        ProviderSchemaError: *strict* is set and a schema cannot be made
            strict (free-form ``dict[str, T]`` or ``Any`` values, tuples);
            the message names the tool and the place.

    .. versionadded:: 0.1.0
    """
    entries: list[dict[str, Any]] = []
    for definition in registry.definitions():
        function: dict[str, Any] = {
            "name": definition.name,
            "description": definition.description,
            "parameters": _parameters(definition, strict=strict),
        }
        if strict:
            function["strict"] = True
        entries.append({"type": "function", "function": function})
    return entries


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a Chat Completions response, in order.

    Args:
        payload: A whole ``ChatCompletion`` (``choices[0].message`` is
            read), an assistant message (a dict with ``tool_calls``), or
            the ``tool_calls`` list itself; plain dicts or the ``openai``
            package's objects. Each call's ``arguments`` JSON text is kept
            as is: the dispatcher validates it.

    Returns:
        One :class:`~toolctx.ToolCall` per ``function`` tool call, with
        ``id`` set to the call's ``id``; calls of other types (custom
        tools) are skipped. A message without tool calls gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is not shaped like a completion,
            a message or a list of tool calls, or a call has no name.

    .. versionadded:: 0.1.0
    """
    data = load(payload)
    if isinstance(data, Mapping):
        expect_keys(
            data,
            ("choices", "tool_calls", "role"),
            "a ChatCompletion or an assistant message (for the Responses "
            "API use parse_responses_calls())",
            _PROVIDER,
        )
        if "choices" in data:
            choices = as_list(data["choices"], "'choices'", _PROVIDER)
            if not choices:
                return []
            choice = as_mapping(choices[0], "choices[0]", _PROVIDER)
            data = as_mapping(
                choice.get("message"), "choices[0].message", _PROVIDER
            )
        items = as_list(
            data.get("tool_calls"), "the message's 'tool_calls'", _PROVIDER
        )
    else:
        items = as_list(
            data, "a ChatCompletion, a message or tool_calls", _PROVIDER
        )
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        item = as_mapping(raw, f"tool_calls[{index}]", _PROVIDER)
        if item.get("type", "function") != "function":
            continue
        function = as_mapping(
            item.get("function"), f"tool_calls[{index}].function", _PROVIDER
        )
        calls.append(
            make_call(
                function.get("name"),
                function.get("arguments"),
                item.get("id"),
                what=f"tool_calls[{index}]",
                provider=_PROVIDER,
            )
        )
    return calls


def result_message(result: ToolResult) -> dict[str, Any]:
    """Return the Chat Completions tool message answering one call.

    ``{"role": "tool", "tool_call_id": result.call_id, "content": text}``
    where *text* is the error message for an error result, else the output
    (a ``str`` as is, anything else as compact JSON). Host-only fields
    (metadata, state changes, the exception) never appear.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    result = check_result(result, "result_message")
    return {
        "role": "tool",
        "tool_call_id": require_call_id(
            result, provider=_PROVIDER, field="tool_call_id"
        ),
        "content": content_text(result),
    }


# -- Responses API -----------------------------------------------------------


def responses_tools(
    registry: Registry, *, strict: bool = False
) -> list[dict[str, Any]]:
    """Return the Responses API ``tools`` list, in registration order.

    Each entry is ``{"type": "function", "name", "description",
    "parameters", "strict"}``. ``strict`` is always written out, because
    the Responses API turns strict mode *on* when it is omitted.

    Args:
        registry: The tools to offer.
        strict: Enable strict mode, rewriting every schema as
            :func:`tools` does.

    Raises:
        ProviderSchemaError: *strict* is set and a schema cannot be made
            strict.

    .. versionadded:: 0.1.0
    """
    return [
        {
            "type": "function",
            "name": definition.name,
            "description": definition.description,
            "parameters": _parameters(definition, strict=strict),
            "strict": strict,
        }
        for definition in registry.definitions()
    ]


def parse_responses_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a Responses API response, in order.

    Args:
        payload: A whole ``Response`` (its ``output`` is read) or the
            ``output`` list itself; plain dicts or the ``openai`` package's
            objects.

    Returns:
        One :class:`~toolctx.ToolCall` per ``function_call`` item, with
        ``id`` set to the item's ``call_id`` (not its ``id``). Other items
        (messages, reasoning, built-in tool calls) are skipped.

    Raises:
        ProviderPayloadError: The payload is not a response or an output
            list, or a call has no name.

    .. versionadded:: 0.1.0
    """
    data = load(payload)
    if isinstance(data, Mapping):
        expect_keys(
            data,
            ("output",),
            "a Responses API Response (for Chat Completions use "
            "parse_calls())",
            _PROVIDER,
        )
        items = as_list(data["output"], "the 'output' list", _PROVIDER)
    else:
        items = as_list(data, "a Response or its output list", _PROVIDER)
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        item = as_mapping(raw, f"output[{index}]", _PROVIDER)
        if item.get("type") != "function_call":
            continue
        calls.append(
            make_call(
                item.get("name"),
                item.get("arguments"),
                item.get("call_id"),
                what=f"output[{index}]",
                provider=_PROVIDER,
            )
        )
    return calls


def responses_result_item(result: ToolResult) -> dict[str, Any]:
    """Return the Responses API input item answering one call.

    ``{"type": "function_call_output", "call_id": result.call_id,
    "output": text}`` with the same text as :func:`result_message`.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    result = check_result(result, "responses_result_item")
    return {
        "type": "function_call_output",
        "call_id": require_call_id(
            result, provider=_PROVIDER, field="call_id"
        ),
        "output": content_text(result),
    }
