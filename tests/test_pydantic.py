"""Pydantic v2 models: pydantic validates, toolctx's rules apply.

Every case is run through toolctx (``toolctx._types.pydantic``) and
through pydantic's own ``TypeAdapter(cls).validate_python`` on the same
JSON data. Where both accept, the instances are equal; where toolctx's
documented rules differ from pydantic's defaults, the test says which
rule and asserts that toolctx refuses. The emitted schemas are valid
Draft 2020-12, and ``jsonschema`` accepts every instance toolctx accepts
(and refuses the ones toolctx refuses for JSON reasons).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import subprocess
import sys
import textwrap
import uuid

from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

import jsonschema
import pytest

from typing_extensions import NotRequired, TypedDict


pytest.importorskip("pydantic")

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    RootModel,
    TypeAdapter,
    ValidationError,
    computed_field,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

from toolctx._types import pydantic as tp
from toolctx._types.output import NotJSONError
from toolctx._types.problems import InvalidValueError
from toolctx._types.pydantic_check import UnsupportedModelError, is_model


if TYPE_CHECKING:
    from toolctx._types.pydantic_schema import Mode


# -- models ------------------------------------------------------------------


class Size(enum.Enum):
    """How big."""

    SMALL = "s"
    LARGE = "l"


class Level(enum.IntEnum):
    """How urgent."""

    LOW = 1
    HIGH = 2


class Item(BaseModel):
    """One line of an order.

    Attributes:
        name: What to order.
        quantity: How many.
    """

    name: str = Field(min_length=1, max_length=20, pattern=r"^[a-z ]+$")
    quantity: int = Field(1, ge=1, le=100)
    price: float = Field(0.0, ge=0, description="Unit price in euros.")
    tags: set[str] = Field(default_factory=set)


class Order(BaseModel):
    """An order to deliver or pick up."""

    items: list[Item] = Field(min_length=1)
    size: Size = Size.SMALL
    level: Level = Level.LOW
    kind: Literal["pickup", "delivery"] = "pickup"
    when: dt.date
    at: dt.datetime | None = None
    ref: uuid.UUID | None = None
    note: str | None = None

    @field_validator("note")
    @classmethod
    def _no_blank_note(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            msg = "the note must not be blank"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _delivery_needs_note(self) -> Order:
        if self.kind == "delivery" and self.note is None:
            msg = "a delivery needs a note with the address"
            raise ValueError(msg)
        return self


class Default(BaseModel):
    """No ``extra`` setting: pydantic ignores unknown keys."""

    a: int


class Forbid(BaseModel):
    """Unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")
    a: int


class Allow(BaseModel):
    """Unknown keys are kept."""

    model_config = ConfigDict(extra="allow")
    a: int


class Lax(BaseModel):
    """Asks pydantic for lax validation."""

    model_config = ConfigDict(strict=False)
    n: int = Field(0, strict=False)


class Choice(BaseModel):
    """Literal and enum options that Python confuses with bools."""

    one: Literal[1, "one"] = "one"
    flag: Literal[True] = True
    level: Level = Level.LOW


class Numbers(BaseModel):
    """Numbers, sets and unions."""

    n: int = 0
    x: float = 0.0
    either: int | str = 0
    ids: frozenset[int] = frozenset()
    counts: dict[str, int] = Field(default_factory=dict)
    anything: Any = None


class Tree(BaseModel):
    """A recursive model."""

    value: int
    children: list[Tree] = Field(default_factory=list)


class Person(BaseModel):
    """A model with an alias."""

    full_name: str = Field(alias="fullName")
    born: dt.date | None = None


class Tags(RootModel[list[int]]):
    """A root model: a JSON array of integers."""


class Counter(BaseModel):
    """Private attributes and model_post_init run as pydantic runs them."""

    start: int = 0
    _seen: list[int] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        """Remember the start."""
        self._seen.append(self.start)


class Area(BaseModel):
    """A model with a computed field (written, never read)."""

    width: float
    height: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def area(self) -> float:
        """Width times height."""
        return self.width * self.height


class Wrapped(BaseModel):
    """Before and wrap model validators see the JSON data."""

    words: list[str]

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("words"), str):
            return {**data, "words": data["words"].split()}
        return data

    @model_validator(mode="wrap")
    @classmethod
    def _count(cls, data: Any, handler: Any) -> Wrapped:
        result = handler(data)
        if len(result.words) > 3:
            msg = "at most 3 words"
            raise ValueError(msg)
        return result


