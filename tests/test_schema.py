"""Tests for toolctx._types.schema: JSON Schema for tool parameters.

This module uses postponed annotations on purpose: the fields of the
classes below are strings that the schema builder must resolve itself.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import enum
import json
import os
import subprocess
import sys
import typing
import uuid

from typing import Annotated, Any, Literal, Optional, Union

import attrs
import hypothesis
import pytest
import typing_extensions

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from toolctx._tools.params import Param
from toolctx._types.forms import is_hashable as is_hashable_type
from toolctx._types.instance import matches
from toolctx._types.nodes import MISSING, SUPPORTED_TYPES
from toolctx._types.schema import parameters_schema, type_schema
from toolctx._types.schema_values import json_default
from toolctx.exceptions import SchemaError


OWNER = "tests.book_room"


def build(*params: Param) -> dict[str, Any]:
    """Build, check against the metaschema, and JSON-encode a schema."""
    schema = parameters_schema(params, owner=OWNER)
    Draft202012Validator.check_schema(schema)
    json.dumps(schema)
    return schema


def single(tp: Any, **extra: Any) -> dict[str, Any]:
    """The whole schema of one parameter ``x`` of type *tp*."""
    return build(Param("x", tp, **extra))


def expected(
    prop: dict[str, Any],
    *,
    required: bool = True,
    defs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole schema expected for one parameter ``x`` with *prop*."""
    schema: dict[str, Any] = {"type": "object", "properties": {"x": prop}}
    if required:
        schema["required"] = ["x"]
    schema["additionalProperties"] = False
    if defs:
        schema["$defs"] = defs
    return schema


def error_for(tp: Any, name: str = "x") -> SchemaError:
    """The SchemaError raised for a parameter *name* of type *tp*."""
    with pytest.raises(SchemaError) as info:
        parameters_schema([Param(name, tp)], owner=OWNER)
    return info.value


# --- classes used by the tests (module level, so their hints resolve) ---


class Color(enum.Enum):
    """A paint colour."""

    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):  # noqa: D101 - undocumented on purpose
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):  # noqa: D101 - undocumented on purpose
    TEXT = "a"
    NUMBER = 1.5
    NOTHING = None


class Permission(enum.Flag):
    """A flag enum (unsupported)."""

    READ = 1
    WRITE = 2


class BytesEnum(enum.Enum):
    """An enum with a bytes value (unsupported)."""

    RAW = b"raw"


class NaNEnum(enum.Enum):
    """An enum with a NaN value (unsupported)."""

    NAN = float("nan")


class DocumentedBase(enum.Enum):
    """Documented base without members."""


class InheritsDoc(DocumentedBase):  # noqa: D101 - undocumented on purpose
    ONE = "one"


class Movie(typing_extensions.TypedDict):
    """A film.

    Attributes:
        year: Year of release.
    """

    title: Annotated[str, "The film's title."]
    year: int
    rating: typing_extensions.NotRequired[float]


class PartialMovie(typing_extensions.TypedDict, total=False):  # noqa: D101 - undocumented on purpose
    title: typing_extensions.Required[str]
    year: int
    tags: Annotated[typing_extensions.ReadOnly[list[str]], "Labels."]


class PlainTypedDict(typing.TypedDict):  # noqa: D101 - undocumented on purpose
    name: str


@attrs.frozen
class Point:
    """A point on the plane.

    Attributes:
        x: Horizontal position.
    """

    x: float
    y: float = attrs.field(default=0.0, metadata={"description": "Vertical."})
    _label: str = "origin"
    tags: tuple[str, ...] = attrs.field(factory=tuple)
    cache: dict[str, int] = attrs.field(init=False, factory=dict)


@attrs.define
class TreeNode:  # noqa: D101 - undocumented on purpose
    value: int
    children: list[TreeNode] = attrs.field(factory=list)


@dataclasses.dataclass
class Employee:  # noqa: D101 - undocumented on purpose
    name: Annotated[str, "Full name."]
    manager: Employee | None = None
    reports: list[Employee] = dataclasses.field(default_factory=list)
    level: int = dataclasses.field(
        default=1, metadata={"description": "Pay level."}
    )
    secret: str = dataclasses.field(default="", init=False)


