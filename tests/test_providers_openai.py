"""toolctx.providers.openai: Chat Completions, Responses API, strict mode."""

from __future__ import annotations

import copy
import dataclasses
import enum
import json

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import attrs
import pytest

from toolctx import Dispatcher, Registry, ToolDefinition, ToolResult, tool
from toolctx.providers import ProviderPayloadError, ProviderSchemaError
from toolctx.providers import openai as provider


@tool
def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Args:
        a: The first one.
        b: The second one.
    """
    return a + b


@tool
def echo(text: str) -> dict[str, str]:
    """Echo the text back."""
    return {"text": text}


@pytest.fixture(name="registry")
def _registry() -> Registry:
    return Registry([add, echo])


def _chat_completion(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    """A documented ChatCompletion payload with the given tool calls."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "logprobs": None,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": list(tool_calls),
                },
            }
        ],
    }


def _function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


PARALLEL = _chat_completion(
    _function_call("call_a", "add", '{"a": 1}'),
    _function_call("call_b", "echo", '{"text": "Grüße"}'),
)


def _response(*items: dict[str, Any]) -> dict[str, Any]:
    """A documented Responses API ``Response`` payload."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_700_000_000,
        "model": "gpt-test",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": list(items),
    }


RESPONSE = _response(
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_a",
        "name": "add",
        "arguments": '{"a": 1}',
        "status": "completed",
    },
    {
        "type": "function_call",
        "id": "fc_2",
        "call_id": "call_b",
        "name": "echo",
        "arguments": '{"text": "x"}',
        "status": "completed",
    },
)


class TestChatTools:
    """tools(): the Chat Completions tools parameter."""

    def test_shape(self, registry: Registry) -> None:
        """Each entry is a function tool holding the definition."""
        first = provider.tools(registry)[0]
        assert first == {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": dict(add.definition().parameters),
            },
        }

    def test_strict_flag(self, registry: Registry) -> None:
        """strict=True marks every function strict."""
        entries = provider.tools(registry, strict=True)
        assert [e["function"]["strict"] for e in entries] == [True, True]

    def test_sdk_accepts_entries(self, registry: Registry) -> None:
        """The SDK's ChatCompletionToolParam validates every entry as is."""
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletionToolParam
        from pydantic import TypeAdapter

        adapter = TypeAdapter(ChatCompletionToolParam)
        for strict in (False, True):
            for entry in provider.tools(registry, strict=strict):
                assert adapter.validate_python(entry) == entry


class TestChatParse:
    """parse_calls(): tool calls of a chat completion."""

    def test_parallel_calls_from_a_completion(self) -> None:
        """Both calls come back in order, arguments kept as JSON text."""
        calls = provider.parse_calls(PARALLEL)
        assert [(c.name, c.arguments, c.id) for c in calls] == [
            ("add", '{"a": 1}', "call_a"),
            ("echo", '{"text": "Grüße"}', "call_b"),
        ]

    def test_message_and_list_forms(self) -> None:
        """The message and its tool_calls list parse like the completion."""
        message = PARALLEL["choices"][0]["message"]
        expected = provider.parse_calls(PARALLEL)
        assert provider.parse_calls(message) == expected
        assert provider.parse_calls(message["tool_calls"]) == expected

    def test_no_tool_calls(self) -> None:
        """A plain answer has no calls; so does an empty completion."""
        message = {"role": "assistant", "content": "Hi", "tool_calls": None}
        assert provider.parse_calls(message) == []
        assert provider.parse_calls({**PARALLEL, "choices": []}) == []

    def test_custom_tool_calls_are_skipped(self) -> None:
        """Calls of custom (non-function) tools are not toolctx calls."""
        custom = {
            "id": "call_c",
            "type": "custom",
            "custom": {"name": "grammar", "input": "x"},
        }
        payload = _chat_completion(
            custom, _function_call("call_a", "add", "{}")
        )
        assert [c.id for c in provider.parse_calls(payload)] == ["call_a"]

    def test_call_without_name(self) -> None:
        """A function call without a name is a payload error."""
        payload = _chat_completion(
            {"id": "x", "type": "function", "function": {"arguments": "{}"}}
        )
        with pytest.raises(ProviderPayloadError, match="no tool name"):
            provider.parse_calls(payload)

    def test_sdk_objects(self) -> None:
        """A ChatCompletion object, its dump, message and calls all parse."""
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletion

        completion = ChatCompletion.model_validate(PARALLEL)
        expected = provider.parse_calls(PARALLEL)
        message = completion.choices[0].message
        assert provider.parse_calls(completion) == expected
        assert provider.parse_calls(completion.model_dump()) == expected
        assert provider.parse_calls(message) == expected
        assert provider.parse_calls(message.tool_calls) == expected


