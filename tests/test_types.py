"""The type model: what each supported type becomes in a tool's schema.

Every schema here is checked against the Draft 2020-12 metaschema. The
validator's side (what is accepted and refused) is in test_arguments,
but for a bound that the schema and the validator must read alike.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import pathlib

from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import annotated_types as at
import jsonschema
import pytest
import typing_extensions as te

from toolctx import (
    Dispatcher,
    Registry,
    SchemaError,
    ToolCall,
    ToolResult,
    tool,
)
from toolctx._types.schema import type_schema


pydantic = pytest.importorskip("pydantic")


def schema_of(tp: object) -> dict[str, Any]:
    """The schema of *tp*, checked to be valid Draft 2020-12."""
    schema, defs = type_schema(tp, owner="tests.f", parameter="x")
    document = {**schema, "$defs": defs} if defs else schema
    jsonschema.Draft202012Validator.check_schema(document)
    return schema


class TestScalars:
    """The standard library types real tools take."""

    @pytest.mark.parametrize(
        ("tp", "expected"),
        [
            (pathlib.Path, {"type": "string", "format": "path"}),
            (pathlib.PurePosixPath, {"type": "string", "format": "path"}),
            (dt.timedelta, {"type": "string", "format": "duration"}),
            (bytes, {"type": "string", "contentEncoding": "base64"}),
            (dt.datetime, {"type": "string", "format": "date-time"}),
        ],
    )
    def test_string_forms(self, tp: object, expected: object) -> None:
        """Paths, durations and bytes travel as strings."""
        assert schema_of(tp) == expected

    def test_decimal_takes_numbers_and_decimal_strings(self) -> None:
        """A Decimal may be sent exactly, as a string of digits."""
        schema = schema_of(decimal.Decimal)
        validator = jsonschema.Draft202012Validator(schema)
        assert validator.is_valid(1.5)
        assert validator.is_valid("123.4500")
        assert not validator.is_valid("1.2.3")
        assert not validator.is_valid("NaN")


class TestConstraints:
    """annotated-types and pydantic bounds become JSON Schema keywords."""

    @pytest.mark.parametrize(
        ("tp", "keywords"),
        [
            (
                Annotated[int, at.Ge(0), at.Le(10)],
                {"minimum": 0, "maximum": 10},
            ),
            (
                Annotated[float, at.Interval(gt=0, lt=1)],
                {"exclusiveMinimum": 0, "exclusiveMaximum": 1},
            ),
            (Annotated[int, at.MultipleOf(5)], {"multipleOf": 5}),
            (
                Annotated[str, at.Len(1, 20)],
                {"minLength": 1, "maxLength": 20},
            ),
            (Annotated[list[int], at.MaxLen(3)], {"maxItems": 3}),
            (Annotated[dict[str, int], at.MinLen(1)], {"minProperties": 1}),
            (
                Annotated[int, pydantic.Field(ge=1, le=5)],
                {"minimum": 1, "maximum": 5},
            ),
            (
                Annotated[str, pydantic.StringConstraints(pattern="^[a-z]+$")],
                {"pattern": "^[a-z]+$"},
            ),
        ],
    )
    def test_keywords(self, tp: object, keywords: dict[str, object]) -> None:
        """Each bound is shown to the model."""
        schema = schema_of(tp)
        assert {k: schema[k] for k in keywords} == keywords

    def test_field_text_and_examples(self) -> None:
        """``Field(description=..., examples=...)`` describe the type."""
        schema = schema_of(
            Annotated[
                int, pydantic.Field(description="How many.", examples=[3])
            ]
        )
        assert schema == {
            "type": "integer",
            "description": "How many.",
            "examples": [3],
        }

    @pytest.mark.parametrize(
        ("tp", "message"),
        [
            (
                Annotated[int, at.Predicate(lambda v: v > 0)],
                "asks for Predicate, which toolctx cannot enforce",
            ),
            (
                Annotated[str, pydantic.StringConstraints(to_lower=True)],
                "asks for to_lower, which toolctx cannot enforce",
            ),
            (
                Annotated[str, at.Gt(3)],
                "does not apply to it",
            ),
            (
                Annotated[int | None, at.Ge(0)],
                "`Annotated[int, Ge(0)] | None`",
            ),
        ],
    )
    def test_what_cannot_be_enforced_is_refused(
        self, tp: object, message: str
    ) -> None:
        """Never dropped silently: a SchemaError that says what to do."""
        with pytest.raises(SchemaError, match="constraint") as info:
            type_schema(tp, owner="tests.f", parameter="x")
        assert message in str(info.value)
        assert info.value.parameter == "x"

    def test_decimal_bounds_are_json_numbers(self) -> None:
        """A ``Decimal`` bound is shown as a JSON number: the schema is JSON.

        An integral bound is an integer; another one the float of the
        same decimal text.
        """
        tp = Annotated[
            decimal.Decimal,
            at.Ge(decimal.Decimal("0.5")),
            pydantic.Field(
                le=decimal.Decimal("1E+1"),
                multiple_of=decimal.Decimal("0.25"),
            ),
        ]
        schema = schema_of(tp)
        assert schema["anyOf"][0] == {
            "type": "number",
            "minimum": 0.5,
            "maximum": 10,
            "multipleOf": 0.25,
        }
        assert type(schema["anyOf"][0]["maximum"]) is int
        assert json.loads(json.dumps(schema)) == schema

    def test_bounds_compare_decimals_as_written(self) -> None:
        """Bounds compare a Decimal and a float as the decimals JSON writes.

        A float bound on a Decimal, or a Decimal bound on a float, is
        compared as ``multipleOf`` divides: ``Ge(0.1)`` takes ``0.1``
        and ``"0.1"``; ``Gt(Decimal("0.1"))`` refuses ``0.1`` (the binary
        float 0.1 is a little more than 0.1), as the schema, which shows
        ``exclusiveMinimum: 0.1``, does.
        """

        @tool
        def pay(
            amount: Annotated[decimal.Decimal, at.Ge(0.1), at.Le(0.3)],
            rate: Annotated[float, at.Gt(decimal.Decimal("0.1"))] = 1.0,
        ) -> str:
            """Pay an amount."""
            return f"{amount} at {rate}"

        dispatcher = Dispatcher(Registry([pay]))

        def call(arguments: str) -> ToolResult:
            return dispatcher.dispatch(ToolCall("pay", arguments))

        assert call('{"amount": 0.1}').output == "0.1 at 1.0"
        assert call('{"amount": "0.3"}').output == "0.3 at 1.0"
        assert call('{"amount": 0.3, "rate": 0.1000001}').error is None
        refused = call('{"amount": 0.1, "rate": 0.1}')
        assert refused.error == (
            "Invalid arguments for tool 'pay': rate: expected a number "
            "> 0.1, got 0.1"
        )
        schema = pay.definition().parameters
        rate = jsonschema.Draft202012Validator(schema["properties"]["rate"])
        assert not rate.is_valid(0.1)

    def test_field_default_is_the_default_plus_its_metadata(self) -> None:
        """``n: int = Field(5, ge=0)``: optional, default 5, minimum 0."""

        @tool
        def repeat(text: str, n: int = pydantic.Field(5, ge=0)) -> str:
            """Repeat text."""
            return text * n

        schema = repeat.definition().parameters
        assert schema["required"] == ["text"]
        assert schema["properties"]["n"] == {
            "type": "integer",
            "minimum": 0,
            "default": 5,
        }

    def test_field_default_factory_is_optional(self) -> None:
        """A factory makes the parameter optional, with no shown default."""

        @tool
        def tag(
            tags: list[str] = pydantic.Field(default_factory=list),  # noqa: B008
        ) -> int:
            """Count tags."""
            return len(tags)

        schema = tag.definition().parameters
        assert "required" not in schema
        assert schema["properties"]["tags"] == {
            "type": "array",
            "items": {"type": "string"},
        }


class WithExtras(te.TypedDict, extra_items=int):
    """Scores by name, plus a label."""

    label: str


class Closed(te.TypedDict, closed=True):
    """Exactly a label."""

    label: str


class TestTypedDicts:
    """PEP 728 ``closed``/``extra_items``; keys beyond the fields."""

    def test_extra_items_are_allowed_with_their_type(self) -> None:
        """``extra_items=int``: other keys must hold integers."""
        _, defs = type_schema(WithExtras, owner="f")
        assert defs["WithExtras"]["additionalProperties"] == {
            "type": "integer"
        }

    def test_closed_and_default_refuse_other_keys(self) -> None:
        """Closed, and toolctx's rule for a plain TypedDict: no extras."""
        _, defs = type_schema(Closed, owner="f")
        assert defs["Closed"]["additionalProperties"] is False


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: float
    """Horizontal position."""
    y: float = 0.0
    """Vertical position."""