@dataclasses.dataclass
class Department:
    """A part of the company."""

    head: Employee
    teams: dict[str, Team]


@dataclasses.dataclass(frozen=True)
class Team:
    """A hashable team."""

    name: str
    department: Department | None = None


@dataclasses.dataclass
class Item:  # noqa: D101 - undocumented on purpose
    sku: str


class Outer:
    """Holds a second class named Item."""

    @dataclasses.dataclass
    class Item:
        """The other Item."""

        quantity: int


def make_local_item() -> type:
    """A fresh dataclass named ``Item`` with a ``<locals>`` qualname."""

    @dataclasses.dataclass
    class Item:
        flag: bool

    return Item


@dataclasses.dataclass
class Line:
    """An order line with an unsupported field."""

    payload: complex


@dataclasses.dataclass
class Order:
    """An order whose lines fail."""

    lines: list[Line]


@dataclasses.dataclass
class Unresolvable:
    """A field hint that names nothing."""

    field: NoSuchName  # noqa: F821 - unresolved on purpose


@dataclasses.dataclass
class WithInitVar:
    """A dataclass with an InitVar."""

    seed: dataclasses.InitVar[int]


@attrs.define
class Defaults:
    """Fields with assorted defaults."""

    when: dt.date = dt.date(2024, 1, 31)
    color: Color = Color.GREEN
    shape: Point = Point(1.0, 2.0)
    weird: object = attrs.field(factory=object)


UserId = typing.NewType("UserId", int)


class TestPrimitives:
    """Scalars, Any/object, None and string formats."""

    @pytest.mark.parametrize(
        ("tp", "prop"),
        [
            (str, {"type": "string"}),
            (int, {"type": "integer"}),
            (float, {"type": "number"}),
            (bool, {"type": "boolean"}),
            (None, {"type": "null"}),
            (type(None), {"type": "null"}),
            (Any, {}),
            (object, {}),
            (dt.datetime, {"type": "string", "format": "date-time"}),
            (dt.date, {"type": "string", "format": "date"}),
            (dt.time, {"type": "string", "format": "time"}),
            (uuid.UUID, {"type": "string", "format": "uuid"}),
        ],
    )
    def test_scalar_rows(self, tp, prop):
        """Each scalar type maps to its row of the table."""
        assert single(tp) == expected(prop)

    def test_newtype_uses_supertype(self):
        """A NewType has the schema of its supertype."""
        assert single(UserId) == expected({"type": "integer"})

    def test_type_alias_type_is_expanded(self):
        """A non-generic TypeAliasType has the schema of its value."""
        alias = typing_extensions.TypeAliasType("Names", list[str])
        assert single(alias) == expected(
            {"type": "array", "items": {"type": "string"}}
        )


class TestUnions:
    """Optional, Union and ``|`` keep their members in written order."""

    def test_optional(self):
        """``Optional[int]`` is anyOf integer then null."""
        assert single(Optional[int]) == expected(  # noqa: UP045
            {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        )

    def test_pipe_syntax_with_none_first(self):
        """``None | str`` keeps None first, as written."""
        assert single(None | str) == expected(
            {"anyOf": [{"type": "null"}, {"type": "string"}]}
        )

    def test_union_of_three(self):
        """``Union[int, str, list[bool]]`` lists all three members."""
        tp = Union[int, str, list[bool]]  # noqa: UP007
        assert single(tp) == expected(
            {
                "anyOf": [
                    {"type": "integer"},
                    {"type": "string"},
                    {"type": "array", "items": {"type": "boolean"}},
                ]
            }
        )


class TestLiterals:
    """Literal values become an enum, typed when homogeneous."""

    @pytest.mark.parametrize(
        ("tp", "prop"),
        [
            (Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}),
            (Literal[1, 2], {"enum": [1, 2], "type": "integer"}),
            (Literal[True], {"enum": [True], "type": "boolean"}),
            (Literal[None], {"enum": [None], "type": "null"}),  # noqa: PYI061
            (Literal["a", 1, None], {"enum": ["a", 1, None]}),  # noqa: PYI061
        ],
    )
    def test_literal_rows(self, tp, prop):
        """Literal rows of the table."""
        assert single(tp) == expected(prop)

    def test_bool_and_int_are_not_confused(self):
        """``Literal[1, True]`` keeps both values and no single type."""
        schema = single(Literal[1, True])
        enum_values = schema["properties"]["x"]["enum"]
        assert schema == expected({"enum": [1, True]})
        assert [type(v) for v in enum_values] == [int, bool]
        assert json.dumps(enum_values) == "[1, true]"

    @pytest.mark.parametrize(
        "tp", [Literal[1.5], Literal[b"x"], Literal[Color.RED]]
    )
    def test_other_literal_values_are_rejected(self, tp):
        """Literal values other than str/int/bool/None raise SchemaError."""
        assert "Literal values must be" in str(error_for(tp))