class TestChatResult:
    """result_message(): the tool message."""

    def test_round_trip(self, registry: Registry) -> None:
        """Dispatched parallel calls answer with one tool message each."""
        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(PARALLEL)
        )
        assert [provider.result_message(r) for r in results] == [
            {"role": "tool", "tool_call_id": "call_a", "content": "3"},
            {
                "role": "tool",
                "tool_call_id": "call_b",
                "content": '{"text":"Grüße"}',
            },
        ]

    def test_error_result(self) -> None:
        """An error result carries its message as the content."""
        result = ToolResult(
            name="add", call_id="c", is_error=True, error="a is missing"
        )
        assert provider.result_message(result)["content"] == "a is missing"

    def test_missing_call_id(self) -> None:
        """A result without call_id cannot answer: a clear error."""
        with pytest.raises(ProviderPayloadError, match="tool_call_id"):
            provider.result_message(ToolResult(name="add", output=1))

    def test_sdk_accepts_message(self, registry: Registry) -> None:
        """ChatCompletionToolMessageParam validates the message as is."""
        pytest.importorskip("openai")
        from openai.types.chat import (
            ChatCompletionMessageParam,
            ChatCompletionToolMessageParam,
        )
        from pydantic import TypeAdapter

        adapter = TypeAdapter(ChatCompletionToolMessageParam)
        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(PARALLEL)
        )
        for result in results:
            message = provider.result_message(result)
            assert adapter.validate_python(message) == message
            TypeAdapter(ChatCompletionMessageParam).validate_python(message)


class TestResponsesApi:
    """responses_tools(), parse_responses_calls(), responses_result_item()."""

    def test_tools_shape(self, registry: Registry) -> None:
        """Flat function tools, strict written out even when false."""
        first = provider.responses_tools(registry)[0]
        assert first == {
            "type": "function",
            "name": "add",
            "description": "Add two integers.",
            "parameters": dict(add.definition().parameters),
            "strict": False,
        }
        strict = provider.responses_tools(registry, strict=True)
        assert all(entry["strict"] is True for entry in strict)
        assert strict[0]["parameters"]["required"] == ["a", "b"]

    def test_parse_function_calls_only(self) -> None:
        """function_call items parse in order, with call_id as the id."""
        calls = provider.parse_responses_calls(RESPONSE)
        assert [(c.name, c.arguments, c.id) for c in calls] == [
            ("add", '{"a": 1}', "call_a"),
            ("echo", '{"text": "x"}', "call_b"),
        ]
        assert provider.parse_responses_calls(RESPONSE["output"]) == calls

    def test_result_item(self) -> None:
        """A function_call_output item answers by call_id."""
        result = ToolResult(name="echo", call_id="call_b", output={"a": "é"})
        assert provider.responses_result_item(result) == {
            "type": "function_call_output",
            "call_id": "call_b",
            "output": '{"a":"é"}',
        }

    def test_result_item_needs_call_id(self) -> None:
        """Without a call id there is nothing to answer."""
        with pytest.raises(ProviderPayloadError, match="call_id"):
            provider.responses_result_item(ToolResult(name="x"))

    def test_sdk_round_trip(self, registry: Registry) -> None:
        """SDK Response objects parse; SDK params accept tools and items."""
        pytest.importorskip("openai")
        from openai.types.responses import (
            FunctionToolParam,
            Response,
            ResponseInputItemParam,
        )
        from openai.types.responses.response_input_param import (
            FunctionCallOutput,
        )
        from pydantic import TypeAdapter

        for strict in (False, True):
            for entry in provider.responses_tools(registry, strict=strict):
                adapter = TypeAdapter(FunctionToolParam)
                assert adapter.validate_python(entry) == entry
        response = Response.model_validate(
            {**RESPONSE, "tools": provider.responses_tools(registry)}
        )
        expected = provider.parse_responses_calls(RESPONSE)
        assert provider.parse_responses_calls(response) == expected
        dumped = response.model_dump()
        assert provider.parse_responses_calls(dumped) == expected
        assert provider.parse_responses_calls(response.output) == expected
        for result in Dispatcher(registry).dispatch_all(expected):
            item = provider.responses_result_item(result)
            assert (
                TypeAdapter(FunctionCallOutput).validate_python(item) == item
            )
            TypeAdapter(ResponseInputItemParam).validate_python(item)