@pydantic_dataclass
class Point:
    """A pydantic dataclass (it has its own prebuilt validator)."""

    x: int
    y: int = 0


@pydantic_dataclass(slots=True, frozen=True)
class Pair:
    """A slotted, frozen pydantic dataclass with an init-only value."""

    left: int
    right: int
    scale: dataclasses.InitVar[int] = 1

    def __post_init__(self, scale: int) -> None:
        """Scale both sides."""
        object.__setattr__(self, "left", self.left * scale)
        object.__setattr__(self, "right", self.right * scale)


@dataclasses.dataclass
class Span:
    """A standard dataclass inside a model."""

    start: int
    end: int


class Range(TypedDict):
    """A TypedDict inside a model."""

    low: int
    high: NotRequired[int]


class Cat(BaseModel):
    """One member of a discriminated union."""

    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    """The other member."""

    kind: Literal["dog"]
    good: bool = True


T = TypeVar("T")


class Box(BaseModel, Generic[T]):
    """A generic model."""

    value: T


class Shapes(BaseModel):
    """Other classes inside a model follow the same rules."""

    point: Point | None = None
    pair: Pair | None = None
    span: Span | None = None
    range: Range | None = None
    pet: Annotated[Cat | Dog, Field(discriminator="kind")] | None = None
    box: Box[int] | None = None


class Anything(BaseModel):
    """A free-form field, for output checks."""

    value: Any = None
    number: float = 0.0


def toolctx(cls: type, data: object) -> object:
    """Validate with toolctx: the instance, or the error."""
    try:
        return tp.validate(cls, data)
    except InvalidValueError as exc:
        return exc


def pydantic(cls: type, data: object) -> object:
    """Validate with pydantic itself (lax): the instance, or the error."""
    try:
        return TypeAdapter(cls).validate_python(data)
    except ValidationError as exc:
        return exc


def document(cls: type, mode: Mode = "validation") -> dict[str, Any]:
    """The model's schema as one document (``$defs`` at its root)."""
    schema, defs = tp.model_schema(cls, mode=mode)
    return {**schema, "$defs": defs}


def schema_validator(cls: type, mode: Mode = "validation") -> Any:
    """A format-checking Draft 2020-12 validator of the model's schema."""
    doc = document(cls, mode)
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(
        doc, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def problems(cls: type, data: object) -> list[str]:
    """The problems toolctx finds in *data*, as ``path: message``."""
    with pytest.raises(InvalidValueError) as caught:
        tp.validate(cls, data)
    return str(caught.value).split("; ")


# -- what both accept -------------------------------------------------------

ORDER = {
    "items": [
        {"name": "tea", "quantity": 2, "price": 3.5, "tags": ["hot"]},
        {"name": "cake"},
    ],
    "size": "l",
    "level": 2,
    "kind": "delivery",
    "when": "2024-05-01",
    "at": "2024-05-01T12:30:00Z",
    "ref": "12345678-1234-5678-1234-567812345678",
    "note": "1 Main Street",
}

AGREED = [
    pytest.param(Order, ORDER, id="order-every-field"),
    pytest.param(
        Order, {"items": [{"name": "tea"}], "when": "2024-02-29"}, id="order"
    ),
    pytest.param(Item, {"name": "tea", "price": 2}, id="int-for-float"),
    pytest.param(Default, {"a": 1}, id="default-extra"),
    pytest.param(Forbid, {"a": 1}, id="forbid"),
    pytest.param(Allow, {"a": 1, "b": [1, "x"]}, id="allow-keeps-extra"),
    pytest.param(Choice, {"one": 1, "flag": True, "level": 2}, id="choice"),
    pytest.param(
        Numbers,
        {
            "n": -5,
            "x": 1,
            "either": "five",
            "ids": [3, 1, 2],
            "counts": {"a": 1},
            "anything": {"deep": [1.5, None]},
        },
        id="numbers",
    ),
    pytest.param(Numbers, {"either": 5}, id="union-int"),
    pytest.param(
        Tree,
        {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]},
        id="recursive",
    ),
    pytest.param(
        Person, {"fullName": "Ada", "born": "1815-12-10"}, id="alias"
    ),
    pytest.param(Tags, [3, 1, 2], id="root-model"),
    pytest.param(Counter, {"start": 4}, id="post-init"),
    pytest.param(Area, {"width": 2, "height": 3}, id="computed-field"),
    pytest.param(Wrapped, {"words": ["a", "b"]}, id="wrap-validator"),
    pytest.param(
        Shapes,
        {
            "point": {"x": 1},
            "pair": {"left": 1, "right": 2, "scale": 3},
            "span": {"start": 1, "end": 2},
            "range": {"low": 1},
            "pet": {"kind": "dog", "good": False},
            "box": {"value": 7},
        },
        id="nested-classes",
    ),
]