class TestEnums:
    """Enum classes become ``$defs`` entries."""

    def test_str_enum_with_docstring(self):
        """An Enum is a $ref to its values, typed and described."""
        assert single(Color) == expected(
            {"$ref": "#/$defs/Color"},
            defs={
                "Color": {
                    "enum": ["red", "green"],
                    "type": "string",
                    "description": "A paint colour.",
                }
            },
        )

    def test_int_enum(self):
        """An IntEnum lists integer values and has no description."""
        assert single(Priority) == expected(
            {"$ref": "#/$defs/Priority"},
            defs={"Priority": {"enum": [1, 2], "type": "integer"}},
        )

    @pytest.mark.skipif(sys.version_info < (3, 11), reason="StrEnum")
    def test_str_enum_class(self):
        """A StrEnum lists its string values."""

        class Size(enum.StrEnum):
            SMALL = "s"
            LARGE = "l"

        assert single(Size) == expected(
            {"$ref": "#/$defs/Size"},
            defs={"Size": {"enum": ["s", "l"], "type": "string"}},
        )

    def test_mixed_values_have_no_type(self):
        """Values of several JSON types give an untyped enum."""
        assert single(Mixed) == expected(
            {"$ref": "#/$defs/Mixed"},
            defs={"Mixed": {"enum": ["a", 1.5, None]}},
        )

    def test_inherited_docstring_is_not_used(self):
        """Only a docstring the enum class defines itself describes it."""
        assert single(InheritsDoc) == expected(
            {"$ref": "#/$defs/InheritsDoc"},
            defs={"InheritsDoc": {"enum": ["one"], "type": "string"}},
        )

    @pytest.mark.parametrize(
        ("tp", "reason"),
        [
            (BytesEnum, "member RAW has value b'raw'"),
            (NaNEnum, "member NAN has value nan"),
            (Permission, "Flag enums are not supported"),
        ],
    )
    def test_unsupported_enums(self, tp, reason):
        """Flag enums and non-JSON member values raise SchemaError."""
        assert reason in str(error_for(tp))


class TestArrays:
    """Lists, sequences, tuples and sets."""

    @pytest.mark.parametrize(
        "tp",
        [
            list[int],
            typing.List[int],  # noqa: UP006
            collections.abc.Sequence[int],
            typing.Sequence[int],
            tuple[int, ...],
        ],
    )
    def test_homogeneous_arrays(self, tp):
        """List-like types are arrays of their item type."""
        assert single(tp) == expected(
            {"type": "array", "items": {"type": "integer"}}
        )

    @pytest.mark.parametrize("tp", [list, typing.List, tuple, typing.Tuple])  # noqa: UP006
    def test_bare_arrays(self, tp):
        """Bare list and tuple are arrays of anything."""
        assert single(tp) == expected({"type": "array", "items": {}})

    def test_fixed_tuple(self):
        """``tuple[str, int]`` fixes the length and each position."""
        assert single(tuple[str, int]) == expected(
            {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            }
        )

    def test_empty_tuple(self):
        """``tuple[()]`` is an array with at most zero items."""
        assert single(tuple[()]) == expected({"type": "array", "maxItems": 0})

    @pytest.mark.parametrize(
        "tp",
        [
            set[str],
            frozenset[str],
            collections.abc.Set[str],
            typing.AbstractSet[str],
        ],
    )
    def test_sets(self, tp):
        """Set types are arrays of unique items."""
        assert single(tp) == expected(
            {
                "type": "array",
                "items": {"type": "string"},
                "uniqueItems": True,
            }
        )

    def test_set_of_hashable_class(self):
        """Sets of frozen dataclasses and enums are accepted."""
        schema = single(frozenset[Union[Team, Color]])  # noqa: UP007
        assert schema["properties"]["x"] == {
            "type": "array",
            "items": {
                "anyOf": [
                    {"$ref": "#/$defs/Team"},
                    {"$ref": "#/$defs/Color"},
                ]
            },
            "uniqueItems": True,
        }

    @pytest.mark.parametrize(
        "tp",
        [set, frozenset, set[Any], set[list[int]], set[Movie], set[Employee]],
    )
    def test_sets_of_unhashable_items_are_rejected(self, tp):
        """Sets whose items may be unhashable raise SchemaError."""
        assert "set items must be of a hashable type" in str(error_for(tp))


