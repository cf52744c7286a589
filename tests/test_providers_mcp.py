"""toolctx.providers.mcp: Tool objects, tools/call, CallToolResult."""

from __future__ import annotations

from typing import Any

import pytest

from toolctx import (
    Dispatcher,
    Registry,
    ToolAnnotations,
    ToolCall,
    ToolResult,
    tool,
)
from toolctx.content import File, Text
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


@tool(
    title="Look up",
    annotations=ToolAnnotations(read_only=True, open_world=False),
)
def lookup(key: str) -> dict[str, int] | None:
    """Look a key up."""
    return {"hits": len(key)}


@tool(needs_approval=True)
def wire_money(to: str) -> str:
    """Send money (a person approves each call)."""
    return f"sent to {to}"


@pytest.fixture(name="registry")
def _registry() -> Registry:
    return Registry([add, echo, letters])


@pytest.fixture(name="shaped")
def _shaped() -> Registry:
    return Registry([add, echo, letters, lookup])


def _result(registry: Registry, name: str, **arguments: Any) -> ToolResult:
    """The dispatcher's result of one call."""
    return Dispatcher(registry).dispatch(ToolCall(name, arguments, "c1"))


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
        """Each tool has name, description, inputSchema and outputSchema, in order."""
        entries = provider.tools(registry)
        assert [e["name"] for e in entries] == ["add", "echo", "letters"]
        assert entries[0] == {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": dict(add.definition().parameters),
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            },
        }

    def test_title_and_annotations(self, shaped: Registry) -> None:
        """A title is listed, and of the annotations the hints that are set, by their MCP names."""
        entry = provider.tools(shaped)[3]
        assert list(entry) == [
            "name",
            "title",
            "description",
            "inputSchema",
            "outputSchema",
            "annotations",
        ]
        assert entry["title"] == "Look up"
        assert entry["annotations"] == {
            "readOnlyHint": True,
            "openWorldHint": False,
        }

    def test_object_output_schema_is_listed_as_is(
        self, registry: Registry
    ) -> None:
        """An object output schema is the outputSchema itself, a fresh copy."""
        entry = provider.tools(registry)[1]
        schema = echo.definition().output_schema
        assert schema is not None
        assert entry["outputSchema"] == dict(schema)
        entry["outputSchema"]["mutated"] = True
        assert "mutated" not in provider.tools(registry)[1]["outputSchema"]

    def test_non_object_output_schemas_are_wrapped(
        self, shaped: Registry
    ) -> None:
        """An array or a union with null is wrapped in a required result property, as MCP wants an object."""
        by_name = {e["name"]: e for e in provider.tools(shaped)}
        for name in ("letters", "lookup"):
            schema = by_name[name]["outputSchema"]
            inner = shaped[name].definition().output_schema
            assert schema == {
                "type": "object",
                "properties": {"result": inner},
                "required": ["result"],
            }

    def test_no_output_schema_without_a_return_type(self) -> None:
        """A tool without a declared return type has no outputSchema."""

        @tool
        def shrug(x: int):
            """Return anything."""
            return x

        [entry] = provider.tools(Registry([shrug]))
        assert "outputSchema" not in entry

    def test_sdk_accepts_tools(self, shaped: Registry) -> None:
        """mcp.types.Tool and ListToolsResult read the list back exactly."""
        types = pytest.importorskip("mcp.types")
        entries = provider.tools(shaped)
        for entry in entries:
            validated = types.Tool.model_validate(entry)
            dumped = validated.model_dump(by_alias=True, exclude_unset=True)
            assert dumped == entry
        listed = types.ListToolsResult.model_validate({"tools": entries})
        assert [t.name for t in listed.tools] == [
            "add",
            "echo",
            "letters",
            "lookup",
        ]


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
            "resultType": "complete",
        }

    def test_object_output(self) -> None:
        """A dict output is JSON text and structuredContent too."""
        result = ToolResult(name="t", output={"text": "é"})
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": '{"text":"é"}'}],
            "isError": False,
            "resultType": "complete",
            "structuredContent": {"text": "é"},
        }

    def test_list_output(self) -> None:
        """Without a registry, a list is no object: JSON text only."""
        result = ToolResult(name="t", output=["a", "b"])
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": '["a","b"]'}],
            "isError": False,
            "resultType": "complete",
        }

    def test_error(self) -> None:
        """A failure is an isError result with the message as text."""
        result = ToolResult(
            name="t", is_error=True, error="bad", output={"x": 1}
        )
        assert provider.result_message(result) == {
            "content": [{"type": "text", "text": "bad"}],
            "isError": True,
            "resultType": "complete",
        }

    def test_structured_content_matches_the_listed_schema(
        self, shaped: Registry
    ) -> None:
        """With the registry, structuredContent is wrapped exactly when the listed outputSchema is, and validates against it."""
        jsonschema = pytest.importorskip("jsonschema")
        schemas = {
            e["name"]: e["outputSchema"] for e in provider.tools(shaped)
        }
        cases = [
            ("add", {"a": 1}, {"result": 3}),
            ("echo", {"text": "x"}, {"text": "x"}),
            ("letters", {"word": "ab"}, {"result": ["a", "b"]}),
            ("lookup", {"key": "abc"}, {"result": {"hits": 3}}),
        ]
        for name, arguments, structured in cases:
            result = _result(shaped, name, **arguments)
            message = provider.result_message(result, shaped)
            assert message.get("structuredContent") == structured, name
            jsonschema.validate(structured, schemas[name])

    def test_a_tool_not_in_the_registry(self, shaped: Registry) -> None:
        """A result of a tool the registry does not have is shaped as without one."""
        result = ToolResult(name="gone", output=[1])
        assert "structuredContent" not in provider.result_message(
            result, shaped
        )

    def test_a_held_result_is_refused(self) -> None:
        """A call still waiting for approval is no result: ValueError naming resume, nothing to send."""
        registry = Registry([wire_money])
        held = _result(registry, "wire_money", to="bob")
        assert held.approval is not None
        with pytest.raises(ValueError, match=r"dispatcher\.resume"):
            provider.result_message(held, registry)

    def test_text_and_other_files(self) -> None:
        """A UTF-8 text/* file is a text resource; any other file a base64 blob."""
        result = ToolResult(
            name="t",
            output=(
                Text("two files"),
                File("naïve\n".encode(), "text/markdown", name="a b.md"),
                File(b"\xff\xfe", "text/plain"),
            ),
        )
        _, text, blob = provider.result_message(result)["content"]
        assert text == {
            "type": "resource",
            "resource": {
                "uri": "toolctx://part/2/a%20b.md",
                "mimeType": "text/markdown",
                "text": "naïve\n",
            },
        }
        assert blob == {
            "type": "resource",
            "resource": {
                "uri": "toolctx://part/3/file",
                "mimeType": "text/plain",
                "blob": "//4=",
            },
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
            message = provider.result_message(result, registry)
            validated = types.CallToolResult.model_validate(message)
            dumped = validated.model_dump(by_alias=True, exclude_unset=True)
            assert dumped == message
            response = response_model.model_validate(
                {"jsonrpc": "2.0", "id": request["id"], "result": message}
            )
            assert response.id == request["id"]