# -- strict mode ---------------------------------------------------------------


class Color(enum.Enum):
    """A color."""

    RED = "red"
    BLUE = "blue"


@attrs.define
class Node:
    """A tree node."""

    name: str
    children: list[Node] = attrs.Factory(list)


@dataclasses.dataclass
class Point:
    """A point."""

    x: float
    y: float = 0.0


@tool
def rich(
    *,
    color: Annotated[Color, "The pen color."],
    at: Point,
    tree: Node | None = None,
    tags: frozenset[str] = frozenset(),
    mode: Literal["fast", None, True] = "fast",  # noqa: PYI061 - under test
    limit: int = 10,
) -> None:
    """Use many kinds of parameters."""


def _walk(
    schema: object, path: str = ""
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema of *schema* with its JSON Pointer."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _walk(item, f"{path}/{i}")
    elif isinstance(schema, dict):
        if any(k in schema for k in ("type", "$ref", "anyOf", "enum")):
            yield path, schema
        for key, value in schema.items():
            if key in {"enum", "required", "const"}:
                continue
            if key in {"properties", "$defs"}:
                for name, sub in value.items():
                    yield from _walk(sub, f"{path}/{key}/{name}")
            else:
                yield from _walk(value, f"{path}/{key}")


def _strict(fn: Any) -> dict[str, Any]:
    [entry] = provider.tools(Registry([fn]), strict=True)
    schema = entry["function"]["parameters"]
    assert isinstance(schema, dict)
    return schema


class TestStrictSchema:
    """strict=True rewrites schemas for Structured Outputs."""

    def test_strict_rules_hold_everywhere(self) -> None:
        """Closed objects, all required, typed values, no default/$ref+."""
        schema = _strict(rich)
        for path, node in _walk(schema):
            assert "default" not in node, path
            assert "uniqueItems" not in node, path
            if "$ref" in node:
                assert set(node) == {"$ref"}, path
            else:
                assert {"type", "anyOf", "enum"} & set(node), path
            if node.get("type") == "object":
                assert node["additionalProperties"] is False, path
                assert node["required"] == list(node["properties"]), path

    def test_defaults_move_into_descriptions(self) -> None:
        """An optional property is required and names its default."""
        props = _strict(rich)["properties"]
        assert props["limit"] == {
            "type": "integer",
            "description": "Default: 10.",
        }
        point = _strict(rich)["$defs"]["Point"]
        assert point["properties"]["y"]["description"] == "Default: 0.0."
        assert point["required"] == ["x", "y"]

    def test_none_default_keeps_the_union_silently(self) -> None:
        """An Optional with default None stays nullable, nothing noted."""
        tree = _strict(rich)["properties"]["tree"]
        assert tree == {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}

    def test_described_refs_are_inlined(self) -> None:
        """A $ref with a description becomes the definition inline."""
        color = _strict(rich)["properties"]["color"]
        assert color == {
            "enum": ["red", "blue"],
            "type": "string",
            "description": "The pen color.",
        }

    def test_only_used_definitions_remain(self) -> None:
        """Inlined definitions leave $defs; referenced ones stay."""
        schema = _strict(rich)
        assert schema["properties"]["at"] == {"$ref": "#/$defs/Point"}
        assert list(schema["$defs"]) == ["Point", "Node"]
        node = schema["$defs"]["Node"]
        assert node["properties"]["children"]["items"] == {
            "$ref": "#/$defs/Node"
        }

    def test_mixed_enum_becomes_typed_options(self) -> None:
        """An enum mixing types splits into one typed option per type."""
        mode = _strict(rich)["properties"]["mode"]
        assert mode["anyOf"] == [
            {"type": "string", "enum": ["fast"]},
            {"type": "null"},
            {"type": "boolean", "enum": [True]},
        ]

    def test_sdk_strictifier_has_nothing_left_to_do(self) -> None:
        """The openai SDK's own strict pass leaves our schema unchanged."""
        pytest.importorskip("openai")
        from openai.lib import _pydantic

        schema = _strict(rich)
        again = copy.deepcopy(schema)
        _pydantic._ensure_strict_json_schema(again, path=(), root=again)
        assert again == schema

    def test_arguments_valid_for_strict_are_accepted(self) -> None:
        """Arguments matching the strict schema dispatch successfully."""
        jsonschema = pytest.importorskip("jsonschema")
        schema = _strict(rich)
        arguments = {
            "color": "red",
            "at": {"x": 1.5, "y": 0},
            "tree": {
                "name": "root",
                "children": [{"name": "leaf", "children": []}],
            },
            "tags": ["a", "b"],
            "mode": None,
            "limit": 3,
        }
        jsonschema.validate(arguments, schema)
        result = Dispatcher(Registry([rich])).dispatch(
            provider.parse_calls(
                [_function_call("c", "rich", json.dumps(arguments))]
            )[0]
        )
        assert not result.is_error, result.error

    def test_registry_schema_is_untouched(self) -> None:
        """The rewrite works on a copy of the definition."""
        before = json.dumps(rich.definition().parameters)
        _strict(rich)
        assert json.dumps(rich.definition().parameters) == before

    @pytest.mark.parametrize(
        ("annotation", "where", "words"),
        [
            (dict[str, int], "/properties/value", "free-form keys"),
            (Any, "/properties/value", "no type"),
            (tuple[int, str], "/properties/value/prefixItems", "tuples"),
            (dict, "/properties/value", "without listed properties"),
            (list, "/properties/value/items", "no type"),
            (dict[str, Any] | None, "/properties/value/anyOf/0", "free-form"),
        ],
    )
    def test_unsupported_shapes_raise(
        self, annotation: Any, where: str, words: str
    ) -> None:
        """What strict mode cannot express raises, naming tool and place."""

        def loose(value):  # type: ignore[no-untyped-def]
            """Take a loose value."""

        loose.__annotations__ = {"value": annotation, "return": None}
        loose = tool(loose)
        with pytest.raises(ProviderSchemaError) as info:
            _strict(loose)
        assert info.value.path == where
        assert info.value.tool == "loose"
        message = str(info.value)
        assert words in message
        assert "'loose'" in message
        assert "strict=False" in message
        provider.tools(Registry([loose]))  # fine without strict

    def test_hand_written_schema(self) -> None:
        """oneOf, one-element allOf and #/definitions refs are rewritten."""

        class Custom:
            def definition(self) -> ToolDefinition:
                return ToolDefinition(
                    name="custom",
                    parameters={
                        "type": "object",
                        "properties": {
                            "unit": {
                                "allOf": [{"$ref": "#/definitions/Unit"}],
                                "description": "The unit.",
                            },
                            "size": {
                                "oneOf": [
                                    {"type": "integer"},
                                    {"type": "string"},
                                ],
                                "minLength": 1,
                            },
                        },
                        "required": ["unit"],
                        "definitions": {
                            "Unit": {"type": "string", "enum": ["C", "F"]}
                        },
                    },
                )

            def execute(self, args: Mapping[str, Any]) -> Any:
                return dict(args)

        schema = _strict(Custom())
        assert schema == {
            "type": "object",
            "properties": {
                "unit": {
                    "type": "string",
                    "enum": ["C", "F"],
                    "description": "The unit.",
                },
                "size": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            },
            "required": ["unit", "size"],
            "additionalProperties": False,
        }

    def test_unknown_reference(self) -> None:
        """A $ref outside the schema's own definitions is refused."""

        class Remote:
            def definition(self) -> ToolDefinition:
                return ToolDefinition(
                    name="remote",
                    parameters={
                        "type": "object",
                        "properties": {
                            "x": {
                                "$ref": "https://example.com/x.json",
                                "description": "x",
                            }
                        },
                    },
                )

            def execute(self, args: Mapping[str, Any]) -> Any:
                return None

        with pytest.raises(ProviderSchemaError, match="local references"):
            _strict(Remote())