class TestObjects:
    """Mappings and TypedDicts."""

    @pytest.mark.parametrize(
        "tp",
        [
            dict[str, int],
            typing.Dict[str, int],  # noqa: UP006
            collections.abc.Mapping[str, int],
        ],
    )
    def test_str_keyed_mappings(self, tp):
        """str-keyed mappings are objects of their value type."""
        assert single(tp) == expected(
            {"type": "object", "additionalProperties": {"type": "integer"}}
        )

    @pytest.mark.parametrize("tp", [dict, collections.abc.Mapping])
    def test_bare_mappings(self, tp):
        """Bare dict and Mapping are any object."""
        assert single(tp) == expected({"type": "object"})

    def test_non_str_keys_are_rejected(self):
        """``dict[int, str]`` raises SchemaError."""
        assert "JSON object keys are strings" in str(error_for(dict[int, str]))

    def test_typed_dict(self):
        """A TypedDict is a closed object with its required keys."""
        assert single(Movie) == expected(
            {"$ref": "#/$defs/Movie"},
            defs={
                "Movie": {
                    "type": "object",
                    "properties": {
                        "title": {
                            "type": "string",
                            "description": "The film's title.",
                        },
                        "year": {
                            "type": "integer",
                            "description": "Year of release.",
                        },
                        "rating": {"type": "number"},
                    },
                    "required": ["title", "year"],
                    "additionalProperties": False,
                    "description": "A film.",
                }
            },
        )

    def test_typed_dict_total_false_with_qualifiers(self):
        """Required/NotRequired/ReadOnly markers resolve even as strings."""
        assert single(PartialMovie) == expected(
            {"$ref": "#/$defs/PartialMovie"},
            defs={
                "PartialMovie": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "year": {"type": "integer"},
                        "tags": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Labels.",
                        },
                    },
                    "required": ["title"],
                    "additionalProperties": False,
                }
            },
        )

    def test_typing_typed_dict(self):
        """A ``typing.TypedDict`` works like the typing_extensions one."""
        assert single(PlainTypedDict) == expected(
            {"$ref": "#/$defs/PlainTypedDict"},
            defs={
                "PlainTypedDict": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": False,
                }
            },
        )

    def test_empty_required_is_omitted(self):
        """A TypedDict with no required key has no ``required`` list."""
        td = typing_extensions.TypedDict("Opts", {"a": int}, total=False)  # noqa: UP013
        assert single(td)["$defs"] == {
            "Opts": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,
            }
        }


