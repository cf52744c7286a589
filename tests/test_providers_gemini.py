"""toolctx.providers.gemini: declarations, schema dialect, calls, responses."""

from __future__ import annotations

import dataclasses
import enum
import json

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import attrs
import pytest

from toolctx import (
    Dispatcher,
    InvalidToolNameError,
    Registry,
    ToolDefinition,
    ToolResult,
    tool,
)
from toolctx.providers import ProviderPayloadError, ProviderSchemaError
from toolctx.providers import gemini as provider


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


RESPONSE: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Doing both."},
                    {
                        "functionCall": {
                            "id": "fc_1",
                            "name": "add",
                            "args": {"a": 1},
                        }
                    },
                    {"functionCall": {"name": "echo", "args": {"text": "x"}}},
                ],
            },
            "finishReason": "STOP",
        }
    ]
}

# The keywords Gemini documents for parametersJsonSchema.
GEMINI_KEYWORDS = {
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
}


def _declarations(registry: Registry) -> list[dict[str, Any]]:
    [gemini_tool] = provider.tools(registry)
    declarations = gemini_tool["function_declarations"]
    assert isinstance(declarations, list)
    return declarations


def _schema(fn: Any) -> dict[str, Any]:
    [declaration] = _declarations(Registry([fn]))
    schema = declaration["parameters_json_schema"]
    assert isinstance(schema, dict)
    return schema


def _nodes(schema: object) -> Iterator[dict[str, Any]]:
    """Every subschema of *schema* (not the values of enum or required)."""
    if isinstance(schema, list):
        for item in schema:
            yield from _nodes(item)
    elif isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key in {"properties", "$defs"}:
                for sub in value.values():
                    yield from _nodes(sub)
            elif key not in {"enum", "required", "propertyOrdering"}:
                yield from _nodes(value)


class TestTools:
    """tools(): one Tool with every function declaration."""

    def test_shape(self, registry: Registry) -> None:
        """Declarations carry name, description and parameters_json_schema."""
        assert provider.tools(registry) == [
            {
                "function_declarations": [
                    {
                        "name": "add",
                        "description": "Add two integers.",
                        "parameters_json_schema": {
                            "type": "object",
                            "properties": {
                                "a": {"type": "integer"},
                                "b": {
                                    "type": "integer",
                                    "description": "Default: 2.",
                                },
                            },
                            "required": ["a"],
                            "additionalProperties": False,
                        },
                    },
                    {
                        "name": "echo",
                        "description": "Echo the text back.",
                        "parameters_json_schema": dict(
                            echo.definition().parameters
                        ),
                    },
                ]
            }
        ]

    def test_name_gemini_refuses(self) -> None:
        """A name starting with a digit is refused with a clear error."""

        @tool(name="2fast")
        def fast() -> None:
            """Go."""

        with pytest.raises(InvalidToolNameError, match="'2fast'"):
            provider.tools(Registry([fast]))

    def test_sdk_accepts_tool(self, registry: Registry) -> None:
        """google-genai's Tool model (extra fields forbidden) validates it."""
        pytest.importorskip("google.genai")
        from google.genai import types

        [entry] = provider.tools(registry)
        validated = types.Tool.model_validate(entry)
        declarations = validated.function_declarations or []
        assert [d.name for d in declarations] == ["add", "echo"]
        assert (
            declarations[1].parameters_json_schema
            == (entry["function_declarations"][1]["parameters_json_schema"])
        )


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


@attrs.define
class Chain:
    """A chain that must go on forever."""

    next: Chain | None


@tool
def rich(
    *,
    color: Annotated[Color, "The pen color."],
    at: Point,
    tree: Node | None = None,
    tags: frozenset[str] = frozenset(),
    pair: tuple[int, str] = (1, "a"),
    counts: dict[str, int] | None = None,
    mode: Literal["fast", None, True] = "fast",  # noqa: PYI061 - under test
) -> None:
    """Use many kinds of parameters."""