@pytest.mark.parametrize(("cls", "data"), AGREED)
def test_where_both_accept_the_instances_are_equal(
    cls: type, data: object
) -> None:
    """Valid JSON data gives the instance pydantic itself would build.

    Validators, defaults, ``model_post_init``, private attributes, ISO
    strings for dates, enum values, aliases and root models included.
    """
    mine = toolctx(cls, data)
    theirs = pydantic(cls, data)
    assert not isinstance(mine, Exception), mine
    assert type(mine) is cls
    assert mine == theirs
    assert mine.__pydantic_fields_set__ == theirs.__pydantic_fields_set__  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "data"), AGREED)
def test_what_toolctx_accepts_the_schema_accepts(
    cls: type, data: object
) -> None:
    """``jsonschema`` accepts every instance toolctx accepts, formats too."""
    schema_validator(cls).validate(data)


def test_a_before_validator_sees_the_json_data() -> None:
    """A ``mode="before"`` validator gets the JSON data and may widen it.

    The schema describes the fields, not what such a validator also
    takes (pydantic's schema does the same).
    """
    data = {"words": "a b c"}
    assert toolctx(Wrapped, data) == pydantic(Wrapped, data)
    assert tp.validate(Wrapped, data).words == ["a", "b", "c"]


def test_the_private_state_is_pydantics() -> None:
    """``model_post_init`` ran once, on the real instance."""
    counter = tp.validate(Counter, {"start": 4})
    assert counter._seen == [4]


class Groups(BaseModel):
    """Sets whose items are arrays."""

    pairs: set[frozenset[int]] = set()
    flags: frozenset[tuple[int | bool, ...]] = frozenset()


def strict_json(cls: type[BaseModel], data: object) -> object:
    """The answer of pydantic's strict JSON mode for *data*."""
    try:
        return cls.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        return exc


def test_an_integral_float_is_not_an_integer() -> None:
    """``1.0`` is refused for an ``int``, as pydantic's strict mode says.

    (JSON Schema calls ``1.0`` an integer; a model's fields follow
    pydantic, whose strict JSON mode refuses it.)
    """
    data = {"name": "tea", "quantity": 3.0}
    assert problems(Item, data) == ["quantity: expected an integer, got 3.0"]
    assert isinstance(strict_json(Item, data), ValidationError)


PYDANTICS_OWN = [
    pytest.param(Choice, {"flag": 1}, id="1-for-literal-true"),
    pytest.param(Choice, {"level": True}, id="bool-for-int-enum"),
    pytest.param(Choice, {"one": 1.0}, id="float-for-literal-1"),
    pytest.param(Choice, {"one": True}, id="bool-for-literal-1"),
    pytest.param(Item, {"name": "tea", "tags": ["a", "b", "a"]}, id="set"),
    pytest.param(Numbers, {"ids": [1, 1]}, id="repeated-frozenset-item"),
    pytest.param(
        Groups, {"pairs": [[1, 2], [2, 1]], "flags": [[True], [1]]}, id="sets"
    ),
]


@pytest.mark.parametrize(("cls", "data"), PYDANTICS_OWN)
def test_literals_enums_and_sets_are_pydantics(
    cls: type[BaseModel], data: object
) -> None:
    """``Literal`` and enum options and set items follow pydantic.

    In its strict JSON mode, pydantic matches options as Python compares
    them (``true`` for ``Literal[1]`` or an ``IntEnum`` member of value
    1; ``1`` for ``Literal[True]``, in the pydantic versions that do)
    and merges repeated set items; a model gets pydantic's answer.
    """
    theirs = strict_json(cls, data)
    mine = toolctx(cls, data)
    if isinstance(theirs, Exception):  # pydantic 2.11 refuses some
        assert isinstance(mine, InvalidValueError)
    else:
        assert mine == theirs


# -- where toolctx's rules differ -------------------------------------------