class TestClasses:
    """attrs classes and dataclasses."""

    def test_attrs_class(self):
        """The attrs init fields, aliases, defaults and descriptions."""
        assert single(Point) == expected(
            {"$ref": "#/$defs/Point"},
            defs={
                "Point": {
                    "type": "object",
                    "properties": {
                        "x": {
                            "type": "number",
                            "description": "Horizontal position.",
                        },
                        "y": {
                            "type": "number",
                            "description": "Vertical.",
                            "default": 0.0,
                        },
                        "label": {"type": "string", "default": "origin"},
                        "tags": {
                            "type": "array",
                            "items": {"type": "string"},
                        },
                    },
                    "required": ["x"],
                    "additionalProperties": False,
                    "description": "A point on the plane.",
                }
            },
        )

    def test_dataclass_recursive(self):
        """A self-referencing dataclass uses one $defs entry."""
        assert single(Employee) == expected(
            {"$ref": "#/$defs/Employee"},
            defs={
                "Employee": {
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string",
                            "description": "Full name.",
                        },
                        "manager": {
                            "anyOf": [
                                {"$ref": "#/$defs/Employee"},
                                {"type": "null"},
                            ],
                            "default": None,
                        },
                        "reports": {
                            "type": "array",
                            "items": {"$ref": "#/$defs/Employee"},
                        },
                        "level": {
                            "type": "integer",
                            "description": "Pay level.",
                            "default": 1,
                        },
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                }
            },
        )

    def test_attrs_recursive(self):
        """A self-referencing attrs class terminates via $ref."""
        assert single(TreeNode)["$defs"] == {
            "TreeNode": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/TreeNode"},
                    },
                },
                "required": ["value"],
                "additionalProperties": False,
            }
        }

    def test_mutual_recursion_in_first_encounter_order(self):
        """Mutually recursive classes appear in $defs as first met."""
        schema = single(Department)
        assert list(schema["$defs"]) == ["Department", "Employee", "Team"]
        assert schema["$defs"]["Department"] == {
            "type": "object",
            "properties": {
                "head": {"$ref": "#/$defs/Employee"},
                "teams": {
                    "type": "object",
                    "additionalProperties": {"$ref": "#/$defs/Team"},
                },
            },
            "required": ["head", "teams"],
            "additionalProperties": False,
            "description": "A part of the company.",
        }
        assert schema["$defs"]["Team"]["properties"]["department"] == {
            "anyOf": [{"$ref": "#/$defs/Department"}, {"type": "null"}],
            "default": None,
        }

    def test_generated_dataclass_docstring_is_ignored(self):
        """The ``Item(sku: str)`` docstring dataclasses write is no text."""
        assert "description" not in single(Item)["$defs"]["Item"]

    def test_name_collisions(self):
        """Classes sharing a __name__ get module.qualname names, then _N."""
        first, second = make_local_item(), make_local_item()
        schema = build(
            Param("a", Item),
            Param("b", Outer.Item),
            Param("c", first),
            Param("d", second),
            Param("e", Item),
        )
        local = f"{__name__}.make_local_item._locals_.Item"
        names = ["Item", f"{__name__}.Outer.Item", local, f"{local}_2"]
        assert list(schema["$defs"]) == names
        assert [p["$ref"] for p in schema["properties"].values()] == [
            f"#/$defs/{name}" for name in [*names, "Item"]
        ]
        assert schema["$defs"][names[1]]["properties"] == {
            "quantity": {"type": "integer"}
        }

    def test_unresolvable_field_hint(self):
        """A field hint naming nothing raises SchemaError with the cause."""
        message = str(error_for(Unresolvable))
        assert "field annotations cannot be resolved" in message
        assert "NoSuchName" in message

    def test_initvar_is_rejected(self):
        """Dataclasses with InitVar fields raise SchemaError."""
        assert "InitVar" in str(error_for(WithInitVar))

    def test_unannotated_attrs_field_is_rejected(self):
        """An attrs field without a type annotation raises SchemaError."""

        @attrs.define(auto_attribs=False)
        class Loose:
            value = attrs.field()

        assert "field 'value' has no annotation" in str(error_for(Loose))


class TestAnnotated:
    """Annotated metadata and parameter descriptions."""

    def test_annotated_string_is_description(self):
        """The first string of Annotated metadata describes the property."""
        tp = Annotated[int, 42, "", "Number of guests.", "ignored"]
        assert single(tp) == expected(
            {"type": "integer", "description": "Number of guests."}
        )

    def test_annotated_beats_docstring(self):
        """Annotated text wins over Param.description."""
        tp = Annotated[str, "From Annotated."]
        schema = single(tp, description="From docstring.")
        assert schema == expected(
            {"type": "string", "description": "From Annotated."}
        )

    def test_docstring_description_without_annotated(self):
        """Param.description describes a property without Annotated text."""
        schema = single(Annotated[str, 3], description="From docstring.")
        assert schema == expected(
            {"type": "string", "description": "From docstring."}
        )

    def test_annotated_text_is_cleaned(self):
        """Multi-line Annotated text is dedented and stripped."""
        tp = Annotated[
            str,
            """
            First line.
              Indented.
            """,
        ]
        assert single(tp)["properties"]["x"]["description"] == (
            "First line.\n  Indented."
        )

    def test_nested_annotated(self):
        """Annotated inside a container describes the inner schema."""
        tp = Optional[Annotated[Color, "Paint."]]  # noqa: UP045
        schema = single(tp, description="Outer.")
        assert schema["properties"]["x"] == {
            "anyOf": [
                {"$ref": "#/$defs/Color", "description": "Paint."},
                {"type": "null"},
            ],
            "description": "Outer.",
        }