class TestSchemaDialect:
    """The parameters are rewritten to the subset Gemini documents."""

    def test_only_documented_keywords(self) -> None:
        """No keyword outside Gemini's list survives, anywhere."""
        for node in _nodes(_schema(rich)):
            assert set(node) <= GEMINI_KEYWORDS, node

    def test_refs_are_inlined_unless_recursive(self) -> None:
        """Plain classes are inlined; a recursive one keeps $defs."""
        schema = _schema(rich)
        props = schema["properties"]
        assert props["color"] == {
            "enum": ["red", "blue"],
            "type": "string",
            "description": "The pen color.",
        }
        assert props["at"]["properties"]["y"] == {
            "type": "number",
            "description": "Default: 0.0.",
        }
        assert props["tree"]["anyOf"][0] == {"$ref": "#/$defs/Node"}
        assert list(schema["$defs"]) == ["Node"]
        node = schema["$defs"]["Node"]
        assert node["properties"]["children"]["items"] == {
            "$ref": "#/$defs/Node"
        }
        for sub in _nodes(schema):
            if "$ref" in sub:
                assert set(sub) == {"$ref"}

    def test_arrays(self) -> None:
        """Sets lose uniqueItems; tuples keep prefixItems, lose items: false."""
        props = _schema(rich)["properties"]
        assert props["tags"] == {
            "type": "array",
            "items": {"type": "string"},
            "description": "Default: [].",
        }
        assert props["pair"] == {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
            "description": 'Default: [1,"a"].',
        }

    def test_maps_and_enums(self) -> None:
        """Map schemas stay; enums hold only strings and numbers."""
        props = _schema(rich)["properties"]
        assert props["counts"] == {
            "anyOf": [
                {
                    "type": "object",
                    "additionalProperties": {"type": "integer"},
                },
                {"type": "null"},
            ]
        }
        assert props["mode"] == {
            "anyOf": [
                {"type": "string", "enum": ["fast"]},
                {"type": "null"},
                {"type": "boolean"},
            ],
            "description": 'Default: "fast".',
        }

    def test_arguments_valid_for_gemini_are_accepted(self) -> None:
        """Arguments the rewritten schema accepts dispatch successfully."""
        jsonschema = pytest.importorskip("jsonschema")
        arguments = {
            "color": "blue",
            "at": {"x": 1.0},
            "tree": {"name": "a", "children": [{"name": "b"}]},
            "pair": [2, "b"],
            "counts": {"x": 1},
            "mode": True,
        }
        jsonschema.validate(arguments, _schema(rich))
        call = provider.parse_calls(
            [{"functionCall": {"name": "rich", "args": arguments}}]
        )[0]
        result = Dispatcher(Registry([rich])).dispatch(call)
        assert not result.is_error, result.error

    def test_recursion_through_required_fields(self) -> None:
        """A type recursing only through required fields is refused."""

        @tool
        def walk(chain: Chain) -> None:
            """Walk the chain."""

        with pytest.raises(ProviderSchemaError) as info:
            provider.tools(Registry([walk]))
        assert info.value.tool == "walk"
        assert info.value.path == "/$defs/Chain/properties/next/anyOf/0"
        assert "'Chain'" in str(info.value)
        assert "default" in str(info.value)

    def test_hand_written_schema(self) -> None:
        """A const becomes an enum; an allOf of several is refused."""

        def custom(parameters: Mapping[str, Any]) -> Any:
            class Custom:
                def definition(self) -> ToolDefinition:
                    return ToolDefinition(name="custom", parameters=parameters)

                def execute(self, args: Mapping[str, Any]) -> Any:
                    return None

            return Custom()

        schema = _schema(
            custom(
                {
                    "type": "object",
                    "properties": {"v": {"const": 3, "title": "V"}},
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                }
            )
        )
        assert schema == {
            "type": "object",
            "properties": {"v": {"enum": [3], "title": "V"}},
        }
        both = {"allOf": [{"type": "object"}, {"required": ["x"]}]}
        with pytest.raises(ProviderSchemaError, match="allOf"):
            _schema(custom({"type": "object", "properties": {"x": both}}))


