"""Find the function calls in OpenAI response payloads, or refuse the payload.

The readers behind :func:`toolctx.providers.openai.parse_calls` (Chat
Completions: a completion, a choice, the assistant message, its
``tool_calls`` list or one tool call) and
:func:`toolctx.providers.openai.parse_responses_calls` (Responses API: a
response, its ``output`` list or one ``function_call`` item): each gets
at the list of call items and turns the function calls into
:class:`~toolctx.ToolCall` objects, and refuses what it cannot read (a
streamed chunk or event, the other API's payload, an unknown dict) with a
message saying what to pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolctx._records import ToolCall
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    keys_shown,
    make_call,
    refuse,
    unknown_dict,
)


PROVIDER: Final = "openai"
CHAT_INPUT: Final = (
    "a ChatCompletion, one of its choices, its message, the message's "
    "tool_calls list or one tool call (dicts or openai objects)"
)
RESPONSES_INPUT: Final = (
    "a Responses API Response, its output list or one function_call item "
    "(dicts or openai objects)"
)


# -- Chat Completions --------------------------------------------------------


def chat_items(data: Mapping[str, Any]) -> list[Any]:
    """The tool call list of a completion, choice, message or call."""
    if "choices" in data:
        if data.get("object") == "chat.completion.chunk":
            raise _chunk()
        choices = as_list(data["choices"], "'choices'", PROVIDER)
        if not choices:
            return []
        data = as_mapping(choices[0], "choices[0]", PROVIDER)
    if "delta" in data:
        raise _chunk()
    if "message" in data:
        data = as_mapping(data["message"], "the choice's message", PROVIDER)
    if "function" in data and "tool_calls" not in data:
        return [data]  # one tool call
    if "tool_calls" in data or data.get("role") == "assistant":
        return as_list(
            data.get("tool_calls"), "the message's 'tool_calls'", PROVIDER
        )
    if "output" in data:
        got = (
            "another API's payload (a Responses API response: use "
            "parse_responses_calls())"
        )
    else:
        got = unknown_dict(data)
    raise refuse("parse_calls", got, CHAT_INPUT, PROVIDER)


def _chunk() -> Exception:
    """The error refusing a streamed Chat Completions chunk."""
    return refuse(
        "parse_calls",
        "a streamed chunk (its tool calls arrive in pieces)",
        "the whole completion: with the SDK's stream helper, "
        "stream.get_final_completion()",
        PROVIDER,
    )


def chat_calls(items: list[Any]) -> list[ToolCall]:
    """ToolCalls from Chat Completions tool call items."""
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        item = as_mapping(raw, f"tool_calls[{index}]", PROVIDER)
        kind = item.get("type", "function")
        if kind == "function_call":
            raise refuse(
                "parse_calls",
                "a Responses API function_call item",
                "it to parse_responses_calls()",
                PROVIDER,
            )
        if kind != "function":
            continue
        if "function" not in item:
            raise refuse(
                "parse_calls",
                f"tool_calls[{index}] without 'function' (keys "
                f"{keys_shown(item)})",
                CHAT_INPUT,
                PROVIDER,
            )
        function = as_mapping(
            item["function"], f"tool_calls[{index}].function", PROVIDER
        )
        calls.append(
            make_call(
                function.get("name"),
                function.get("arguments"),
                item.get("id"),
                what=f"tool_calls[{index}]",
                provider=PROVIDER,
            )
        )
    return calls


# -- Responses API -----------------------------------------------------------


def responses_items(data: Mapping[str, Any]) -> list[Any]:
    """The output items of a response, or the one item given."""
    kind = data.get("type")
    if "output" in data and kind != "function_call_output":
        return as_list(data["output"], "the 'output' list", PROVIDER)
    if kind == "function_call":
        return [data]
    if isinstance(kind, str) and kind.startswith("response."):
        got = f"a stream event ({kind!r}); its function call arrives in pieces"
        expected = (
            "the final response: stream.get_final_response(), or the "
            "'response' of the 'response.completed' event"
        )
    elif "choices" in data or "tool_calls" in data:
        got = (
            "another API's payload (a Chat Completions payload: use "
            "parse_calls())"
        )
        expected = RESPONSES_INPUT
    else:
        got = unknown_dict(data)
        expected = RESPONSES_INPUT
    raise refuse("parse_responses_calls", got, expected, PROVIDER)


def responses_calls(items: list[Any]) -> list[ToolCall]:
    """ToolCalls from Responses API output items (other items skipped)."""
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        item = as_mapping(raw, f"output[{index}]", PROVIDER)
        kind = item.get("type")
        if kind == "function" or (kind is None and "function" in item):
            raise refuse(
                "parse_responses_calls",
                "a Chat Completions tool call",
                "Chat Completions payloads to parse_calls()",
                PROVIDER,
            )
        if kind is None:
            raise refuse(
                "parse_responses_calls",
                f"output[{index}] without a 'type' (keys {keys_shown(item)})",
                RESPONSES_INPUT,
                PROVIDER,
            )
        if kind != "function_call":
            continue
        calls.append(
            make_call(
                item.get("name"),
                item.get("arguments"),
                item.get("call_id"),
                what=f"output[{index}]",
                provider=PROVIDER,
            )
        )
    return calls
