"""parse_calls() takes every shape a user plausibly passes, or says why not.

Each shape is built with the SDK's own types (openai, anthropic,
google-genai, mcp); the same calls come back from each. A payload that is
none of the shapes raises a ProviderPayloadError naming what to pass,
never a silent ``[]``.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolctx import ToolCall
from toolctx.providers import (
    ProviderPayloadError,
    anthropic,
    gemini,
    mcp,
    openai,
)


EXPECTED = [ToolCall("add", '{"a": 1}', "call_1")]


class TestOpenAIChat:
    """Chat Completions: completion, choice(s), message, calls, one call."""

    @pytest.fixture(name="completion")
    def _completion(self) -> Any:
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {
                                        "name": "add",
                                        "arguments": '{"a": 1}',
                                    },
                                }
                            ],
                        },
                    }
                ],
            }
        )

    def test_every_shape(self, completion: Any) -> None:
        """The completion, choices, a choice, message, calls, one call."""
        choice = completion.choices[0]
        call = choice.message.tool_calls[0]
        shapes = [
            completion,
            completion.model_dump(),
            completion.choices,
            choice,
            choice.message,
            choice.message.tool_calls,
            call,
            call.model_dump(),
        ]
        for shape in shapes:
            assert openai.parse_calls(shape) == EXPECTED, shape

    def test_text_answer_has_no_calls(self, completion: Any) -> None:
        """A message that answers in text really has no calls."""
        message = completion.choices[0].message.model_copy(
            update={"tool_calls": None, "content": "Hi"}
        )
        assert openai.parse_calls(message) == []

    def test_stream_chunk_is_refused(self) -> None:
        """A streamed chunk names the way to the whole completion."""
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletionChunk

        chunk = ChatCompletionChunk.model_validate(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": "x"}}],
            }
        )
        with pytest.raises(ProviderPayloadError, match="get_final_completion"):
            openai.parse_calls(chunk)
        with pytest.raises(ProviderPayloadError, match="streamed chunk"):
            openai.parse_calls(chunk.choices)

    def test_user_message_is_refused(self) -> None:
        """A message that is not the assistant's says what to pass."""
        with pytest.raises(
            ProviderPayloadError, match="Pass a ChatCompletion"
        ):
            openai.parse_calls({"role": "user", "content": "hi"})

    def test_responses_items_are_refused(self) -> None:
        """Responses API items sent to parse_calls point to the right one."""
        item = {
            "type": "function_call",
            "call_id": "x",
            "name": "add",
            "arguments": "{}",
        }
        with pytest.raises(ProviderPayloadError, match="parse_responses"):
            openai.parse_calls([item])


class TestOpenAIResponses:
    """Responses API: response, output list, one function_call item."""

    @pytest.fixture(name="response")
    def _response(self) -> Any:
        pytest.importorskip("openai")
        from openai.types.responses import Response

        return Response.model_validate(
            {
                "id": "r",
                "object": "response",
                "created_at": 0,
                "model": "m",
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "output": [
                    {
                        "type": "message",
                        "id": "m1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [],
                    },
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_1",
                        "name": "add",
                        "arguments": '{"a": 1}',
                    },
                ],
            }
        )

    def test_every_shape(self, response: Any) -> None:
        """The response, its dump, its output and the one item."""
        item = response.output[1]
        for shape in (response, response.model_dump(), response.output, item):
            assert openai.parse_responses_calls(shape) == EXPECTED, shape

    def test_chat_calls_are_refused(self) -> None:
        """Chat Completions tool calls point to parse_calls()."""
        call = {"id": "x", "type": "function", "function": {"name": "a"}}
        with pytest.raises(ProviderPayloadError, match="parse_calls"):
            openai.parse_responses_calls([call])

    def test_stream_event_is_refused(self) -> None:
        """A stream event names the way to the final response."""
        event = {
            "type": "response.function_call_arguments.delta",
            "delta": "{",
        }
        with pytest.raises(ProviderPayloadError, match="get_final_response"):
            openai.parse_responses_calls(event)