class TestDefaults:
    """Defaults become JSON values when they can."""

    def test_parameter_defaults(self):
        """Enums, tuples, sets and dates are converted; others omitted."""
        schema = build(
            Param("color", Color, Color.RED),
            Param("pair", tuple[int, int], (1, 2)),
            Param("tags", frozenset[str], frozenset({"b", "c", "a"})),
            Param("when", dt.date, dt.date(2024, 5, 1)),
            Param("sink", Any, object()),
            Param("ratio", float, float("inf")),
            Param("required", str),
        )
        assert schema == {
            "type": "object",
            "properties": {
                "color": {"$ref": "#/$defs/Color", "default": "red"},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "integer"}],
                    "items": False,
                    "minItems": 2,
                    "maxItems": 2,
                    "default": [1, 2],
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "uniqueItems": True,
                    "default": ["a", "b", "c"],
                },
                "when": {
                    "type": "string",
                    "format": "date",
                    "default": "2024-05-01",
                },
                "sink": {},
                "ratio": {"type": "number"},
                "required": {"type": "string"},
            },
            "required": ["required"],
            "additionalProperties": False,
            "$defs": {
                "Color": {
                    "enum": ["red", "green"],
                    "type": "string",
                    "description": "A paint colour.",
                }
            },
        }

    def test_class_field_defaults(self):
        """Field defaults convert; factories and odd values are omitted."""
        props = single(Defaults)["$defs"]["Defaults"]["properties"]
        assert props["when"]["default"] == "2024-01-31"
        assert props["color"]["default"] == "green"
        assert props["shape"]["default"] == {
            "x": 1.0,
            "y": 2.0,
            "label": "origin",
            "tags": [],
        }
        assert props["weird"] == {}

    @pytest.mark.parametrize(
        ("value", "result"),
        [
            (None, None),
            (True, True),
            (3, 3),
            (2.5, 2.5),
            ("s", "s"),
            (Priority.HIGH, 2),
            ((1, (2, 3)), [1, [2, 3]]),
            ({"k": (Color.RED,)}, {"k": ["red"]}),
            ({3, 1, 2}, [1, 2, 3]),
            (
                dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
                "2024-01-02T03:04:05+00:00",
            ),
            (dt.time(9, 30), "09:30:00"),
            (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
            (Item("A-1"), {"sku": "A-1"}),
            (float("nan"), MISSING),
            ({1: "a"}, MISSING),
            ([b"x"], MISSING),
            (object(), MISSING),
        ],
    )
    def test_json_default(self, value, result):
        """json_default converts JSON-like values and refuses the rest."""
        assert json_default(value) == result

    def test_cyclic_default_is_refused(self):
        """A list that contains itself has no JSON form."""
        loop: list[object] = []
        loop.append(loop)
        assert json_default(loop) is MISSING


class TestErrors:
    """SchemaError names the function, the parameter and the path."""

    def test_message_names_function_and_parameter(self):
        """The whole message for an unsupported top-level type."""
        error = error_for(complex, name="blob")
        assert isinstance(error, TypeError)
        assert error.function == OWNER
        assert error.parameter == "blob"
        assert str(error) == (
            f"Cannot build a JSON Schema for parameter 'blob' of {OWNER}: "
            f"type complex is not supported. Supported: {SUPPORTED_TYPES}."
        )

    def test_nested_path_is_named(self):
        """A failure inside class fields names the field path."""
        error = error_for(Order, name="order")
        assert str(error).startswith(
            "Cannot build a JSON Schema for parameter 'order' (inside "
            f"Order.lines -> Line.payload) of {OWNER}: type complex is not "
            "supported."
        )
        assert error.parameter == "order"

    @pytest.mark.parametrize(
        ("tp", "rendered"),
        [
            (complex, "type complex is not supported"),
            (collections.abc.Callable[[int], str], "Callable[[int], str]"),
            (typing.TypeVar("T"), "type variables have no JSON Schema"),
            ("Missing", "unresolved forward reference"),
            (typing.ForwardRef("Missing"), "unresolved forward reference"),
            (list[complex], "type complex is not supported"),
            (Literal["a"] | complex, "type complex is not supported"),
            (collections.abc.MutableSequence[int], "MutableSequence[int]"),
        ],
    )
    def test_unsupported_types(self, tp, rendered):
        """Unsupported types raise SchemaError rendering the culprit."""
        error = error_for(tp)
        assert rendered in str(error)
        assert "Supported: str, int" in str(error)

    def test_recursive_alias_is_rejected(self):
        """A type alias that refers to itself raises SchemaError."""
        self_ref = typing_extensions.TypeAliasType("Tree", int)
        object.__setattr__(self_ref, "__value__", list[self_ref])
        assert "recursive type aliases" in str(error_for(self_ref))

    def test_repeated_alias_is_not_recursion(self):
        """One alias used twice side by side is expanded twice."""
        name = typing_extensions.TypeAliasType("Name", str)
        assert single(tuple[name, name])["properties"]["x"]["prefixItems"] == [
            {"type": "string"},
            {"type": "string"},
        ]

    def test_generic_alias_is_rejected(self):
        """A subscripted generic type alias raises SchemaError."""
        typevar = typing.TypeVar("typevar")
        alias = typing_extensions.TypeAliasType(
            "Pair", tuple[typevar, typevar], type_params=(typevar,)
        )
        assert "is not supported" in str(error_for(alias[int]))

    def test_type_schema_without_parameter(self):
        """type_schema errors name the owner without a parameter."""
        with pytest.raises(SchemaError) as info:
            type_schema(complex, owner=OWNER)
        assert str(info.value).startswith(
            f"Cannot build a JSON Schema for {OWNER}: type complex"
        )
        assert info.value.parameter is None


class TestHelpers:
    """type_schema and is_hashable_type."""

    def test_type_schema_returns_defs(self):
        """type_schema returns the schema and the $defs it refers to."""
        schema, defs = type_schema(list[Color], owner=OWNER)
        assert schema == {"type": "array", "items": {"$ref": "#/$defs/Color"}}
        assert list(defs) == ["Color"]

    @pytest.mark.parametrize(
        ("tp", "hashable"),
        [
            (str, True),
            (Literal[1], True),
            (Color, True),
            (tuple[int, str], True),
            (tuple[int, ...], True),
            (frozenset[int], True),
            (Optional[dt.date], True),  # noqa: UP045
            (Team, True),
            (Point, True),
            (Annotated[UserId, "x"], True),
            (Any, False),
            (list[int], False),
            (tuple[list[int], ...], False),
            (Employee, False),
            (TreeNode, False),
            (Movie, False),
            (frozenset, False),
        ],
    )
    def test_is_hashable_type(self, tp, hashable):
        """Hashability of item types follows the documented rules."""
        assert is_hashable_type(tp) is hashable


class TestLayout:
    """Top-level shape, key order and determinism."""

    def test_empty_parameter_list(self):
        """No parameters give an empty closed object without required."""
        assert build() == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }

    def test_key_order(self):
        """Keys come in the documented order in the JSON text."""
        schema = build(
            Param("b", Optional[Movie], None, "The movie."),  # noqa: UP045
            Param("a", Color),
        )
        assert json.dumps(schema) == (
            '{"type": "object", "properties": {"b": {"anyOf": [{"$ref": '
            '"#/$defs/Movie"}, {"type": "null"}], "description": "The '
            'movie.", "default": null}, "a": {"$ref": "#/$defs/Color"}}, '
            '"required": ["a"], "additionalProperties": false, "$defs": '
            '{"Movie": {"type": "object", "properties": {"title": {"type": '
            '"string", "description": "The film\'s title."}, "year": '
            '{"type": "integer", "description": "Year of release."}, '
            '"rating": {"type": "number"}}, "required": ["title", "year"], '
            '"additionalProperties": false, "description": "A film."}, '
            '"Color": {"enum": ["red", "green"], "type": "string", '
            '"description": "A paint colour."}}}'
        )

    def test_same_output_twice(self):
        """Building twice gives byte-identical JSON."""
        params = [Param("d", Department), Param("p", Point)]
        first = json.dumps(parameters_schema(params, owner=OWNER))
        second = json.dumps(parameters_schema(params, owner=OWNER))
        assert first == second

    def test_independent_of_hash_seed(self):
        """Set defaults and required keys do not depend on PYTHONHASHSEED."""
        script = (
            "import json, typing_extensions as te\n"
            "from toolctx._tools.params import Param\n"
            "from toolctx._types.schema import parameters_schema\n"
            "TD = te.TypedDict('TD', {'k%d' % i: int for i in range(20)})\n"
            "tags = frozenset('tag%d' % i for i in range(20))\n"
            "print(json.dumps(parameters_schema([Param('t', TD), "
            "Param('s', frozenset[str], tags)], owner='f')))\n"
        )
        outputs = {
            subprocess.run(
                [sys.executable, "-c", script],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONHASHSEED": seed},
            ).stdout
            for seed in ("1", "2", "3")
        }
        assert len(outputs) == 1
        schema = json.loads(outputs.pop())
        keys = [f"k{i}" for i in range(20)]
        assert schema["$defs"]["TD"]["required"] == keys
        assert schema["properties"]["s"]["default"] == sorted(
            f"tag{i}" for i in range(20)
        )

    def test_parameter_order_and_required(self):
        """Properties follow parameter order; required lists no defaults."""
        schema = build(
            Param("z", int),
            Param("y", int, 3),
            Param("x", int),
        )
        assert list(schema["properties"]) == ["z", "y", "x"]
        assert schema["required"] == ["z", "x"]


