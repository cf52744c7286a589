"""What the MCP server lists and returns: metadata, structured content, parts.

Against the official SDK's client, in process (its JSON-RPC dispatcher
over memory streams); the tools are in tests/mcp_app.py (``lively``).
"""

from __future__ import annotations

import base64
import json
import logging

from typing import Any

import pytest

from tests import mcp_app

from toolctx import Dispatcher, Registry, ToolAnnotations, ToolCall, tool
from toolctx.content import File
from toolctx.providers import mcp as provider


pytest.importorskip("mcp")

import mcp_types as types

from mcp.shared.exceptions import MCPError
from tests.test_mcp_server import call, connect, run, text_of

from toolctx.mcp import create_server


def listed(server: Any) -> dict[str, dict[str, Any]]:
    """The tools/list entries as the client received them, by name."""

    async def go() -> Any:
        async with connect(server) as session:
            return await session.list_tools()

    result = run(go)
    return {
        t.name: t.model_dump(by_alias=True, mode="json", exclude_none=True)
        for t in result.tools
    }


@pytest.fixture(scope="module", name="tools")
def _tools() -> dict[str, dict[str, Any]]:
    return listed(create_server(mcp_app.lively))


class TestToolMetadata:
    """tools/list: title, annotations and outputSchema."""

    def test_title_and_annotations_that_are_set(self, tools):
        """A tool's title is listed, and of its annotations only the hints that are set, as MCP names them."""
        assert tools["loud"]["title"] == "Read aloud"
        assert tools["loud"]["annotations"] == {
            "readOnlyHint": True,
            "openWorldHint": False,
        }
        assert tools["grow"]["annotations"] == {
            "destructiveHint": True,
            "idempotentHint": False,
        }

    def test_no_title_or_annotations_when_unset(self, tools):
        """A tool without a title or annotations lists neither."""
        assert "title" not in tools["steps"]
        assert "annotations" not in tools["steps"]

    def test_an_empty_annotations_object_is_not_listed(self):
        """ToolAnnotations() with nothing set lists no annotations."""
        registry = Registry()

        @registry.tool(annotations=ToolAnnotations())
        def ping() -> str:
            """Answer pong."""
            return "pong"

        assert "annotations" not in listed(create_server(registry))["ping"]

    def test_a_scalar_output_schema_is_wrapped(self, tools):
        """A non-object output schema is listed wrapped in a required result property."""
        assert tools["steps"]["outputSchema"] == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }

    def test_wrapping_moves_defs_to_the_top(self, tools):
        """An array of dataclasses is wrapped with its $defs at the top, where its $refs resolve."""
        schema = tools["readings"]["outputSchema"]
        inner = mcp_app.lively["readings"].definition().output_schema

        assert schema["properties"]["result"]["items"] == {
            "$ref": "#/$defs/Reading"
        }
        assert schema["$defs"] == inner["$defs"]
        assert "$defs" not in schema["properties"]["result"]

    def test_an_object_output_is_listed_as_the_object(self, tools):
        """A dataclass output (a top-level $ref) is listed as the object itself, not wrapped."""
        schema = tools["reading"]["outputSchema"]

        assert schema["type"] == "object"
        assert set(schema["properties"]) == {"value", "unit"}
        assert "Unit" in schema["$defs"]

    def test_a_content_tool_has_no_output_schema(self, tools):
        """A tool returning content parts lists no outputSchema."""
        assert "outputSchema" not in tools["picture"]

    def test_an_optional_object_is_wrapped(self):
        """An output that may be an object or null is no object schema: it is listed wrapped, and so is its structuredContent."""
        registry = Registry()

        @registry.tool
        def find(key: str) -> dict[str, int] | None:
            """Find a record."""
            return {"hits": 1}

        schema = listed(create_server(registry))["find"]["outputSchema"]
        result = call(create_server(registry), "find", {"key": "k"})

        assert schema["required"] == ["result"]
        assert result.structured_content == {"result": {"hits": 1}}

    def test_the_listing_is_the_providers(self):
        """What a client lists is exactly toolctx.providers.mcp.tools() of the same registry: one implementation."""
        types_tool = types.Tool.model_validate
        ours = [
            types_tool(entry).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            for entry in provider.tools(mcp_app.lively)
        ]

        assert list(listed(create_server(mcp_app.lively)).values()) == ours