DIFFERENT = [
    pytest.param(
        Item,
        {"name": "tea", "quantity": "2"},
        'quantity: expected an integer, got the string "2"',
        id="string-for-int",
    ),
    pytest.param(
        Item,
        {"name": "tea", "quantity": True},
        "quantity: expected an integer, got true",
        id="bool-for-int",
    ),
    pytest.param(
        Item,
        {"name": "tea", "price": "1.5"},
        'price: expected a number, got the string "1.5"',
        id="string-for-float",
    ),
    pytest.param(
        Numbers,
        {"x": False},
        "x: expected a number, got false",
        id="bool-for-float",
    ),
    pytest.param(
        Default,
        {"a": 1, "b": 2},
        "b: unexpected property (allowed: a)",
        id="unknown-key-default",
    ),
    pytest.param(
        Order,
        {"items": [{"name": "tea", "colour": "red"}], "when": "2024-05-01"},
        "items[0].colour: unexpected property "
        "(allowed: name, quantity, price, tags)",
        id="unknown-key-nested",
    ),
    pytest.param(
        Shapes,
        {"point": {"x": 1, "z": 0}},
        "point.z: unexpected property (allowed: x, y)",
        id="unknown-key-pydantic-dataclass",
    ),
    pytest.param(
        Shapes,
        {"span": {"start": 1, "end": 2, "z": 0}},
        "span.z: unexpected property (allowed: start, end)",
        id="unknown-key-dataclass",
    ),
    pytest.param(
        Shapes,
        {"range": {"low": 1, "z": 0}},
        "range.z: unexpected property (allowed: low, high)",
        id="unknown-key-typeddict",
    ),
    pytest.param(
        Shapes,
        {"box": {"value": "7"}},
        'box.value: expected an integer, got the string "7"',
        id="string-for-int-generic",
    ),
    pytest.param(
        Lax,
        {"n": "3"},
        'n: expected an integer, got the string "3"',
        id="strict-false-field",
    ),
]


@pytest.mark.parametrize(("cls", "data", "message"), DIFFERENT)
def test_where_the_rules_differ_toolctx_refuses(
    cls: type, data: object, message: str
) -> None:
    """What lax pydantic coerces, drops or merges, toolctx refuses.

    The rules (pydantic's strict JSON mode, plus toolctx's default for
    unknown keys): ``"1"`` is not ``1``; ``true`` is not ``1`` for ints
    and floats; an unknown key is refused unless the class sets
    ``extra`` (pydantic's default drops it); ``strict=False`` does not
    make a field lax. Each problem names its path.
    """
    assert not isinstance(pydantic(cls, data), Exception)
    assert message in problems(cls, data)


@pytest.mark.parametrize(("cls", "data", "message"), DIFFERENT)
def test_what_toolctx_refuses_the_schema_refuses(
    cls: type, data: object, message: str
) -> None:
    """The schema says the same: ``jsonschema`` refuses these too."""
    del message
    assert not schema_validator(cls).is_valid(data)


class Price(BaseModel):
    """An amount with decimal bounds."""

    amount: float = Field(ge=decimal.Decimal("0.01"), le=decimal.Decimal(5))


def test_decimal_bounds_are_json_numbers() -> None:
    """``Field(ge=Decimal(...))``: the model's schema holds JSON numbers.

    pydantic leaves the ``Decimal`` objects in the schema it writes; a
    tool's schema must be JSON data (providers send it as JSON text).
    """
    schema, defs = tp.model_schema(Price)
    amount = defs["Price"]["properties"]["amount"]
    assert amount["minimum"] == 0.01
    assert type(amount["minimum"]) is float
    assert amount["maximum"] == 5
    assert type(amount["maximum"]) is int
    assert json.loads(json.dumps([schema, defs])) == [schema, defs]


def test_extra_allow_keeps_unknown_keys() -> None:
    """``extra="allow"``: unknown keys are kept, and the schema says so."""
    model = tp.validate(Allow, {"a": 1, "b": 2})
    assert model.model_extra == {"b": 2}
    assert document(Allow)["$defs"]["Allow"]["additionalProperties"] is True


class Ignore(BaseModel):
    """Unknown keys are dropped, as the model says."""

    model_config = ConfigDict(extra="ignore")
    a: int


class Ignoring(BaseModel):
    """Says ``extra="ignore"``: the plain classes inside it follow it."""

    model_config = ConfigDict(extra="ignore")
    range: Range
    span: Span
    inner: Default


