"""Content results (text, images, audio, files) in every provider's form.

Each rendering is checked against the SDK's own types: the openai and
anthropic TypedDicts through pydantic, and the google-genai and mcp
pydantic models.
"""

from __future__ import annotations

import base64

from typing import Any

import pytest

from toolctx import Dispatcher, Registry, ToolCall, ToolResult
from toolctx.content import Audio, File, Image, Part, Text
from toolctx.providers import anthropic, gemini, mcp, openai
from toolctx.providers._render import content_text


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.4\n" + bytes(range(30))
WAV = b"RIFF" + bytes(20)
NOTES = "Zürich: 21°C\n".encode()
PARTS: tuple[Part, ...] = (
    Text("Chart:"),
    Image(PNG, "image/png"),
    File(PDF, "application/pdf", name="report.pdf"),
    Audio(WAV, "audio/wav"),
    File(NOTES, "text/plain", name="notes.txt"),
)


@pytest.fixture(name="result")
def _result() -> ToolResult:
    """The dispatched result of a tool returning every kind of part."""
    registry = Registry()

    @registry.tool
    def chart() -> list[Text | Image | Audio | File]:
        """Draw the chart."""
        return ["Chart:", *PARTS[1:]]

    result = Dispatcher(registry).dispatch(ToolCall("chart", "{}", "call_1"))
    assert result.output == PARTS
    return result


def _adapter(cls: Any) -> Any:
    """A pydantic TypeAdapter for an SDK TypedDict."""
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


class TestChatCompletions:
    """Tool messages carry text only: each other part becomes a notice."""

    def test_text_and_notices(self, result: ToolResult) -> None:
        """Text parts are kept; media parts are named, sized, explained."""
        content = openai.result_message(result)["content"]
        assert isinstance(content, str)
        lines = content.split("\n")
        assert lines[0] == "Chart:"
        assert lines[1] == (
            f"[image image/png, {len(PNG)} bytes: this API's tool messages "
            "carry text only; send it in a user message, see toolctx docs "
            "'Content']"
        )
        assert lines[2].startswith("[file 'report.pdf' application/pdf, ")
        assert lines[3].startswith("[audio audio/wav, 24 bytes: ")
        assert base64.b64encode(PNG).decode() not in content
        assert content == content_text(result)

    def test_sdk_accepts_message(self, result: ToolResult) -> None:
        """ChatCompletionToolMessageParam validates the message."""
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletionToolMessageParam

        message = openai.result_message(result)
        adapter = _adapter(ChatCompletionToolMessageParam)
        assert adapter.validate_python(message) == message

    def test_big_sizes_are_grouped(self) -> None:
        """Sizes are written with thousands separators."""
        image = Image(bytes(12_345), "image/png")
        result = ToolResult(name="t", call_id="c", output=(image,))
        assert "12,345 bytes" in openai.result_message(result)["content"]


class TestResponses:
    """function_call_output carries input_text/input_image/input_file."""

    def test_parts(self, result: ToolResult) -> None:
        """Images and files are data: URLs; audio becomes a notice."""
        output = openai.responses_result_item(result)["output"]
        assert isinstance(output, list)
        assert [p["type"] for p in output] == [
            "input_text",
            "input_image",
            "input_file",
            "input_text",
            "input_file",
        ]
        assert output[1]["image_url"] == (
            "data:image/png;base64," + base64.b64encode(PNG).decode()
        )
        assert output[2]["filename"] == "report.pdf"
        assert output[2]["file_data"].startswith(
            "data:application/pdf;base64,"
        )
        assert "function call outputs carry no audio" in output[3]["text"]

    def test_unsupported_image_type(self) -> None:
        """An image type the API does not read becomes a notice."""
        result = ToolResult(
            name="t", call_id="c", output=(Image(b"BM", "image/bmp"),)
        )
        [part] = openai.responses_result_item(result)["output"]
        assert part["type"] == "input_text"
        assert "PNG, JPEG, WebP and GIF" in part["text"]

    def test_sdk_accepts_item(self, result: ToolResult) -> None:
        """FunctionCallOutput and ResponseInputItemParam validate it."""
        pytest.importorskip("openai")
        from openai.types.responses import ResponseInputItemParam
        from openai.types.responses.response_input_param import (
            FunctionCallOutput,
        )

        item = openai.responses_result_item(result)
        assert _adapter(FunctionCallOutput).validate_python(item) == item
        _adapter(ResponseInputItemParam).validate_python(item)