class TestStructuredContent:
    """tools/call: structuredContent for JSON outputs with an output schema."""

    def test_scalar_output_is_wrapped(self):
        """An integer output comes back as text and as {"result": value}, which the client validates against the schema."""
        result = call(create_server(mcp_app.lively), "steps", {"n": 2})

        assert result.is_error is False
        assert text_of(result) == "2"
        assert result.structured_content == {"result": 2}

    def test_array_output_is_wrapped(self):
        """A list of dataclasses comes back wrapped, as its JSON text."""
        result = call(create_server(mcp_app.lively), "readings")

        assert result.structured_content == {
            "result": json.loads(text_of(result))
        }
        assert result.structured_content["result"][1] == {
            "value": 70.0,
            "unit": "f",
        }

    def test_object_output_is_not_wrapped(self):
        """A dataclass output comes back as the object itself."""
        result = call(create_server(mcp_app.lively), "reading")

        assert result.structured_content == {"value": 21.5, "unit": "c"}

    def test_error_results_have_no_structured_content(self):
        """A failed call of a tool with an output schema is text with isError only."""
        result = call(create_server(mcp_app.lively), "crash", {"why": "no"})

        assert result.is_error is True
        assert result.structured_content is None
        assert text_of(result) == "Tool 'crash' failed: RuntimeError: no"


class TestSameResultsAsTheProvider:
    """The server answers with toolctx.providers.mcp.result_message()."""

    @pytest.mark.parametrize(
        ("name", "arguments"),
        [
            ("steps", {"n": 2}),
            ("readings", {}),
            ("reading", {}),
            ("picture", {}),
            ("crash", {"why": "no"}),
            ("steps", {"n": "two"}),
        ],
        ids=["scalar", "array", "object", "parts", "raising", "bad"],
    )
    def test_each_result_is_the_providers(self, name, arguments):
        """A client receives what result_message(result, registry) gives for the same call, structuredContent included."""
        server = create_server(mcp_app.lively)
        dispatched = Dispatcher(mcp_app.lively).dispatch(
            ToolCall(name, arguments, "c1")
        )
        expected = types.CallToolResult.model_validate(
            provider.result_message(dispatched, mcp_app.lively)
        )

        received = call(server, name, arguments)

        assert received.content == expected.content
        assert received.structured_content == expected.structured_content
        assert received.is_error is expected.is_error


class TestContentParts:
    """tools/call: Text, Image, Audio and File parts as MCP content."""

    def test_a_utf8_text_file_is_a_text_resource(self):
        """A text/* file in UTF-8 is an embedded text resource the model reads as text; the same bytes come back."""
        registry = Registry()
        notes = "Zürich: 21 °C\n".encode()

        @registry.tool
        def report() -> File:
            """The day's notes."""
            return File(notes, "text/plain", name="notes.txt")

        [block] = call(create_server(registry), "report").content

        assert isinstance(block, types.EmbeddedResource)
        assert isinstance(block.resource, types.TextResourceContents)
        assert block.resource.text.encode() == notes
        assert block.resource.mime_type == "text/plain"
        assert str(block.resource.uri) == "toolctx://part/1/notes.txt"

    def test_a_text_file_not_in_utf8_is_a_blob(self):
        """A text/* file whose bytes are not UTF-8 goes as a base64 blob, byte for byte."""
        registry = Registry()
        latin = "café".encode("latin-1")

        @registry.tool
        def legacy() -> File:
            """An old export."""
            return File(latin, "text/csv")

        [block] = call(create_server(registry), "legacy").content

        assert isinstance(block.resource, types.BlobResourceContents)
        assert base64.b64decode(block.resource.blob) == latin
        assert str(block.resource.uri) == "toolctx://part/1/file"

    def test_each_part_in_its_mcp_form(self):
        """Text is text, Image and Audio base64 image/audio content, File an embedded resource blob; no structuredContent."""
        result = call(create_server(mcp_app.lively), "picture")
        text, image, audio, resource = result.content

        assert result.is_error is False
        assert result.structured_content is None
        assert isinstance(text, types.TextContent)
        assert text.text == "A chart"
        assert isinstance(image, types.ImageContent)
        assert base64.b64decode(image.data) == mcp_app.PNG
        assert image.mime_type == "image/png"
        assert isinstance(audio, types.AudioContent)
        assert base64.b64decode(audio.data) == b"RIFF0000WAVE"
        assert audio.mime_type == "audio/wav"
        assert isinstance(resource, types.EmbeddedResource)
        blob = resource.resource
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"%PDF-1.7"
        assert blob.mime_type == "application/pdf"
        assert str(blob.uri) == "toolctx://part/4/q3%20report.pdf"