def test_extra_ignore_is_pydantics() -> None:
    """``extra="ignore"`` set by the class: unknown keys are dropped.

    As pydantic does: the model's own setting wins over toolctx's
    default, and its schema stays open (pydantic writes no
    ``additionalProperties``). The TypedDicts and dataclasses it holds
    inherit its setting; a model it holds that sets no ``extra`` still
    refuses unknown keys.
    """
    assert tp.validate(Ignore, {"a": 1, "z": 0}) == Ignore(a=1)
    assert "additionalProperties" not in document(Ignore)["$defs"]["Ignore"]
    data = {
        "range": {"low": 1, "z": 0},
        "span": {"start": 1, "end": 2, "z": 0},
        "inner": {"a": 1},
        "z": 0,
    }
    assert tp.validate(Ignoring, data) == Ignoring.model_validate(data)
    assert problems(Ignoring, {**data, "inner": {"a": 1, "z": 0}}) == [
        "inner.z: unexpected property (allowed: a)"
    ]
    defs = document(Ignoring)["$defs"]
    assert "additionalProperties" not in defs["Range"]
    assert "additionalProperties" not in defs["Span"]
    assert defs["Default"]["additionalProperties"] is False


@pytest.mark.parametrize("cls", [Default, Forbid])
def test_other_models_close_their_schema(cls: type) -> None:
    """No ``extra`` setting, or ``"forbid"``: unknown keys are refused.

    The schema says ``additionalProperties: false``; the problem lists
    the allowed keys.
    """
    name = cls.__name__
    assert document(cls)["$defs"][name]["additionalProperties"] is False
    assert problems(cls, {"a": 1, "z": 0}) == [
        "z: unexpected property (allowed: a)"
    ]


# -- problems --------------------------------------------------------------


def test_every_problem_is_reported_with_its_path() -> None:
    """One validation reports every problem, each at its place."""
    data = {
        "items": [
            {"name": "Tea!", "quantity": 0},
            {"quantity": 101, "price": -1, "tags": "hot"},
        ],
        "size": "m",
        "kind": "post",
        "when": "2024-13-01",
        "note": "  ",
    }
    assert problems(Order, data) == [
        "items[0].name: expected a string matching '^[a-z ]+$', got \"Tea!\"",
        "items[0].quantity: expected a number >= 1, got 0",
        "items[1].name: missing required property",
        "items[1].quantity: expected a number <= 100, got 101",
        "items[1].price: expected a number >= 0.0, got -1",
        'items[1].tags: expected an array, got the string "hot"',
        "size: expected 's' or 'l', got 'm'",
        "kind: expected 'pickup' or 'delivery', got 'post'",
        (
            "when: expected a valid date in the format YYYY-MM-DD, month "
            'value is outside expected range of 1-12, got "2024-13-01"'
        ),
        "note: the note must not be blank",
    ]


def test_model_validator_errors_are_problems() -> None:
    """A ``model_validator`` error is a problem at the model itself."""
    data = {"items": [{"name": "tea"}], "kind": "delivery", "when": "2024-1-1"}
    assert problems(Order, {**data, "when": "2024-01-01"}) == [
        "a delivery needs a note with the address"
    ]
    assert problems(Wrapped, {"words": "a b c d"}) == ["at most 3 words"]


def test_nested_and_recursive_paths() -> None:
    """Paths go through lists and recursive models."""
    data = {"value": 1, "children": [{"value": 2, "children": [{}]}]}
    assert problems(Tree, data) == [
        "children[0].children[0].value: missing required property"
    ]


def test_a_discriminated_union_names_the_tag() -> None:
    """A wrong or missing tag is a problem at the tag's key."""
    assert problems(Shapes, {"pet": {"kind": "cow"}}) == [
        "pet.kind: expected one of 'cat', 'dog', got 'cow'"
    ]
    assert problems(Shapes, {"pet": {}}) == [
        "pet.kind: missing required property"
    ]


def test_init_only_values_reach_post_init() -> None:
    """A pydantic dataclass's ``__post_init__`` gets its init-only values."""
    shapes = tp.validate(Shapes, {"pair": {"left": 1, "right": 2, "scale": 3}})
    assert shapes.pair == Pair(1, 2, 3)
    assert (shapes.pair.left, shapes.pair.right) == (3, 6)  # type: ignore[union-attr]


def test_a_union_reads_as_one_problem() -> None:
    """``int | str`` given ``1.5``: one problem naming both members."""
    assert problems(Numbers, {"either": 1.5}) == [
        "either: expected an integer or a string, got 1.5"
    ]


def test_a_model_wants_an_object() -> None:
    """Anything but a JSON object (a root model aside) is refused."""
    assert problems(Item, "tea") == [
        'expected an object, got the string "tea"'
    ]
    assert problems(Tags, {"a": 1}) == ["expected an array, got an object"]