class TestAnthropic:
    """tool_result content with image and document blocks."""

    def test_blocks(self, result: ToolResult) -> None:
        """Image, PDF and text documents are native; audio is a notice."""
        block = anthropic.result_block(result)
        content = block["content"]
        assert not isinstance(content, str)
        blocks = list(content)
        assert [b["type"] for b in blocks] == [
            "text",
            "image",
            "document",
            "text",
            "document",
        ]
        assert blocks[1]["source"] == {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG).decode(),
        }
        assert blocks[2]["title"] == "report.pdf"
        assert blocks[2]["source"]["media_type"] == "application/pdf"
        assert "carry no audio" in blocks[3]["text"]
        assert blocks[4]["source"] == {
            "type": "text",
            "media_type": "text/plain",
            "data": NOTES.decode(),
        }

    def test_sdk_accepts_message(self, result: ToolResult) -> None:
        """ToolResultBlockParam and MessageParam validate the rendering."""
        pytest.importorskip("anthropic")
        from anthropic.types import MessageParam, ToolResultBlockParam
        from anthropic.types.tool_result_block_param import Content

        block = anthropic.result_block(result)
        _adapter(ToolResultBlockParam).validate_python(block)
        blocks = list(block["content"])
        assert _adapter(list[Content]).validate_python(blocks) == blocks
        _adapter(MessageParam).validate_python(
            anthropic.results_message([result])
        )


class TestGemini:
    """Function response parts with inline data, referenced by $ref."""

    def test_parts_and_refs(self, result: ToolResult) -> None:
        """The response lists text and $refs; the parts carry the bytes."""
        response = gemini.result_part(result)["function_response"]
        assert response is not None
        output = response["response"]["output"]  # type: ignore[index]
        assert output[:3] == [
            "Chart:",
            {"$ref": "image-2"},
            {"$ref": "report.pdf"},
        ]
        assert output[3].startswith("[audio audio/wav, 24 bytes: Gemini ")
        assert output[4] == {"$ref": "notes.txt"}
        assert response["parts"] == [
            {
                "inline_data": {
                    "mime_type": "image/png",
                    "data": PNG,
                    "display_name": "image-2",
                }
            },
            {
                "inline_data": {
                    "mime_type": "application/pdf",
                    "data": PDF,
                    "display_name": "report.pdf",
                }
            },
            {
                "inline_data": {
                    "mime_type": "text/plain",
                    "data": NOTES,
                    "display_name": "notes.txt",
                }
            },
        ]

    def test_duplicate_names_stay_unique(self) -> None:
        """Two files of one name get distinct display names."""
        twice = (File(PDF, "application/pdf", name="a.pdf"),) * 2
        part = gemini.result_part(ToolResult(name="t", output=twice))
        response = part["function_response"]
        assert response is not None
        refs = response["response"]["output"]  # type: ignore[index]
        assert refs == [{"$ref": "a.pdf"}, {"$ref": "file-2"}]

    def test_sdk_accepts_content(self, result: ToolResult) -> None:
        """google-genai's Content validates it and sends base64 data."""
        pytest.importorskip("google.genai")
        from google.genai import types

        content = types.Content.model_validate(
            gemini.results_message([result])
        )
        [part] = content.parts or []
        assert part.function_response is not None
        [image, _, _] = part.function_response.parts or []
        assert image.inline_data is not None
        assert image.inline_data.data == PNG
        wire = content.model_dump(mode="json", by_alias=True)
        blob = wire["parts"][0]["functionResponse"]["parts"][0]["inlineData"]
        assert base64.urlsafe_b64decode(blob["data"]) == PNG


class TestMcp:
    """CallToolResult content: text, image, audio, embedded resources."""

    def test_blocks(self, result: ToolResult) -> None:
        """Every part is native; files are embedded resources."""
        message = mcp.result_message(result)
        content = message["content"]
        assert [b["type"] for b in content] == [
            "text",
            "image",
            "resource",
            "audio",
            "resource",
        ]
        assert content[1] == {
            "type": "image",
            "data": base64.b64encode(PNG).decode(),
            "mimeType": "image/png",
        }
        assert content[2] == {
            "type": "resource",
            "resource": {
                "uri": "toolctx://part/3/report.pdf",
                "mimeType": "application/pdf",
                "blob": base64.b64encode(PDF).decode(),
            },
        }
        assert content[4]["resource"] == {  # type: ignore[typeddict-item]
            "uri": "toolctx://part/5/notes.txt",
            "mimeType": "text/plain",
            "text": NOTES.decode(),
        }
        assert message["isError"] is False
        assert "structuredContent" not in message

    def test_sdk_accepts_result(self, result: ToolResult) -> None:
        """The mcp package's CallToolResult validates the message."""
        pytest.importorskip("mcp")
        from mcp import types

        validated = types.CallToolResult.model_validate(
            mcp.result_message(result)
        )
        kinds = [type(block).__name__ for block in validated.content]
        assert kinds == [
            "TextContent",
            "ImageContent",
            "EmbeddedResource",
            "AudioContent",
            "EmbeddedResource",
        ]


class TestErrorsStayText:
    """An error result is its message, whatever the tool would return."""

    @pytest.mark.parametrize(
        "render",
        [
            lambda r: openai.responses_result_item(r)["output"],
            lambda r: anthropic.result_block(r)["content"],
            lambda r: mcp.result_message(r)["content"][0]["text"],
        ],
    )
    def test_error_is_text(self, render: Any) -> None:
        """The error message is sent as text."""
        failed = ToolResult(
            name="chart", call_id="c", is_error=True, error="no data"
        )
        assert render(failed) == "no data"