class TestInvalidCursor:
    """tools/list with a cursor this server never gave out."""

    def test_invalid_cursor_is_invalid_params(self):
        """A cursor is a JSON-RPC -32602 error saying to list without one, and the connection keeps serving."""

        async def go() -> Any:
            async with connect(create_server(mcp_app.lively)) as session:
                params = types.PaginatedRequestParams(cursor="page-2")
                with pytest.raises(MCPError) as raised:
                    await session.list_tools(params=params)
                after = await session.list_tools()
            return raised.value.error, after

        error, after = run(go)

        assert error.code == -32602
        assert "'page-2'" in error.message
        assert "without a cursor" in error.message
        assert after.next_cursor is None
        assert len(after.tools) == len(mcp_app.lively)


class TestFailedCallsAreLogged:
    """Every isError result is logged on the toolctx logger, for the host."""

    def test_a_tool_exception_is_logged_with_its_traceback(self, caplog):
        """A tool raising is logged once, at ERROR on "toolctx" with the traceback; the client gets the result's message only."""
        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = call(
                create_server(mcp_app.lively), "crash", {"why": "disk gone"}
            )
        [record] = [r for r in caplog.records if r.name == "toolctx"]

        assert record.levelno == logging.ERROR
        assert "'crash'" in record.getMessage()
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)
        assert "Traceback" in caplog.text
        assert "Traceback" not in text_of(result)

    @pytest.mark.parametrize(
        ("name", "arguments"),
        [("nope", {}), ("steps", {"n": "three"})],
        ids=["unknown tool", "bad arguments"],
    )
    def test_refused_calls_are_logged_at_debug(self, caplog, name, arguments):
        """An unknown tool or bad arguments (the model's to fix) is logged once, at DEBUG without a traceback, with the message the model got."""
        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            result = call(create_server(mcp_app.lively), name, arguments)
        [record] = [r for r in caplog.records if r.name == "toolctx"]

        assert result.is_error is True
        assert record.levelno == logging.DEBUG
        assert record.exc_info is None
        assert text_of(result) in record.getMessage()

    def test_successful_calls_are_not_logged(self, caplog):
        """A call that works logs nothing on the toolctx logger."""
        with caplog.at_level(logging.DEBUG, logger="toolctx"):
            call(create_server(mcp_app.lively), "steps", {"n": 1})

        assert not [r for r in caplog.records if r.name == "toolctx"]


def test_listing_follows_replacement():
    """A tool replaced in the registry is listed with its new metadata (the listing is rebuilt on change)."""
    registry = Registry()

    @registry.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    server = create_server(registry)
    before = listed(server)["ping"]

    @tool(name="ping", title="Ping!")
    def ping2() -> int:
        """Answer 1."""
        return 1

    registry.register(ping2, replace=True)
    after = listed(server)["ping"]

    assert "title" not in before
    assert after["title"] == "Ping!"
    assert after["outputSchema"]["properties"]["result"] == {"type": "integer"}
