"""toolctx.providers.anthropic: Messages API tools, tool_use, tool_result."""

from __future__ import annotations

from typing import Any

import pytest

from toolctx import Dispatcher, Registry, ToolResult, tool
from toolctx.providers import ProviderPayloadError
from toolctx.providers import anthropic as provider


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> dict[str, str]:
    """Echo the text back."""
    return {"text": text}


@pytest.fixture(name="registry")
def _registry() -> Registry:
    return Registry([add, echo])


MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [
        {"type": "text", "text": "Let me do both."},
        {
            "type": "tool_use",
            "id": "toolu_a",
            "name": "add",
            "input": {"a": 1},
        },
        {
            "type": "tool_use",
            "id": "toolu_b",
            "name": "echo",
            "input": {"text": "hé"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 20},
}


class TestTools:
    """tools(): the Messages API tools parameter."""

    def test_shape(self, registry: Registry) -> None:
        """Each entry has name, description and input_schema."""
        assert provider.tools(registry)[1] == {
            "name": "echo",
            "description": "Echo the text back.",
            "input_schema": dict(echo.definition().parameters),
        }

    def test_sdk_accepts_entries(self, registry: Registry) -> None:
        """The SDK's ToolParam validates every entry as is."""
        pytest.importorskip("anthropic")
        from anthropic.types import ToolParam
        from pydantic import TypeAdapter

        for entry in provider.tools(registry):
            assert TypeAdapter(ToolParam).validate_python(entry) == entry


class TestParse:
    """parse_calls(): tool_use blocks."""

    def test_parallel_tool_use(self) -> None:
        """Every tool_use block is a call, in order, input as arguments."""
        calls = provider.parse_calls(MESSAGE)
        assert [(c.name, c.arguments, c.id) for c in calls] == [
            ("add", {"a": 1}, "toolu_a"),
            ("echo", {"text": "hé"}, "toolu_b"),
        ]

    def test_block_list(self) -> None:
        """The content list parses like the whole message."""
        assert provider.parse_calls(MESSAGE["content"]) == (
            provider.parse_calls(MESSAGE)
        )

    def test_other_blocks_are_skipped(self) -> None:
        """Text, thinking and server tool blocks are not client calls."""
        content = [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "x"},
            },
            {"type": "text", "text": "done"},
        ]
        assert provider.parse_calls({"content": content}) == []

    def test_string_content(self) -> None:
        """A message whose content is a plain string has no calls."""
        assert provider.parse_calls({"role": "user", "content": "hi"}) == []

    def test_tool_use_without_name(self) -> None:
        """A tool_use block without a name is a payload error."""
        block = {"type": "tool_use", "id": "t", "input": {}}
        with pytest.raises(ProviderPayloadError, match=r"content\[0\]"):
            provider.parse_calls([block])

    def test_sdk_message(self) -> None:
        """An anthropic Message object, its dump and content all parse."""
        pytest.importorskip("anthropic")
        from anthropic.types import Message

        message = Message.model_validate(MESSAGE)
        expected = provider.parse_calls(MESSAGE)
        assert provider.parse_calls(message) == expected
        assert provider.parse_calls(message.model_dump()) == expected
        assert provider.parse_calls(message.content) == expected


class TestResults:
    """result_block(), result_message(), results_message()."""

    def test_one_message_for_a_turn(self, registry: Registry) -> None:
        """All results of a turn go in one user message, in call order."""
        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(MESSAGE)
        )
        assert provider.results_message(results) == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": "3",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": '{"text":"hé"}',
                },
            ],
        }

    def test_single_result_message(self) -> None:
        """result_message() wraps one block in a user message."""
        result = ToolResult(name="echo", call_id="toolu_x", output="plain")
        assert provider.result_message(result) == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_x",
                    "content": "plain",
                }
            ],
        }

    def test_error_block(self) -> None:
        """An error result is flagged is_error and shows the message."""
        result = ToolResult(
            name="add", call_id="toolu_e", is_error=True, error="b is text"
        )
        assert provider.result_block(result) == {
            "type": "tool_result",
            "tool_use_id": "toolu_e",
            "content": "b is text",
            "is_error": True,
        }

    def test_no_results(self) -> None:
        """An empty turn cannot be sent: a clear ValueError."""
        with pytest.raises(ValueError, match="at least one ToolResult"):
            provider.results_message([])

    def test_missing_call_id(self) -> None:
        """A result without call_id names the tool_use_id it lacks."""
        with pytest.raises(ProviderPayloadError, match="tool_use_id"):
            provider.result_block(ToolResult(name="add", output=1))

    def test_sdk_accepts_messages(self, registry: Registry) -> None:
        """ToolResultBlockParam and MessageParam validate the output."""
        pytest.importorskip("anthropic")
        from anthropic.types import MessageParam, ToolResultBlockParam
        from pydantic import TypeAdapter

        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(MESSAGE)
        )
        failed = ToolResult(name="x", call_id="t", is_error=True, error="no")
        message = provider.results_message([*results, failed])
        block_adapter = TypeAdapter(ToolResultBlockParam)
        for block in message["content"]:
            assert block_adapter.validate_python(block) == block
        message_adapter = TypeAdapter(MessageParam)  # keep it alive
        validated = message_adapter.validate_python(message)
        assert validated["role"] == "user"
        assert len(list(validated["content"])) == 3