def test_data_that_is_not_json_is_refused_where_it_sits() -> None:
    """A host's mapping with Python objects or NaN: refused at the path."""
    data = {"items": [{"name": "tea", "price": float("nan")}], "when": "x"}
    assert problems(Order, data) == [
        "items[0].price: expected a finite number, got NaN"
    ]
    data = {"items": [{"name": "tea"}], "when": dt.date(2024, 5, 1)}
    assert problems(Order, data) == [
        "when: expected JSON data, got a Python date object"
    ]


def test_a_long_message_is_bounded() -> None:
    """A validator's huge message cannot flood the model's context."""

    class Loud(BaseModel):
        text: str

        @field_validator("text")
        @classmethod
        def _shout(cls, value: str) -> str:
            raise ValueError(value * 10_000)

    [message] = problems(Loud, {"text": "no"})
    assert len(message) < 400


# -- schemas -----------------------------------------------------------------

MODELS = [
    Item,
    Order,
    Default,
    Forbid,
    Allow,
    Lax,
    Choice,
    Numbers,
    Tree,
    Person,
    Tags,
    Counter,
    Area,
    Wrapped,
    Anything,
    Shapes,
]


@pytest.mark.parametrize("mode", ["validation", "serialization"])
@pytest.mark.parametrize("cls", MODELS)
def test_schemas_are_valid_draft_2020_12(cls: type, mode: Mode) -> None:
    """Both schemas pass the Draft 2020-12 metaschema; refs resolve."""
    schema, defs = tp.model_schema(cls, mode=mode)
    assert schema == {"$ref": f"#/$defs/{cls.__name__}"}
    jsonschema.Draft202012Validator.check_schema({**schema, "$defs": defs})
    for text in _refs({**schema, "$defs": defs}):
        assert text.removeprefix("#/$defs/") in defs


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if "$ref" in value else []
        return found + [r for item in value.values() for r in _refs(item)]
    if isinstance(value, list):
        return [r for item in value for r in _refs(item)]
    return []


def test_the_schema_carries_constraints_and_descriptions() -> None:
    """``Field`` constraints are keywords; descriptions follow the rules.

    The model's description is its docstring's summary (not its
    ``Attributes:`` section); a field's ``Field(description=...)`` wins,
    the docstring's ``Attributes:`` entry describes the others.
    """
    item = document(Item)["$defs"]["Item"]
    assert item["description"] == "One line of an order."
    name = item["properties"]["name"]
    assert name["description"] == "What to order."
    assert (name["minLength"], name["maxLength"]) == (1, 20)
    assert name["pattern"] == "^[a-z ]+$"
    quantity = item["properties"]["quantity"]
    assert (quantity["minimum"], quantity["maximum"]) == (1, 100)
    assert quantity["type"] == "integer"
    assert item["properties"]["price"]["description"] == "Unit price in euros."
    assert item["properties"]["tags"]["uniqueItems"] is True
    assert item["required"] == ["name"]
    assert item["additionalProperties"] is False


def test_attribute_docstrings_describe_fields() -> None:
    """A string right below a field describes it, as for dataclasses."""

    class Note(BaseModel):
        """A note."""

        text: str
        """What it says."""

    assert document(Note)["$defs"]["Note"]["properties"]["text"][
        "description"
    ] == ("What it says.")


def test_aliases_in_and_out() -> None:
    """Aliases in, pydantic's ``model_dump`` keys out.

    Input keys and the validation schema use the alias; output keys
    follow pydantic's ``model_dump`` (field names unless the model says
    ``serialize_by_alias``), and so does the output schema.
    """
    person = tp.validate(Person, {"fullName": "Ada"})
    assert problems(Person, {"full_name": "Ada"}) == [
        "fullName: missing required property",
        "full_name: unexpected property (allowed: fullName, born)",
    ]
    assert list(document(Person)["$defs"]["Person"]["properties"]) == [
        "fullName",
        "born",
    ]
    out = tp.dump(person)
    assert (
        out
        == person.model_dump(mode="json")
        == {
            "full_name": "Ada",
            "born": None,
        }
    )
    schema_validator(Person, "serialization").validate(out)


class Crew(BaseModel):
    """People, in a list and in a pydantic dataclass."""

    people: list[Person]
    lead: Badge


@pydantic_dataclass
class Badge:
    """A pydantic dataclass with an aliased field."""

    badge_id: int = Field(alias="badgeId")


class ByName(BaseModel):
    """A model that takes its field names too."""

    model_config = ConfigDict(populate_by_name=True)

    full_name: str = Field(alias="fullName")