class TestAnthropic:
    """Messages API: message, content list, one tool_use block."""

    @pytest.fixture(name="message")
    def _message(self) -> Any:
        pytest.importorskip("anthropic")
        from anthropic.types import Message

        return Message.model_validate(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
                "content": [
                    {"type": "text", "text": "Adding."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "add",
                        "input": {"a": 1},
                    },
                ],
            }
        )

    def test_every_shape(self, message: Any) -> None:
        """The message, its dump, its content and the one block."""
        block = message.content[1]
        for shape in (message, message.model_dump(), message.content, block):
            [call] = anthropic.parse_calls(shape)
            assert (call.name, call.arguments, call.id) == (
                "add",
                {"a": 1},
                "call_1",
            )

    def test_stream_event_is_refused(self) -> None:
        """A stream event names the way to the final message."""
        event = {"type": "content_block_delta", "index": 0, "delta": {}}
        with pytest.raises(ProviderPayloadError, match="get_final_message"):
            anthropic.parse_calls(event)

    def test_list_of_messages_is_refused(self, message: Any) -> None:
        """A conversation is not one response: pass the last message."""
        with pytest.raises(ProviderPayloadError, match="list of messages"):
            anthropic.parse_calls([message])


class TestGemini:
    """generateContent: response, candidate, content, parts, calls."""

    @pytest.fixture(name="response")
    def _response(self) -> Any:
        pytest.importorskip("google.genai")
        from google.genai import types

        return types.GenerateContentResponse.model_validate(
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {"text": "Adding."},
                                {
                                    "function_call": {
                                        "id": "call_1",
                                        "name": "add",
                                        "args": {"a": 1},
                                    }
                                },
                            ],
                        }
                    }
                ]
            }
        )

    def test_every_shape(self, response: Any) -> None:
        """Response, candidate, content, parts, one part, function_calls."""
        candidate = response.candidates[0]
        shapes = [
            response,
            response.model_dump(),
            candidate,
            candidate.content,
            candidate.content.parts,
            candidate.content.parts[1],
            response.function_calls,
            response.function_calls[0],
        ]
        for shape in shapes:
            [call] = gemini.parse_calls(shape)
            assert (call.name, call.arguments, call.id) == (
                "add",
                {"a": 1},
                "call_1",
            ), shape

    def test_function_calls_list_was_silently_empty(self) -> None:
        """response.function_calls (FunctionCall objects) gives the calls."""
        pytest.importorskip("google.genai")
        from google.genai import types

        calls = [
            types.FunctionCall(name="add", args={"a": 1}),
            types.FunctionCall(name="add", args={"a": 2}),
        ]
        assert [c.arguments for c in gemini.parse_calls(calls)] == [
            {"a": 1},
            {"a": 2},
        ]

    def test_text_answer_has_no_calls(self, response: Any) -> None:
        """A text-only answer has no calls; function_calls is None then."""
        from google.genai import types

        text = types.GenerateContentResponse.model_validate(
            {"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}
        )
        assert text.function_calls is None
        assert gemini.parse_calls(text) == []
        assert gemini.parse_calls(text.function_calls) == []

    def test_history_is_refused(self, response: Any) -> None:
        """A list of contents says what to pass instead."""
        contents = [response.candidates[0].content]
        with pytest.raises(ProviderPayloadError, match="list of contents"):
            gemini.parse_calls(contents)


class TestMcp:
    """tools/call: a request, a CallToolRequest, its params, a batch."""

    def test_every_shape(self) -> None:
        """The SDK's request and params objects parse like the JSON."""
        pytest.importorskip("mcp")
        from mcp import types

        params = types.CallToolRequestParams(name="add", arguments={"a": 1})
        request = types.CallToolRequest(params=params)
        for shape in (request, params, [request], params.model_dump()):
            [call] = mcp.parse_calls(shape)
            assert (call.name, call.arguments) == ("add", {"a": 1}), shape

    def test_request_without_params_is_refused(self) -> None:
        """A request without params says what to pass."""
        with pytest.raises(ProviderPayloadError, match="without params"):
            mcp.parse_calls({"jsonrpc": "2.0", "id": 1})