class TestParse:
    """parse_calls(): functionCall parts of the first candidate."""

    def test_parallel_calls(self) -> None:
        """Every functionCall part is a call; id is kept when present."""
        calls = provider.parse_calls(RESPONSE)
        assert [(c.name, c.arguments, c.id) for c in calls] == [
            ("add", {"a": 1}, "fc_1"),
            ("echo", {"text": "x"}, None),
        ]

    def test_content_and_parts_forms(self) -> None:
        """A candidate, its content and its parts parse the same."""
        candidate = RESPONSE["candidates"][0]
        expected = provider.parse_calls(RESPONSE)
        assert provider.parse_calls(candidate) == expected
        assert provider.parse_calls(candidate["content"]) == expected
        assert provider.parse_calls(candidate["content"]["parts"]) == expected

    def test_nothing_to_call(self) -> None:
        """No candidates, no content or no parts mean no calls."""
        assert provider.parse_calls({"candidates": []}) == []
        assert provider.parse_calls({"candidates": [{}]}) == []
        assert provider.parse_calls({"role": "model", "parts": None}) == []

    def test_missing_args(self) -> None:
        """A call without args has None arguments, which means {}."""
        [call] = provider.parse_calls([{"functionCall": {"name": "add"}}])
        assert call.arguments is None

    def test_call_without_name(self) -> None:
        """A functionCall without a name is a payload error."""
        with pytest.raises(ProviderPayloadError, match="no tool name"):
            provider.parse_calls([{"functionCall": {"args": {}}}])

    def test_sdk_objects(self) -> None:
        """google-genai objects and both of their dumps parse."""
        pytest.importorskip("google.genai")
        from google.genai import types

        response = types.GenerateContentResponse.model_validate(RESPONSE)
        expected = provider.parse_calls(RESPONSE)
        assert provider.parse_calls(response) == expected
        assert provider.parse_calls(response.model_dump()) == expected
        dumped = response.model_dump(by_alias=True)
        assert provider.parse_calls(dumped) == expected
        assert response.candidates is not None
        content = response.candidates[0].content
        assert provider.parse_calls(content) == expected


class TestResults:
    """result_part(), result_message(), results_message()."""

    def test_turn_round_trip(self, registry: Registry) -> None:
        """Responses wrap the output, keep call ids, follow call order."""
        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(RESPONSE)
        )
        assert provider.results_message(results) == {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "name": "add",
                        "response": {"output": 3},
                        "id": "fc_1",
                    }
                },
                {
                    "function_response": {
                        "name": "echo",
                        "response": {"output": {"text": "x"}},
                    }
                },
            ],
        }

    def test_error_response(self) -> None:
        """An error result answers {"error": message}."""
        result = ToolResult(name="add", is_error=True, error="a missing")
        assert provider.result_part(result) == {
            "function_response": {
                "name": "add",
                "response": {"error": "a missing"},
            }
        }

    def test_output_with_an_error_key_is_not_an_error(self) -> None:
        """A successful dict output is wrapped, so its keys stay data."""
        result = ToolResult(name="t", output={"error": None, "n": 1})
        response = provider.result_part(result)["function_response"]
        assert response["response"] == {"output": {"error": None, "n": 1}}

    def test_output_is_a_plain_copy(self) -> None:
        """Mutating the message leaves the result's output alone."""
        output = {"items": [1, 2]}
        message = provider.result_message(ToolResult(name="t", output=output))
        response = message["parts"][0]["function_response"]["response"]
        response["output"]["items"].append(3)
        assert output == {"items": [1, 2]}

    def test_non_json_output(self) -> None:
        """A hand-built result with non-JSON output is a TypeError."""
        with pytest.raises(TypeError, match="not JSON data"):
            provider.result_part(ToolResult(name="t", output={1, 2}))

    def test_no_results(self) -> None:
        """An empty list cannot be sent."""
        with pytest.raises(ValueError, match="at least one ToolResult"):
            provider.results_message([])

    def test_sdk_accepts_content(self, registry: Registry) -> None:
        """google-genai's Content model validates the message as is."""
        pytest.importorskip("google.genai")
        from google.genai import types

        results = Dispatcher(registry).dispatch_all(
            provider.parse_calls(RESPONSE)
        )
        message = provider.results_message(results)
        content = types.Content.model_validate(message)
        parts = content.parts or []
        responses = [p.function_response for p in parts]
        assert [r.name for r in responses if r] == ["add", "echo"]
        assert responses[0] is not None
        assert responses[0].id == "fc_1"
        dumped = content.model_dump(exclude_none=True, mode="json")
        assert json.loads(json.dumps(dumped)) == message
