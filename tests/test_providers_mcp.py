"""toolctx.providers.mcp: Tool objects, tools/call, CallToolResult."""

from __future__ import annotations

from typing import Any

import pytest

from toolctx import Dispatcher, Registry, ToolResult, tool
from toolctx.providers import ProviderPayloadError
from toolctx.providers import mcp as provider


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> dict[str, str]:
    """Echo the text back."""
    return {"text": text}


@tool
def letters(word: str) -> list[str]:
    """Split a word into letters."""
    return list(word)


@pytest.fixture(name="registry")
def _registry() -> Registry:
    return Registry([add, echo, letters])


def _jsonrpc(name: str) -> Any:
    """A JSON-RPC model class of the installed mcp (1.x or 2.x layout)."""
    types = pytest.importorskip("mcp.types")
    try:
        from mcp.types import jsonrpc  # mcp 2.x
    except ImportError:  # mcp 1.x keeps them in mcp.types
        return getattr(types, name)
    return getattr(jsonrpc, name)


def _request(
    request_id: object, name: str, **arguments: Any
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


class TestTools:
    """tools(): MCP Tool objects."""

    def test_shape(self, registry: Registry) -> None:
        """Each tool has name, description and inputSchema, in order."""
        entries = provider.tools(registry)
        assert [e["name"] for e in entries] == ["add", "echo", "letters"]
        assert entries[0] == {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": dict(add.definition().parameters),
        }

    def test_sdk_accepts_tools(self, registry: Registry) -> None:
        """mcp.types.Tool and ListToolsResult read the list back exactly."""
        types = pytest.importorskip("mcp.types")
        entries = provider.tools(registry)
        for entry in entries:
            validated = types.Tool.model_validate(entry)
            dumped = validated.model_dump(by_alias=True, exclude_unset=True)
            assert dumped == entry
        listed = types.ListToolsResult.model_validate({"tools": entries})
        assert [t.name for t in listed.tools] == ["add", "echo", "letters"]


class TestParse:
    """parse_calls(): tools/call requests."""

    def test_one_request(self) -> None:
        """Name, arguments and the id (as str) come from the request."""
        [call] = provider.parse_calls(_request(7, "add", a=1))
        assert (call.name, call.arguments, call.id) == ("add", {"a": 1}, "7")

    def test_batch(self) -> None:
        """A list of requests gives one call each, in order."""
        calls = provider.parse_calls(
            [_request("r-1", "add", a=1), _request("r-2", "echo", text="x")]
        )
        assert [(c.name, c.id) for c in calls] == [
            ("add", "r-1"),
            ("echo", "r-2"),
        ]

    def test_without_arguments_or_id(self, registry: Registry) -> None:
        """No arguments means {}; no id means None."""
        request = {"method": "tools/call", "params": {"name": "letters"}}
        [call] = provider.parse_calls(request)
        assert (call.arguments, call.id) == (None, None)
        result = Dispatcher(registry).dispatch(call)
        assert result.is_error  # word is required
        assert "word" in (result.error or "")

    def test_other_method(self) -> None:
        """A request for another method is a payload error."""
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        with pytest.raises(ProviderPayloadError, match="'tools/list'"):
            provider.parse_calls(request)

    def test_missing_params(self) -> None:
        """A tools/call without params is a payload error."""
        with pytest.raises(ProviderPayloadError, match="params"):
            provider.parse_calls({"id": 1, "method": "tools/call"})

    def test_sdk_requests(self) -> None:
        """JSONRPCRequest and CallToolRequest objects parse."""
        types = pytest.importorskip("mcp.types")
        rpc = _jsonrpc("JSONRPCRequest").model_validate(
            _request(3, "add", a=1)
        )
        bare = types.CallToolRequest(
            params=types.CallToolRequestParams(
                name="echo", arguments={"text": "y"}
            )
        )
        calls = provider.parse_calls([rpc, bare])
        assert [(c.name, c.arguments, c.id) for c in calls] == [
            ("add", {"a": 1}, "3"),
            ("echo", {"text": "y"}, None),
        ]


class TestResult:
    """result_message(): CallToolResult."""

    def test_text_output(self) -> None:
        """A str output is the text as is, without structuredContent."""
        result = ToolResult(name="t", output="plain words")
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": "plain words"}],
            "isError": False,
        }

    def test_object_output(self) -> None:
        """A dict output is JSON text and structuredContent too."""
        result = ToolResult(name="t", output={"text": "é"})
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": '{"text":"é"}'}],
            "isError": False,
            "structuredContent": {"text": "é"},
        }

    def test_list_output(self) -> None:
        """A list is no object: JSON text only."""
        result = ToolResult(name="t", output=["a", "b"])
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": '["a","b"]'}],
            "isError": False,
        }

    def test_error(self) -> None:
        """A failure is an isError result with the message as text."""
        result = ToolResult(
            name="t", is_error=True, error="bad", output={"x": 1}
        )
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": "bad"}],
            "isError": True,
        }

    def test_sdk_round_trip(self, registry: Registry) -> None:
        """CallToolResult and a JSON-RPC response read the result exactly."""
        types = pytest.importorskip("mcp.types")
        response_model = _jsonrpc("JSONRPCResponse")
        requests = [
            _request(1, "add", a=1),
            _request(2, "echo", text="x"),
            _request(3, "letters", word="ab"),
            _request(4, "add", a="one"),
        ]
        calls = provider.parse_calls(requests)
        results = Dispatcher(registry).dispatch_all(calls)
        assert [r.is_error for r in results] == [False, False, False, True]
        for request, result in zip(requests, results, strict=True):
            message = provider.result_message(result)
            validated = types.CallToolResult.model_validate(message)
            dumped = validated.model_dump(by_alias=True, exclude_unset=True)
            assert dumped == message
            response = response_model.model_validate(
                {"jsonrpc": "2.0", "id": request["id"], "result": message}
            )
            assert response.id == request["id"]