def test_a_field_name_is_unknown_where_only_the_alias_is_taken() -> None:
    """``full_name`` is refused beside ``fullName``, nested too.

    Every pydantic version the package admits: some pydantic-core
    versions drop such a key silently (and accept the object).
    """
    assert problems(Person, {"fullName": "Ada", "full_name": "Bo"}) == [
        "full_name: unexpected property (allowed: fullName, born)",
    ]
    crew = {
        "people": [{"fullName": "Ada"}, {"fullName": "Bo", "full_name": 1}],
        "lead": {"badgeId": 1, "badge_id": 2},
    }
    assert problems(Crew, crew) == [
        "people[1].full_name: unexpected property (allowed: fullName, born)",
        "lead.badge_id: unexpected property (allowed: badgeId)",
    ]
    crew["people"] = [{"full_name": "Ada"}]
    assert problems(Crew, crew) == [
        "people[0].fullName: missing required property",
        "people[0].full_name: unexpected property (allowed: fullName, born)",
        "lead.badge_id: unexpected property (allowed: badgeId)",
    ]
    assert tp.validate(ByName, {"full_name": "Ada"}).full_name == "Ada"


class Blank(enum.Enum):
    """An enum whose members are the empty string and None."""

    EMPTY = ""
    NOTHING = None


class WithBlank(BaseModel):
    """A model holding such an enum and such a literal."""

    blank: Blank
    either: Literal[""] | None = None


def test_an_enum_of_empty_string_and_none_takes_only_those() -> None:
    """Another string is refused, on every pydantic version admitted.

    pydantic-core before 2.50 (pydantic 2.11 to 2.13) took any string
    for the None member; toolctx matches such an enum's members itself.
    """
    assert tp.validate(WithBlank, {"blank": None}).blank is Blank.NOTHING
    assert tp.validate(WithBlank, {"blank": ""}).blank is Blank.EMPTY
    assert problems(WithBlank, {"blank": "other", "either": "x"}) == [
        "blank: expected '' or None, got 'other'",
        "either: expected '', got 'x'",
    ]


def test_names_taken_by_the_caller_are_renamed() -> None:
    """Definitions that collide with the caller's ``$defs`` are renamed.

    The same definition under the same name is shared (not returned
    again); another one becomes ``Name_2`` and references follow.
    """
    _, defs = tp.model_schema(Order)
    schema, again = tp.model_schema(Order, taken=defs)
    assert schema == {"$ref": "#/$defs/Order"}
    assert again == {}
    taken = {"Item": {"type": "string"}, "Item_2": {"type": "null"}}
    schema, renamed = tp.model_schema(Order, taken=taken)
    assert "Item" not in renamed
    assert "Item_2" not in renamed
    order = renamed["Order"]
    assert order["properties"]["items"]["items"] == {"$ref": "#/$defs/Item_3"}
    assert renamed["Item_3"] == defs["Item"]
    whole = {**schema, "$defs": {**taken, **renamed}}
    jsonschema.Draft202012Validator(whole).validate(ORDER)


def test_returned_schemas_are_copies() -> None:
    """Changing a returned schema does not change the next one."""
    _, defs = tp.model_schema(Item)
    defs["Item"]["properties"].clear()
    assert tp.model_schema(Item)[1]["Item"]["properties"]


def test_a_non_json_default_is_left_out_quietly() -> None:
    """A default with no JSON form is left out of the schema, no warning."""

    class Odd(BaseModel):
        when: object = Field(default_factory=object)
        made: object = object()

    props = document(Odd)["$defs"]["Odd"]["properties"]
    assert "default" not in props["made"]


# -- output ------------------------------------------------------------------


def test_dump_is_pydantics_json_mode() -> None:
    """A returned model is written in pydantic's JSON mode.

    ISO dates, enum values, UUID strings, sets as arrays, computed
    fields; the output schema accepts it.
    """
    order = tp.validate(Order, ORDER)
    out = tp.dump(order, Order)
    assert out == order.model_dump(mode="json")
    assert out["when"] == "2024-05-01"  # type: ignore[index]
    json.dumps(out, allow_nan=False)
    schema_validator(Order, "serialization").validate(out)
    area = tp.dump(Area(width=2, height=3))
    assert area == {"width": 2.0, "height": 3.0, "area": 6.0}
    schema_validator(Area, "serialization").validate(area)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (Anything(number=float("nan")), "number"),
        (Anything(number=float("inf")), "number"),
        (Anything(value=[1, {"x": float("-inf")}]), "value[1].x"),
        (Anything(value=10**5000), "value"),
    ],
    ids=["nan", "inf", "nested-inf", "long-int"],
)
def test_dump_refuses_what_json_cannot_carry(
    value: Anything, where: str
) -> None:
    """NaN, infinities and integers past 4,300 digits are refused.

    pydantic would write ``null`` for some of them; the error names
    where the value sits.
    """
    with pytest.raises(NotJSONError) as caught:
        tp.dump(value)
    assert str(caught.value).endswith(f"(at {where})")