class TestDescriptions:
    """Field descriptions come from attribute docstrings too."""

    def test_attribute_docstrings(self) -> None:
        """A string below a field describes it."""
        _, defs = type_schema(Point, owner="f")
        properties = defs["Point"]["properties"]
        assert properties["x"]["description"] == "Horizontal position."
        assert properties["y"]["description"] == "Vertical position."


class TestOutputSchema:
    """``ToolDefinition.output_schema`` comes from the return annotation."""

    def test_from_the_return_annotation(self) -> None:
        """A typed return is described, ``$defs`` at its root."""

        @tool
        def where() -> Point:
            """Say where."""
            return Point(1.0)

        schema = where.definition().output_schema
        assert schema is not None
        assert schema["$ref"] == "#/$defs/Point"
        assert "Point" in schema["$defs"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert where.definition().to_dict()["output_schema"] == schema

    @pytest.mark.parametrize("returns", ["None", "Any", "object", ""])
    def test_none_when_it_says_nothing(self, returns: str) -> None:
        """Unannotated, ``Any``, ``None``: no output schema."""
        namespace: dict[str, object] = {"Any": Any}
        arrow = f" -> {returns}" if returns else ""
        exec(  # noqa: S102 - one signature per case
            f"def f(){arrow}:\n    '''F.'''\n",
            namespace,
        )
        made = tool(namespace["f"])  # type: ignore[arg-type]
        assert made.definition().output_schema is None
        assert "output_schema" not in made.definition().to_dict()

    def test_streaming_tools_output_their_chunks(self) -> None:
        """A generator's output is the array of what it yields."""

        @tool
        def count() -> Iterator[int]:
            """Count."""
            yield 1

        @tool
        async def acount() -> AsyncIterator[str]:
            """Count."""
            yield "1"

        assert count.definition().output_schema == {
            "type": "array",
            "items": {"type": "integer"},
        }
        assert acount.definition().output_schema == {
            "type": "array",
            "items": {"type": "string"},
        }


class Item(pydantic.BaseModel):
    """An item to order."""

    name: str
    quantity: int = pydantic.Field(1, ge=1)

    @pydantic.field_validator("name")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value:
            msg = "name must not be empty"
            raise ValueError(msg)
        return value


def _shop() -> Any:
    from toolctx import Registry

    registry = Registry()

    @registry.tool
    def order(item: Item, copies: int = 1) -> Item:
        """Order copies of an item."""
        return item.model_copy(update={"quantity": item.quantity * copies})

    @registry.tool
    async def aorder(item: Item) -> Item:
        """Order an item, asynchronously."""
        return item

    return registry


class TestPydanticModels:
    """A ``BaseModel`` parameter or return type, end to end."""

    def test_schema_and_output_schema(self) -> None:
        """The model's own schema, closed, in ``$defs``."""
        definition = _shop()["order"].definition()
        item = definition.parameters["$defs"]["Item"]
        assert item["additionalProperties"] is False
        assert item["properties"]["quantity"]["minimum"] == 1
        assert definition.output_schema is not None
        assert definition.output_schema["$ref"] == "#/$defs/Item"
        jsonschema.Draft202012Validator.check_schema(definition.parameters)

    @pytest.mark.parametrize("name", ["order", "aorder"])
    def test_validated_by_pydantic_under_toolctx_rules(
        self, name: str
    ) -> None:
        """Validators run; ``"2"`` is not 2; unknown keys are refused."""
        import asyncio

        from toolctx import Dispatcher, ToolCall

        dispatcher = Dispatcher(_shop())
        good = ToolCall(name, '{"item": {"name": "pen", "quantity": 2}}')
        bad = ToolCall(name, '{"item": {"name": "", "quantity": "2", "x": 1}}')
        for result in (
            dispatcher.dispatch(good),
            asyncio.run(dispatcher.adispatch(good)),
        ):
            assert result.output == {"name": "pen", "quantity": 2}
        error = dispatcher.dispatch(bad).error
        assert error is not None
        assert "item.name: name must not be empty" in error
        assert (
            'item.quantity: expected an integer, got the string "2"' in error
        )
        assert "item.x: unexpected property" in error

    def test_a_returned_model_is_dumped_in_json_mode(self) -> None:
        """The tool returns a model; the result holds JSON data."""
        from toolctx import Dispatcher, ToolCall

        result = Dispatcher(_shop()).dispatch(
            ToolCall("order", '{"item": {"name": "pen"}, "copies": 3}')
        )
        assert result.output == {"name": "pen", "quantity": 3}