# hypothesis-jsonschema 0.23 cannot draw objects with this hypothesis
# version, so mappings are only checked in the type -> schema direction;
# from_type(Sequence[...]) draws bytes, so sequences only the other way.
SCHEMA_TO_TYPE = [
    int,
    float,
    Optional[str],  # noqa: UP045
    list[int],
    list[Optional[float]],  # noqa: UP045
    Literal["a", 1, True, None],  # noqa: PYI061
    collections.abc.Sequence[Union[int, str]],  # noqa: UP007
]
TYPE_TO_SCHEMA = [
    int,
    float,
    Optional[str],  # noqa: UP045
    list[int],
    dict[str, Optional[bool]],  # noqa: UP045
    Literal["a", 1, True, None],  # noqa: PYI061
    dict[str, list[Union[int, str]]],  # noqa: UP007
]


class TestRoundTrip:
    """What the schema accepts, the Python type accepts, and back."""

    @pytest.mark.parametrize("tp", SCHEMA_TO_TYPE)
    @hypothesis.settings(max_examples=40, deadline=None)
    @hypothesis.given(data=st.data())
    def test_schema_instances_match_the_type(self, tp, data):
        """Every instance of the schema is a value of the Python type."""
        schema, _ = type_schema(tp, owner=OWNER)
        value = data.draw(from_schema(schema))
        assert matches(value, tp)

    @pytest.mark.parametrize("tp", TYPE_TO_SCHEMA)
    @hypothesis.settings(max_examples=40, deadline=None)
    @hypothesis.given(data=st.data())
    def test_type_values_match_the_schema(self, tp, data):
        """Every JSON-able value of the Python type validates."""
        schema, _ = type_schema(tp, owner=OWNER)
        value = data.draw(st.from_type(tp).filter(_finite))
        Draft202012Validator(schema).validate(value)


def _finite(value: object) -> bool:
    """Whether *value* holds no NaN or infinity (JSON cannot)."""
    return "NaN" not in json.dumps(value) and "Infinity" not in json.dumps(
        value
    )