def test_dump_refuses_a_field_of_the_wrong_type() -> None:
    """A field holding another type is an error, not a warning.

    (``model_construct``, or an assignment without validation.)
    """
    broken = Item.model_construct(name="tea", quantity="many")
    with pytest.raises(NotJSONError, match="Item"):
        tp.dump(broken)


def test_dump_writes_the_declared_model() -> None:
    """A subclass instance is written as the declared model.

    An instance of something else is refused.
    """

    class Special(Item):
        secret: str = "hidden"

    out = tp.dump(Special(name="tea"), Item)
    assert out == {"name": "tea", "quantity": 1, "price": 0.0, "tags": []}
    with pytest.raises(NotJSONError, match="Expected an instance of Item"):
        tp.dump({"name": "tea"}, Item)


# -- what is not supported -----------------------------------------------------


@pytest.mark.parametrize("cls", [*MODELS, Box[int]])
def test_check_accepts_every_supported_model(cls: type) -> None:
    """``check`` (run at decoration) builds everything without error."""
    tp.check(cls)


def test_check_refuses_what_is_not_a_model() -> None:
    """A class that is not a pydantic v2 model is named in the error."""
    with pytest.raises(UnsupportedModelError, match="Span is not a pydantic"):
        tp.check(Span)


def test_a_custom_init_is_refused() -> None:
    """A model with its own ``__init__`` is refused, saying why.

    pydantic would call it with the raw input, outside toolctx's rules.
    """

    class Custom(BaseModel):
        a: int

        def __init__(self, **data: Any) -> None:
            super().__init__(**data)

    with pytest.raises(UnsupportedModelError, match="__init__"):
        tp.check(Custom)


def test_an_incomplete_model_is_refused() -> None:
    """A model whose forward references are unresolved names the fix."""

    class Later(BaseModel):
        other: Missing  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(UnsupportedModelError, match=r"model_rebuild\(\)"):
        tp.model_schema(Later)


# -- the cheap check -----------------------------------------------------------


def test_a_model_is_compiled_once() -> None:
    """The validator is built once per model, then reused."""
    first = tp.compile_validator(Order)
    assert tp.compile_validator(Order).__self__ is first.__self__  # type: ignore[attr-defined]


def test_is_model() -> None:
    """Model subclasses only: not BaseModel, other classes, aliases."""
    assert is_model(Item)
    assert is_model(Tags)
    assert not is_model(BaseModel)
    assert not is_model(Size)
    assert not is_model(dict)
    assert not is_model(list[Item])
    assert not is_model(Item(name="tea"))


def test_is_model_never_imports_pydantic() -> None:
    """The check toolctx makes on every class leaves pydantic unloaded."""
    code = textwrap.dedent(
        """
        import sys
        import dataclasses
        from toolctx._types.pydantic_check import is_model

        @dataclasses.dataclass
        class Point:
            x: int

        assert not is_model(Point)
        assert not is_model(int)
        assert "pydantic" not in sys.modules, "pydantic was imported"
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


class Maybe(enum.Enum):
    """An enum with a None member and a number."""

    NOTHING = None
    ONE = 1


class WithMaybe(BaseModel):
    """A model holding such an enum."""

    maybe: Maybe


def test_an_enum_with_a_none_member_refuses_strings() -> None:
    """A string is not the None member, on every pydantic version admitted.

    pydantic 2.11 and 2.13 took any string for it; 2.14 refuses it, and
    takes ``1.0`` and ``true`` for the member of value 1, on every version.
    """
    assert problems(WithMaybe, {"maybe": "x"}) == [
        "maybe: expected None or 1, got 'x'"
    ]
    assert tp.validate(WithMaybe, {"maybe": None}).maybe is Maybe.NOTHING
    assert tp.validate(WithMaybe, {"maybe": 1.0}).maybe is Maybe.ONE
    assert tp.validate(WithMaybe, {"maybe": True}).maybe is Maybe.ONE
