"""Tests for toolctx._tools.arguments: strict structuring and JSON output."""

from __future__ import annotations

import collections
import collections.abc
import dataclasses
import datetime as dt
import enum
import json
import math
import typing
import uuid

from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, NewType, Optional, Union

import attrs
import jsonschema
import pytest

from annotated_types import Ge, Gt, Le, Len, Lt, MaxLen, MinLen, MultipleOf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import NotRequired, Required, TypeAliasType, TypedDict

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    tool,
)
from toolctx._tools.arguments import ArgumentStructurer
from toolctx._tools.params import Param
from toolctx._types import output
from toolctx._types.model import Analysis
from toolctx._types.nodes import MISSING, Kind
from toolctx._types.nodes import Node as TypeNode
from toolctx._types.output import to_json as unstructure_output
from toolctx._types.schema import parameters_schema
from toolctx._types.validate import Compiler
from toolctx._types.values import structure_value, unstructure_value
from toolctx.exceptions import SchemaError, ToolArgumentsError


# -- types used by the tests (module level: recursive hints resolve here) ---


@attrs.define
class Item:
    """An order line."""

    name: str
    qty: int = 1


@attrs.define
class Order:
    """An order with lines."""

    items: list[Item]
    note: str | None = None


@attrs.define
class Node:
    """A recursive attrs class."""

    name: str
    children: list[Node] = attrs.Factory(list)


@dataclasses.dataclass
class Link:
    """A recursive dataclass."""

    value: int
    next: Link | None = None


@dataclasses.dataclass(frozen=True)
class Point:
    """A hashable dataclass."""

    x: int
    y: int


@attrs.define
class Private:
    """An attrs class whose field has an alias."""

    _secret: str
    shown: int = attrs.field(default=0, alias="visible")


@attrs.define
class Computed:
    """An attrs class with a field that is not an ``__init__`` argument."""

    a: int
    b: int = attrs.field(init=False, default=0)


@attrs.define
class Range:
    """An attrs class whose validator rejects some values."""

    low: int
    high: int = attrs.field()

    @high.validator
    def _check(self, _: object, value: int) -> None:
        if value < self.low:
            msg = "high must be >= low"
            raise ValueError(msg)


@attrs.define
class Cat:
    """One member of an object union."""

    name: str
    meows: bool


@attrs.define
class Dog:
    """Another member of an object union."""

    name: str
    barks: bool


class Color(enum.Enum):
    """A string enum."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    """An integer enum."""

    LOW = 1
    HIGH = 2


class Ratio(enum.Enum):
    """An enum with float values."""

    HALF = 0.5
    ONE = 1.0


class Perm(enum.Flag):
    """A flag enum (not supported)."""

    R = 1
    W = 2


class Options(TypedDict):
    """A total TypedDict with one NotRequired key."""

    mode: Literal["fast", "safe"]
    level: NotRequired[int]


class Partial(TypedDict, total=False):
    """A non-total TypedDict with one Required key."""

    key: Required[str]
    extra: int


class Tree(TypedDict):
    """A recursive TypedDict."""

    label: str
    kids: list[Tree]


class Tagged(TypedDict, extra_items=int):  # type: ignore[call-arg]
    """A TypedDict whose other keys hold integers (PEP 728)."""

    name: str


class Sealed(TypedDict, closed=True):
    """A closed TypedDict (PEP 728): no other keys."""

    name: str


@dataclasses.dataclass
class Span:
    """A dataclass whose ``__post_init__`` rejects some values."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            msg = "end must not come before start"
            raise ValueError(msg)


@attrs.define
class Bounded:
    """An attrs class with a constrained field."""

    count: Annotated[int, Ge(0)]
    label: Annotated[str, MaxLen(3)] = "a"


UserId = NewType("UserId", int)


def make(**params: Any) -> ArgumentStructurer:
    """An ArgumentStructurer for required parameters of these types."""
    return ArgumentStructurer([Param(name, tp) for name, tp in params.items()])


def accept(tp: Any, value: object) -> Any:
    """Structure ``{"x": value}`` as one parameter of type *tp*.

    Checks that the fast path and the full path agree, value and type.
    """
    structurer = make(x=tp)
    out = structurer.structure({"x": value})
    slow = structurer._structure({"x": value})
    assert out == slow
    assert type(out["x"]) is type(slow["x"])
    return out["x"]


def problems(structurer: ArgumentStructurer, args: object) -> list[str]:
    """The error lines *structurer* reports for *args*."""
    with pytest.raises(ToolArgumentsError) as info:
        structurer.structure(args)  # type: ignore[arg-type]
    assert info.value.tool_name is None
    return [str(error) for error in info.value.errors]


def reject(tp: Any, value: object) -> list[str]:
    """The error lines for ``{"x": value}`` with one parameter *tp*."""
    return problems(make(x=tp), {"x": value})


# -- scalars -----------------------------------------------------------------


class TestStrings:
    """``str`` takes strings only."""

    def test_accepts_a_string(self) -> None:
        """A string is returned unchanged."""
        assert accept(str, "hello") == "hello"

    @pytest.mark.parametrize(
        ("value", "shown"),
        [(1, "1"), (1.5, "1.5"), (True, "true"), (None, "null")],
    )
    def test_rejects_non_strings(self, value: object, shown: str) -> None:
        """Numbers, booleans and null are never turned into strings."""
        assert reject(str, value) == [f"x: expected a string, got {shown}"]

    def test_rejects_containers(self) -> None:
        """Arrays and objects are named by their JSON type."""
        assert reject(str, [1]) == ["x: expected a string, got an array"]
        assert reject(str, {}) == ["x: expected a string, got an object"]


class TestIntegers:
    """``int`` takes integers and integral floats, never bools or strings."""

    def test_accepts_an_integer(self) -> None:
        """An int comes back unchanged."""
        assert accept(int, 7) == 7

    def test_integral_float_becomes_int(self) -> None:
        """``1.0`` is an integer in JSON Schema, structured as ``int`` 1."""
        out = accept(int, 1.0)
        assert out == 1
        assert type(out) is int

    def test_large_integral_float_is_accepted(self) -> None:
        """``1e20`` is integral and becomes the matching int."""
        assert accept(int, 1e20) == 10**20

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            ("3", 'the string "3"'),
            (True, "true"),
            (False, "false"),
            (1.5, "1.5"),
            (None, "null"),
            (math.nan, "NaN"),
            (math.inf, "Infinity"),
        ],
    )
    def test_rejects(self, value: object, shown: str) -> None:
        """Strings, bools, fractions, null, NaN and infinity are refused."""
        assert reject(int, value) == [f"x: expected an integer, got {shown}"]


class TestFloats:
    """``float`` takes any JSON number, never bools or strings."""

    def test_integer_becomes_float(self) -> None:
        """``1`` is structured as the float 1.0."""
        out = accept(float, 1)
        assert out == 1.0
        assert type(out) is float

    def test_float_unchanged(self) -> None:
        """A float comes back unchanged."""
        assert accept(float, 2.5) == 2.5

    @pytest.mark.parametrize(
        ("value", "shown"),
        [(True, "true"), ("1.5", 'the string "1.5"'), (None, "null")],
    )
    def test_rejects(self, value: object, shown: str) -> None:
        """Bools, strings and null are not numbers."""
        assert reject(float, value) == [f"x: expected a number, got {shown}"]

    def test_integer_too_large_for_a_float(self) -> None:
        """An integer beyond the float range is an error, not a crash."""
        [line] = reject(float, 10**400)
        assert line.startswith("x: expected a number, got ")
        assert "too large" in line


class TestBooleansAndNull:
    """``bool`` takes true/false; ``None`` takes null."""

    def test_accepts_booleans(self) -> None:
        """Both booleans are accepted as they are."""
        assert accept(bool, True) is True
        assert accept(bool, False) is False

    @pytest.mark.parametrize(
        ("value", "shown"), [(1, "1"), (0, "0"), ("true", 'the string "true"')]
    )
    def test_rejects_non_booleans(self, value: object, shown: str) -> None:
        """``1``, ``0`` and ``"true"`` are not booleans."""
        assert reject(bool, value) == [f"x: expected a boolean, got {shown}"]

    def test_null(self) -> None:
        """``None`` accepts null only."""
        assert accept(None, None) is None
        assert accept(type(None), None) is None
        assert reject(None, 0) == ["x: expected null, got 0"]


class TestAny:
    """``Any`` and ``object`` accept every JSON value unchanged."""

    @pytest.mark.parametrize("tp", [Any, object])
    @pytest.mark.parametrize(
        "value", [None, 1, 1.5, "s", True, [1, "a"], {"k": [None]}]
    )
    def test_accepts_everything(self, tp: Any, value: object) -> None:
        """Any JSON value comes back equal and of the same type."""
        out = accept(tp, value)
        assert out == value
        assert type(out) is type(value)


# -- unions and literals -----------------------------------------------------


class TestUnions:
    """Unions try their members in written order."""

    def test_optional_accepts_null_and_member(self) -> None:
        """``Optional[int]`` and ``int | None`` take null and integers."""
        for tp in (Optional[int], int | None):  # noqa: UP045
            assert accept(tp, None) is None
            assert accept(tp, 3) == 3

    @pytest.mark.parametrize("tp", [Union[int, float], int | float])  # noqa: UP007
    def test_int_first_takes_integral_float_as_int(self, tp: Any) -> None:
        """``int | float``: 1.0 becomes int 1, 1.5 stays a float."""
        out = accept(tp, 1.0)
        assert (out, type(out)) == (1, int)
        out = accept(tp, 1.5)
        assert (out, type(out)) == (1.5, float)

    @pytest.mark.parametrize("tp", [Union[float, int], float | int])  # noqa: UP007
    def test_float_first_takes_integer_as_float(self, tp: Any) -> None:
        """``float | int``: 1 becomes 1.0, the first member that accepts."""
        out = accept(tp, 1)
        assert (out, type(out)) == (1.0, float)

    def test_bool_and_int_stay_apart(self) -> None:
        """``int | bool`` keeps true a bool and 1 an int, in both orders."""
        for tp in (int | bool, bool | int):
            assert accept(tp, True) is True
            out = accept(tp, 1)
            assert (out, type(out)) == (1, int)

    def test_message_lists_the_alternatives(self) -> None:
        """A scalar no member accepts gets every alternative named."""
        assert reject(int | None, "3") == [
            'x: expected an integer or null, got the string "3"'
        ]
        assert reject(int | str | None, 1.5) == [
            "x: expected an integer, a string or null, got 1.5"
        ]

    def test_literal_member_in_message(self) -> None:
        """A Literal member reads as "one of ..." in the alternatives."""
        assert reject(Literal["a", "b"] | None, "c") == [
            "x: expected one of 'a', 'b' or null, got 'c'"
        ]

    def test_container_member_reports_its_own_problems(self) -> None:
        """An array for ``list[int] | None`` reports the bad item's path."""
        assert reject(list[int] | None, [1, "a"]) == [
            'x[1]: expected an integer, got the string "a"'
        ]

    def test_object_union_reports_closest_member(self) -> None:
        """Of two object members, the one with fewer problems is reported."""
        assert reject(Cat | Dog, {"name": "rex", "barks": "yes"}) == [
            'x.barks: expected a boolean, got the string "yes"'
        ]

    def test_wrong_shape_for_every_member(self) -> None:
        """A kind no member takes lists the alternatives."""
        assert reject(Cat | Dog, 3) == ["x: expected an object, got 3"]
        assert reject(list[int] | int, "s") == [
            'x: expected an array or an integer, got the string "s"'
        ]

    def test_first_accepting_member_structures(self) -> None:
        """``Item | dict[str, Any]`` builds an Item when the keys fit."""
        tp = Item | dict[str, Any]
        assert accept(tp, {"name": "a"}) == Item("a")
        assert accept(tp, {"other": 1}) == {"other": 1}


class TestLiterals:
    """``Literal`` values match by JSON equality and JSON type."""

    def test_accepts_listed_strings(self) -> None:
        """A listed string is accepted."""
        assert accept(Literal["c", "f"], "f") == "f"

    def test_rejects_other_string_with_exact_message(self) -> None:
        """An unlisted string gets the listed values in the message."""
        assert reject(Literal["c", "f"], "k") == [
            "x: expected one of 'c', 'f', got 'k'"
        ]

    def test_true_is_not_one(self) -> None:
        """``Literal[1]`` refuses true; ``Literal[True]`` refuses 1."""
        assert reject(Literal[1], True) == ["x: expected 1, got true"]
        assert reject(Literal[True], 1) == ["x: expected true, got 1"]

    def test_integral_float_matches_int_literal(self) -> None:
        """``1.0`` equals ``1`` (JSON Schema enum) and comes back as ``1``."""
        out = accept(Literal[1, 2], 1.0)
        assert (out, type(out)) == (1, int)

    def test_mixed_literal(self) -> None:
        """Each value of a mixed Literal matches only its own JSON type."""
        tp = Literal["x", 1, True, None]  # noqa: PYI061 - order matters
        assert accept(tp, True) is True
        assert accept(tp, None) is None
        assert accept(tp, 1) == 1
        assert reject(tp, "1") == [
            "x: expected one of 'x', 1, true, null, got '1'"
        ]

    def test_string_for_number_literal(self) -> None:
        """A string given to a numeric Literal reads "the string"."""
        assert reject(Literal[1, 2], "1") == [
            'x: expected one of 1, 2, got the string "1"'
        ]

    def test_unsupported_values(self) -> None:
        """A float Literal value is rejected when the structurer is built."""
        with pytest.raises(SchemaError):
            make(x=Literal[1.5])


class TestEnums:
    """Enums are structured from their member values."""

    def test_string_enum(self) -> None:
        """A member value becomes the member."""
        assert accept(Color, "red") is Color.RED

    def test_message_lists_values(self) -> None:
        """An unknown value gets the allowed values listed."""
        assert reject(Color, "blue") == [
            "x: expected one of 'red', 'green', got 'blue'"
        ]

    def test_int_enum(self) -> None:
        """IntEnum takes 2 and 2.0, not true nor "2"."""
        assert accept(Level, 2) is Level.HIGH
        assert accept(Level, 2.0) is Level.HIGH
        assert reject(Level, True) == ["x: expected one of 1, 2, got true"]
        assert reject(Level, "2") == [
            'x: expected one of 1, 2, got the string "2"'
        ]

    def test_float_enum_takes_integer(self) -> None:
        """A float-valued member matches the equal integer (1 == 1.0)."""
        assert accept(Ratio, 1) is Ratio.ONE
        assert accept(Ratio, 0.5) is Ratio.HALF

    def test_flag_is_unsupported(self) -> None:
        """Flag enums are refused when the structurer is built."""
        with pytest.raises(SchemaError):
            make(x=Perm)


# -- containers --------------------------------------------------------------


class TestArrays:
    """Lists, sequences and tuples take JSON arrays."""

    @pytest.mark.parametrize("tp", [list[int], Sequence[int]])
    def test_list_and_sequence(self, tp: Any) -> None:
        """Arrays (lists or tuples) become lists of structured items."""
        assert accept(tp, [1, 2.0]) == [1, 2]
        assert accept(tp, (1,)) == [1]

    def test_items_are_converted_only_when_needed(self) -> None:
        """``list[float]`` turns integer items into floats, keeps floats."""
        out = accept(list[float], [1, 2.5])
        assert out == [1.0, 2.5]
        assert [type(item) for item in out] == [float, float]
        kept = [0.5, 1.5]
        out = accept(list[float], kept)
        assert out == kept
        assert out is not kept

    def test_homogeneous_tuple(self) -> None:
        """``tuple[int, ...]`` becomes a tuple."""
        assert accept(tuple[int, ...], [1, 2]) == (1, 2)

    def test_fixed_tuple(self) -> None:
        """``tuple[int, str]`` takes exactly two typed items."""
        assert accept(tuple[int, str], [1, "a"]) == (1, "a")

    def test_fixed_tuple_wrong_length_and_items(self) -> None:
        """Wrong length and wrong items are all reported."""
        assert reject(tuple[int, str], ["a", "b", "c"]) == [
            "x: expected an array of exactly 2 items, got 3 items",
            'x[0]: expected an integer, got the string "a"',
        ]
        assert reject(tuple[int, str], [1]) == [
            "x: expected an array of exactly 2 items, got 1 item"
        ]

    def test_empty_tuple(self) -> None:
        """``tuple[()]`` takes only the empty array."""
        assert accept(tuple[()], []) == ()
        assert reject(tuple[()], [1]) == [
            "x: expected an array of exactly 0 items, got 1 item"
        ]

    def test_string_is_not_an_array(self) -> None:
        """A string is not an array of characters."""
        assert reject(list[str], "abc") == [
            'x: expected an array, got the string "abc"'
        ]

    def test_every_bad_item_is_reported(self) -> None:
        """Each failing item gets its own path."""
        assert reject(list[int], [1, "2", True, 4.5]) == [
            'x[1]: expected an integer, got the string "2"',
            "x[2]: expected an integer, got true",
            "x[3]: expected an integer, got 4.5",
        ]


class TestSets:
    """Sets take arrays of distinct items (JSON equality)."""

    def test_set_frozenset_abstract_set(self) -> None:
        """A set gives a set; frozenset and AbstractSet give frozensets."""
        assert accept(set[int], [1, 2]) == {1, 2}
        assert type(accept(set[int], [1])) is set
        assert type(accept(frozenset[str], ["a"])) is frozenset
        assert type(accept(collections.abc.Set[int], [1])) is frozenset
        assert type(accept(typing.AbstractSet[int], [1])) is frozenset

    def test_duplicates_are_errors(self) -> None:
        """A repeated item is reported at its index."""
        assert reject(set[str], ["a", "b", "a"]) == [
            "x[2]: duplicate of item 0 (items must be unique)"
        ]

    def test_one_and_one_point_zero_are_equal(self) -> None:
        """``1`` and ``1.0`` are the same JSON number."""
        assert reject(set[int], [1, 1.0]) == [
            "x[1]: duplicate of item 0 (items must be unique)"
        ]

    def test_true_and_one_are_distinct(self) -> None:
        """``true`` and ``1`` are different JSON values: no duplicate.

        (Python's set then holds one of them: ``True == 1`` in Python.)
        """
        assert accept(frozenset[int | bool], [1, True]) == frozenset({1})

    def test_unhashable_items_are_unsupported(self) -> None:
        """``set[list[int]]`` cannot exist, so it is refused at build time."""
        with pytest.raises(SchemaError):
            make(x=set[list[int]])


class TestMappings:
    """``dict[str, T]`` and ``Mapping[str, T]`` take JSON objects."""

    @pytest.mark.parametrize("tp", [dict[str, int], Mapping[str, int]])
    def test_accepts_objects(self, tp: Any) -> None:
        """Values are structured; the result is a dict."""
        out = accept(tp, {"a": 1, "b": 2.0})
        assert out == {"a": 1, "b": 2}
        assert type(out) is dict

    def test_bare_dict_takes_any_object(self) -> None:
        """A bare ``dict`` takes any object as it is."""
        assert accept(dict, {"a": [1, None]}) == {"a": [1, None]}

    def test_wrong_values_have_key_paths(self) -> None:
        """The key of a wrong value is in its path."""
        assert reject(dict[str, int], {"a": "1", "b c": None}) == [
            'x.a: expected an integer, got the string "1"',
            'x["b c"]: expected an integer, got null',
        ]

    def test_array_is_not_an_object(self) -> None:
        """An array is refused."""
        assert reject(dict[str, int], [1]) == [
            "x: expected an object, got an array"
        ]

    def test_non_string_keys_are_unsupported(self) -> None:
        """``dict[int, str]`` has no JSON form: refused at build time."""
        with pytest.raises(SchemaError):
            make(x=dict[int, str])


class TestTypedDicts:
    """TypedDicts take objects with exactly their keys."""

    def test_total_with_not_required(self) -> None:
        """A NotRequired key may be left out."""
        assert accept(Options, {"mode": "fast"}) == {"mode": "fast"}
        assert accept(Options, {"mode": "safe", "level": 2.0}) == {
            "mode": "safe",
            "level": 2,
        }

    def test_missing_and_extra_keys(self) -> None:
        """Missing required keys and unknown keys are both reported."""
        assert reject(Options, {"level": "2", "speed": 1}) == [
            (
                "x.mode: missing required property (expected one of "
                "'fast', 'safe')"
            ),
            'x.level: expected an integer, got the string "2"',
            "x.speed: unexpected property (allowed: mode, level)",
        ]

    def test_non_total_with_required(self) -> None:
        """In a total=False TypedDict only Required keys are required."""
        assert accept(Partial, {"key": "k"}) == {"key": "k"}
        assert reject(Partial, {"extra": 1}) == [
            "x.key: missing required property (expected a string)"
        ]

    def test_extra_items_are_checked_not_refused(self) -> None:
        """PEP 728 ``extra_items=int``: other keys hold integers."""
        assert accept(Tagged, {"name": "a", "n": 1.0, "m": 2}) == {
            "name": "a",
            "n": 1,
            "m": 2,
        }
        assert reject(Tagged, {"name": "a", "n": "1", "b c": None}) == [
            'x.n: expected an integer, got the string "1"',
            'x["b c"]: expected an integer, got null',
        ]

    def test_closed_refuses_other_keys(self) -> None:
        """PEP 728 ``closed=True``: other keys are unexpected."""
        assert accept(Sealed, {"name": "a"}) == {"name": "a"}
        assert reject(Sealed, {"name": "a", "n": 1}) == [
            "x.n: unexpected property (allowed: name)"
        ]

    def test_recursive(self) -> None:
        """A recursive TypedDict validates every level."""
        tree = {"label": "a", "kids": [{"label": "b", "kids": []}]}
        assert accept(Tree, tree) == tree
        assert reject(Tree, {"label": "a", "kids": [{"label": 1}]}) == [
            "x.kids[0].label: expected a string, got 1",
            "x.kids[0].kids: missing required property (expected an array)",
        ]


class TestClasses:
    """Attrs classes and dataclasses take objects keyed by init names."""

    def test_attrs_with_default(self) -> None:
        """A field with a default may be left out."""
        assert accept(Item, {"name": "a"}) == Item("a", 1)
        assert accept(Item, {"name": "a", "qty": 3.0}) == Item("a", 3)

    def test_nested_problems_have_full_paths(self) -> None:
        """Wrong, missing and extra keys are reported at every level."""
        value = {
            "items": [
                {"name": "a", "qty": 2.5},
                {"qty": 1, "colour": "red"},
            ],
            "extra": True,
        }
        assert reject(Order, value) == [
            "x.items[0].qty: expected an integer, got 2.5",
            "x.items[1].name: missing required property (expected a string)",
            "x.items[1].colour: unexpected property (allowed: name, qty)",
            "x.extra: unexpected property (allowed: items, note)",
        ]

    def test_not_an_object(self) -> None:
        """A non-object is refused before any field is looked at."""
        assert reject(Item, "a") == [
            'x: expected an object, got the string "a"'
        ]
        assert reject(Item, [["name", "a"]]) == [
            "x: expected an object, got an array"
        ]

    def test_recursive_attrs(self) -> None:
        """A recursive attrs class structures and validates every level."""
        value = {"name": "r", "children": [{"name": "c"}]}
        assert accept(Node, value) == Node("r", [Node("c")])
        assert reject(Node, {"name": "r", "children": [{"name": 1}]}) == [
            "x.children[0].name: expected a string, got 1"
        ]

    def test_recursive_dataclass(self) -> None:
        """A recursive dataclass structures and validates every level."""
        value = {"value": 1, "next": {"value": 2}}
        assert accept(Link, value) == Link(1, Link(2))
        assert reject(Link, {"value": 1, "next": {"value": "2"}}) == [
            'x.next.value: expected an integer, got the string "2"'
        ]

    def test_dataclass_extra_key(self) -> None:
        """An unknown key of a dataclass is an error."""
        assert reject(Point, {"x": 1, "y": 2, "z": 3}) == [
            "x.z: unexpected property (allowed: x, y)"
        ]

    def test_aliases_are_the_keys(self) -> None:
        """The attrs aliases (``_secret`` -> ``secret``) are the JSON keys."""
        assert accept(Private, {"secret": "s", "visible": 2}) == Private(
            "s", 2
        )
        assert reject(Private, {"_secret": "s"}) == [
            "x.secret: missing required property (expected a string)",
            "x._secret: unexpected property (allowed: secret, visible)",
        ]

    def test_init_false_field_is_not_a_key(self) -> None:
        """A field that is not an ``__init__`` argument is not accepted."""
        assert accept(Computed, {"a": 1}) == Computed(1)
        assert reject(Computed, {"a": 1, "b": 2}) == [
            "x.b: unexpected property (allowed: a)"
        ]

    def test_unsupported_field_type_is_named(self) -> None:
        """A field of an unsupported type fails at build time, named."""

        @attrs.define
        class Holder:
            value: complex

        with pytest.raises(SchemaError, match=r"Holder\.value"):
            make(x=Holder)

    def test_validator_failure_is_reported(self) -> None:
        """A validator's ValueError becomes an error for the object."""
        assert reject(Range, {"low": 5, "high": 1}) == [
            "x: invalid Range: high must be >= low"
        ]

    def test_post_init_failure_is_reported(self) -> None:
        """A dataclass's ``__post_init__`` error is one for the object."""
        assert accept(Span, {"start": 1, "end": 2.0}) == Span(1, 2)
        assert reject(
            list[Span], [{"start": 1, "end": 2}, {"start": 5, "end": 1}]
        ) == ["x[1]: invalid Span: end must not come before start"]

    def test_fields_are_checked_before_init_runs(self) -> None:
        """``__init__`` never sees a wrong field: every one is reported."""
        assert reject(Span, {"start": "1", "end": None}) == [
            'x.start: expected an integer, got the string "1"',
            "x.end: expected an integer, got null",
        ]

    def test_field_constraints(self) -> None:
        """Constraints on class fields are enforced, with the field path."""
        assert accept(Bounded, {"count": 0}) == Bounded(0)
        assert reject(Bounded, {"count": -1, "label": "abcd"}) == [
            "x.count: expected an integer >= 0, got -1",
            "x.label: expected at most 3 characters, got 4",
        ]
        assert reject(Bounded, {}) == [
            "x.count: missing required property (expected an integer (>= 0))"
        ]


class TestStringFormats:
    """datetime, date, time and UUID parse strict ISO strings."""

    def test_datetime(self) -> None:
        """RFC 3339 date-times parse, with or without an offset."""
        assert accept(dt.datetime, "2024-05-01T10:30:00Z") == dt.datetime(
            2024, 5, 1, 10, 30, tzinfo=dt.timezone.utc
        )
        assert accept(dt.datetime, "2024-05-01T10:30:00.5+02:00") == (
            dt.datetime(
                2024,
                5,
                1,
                10,
                30,
                0,
                500000,
                tzinfo=dt.timezone(dt.timedelta(hours=2)),
            )
        )
        naive = dt.datetime(2024, 5, 1, 10, 30)  # noqa: DTZ001
        assert accept(dt.datetime, "2024-05-01 10:30") == naive

    @pytest.mark.parametrize(
        "text",
        ["yesterday", "2024-05-01", "2024-13-01T00:00:00", "20240501T1030"],
    )
    def test_bad_datetime(self, text: str) -> None:
        """Malformed or impossible date-times are refused."""
        assert reject(dt.datetime, text) == [
            f"x: expected a date-time string (ISO 8601), got {json.dumps(text)}"
        ]

    def test_datetime_is_not_a_number(self) -> None:
        """A timestamp number is not a date-time string."""
        assert reject(dt.datetime, 1700000000) == [
            "x: expected a date-time string (ISO 8601), got 1700000000"
        ]

    def test_date(self) -> None:
        """``YYYY-MM-DD`` only, and a real day."""
        assert accept(dt.date, "2024-02-29") == dt.date(2024, 2, 29)
        assert reject(dt.date, "2023-02-29") == [
            'x: expected a date string (YYYY-MM-DD), got "2023-02-29"'
        ]
        assert reject(dt.date, "2024-02-29T00:00:00") == [
            'x: expected a date string (YYYY-MM-DD), got "2024-02-29T00:00:00"'
        ]

    def test_time(self) -> None:
        """``HH:MM[:SS[.f]][offset]``; 25 o'clock is refused."""
        assert accept(dt.time, "10:30:15") == dt.time(10, 30, 15)
        assert accept(dt.time, "10:30:15Z") == dt.time(
            10, 30, 15, tzinfo=dt.timezone.utc
        )
        assert reject(dt.time, "25:00") == [
            'x: expected a time string (ISO 8601, HH:MM:SS), got "25:00"'
        ]

    def test_uuid(self) -> None:
        """The canonical hyphenated form only."""
        value = uuid.UUID(int=42)
        assert accept(uuid.UUID, str(value)) == value
        assert accept(uuid.UUID, str(value).upper()) == value
        assert reject(uuid.UUID, value.hex) == [
            f'x: expected a UUID string, got "{value.hex}"'
        ]


class TestWrappers:
    """``Annotated`` and ``NewType`` validate as their underlying type."""

    def test_annotated(self) -> None:
        """Annotated metadata is ignored."""
        assert accept(Annotated[int, "a count"], 3) == 3
        assert reject(Annotated[int, "a count"], "3") == [
            'x: expected an integer, got the string "3"'
        ]

    def test_newtype(self) -> None:
        """A NewType validates as its supertype."""
        assert accept(UserId, 5) == 5
        assert reject(UserId, "5") == [
            'x: expected an integer, got the string "5"'
        ]

    def test_type_alias(self) -> None:
        """A ``TypeAliasType`` validates as its value."""
        ints = TypeAliasType("ints", list[int])
        assert accept(ints, [1, 2.0]) == [1, 2]
        assert reject(ints, ["1"]) == [
            'x[0]: expected an integer, got the string "1"'
        ]

    def test_unhashable_metadata(self) -> None:
        """Annotated metadata that cannot be hashed does not matter."""
        assert accept(list[Annotated[int, {"k": []}]], [1]) == [1]


# -- decimals, paths, durations, bytes ---------------------------------------


class TestDecimals:
    """``Decimal`` takes a JSON number or a string holding a decimal."""

    def test_float_keeps_its_decimal_text(self) -> None:
        """``0.1`` becomes ``Decimal("0.1")``, not the binary float's."""
        out = accept(Decimal, 0.1)
        assert (out, type(out)) == (Decimal("0.1"), Decimal)
        assert str(out) == "0.1"

    def test_integers_and_strings(self) -> None:
        """Integers are exact; strings keep every digit they were sent."""
        assert accept(Decimal, 10**30) == Decimal(10**30)
        assert str(accept(Decimal, "1.50")) == "1.50"
        assert accept(Decimal, "-2.5e3") == Decimal(-2500)
        assert accept(Decimal, ".5") == Decimal("0.5")

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (True, "true"),
            (None, "null"),
            ("NaN", '"NaN"'),
            ("Infinity", '"Infinity"'),
            ("-inf", '"-inf"'),
            ("1_000", '"1_000"'),
            (" 1", '" 1"'),
            ("+1", '"+1"'),
            ("1.5\n", '"1.5\\n"'),
            ("\u0661", '"\u0661"'),
            ([1], "an array"),
        ],
    )
    def test_rejects(self, value: object, shown: str) -> None:
        """Bools, null, non-finite and non-decimal strings are refused."""
        assert reject(Decimal, value) == [
            (
                "x: expected a decimal number (a number or a numeric "
                f"string), got {shown}"
            )
        ]

    def test_non_finite_float(self) -> None:
        """A NaN float (possible outside tool arguments) is refused."""
        with pytest.raises(ToolArgumentsError, match="got NaN"):
            structure_value(math.nan, Decimal)


class TestPaths:
    """``pathlib`` paths take strings, built as the declared class."""

    def test_declared_class(self) -> None:
        """``PurePosixPath`` and ``Path`` parameters get their class."""
        out = accept(PurePosixPath, "/srv/x")
        assert (out, type(out)) == (PurePosixPath("/srv/x"), PurePosixPath)
        concrete = accept(Path, "a/b")
        assert isinstance(concrete, Path)
        assert concrete == Path("a/b")

    def test_only_strings(self) -> None:
        """A number or an array is not a path."""
        assert reject(Path, 3) == ["x: expected a path string, got 3"]
        assert reject(Path, ["a", "b"]) == [
            "x: expected a path string, got an array"
        ]


class TestDurations:
    """``timedelta`` takes ISO 8601 durations."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                "P1DT2H3M4.5S",
                dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5),
            ),
            ("PT30S", dt.timedelta(seconds=30)),
            ("-PT30S", dt.timedelta(seconds=-30)),
            ("P2W", dt.timedelta(weeks=2)),
            ("PT1.000001S", dt.timedelta(seconds=1, microseconds=1)),
            ("PT90M", dt.timedelta(minutes=90)),
            ("P0D", dt.timedelta(0)),
        ],
    )
    def test_accepts(self, text: str, expected: dt.timedelta) -> None:
        """Weeks, days, hours, minutes and (fractional) seconds."""
        assert accept(dt.timedelta, text) == expected

    @pytest.mark.parametrize(
        "value",
        [
            "P1Y",
            "P1M",
            "P",
            "PT",
            "P1DT",
            "1D",
            "PT1.5M",
            "P1D2H",
            "pt30s",
            "P99999999999D",
            30,
        ],
    )
    def test_rejects(self, value: object) -> None:
        """Years and months (not exact), malformed text and numbers."""
        [line] = reject(dt.timedelta, value)
        assert line == (
            "x: expected a duration string (ISO 8601, e.g. PT30S or "
            f"P1DT2H), got {json.dumps(value)}"
        )


class TestBytes:
    """``bytes`` takes strict base64 text."""

    def test_accepts_padded_base64(self) -> None:
        """Standard base64 with padding decodes to the bytes."""
        assert accept(bytes, "aGVsbG8=") == b"hello"
        assert accept(bytes, "") == b""

    @pytest.mark.parametrize(
        "value", ["aGVsbG8", "aGVs bG8=", "aGVs\nbG8=", "a$==", "\u00e9", 1]
    )
    def test_rejects(self, value: object) -> None:
        """Missing padding, whitespace, other characters, numbers."""
        assert reject(bytes, value) == [
            "x: expected a base64 string, got "
            + json.dumps(value, ensure_ascii=False)
        ]


# -- constraints -------------------------------------------------------------


class TestConstraints:
    """annotated-types and pydantic constraints are enforced, by name."""

    def test_lower_bounds(self) -> None:
        """``Ge`` includes its bound, ``Gt`` excludes it."""
        assert accept(Annotated[int, Ge(0)], 0) == 0
        assert reject(Annotated[int, Ge(0)], -3) == [
            "x: expected an integer >= 0, got -3"
        ]
        assert reject(Annotated[float, Gt(0.5)], 0.5) == [
            "x: expected a number > 0.5, got 0.5"
        ]

    def test_upper_bounds(self) -> None:
        """``Le`` includes its bound, ``Lt`` excludes it."""
        assert accept(Annotated[int, Le(10)], 10) == 10
        assert reject(Annotated[int, Lt(10)], 10) == [
            "x: expected an integer < 10, got 10"
        ]

    def test_pydantic_field(self) -> None:
        """``Annotated[int, Field(ge=0, le=10)]`` refuses -3 and 11."""
        tp = Annotated[int, Field(ge=0, le=10)]
        assert accept(tp, 5) == 5
        assert reject(tp, -3) == ["x: expected an integer >= 0, got -3"]
        assert reject(tp, 11) == ["x: expected an integer <= 10, got 11"]

    def test_multiple_of(self) -> None:
        """``MultipleOf`` of integers, and of decimals as written."""
        assert accept(Annotated[int, MultipleOf(5)], 10) == 10
        assert reject(Annotated[int, MultipleOf(5)], 7) == [
            "x: expected a multiple of 5, got 7"
        ]
        assert accept(Annotated[float, MultipleOf(0.1)], 0.3) == 0.3
        assert reject(Annotated[float, MultipleOf(0.1)], 0.35) == [
            "x: expected a multiple of 0.1, got 0.35"
        ]

    def test_every_broken_constraint_is_reported(self) -> None:
        """A value that breaks two constraints gets both named."""
        assert reject(Annotated[int, Ge(0), MultipleOf(5)], -3) == [
            "x: expected an integer >= 0, got -3",
            "x: expected a multiple of 5, got -3",
        ]

    def test_string_length(self) -> None:
        """Lengths count characters (code points), not bytes."""
        assert accept(Annotated[str, MaxLen(3)], "\u00e9\u00e9\u00e9") == (
            "\u00e9\u00e9\u00e9"
        )
        assert reject(Annotated[str, MaxLen(10)], "a" * 12) == [
            "x: expected at most 10 characters, got 12"
        ]
        assert reject(Annotated[str, MinLen(1)], "") == [
            "x: expected at least 1 character, got 0"
        ]

    def test_pattern_searches(self) -> None:
        """``pattern`` matches anywhere unless anchored (JSON Schema)."""
        assert accept(Annotated[str, Field(pattern="[0-9]")], "a1b") == "a1b"
        assert reject(Annotated[str, Field(pattern="^[a-z]+$")], "ABC") == [
            "x: expected a string matching '^[a-z]+$', got \"ABC\""
        ]

    def test_array_size_and_items_together(self) -> None:
        """A too-long array with a bad item gets both problems at once."""
        tp = Annotated[list[int], Len(1, 3)]
        assert accept(tp, [1, 2, 3]) == [1, 2, 3]
        assert reject(tp, [1, "a", 3, 4]) == [
            "x: expected at most 3 items, got 4",
            'x[1]: expected an integer, got the string "a"',
        ]
        assert reject(tp, []) == ["x: expected at least 1 item, got 0"]

    def test_set_and_mapping_sizes(self) -> None:
        """Sets count items, mappings count properties."""
        assert reject(Annotated[set[int], MinLen(2)], [1]) == [
            "x: expected at least 2 items, got 1"
        ]
        assert reject(
            Annotated[dict[str, int], MaxLen(1)], {"a": 1, "b": 2}
        ) == ["x: expected at most 1 property, got 2"]

    def test_decimal_strings_are_bounded_too(self) -> None:
        """A Decimal sent as a string meets the same bounds as a number."""
        tp = Annotated[Decimal, Ge(0)]
        assert accept(tp, "0.5") == Decimal("0.5")
        [line] = reject(tp, "-3")
        assert line.endswith('>= 0, got "-3"')
        [line] = reject(tp, -3)
        assert line.endswith(">= 0, got -3")

    def test_constrained_union_member(self) -> None:
        """``Annotated[int, Ge(0)] | None``: null, or an integer >= 0."""
        tp = Annotated[int, Ge(0)] | None
        assert accept(tp, None) is None
        assert accept(tp, 3) == 3
        assert reject(tp, -3) == [
            "x: expected an integer (>= 0) or null, got -3"
        ]

    def test_missing_argument_names_the_constraint(self) -> None:
        """The expected type of a missing argument shows its bounds."""
        assert problems(make(n=Annotated[int, Ge(0), Le(9)]), {}) == [
            "n: missing required argument (expected an integer (>= 0, <= 9))"
        ]

    def test_dispatch_enforces_constraints_on_flat_arguments(self) -> None:
        """Flat JSON text takes no fast path around a constraint."""
        calls: list[int] = []

        @tool
        def take(n: Annotated[int, Field(ge=0)]) -> int:
            """Take a count.

            Args:
                n: How many.
            """
            calls.append(n)
            return n

        dispatcher = Dispatcher(Registry([take]))
        host = ExecutionContext(user_id="u")

        def send(text: str) -> ToolResult:
            return dispatcher.dispatch(ToolCall("take", text, "c1"), host)

        assert send('{"n": 2}').output == 2
        bad = send('{"n": -3}')
        assert bad.is_error
        assert "n: expected an integer >= 0, got -3" in (bad.error or "")
        assert calls == [2]

    def test_unenforceable_pattern_is_a_schema_error(self) -> None:
        """A pattern Python cannot compile fails when the tool is built."""
        with pytest.raises(SchemaError, match="pattern") as info:
            make(code=Annotated[str, Field(pattern="(")])
        assert info.value.parameter == "code"

    def test_unknown_keyword_is_a_schema_error(self) -> None:
        """A constraint keyword the validator does not know is never dropped."""
        analysis = Analysis("f", "x")
        node = TypeNode(Kind.STRING, str, constraints=(("format", "email"),))
        with pytest.raises(SchemaError, match="format"):
            Compiler(analysis).check(node)


# -- the arguments object ----------------------------------------------------


class TestArgumentStructurer:
    """The arguments object as a whole."""

    def test_flat_arguments(self) -> None:
        """Flat primitive arguments come back as keyword arguments."""
        assert make(a=int, b=int).structure({"a": 1, "b": 2}) == {
            "a": 1,
            "b": 2,
        }

    def test_result_is_a_copy(self) -> None:
        """The returned dict is not the arguments dict."""
        args = {"a": 1}
        out = make(a=int).structure(args)
        out["a"] = 2
        assert args == {"a": 1}

    def test_absent_optional_arguments_are_omitted(self) -> None:
        """Python fills in defaults: absent optional arguments are left out."""
        structurer = ArgumentStructurer(
            [Param("a", int), Param("b", str, default="x")]
        )
        assert structurer.structure({"a": 1}) == {"a": 1}

    def test_missing_and_unknown_arguments(self) -> None:
        """Missing ones name their type; unknown ones list the allowed."""
        structurer = ArgumentStructurer(
            [Param("name", str), Param("size", int, default=1)]
        )
        assert problems(structurer, {"colour": "red"}) == [
            "name: missing required argument (expected a string)",
            "colour: unexpected argument (allowed: name, size)",
        ]

    def test_every_problem_in_parameter_order(self) -> None:
        """All problems come at once, in parameter order, unknown last."""
        structurer = make(
            unit=Literal["c", "f"], count=int, flag=bool, ratio=float
        )
        args = {
            "zzz": 1,
            "ratio": True,
            "flag": 1,
            "count": "3",
            "unit": "k",
        }
        assert problems(structurer, args) == [
            "unit: expected one of 'c', 'f', got 'k'",
            'count: expected an integer, got the string "3"',
            "flag: expected a boolean, got 1",
            "ratio: expected a number, got true",
            "zzz: unexpected argument (allowed: unit, count, flag, ratio)",
        ]

    def test_message_of_the_exception(self) -> None:
        """The exception's message joins every problem."""
        with pytest.raises(ToolArgumentsError) as info:
            make(a=int).structure({"a": "1", "b": 2})
        assert str(info.value) == (
            'Invalid arguments: a: expected an integer, got the string "1"; '
            "b: unexpected argument (allowed: a)"
        )

    def test_no_parameters(self) -> None:
        """A tool without parameters takes only ``{}``."""
        structurer = ArgumentStructurer([])
        assert structurer.structure({}) == {}
        assert problems(structurer, {"a": 1}) == [
            "a: unexpected argument (this tool takes no arguments)"
        ]

    @pytest.mark.parametrize(
        ("args", "shown"), [([1], "an array"), (None, "null"), ("{}", None)]
    )
    def test_arguments_must_be_an_object(
        self, args: object, shown: str | None
    ) -> None:
        """Anything but a mapping is one error about the whole object."""
        [line] = problems(make(a=int), args)
        assert line.startswith("expected an object of arguments, got ")
        if shown is not None:
            assert line.endswith(shown)

    def test_mapping_that_is_not_a_dict(self) -> None:
        """Any Mapping is accepted (through the full path)."""
        args = collections.OrderedDict(a=1)
        assert make(a=int).structure(args) == {"a": 1}

    def test_strange_keys(self) -> None:
        """Unknown keys that are not identifiers are quoted in the path."""
        assert problems(make(), {"a b": 1}) == [
            '["a b"]: unexpected argument (this tool takes no arguments)'
        ]

    def test_unsupported_parameter_type(self) -> None:
        """A type that cannot be validated fails at construction."""
        with pytest.raises(SchemaError) as info:
            make(ok=int, bad=complex)
        assert info.value.parameter == "bad"

    def test_fast_and_full_paths_agree(self) -> None:
        """The fast path returns exactly what the full path returns."""
        structurer = ArgumentStructurer(
            [
                Param("a", int),
                Param("b", str | None, default=None),
                Param("c", Literal["x", "y"], default="x"),
                Param("d", Any, default=None),
                Param("e", float, default=0.0),
                Param("f", float | int, default=0),
            ]
        )
        for args in (
            {"a": 1},
            {"a": 1, "b": None, "c": "y", "d": [1], "e": 1.5, "f": 2.5},
            {"a": 1.0, "e": 2, "f": 1},
            {"a": 1, "c": "x", "d": {"k": 1}},
        ):
            fast = structurer.structure(args)
            full = structurer._structure(args)
            assert fast == full
            assert [type(v) for v in fast.values()] == [
                type(full[k]) for k in fast
            ]

    def test_deep_nesting_is_an_argument_error(self) -> None:
        """Input nested beyond the recursion limit is reported, not raised."""
        value: dict[str, Any] = {"name": "leaf"}
        for _ in range(5000):
            value = {"name": "n", "children": [value]}
        [line] = problems(make(x=Node), {"x": value})
        assert line.endswith("the value is nested too deeply")

    def test_missing_sentinel_means_required(self) -> None:
        """A parameter whose default is MISSING is required."""
        structurer = ArgumentStructurer([Param("a", int, default=MISSING)])
        assert problems(structurer, {}) == [
            "a: missing required argument (expected an integer)"
        ]


# -- output ------------------------------------------------------------------


class TestUnstructureOutput:
    """Return values become JSON data."""

    @pytest.mark.parametrize("value", ["s", 1, 1.5, True, None])
    def test_primitives_unchanged(self, value: object) -> None:
        """Primitives come back as the very same object."""
        assert unstructure_output(value) is value

    def test_classes(self) -> None:
        """Attrs classes and dataclasses become dicts of init keys."""
        assert unstructure_output(Order([Item("a")])) == {
            "items": [{"name": "a", "qty": 1}],
            "note": None,
        }
        assert unstructure_output(Link(1, Link(2))) == {
            "value": 1,
            "next": {"value": 2, "next": None},
        }
        assert unstructure_output(Private("s", 3)) == {
            "secret": "s",
            "visible": 3,
        }

    def test_scalars_with_a_json_form(self) -> None:
        """Enums, datetimes, UUIDs and paths become JSON scalars."""
        moment = dt.datetime(2024, 5, 1, 10, 30, tzinfo=dt.timezone.utc)
        assert unstructure_output(
            [
                Color.RED,
                Level.HIGH,
                moment,
                dt.date(2024, 5, 1),
                dt.time(10, 30),
                uuid.UUID(int=1),
                PurePosixPath("/srv/x"),
            ]
        ) == [
            "red",
            2,
            "2024-05-01T10:30:00+00:00",
            "2024-05-01",
            "10:30:00",
            "00000000-0000-0000-0000-000000000001",
            "/srv/x",
        ]

    def test_collections(self) -> None:
        """Tuples, sets and frozensets become lists; sets are sorted."""
        assert unstructure_output(
            {"t": (1, 2), "s": {3, 1, 2}, "f": frozenset({"b", "a"})}
        ) == {"t": [1, 2], "s": [1, 2, 3], "f": ["a", "b"]}

    def test_mapping_keys_become_strings(self) -> None:
        """Keys are written as ``json.dumps`` would write them."""
        out = unstructure_output(
            {
                1: "a",
                None: "c",
                Color.GREEN: "d",
                2.5: "e",
                uuid.UUID(int=0): 1,
            }
        )
        assert out == {
            "1": "a",
            "null": "c",
            "green": "d",
            "2.5": "e",
            "00000000-0000-0000-0000-000000000000": 1,
        }
        assert unstructure_output({True: 1, False: 0}) == {
            "true": 1,
            "false": 0,
        }

    def test_round_trips_through_json(self) -> None:
        """The output is accepted by ``json.dumps``."""
        json.dumps(unstructure_output({"o": Order([Item("a")]), "s": {1}}))

    def test_unsupported_object(self) -> None:
        """An arbitrary object is a TypeError naming its type and place."""

        class Opaque:
            pass

        with pytest.raises(TypeError, match=r"Opaque.*\(at a\.b\[1\]\)"):
            unstructure_output({"a": {"b": [1, Opaque()]}})

    def test_decimals_durations_and_bytes(self) -> None:
        """Decimals exact text, durations ISO 8601, bytes base64."""
        assert unstructure_output(
            [
                Decimal("0.1"),
                Decimal("1.50"),
                dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5),
                dt.timedelta(seconds=-30),
                dt.timedelta(0),
                dt.timedelta(weeks=1, microseconds=10),
                b"hello",
                Path("a/b"),
            ]
        ) == [
            "0.1",
            "1.50",
            "P1DT2H3M4.5S",
            "-PT30S",
            "PT0S",
            "P7DT0.00001S",
            "aGVsbG8=",
            str(Path("a/b")),
        ]

    def test_non_finite_decimal(self) -> None:
        """A NaN or infinite Decimal cannot be read back: a TypeError."""
        with pytest.raises(TypeError, match=r"decimal NaN.*\(at d\)"):
            unstructure_output({"d": Decimal("NaN")})
        with pytest.raises(TypeError, match="Infinity"):
            unstructure_output(Decimal("-Infinity"))

    def test_mutable_bytes_are_unsupported(self) -> None:
        """``bytearray`` and ``memoryview`` are not converted."""
        with pytest.raises(TypeError, match="bytearray"):
            unstructure_output(bytearray(b"x"))
        with pytest.raises(TypeError, match="memoryview"):
            unstructure_output(memoryview(b"x"))

    def test_host_only_objects_are_refused(self) -> None:
        """A context is never output, wherever it sits."""
        with pytest.raises(
            TypeError, match=r"may not return ExecutionContext.*\(at c\[0\]\)"
        ):
            unstructure_output({"c": [ExecutionContext(user_id="u")]})

    def test_refusals_are_registered_from_above(self) -> None:
        """``output.refuse`` takes classes or a predicate, and a message."""

        class Handle:
            pass

        class Token(str):
            __slots__ = ()

        output.refuse(Handle, "handles stay on the host")
        output.refuse(
            lambda cls: cls is Token,
            lambda cls: f"{cls.__name__} is secret",
        )
        with pytest.raises(TypeError, match=r"^handles stay on the host$"):
            unstructure_output(Handle())
        with pytest.raises(TypeError, match=r"^Token is secret \(at t\)$"):
            unstructure_output({"t": Token("x")})
        assert unstructure_output("x") == "x"

    def test_tuple_keys_are_unsupported(self) -> None:
        """A key that is not a scalar is a TypeError."""
        with pytest.raises(TypeError, match="tuple"):
            unstructure_output({(1, 2): 1})

    def test_reference_cycle(self) -> None:
        """A cycle is a TypeError, not a RecursionError."""
        cycle: list[object] = []
        cycle.append(cycle)
        with pytest.raises(TypeError, match="cycle"):
            unstructure_output(cycle)


class TestSingleValues:
    """structure_value / unstructure_value for one typed value."""

    def test_round_trip(self) -> None:
        """A value survives unstructure then structure."""
        tp = dict[str, list[Item]]
        value = {"k": [Item("a", 2)]}
        data = unstructure_value(value, tp)
        assert data == {"k": [{"name": "a", "qty": 2}]}
        assert structure_value(data, tp) == value

    def test_errors_are_relative(self) -> None:
        """The paths start at the value itself."""
        with pytest.raises(ToolArgumentsError) as info:
            structure_value([1, "a"], list[int])
        assert [str(e) for e in info.value.errors] == [
            '[1]: expected an integer, got the string "a"'
        ]
        with pytest.raises(ToolArgumentsError) as info:
            structure_value("a", int)
        assert str(info.value.errors[0]) == (
            'expected an integer, got the string "a"'
        )

    def test_unsupported_type(self) -> None:
        """Both directions refuse a type with no JSON form."""
        with pytest.raises(SchemaError):
            structure_value(1, complex)
        with pytest.raises(SchemaError):
            unstructure_value(1j, complex)


# -- properties --------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)

SIGNATURES = [
    [Param("a", int), Param("b", int)],
    [
        Param("unit", Literal["c", "f"]),
        Param("when", dt.datetime, default=None),
        Param("ids", set[uuid.UUID], default=frozenset()),
    ],
    [
        Param("order", Order),
        Param("tags", list[str] | None, default=None),
        Param("pair", tuple[int, Color], default=(0, Color.RED)),
    ],
    [
        Param("node", Node),
        Param("tree", Tree, default=None),
        Param("pets", list[Cat | Dog], default=()),
    ],
    [
        Param("m", dict[str, frozenset[int | bool]]),
        Param("o", Options, default=None),
        Param("p", Partial, default=None),
        Param("x", float | int | str | None, default=None),
        Param("lvl", Level, default=Level.LOW),
    ],
]

NAMES = st.sampled_from(
    sorted({p.name for sig in SIGNATURES for p in sig} | {"zz", "name"})
)
ARGS = st.dictionaries(NAMES, JSON, max_size=6)

# Signatures without string formats: JSON Schema and the validator must
# agree on every input (formats are not asserted by the schema).
EQUIVALENT = [
    [
        Param("a", int),
        Param("b", float | None, default=None),
        Param("c", list[Item], default=()),
        Param("d", dict[str, set[int]], default=None),
        Param("e", Literal["x", 1, True, None], default=None),  # noqa: PYI061
        Param("f", Color, default=Color.RED),
        Param("g", Options, default=None),
        Param("h", tuple[int, str], default=(0, "")),
        Param("i", bool | Level, default=False),
    ],
    [Param("node", Node), Param("pets", list[Cat | Dog], default=())],
]
EQUIVALENT_NAMES = st.sampled_from(
    sorted({p.name for sig in EQUIVALENT for p in sig} | {"zz"})
)
INTS = st.integers(-(2**40), 2**40)
NUMBERS = INTS | INTS.map(float) | st.floats(-1e9, 1e9)
# Values near the valid ones for EQUIVALENT[0] (hypothesis-jsonschema's
# object strategy does not run with this Hypothesis), mixed with any JSON.
NEAR_VALID: dict[str, st.SearchStrategy[Any]] = {
    "a": NUMBERS | st.booleans(),
    "b": NUMBERS | st.none(),
    "c": st.lists(
        st.fixed_dictionaries(
            {"name": st.text(max_size=3) | INTS},
            optional={"qty": NUMBERS, "x": st.none()},
        ),
        max_size=3,
    ),
    "d": st.dictionaries(
        st.text(max_size=3), st.lists(NUMBERS | st.booleans(), max_size=3)
    ),
    "e": st.sampled_from(["x", "y", 1, 1.0, 2, True, False, None, 0]),
    "f": st.sampled_from(["red", "green", "blue", 1]),
    "g": st.fixed_dictionaries(
        {},
        optional={
            "mode": st.sampled_from(["fast", "safe", "slow"]),
            "level": NUMBERS,
            "other": st.none(),
        },
    ),
    "h": st.lists(INTS | st.text(max_size=2), max_size=3),
    "i": st.sampled_from([True, False, 1, 2, 1.0, 3, "1"]),
}
VALID: dict[str, st.SearchStrategy[Any]] = {
    "a": INTS | INTS.map(float),
    "b": NUMBERS | st.none(),
    "c": st.lists(
        st.fixed_dictionaries(
            {"name": st.text(max_size=3)},
            optional={"qty": INTS | INTS.map(float)},
        ),
        max_size=3,
    ),
    "d": st.dictionaries(
        st.text(max_size=3), st.lists(INTS, max_size=3, unique=True)
    ),
    "e": st.sampled_from(["x", 1, 1.0, True, None]),
    "f": st.sampled_from(["red", "green"]),
    "g": st.fixed_dictionaries(
        {"mode": st.sampled_from(["fast", "safe"])}, optional={"level": INTS}
    ),
    "h": st.tuples(INTS, st.text(max_size=2)).map(list),
    "i": st.sampled_from([True, False, 1, 2, 1.0, 2.0]),
}
VALID_ARGS = st.fixed_dictionaries(
    {"a": VALID["a"]}, optional={k: v for k, v in VALID.items() if k != "a"}
)


@st.composite
def near_args(draw: st.DrawFn) -> dict[str, Any]:
    """Valid arguments, often with a few keys changed or dropped."""
    args = draw(VALID_ARGS)
    for _ in range(draw(st.integers(0, 2))):
        name = draw(EQUIVALENT_NAMES)
        if name in args and draw(st.booleans()):
            del args[name]
        else:
            args[name] = draw(NEAR_VALID.get(name, JSON) | JSON)
    return args


class TestProperties:
    """Arbitrary JSON never breaks the structurer."""

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(range(len(SIGNATURES))), ARGS | JSON)
    def test_only_tool_arguments_errors(self, index: int, args: Any) -> None:
        """Any JSON input is structured or raises ToolArgumentsError only."""
        structurer = ArgumentStructurer(SIGNATURES[index])
        try:
            out = structurer.structure(args)
        except ToolArgumentsError as exc:
            errors = exc.errors
        else:
            assert isinstance(out, dict)
            return
        assert errors
        assert all(error.message for error in errors)

    @settings(
        max_examples=200,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(near_args())
    def test_schema_and_validator_agree(self, args: dict[str, Any]) -> None:
        """The JSON Schema accepts exactly what the validator accepts."""
        signature = EQUIVALENT[0]
        schema = parameters_schema(signature, owner="test")
        valid = jsonschema.Draft202012Validator(schema).is_valid(args)
        try:
            ArgumentStructurer(signature).structure(args)
        except ToolArgumentsError:
            accepted = False
        else:
            accepted = True
        assert accepted == valid, args

    @settings(max_examples=100, deadline=None)
    @given(st.dictionaries(EQUIVALENT_NAMES, JSON, max_size=3))
    def test_recursive_schema_agrees(self, args: dict[str, Any]) -> None:
        """The recursive signature agrees with its schema on any JSON."""
        signature = EQUIVALENT[1]
        schema = parameters_schema(signature, owner="test")
        valid = jsonschema.Draft202012Validator(schema).is_valid(args)
        try:
            ArgumentStructurer(signature).structure(args)
        except ToolArgumentsError:
            accepted = False
        else:
            accepted = True
        assert accepted == valid, args

    @settings(max_examples=200, deadline=None)
    @given(
        st.one_of(
            st.timedeltas().map(lambda v: (dt.timedelta, v)),
            st.decimals(allow_nan=False, allow_infinity=False).map(
                lambda v: (Decimal, v)
            ),
            st.binary(max_size=40).map(lambda v: (bytes, v)),
        )
    )
    def test_text_forms_round_trip(self, case: tuple[Any, Any]) -> None:
        """Durations, decimals and bytes read back equal, through JSON."""
        tp, value = case
        text = json.dumps(unstructure_output(value))
        back = structure_value(json.loads(text), tp)
        assert back == value
        assert str(back) == str(value)

    @settings(max_examples=200, deadline=None)
    @given(JSON)
    def test_any_json_round_trips(self, value: Any) -> None:
        """JSON data unstructures to itself and structures back as Any."""
        assert unstructure_output(value) == value
        assert structure_value(value, Any) == value


# -- the route generated per tool ---------------------------------------------

_ROUTE_PARAMS = [
    Param("a", int),
    Param("b", str | None),
    Param("c", Literal["x", "y"]),
    Param("d", Any),
    Param("e", float | int),
    Param("f", bool, default=False),
]
_ROUTE_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(["x", "y", "z", ""])
    | st.lists(st.integers(), max_size=2)
)


def _outcome(run: Any, args: dict[str, object]) -> object:
    """What structuring *args* gives: the values and types, or the errors."""
    try:
        out = run(dict(args))
    except ToolArgumentsError as exc:
        return [str(error) for error in exc.errors]
    return [(k, v, type(v)) for k, v in out.items()]


class TestGeneratedRoute:
    """Each tool's own route for fully given arguments decides as the rest.

    ``structure`` is a function generated for the tool's parameters when
    each has types its check returns as they are; it only shortcuts the
    call that gives every argument, each of such a type.
    """

    def test_a_plain_tool_gets_its_own_route(self) -> None:
        """``add(a: int, b: int)`` is checked by a generated function."""
        structurer = make(a=int, b=int)
        assert structurer.structure is not structurer._general
        assert structurer.structure({"a": 1, "b": 2}) == {"a": 1, "b": 2}
        assert problems(structurer, {"a": 1, "b": True}) == [
            "b: expected an integer, got true"
        ]
        assert problems(structurer, {"a": 1, "c": 2}) == [
            "b: missing required argument (expected an integer)",
            "c: unexpected argument (allowed: a, b)",
        ]

    def test_types_that_always_need_their_check_get_none(self) -> None:
        """A constrained or structured parameter leaves the general path."""
        for tp in (Annotated[int, Ge(0)], list[int], Decimal):
            structurer = make(a=int, b=tp)
            assert structurer.structure == structurer._general

    def test_result_is_a_copy_unless_the_input_is_shared(self) -> None:
        """The caller may add to the result; with shares_input, not."""
        args = {"a": 1, "b": 2}
        assert make(a=int, b=int).structure(args) is not args
        shared = ArgumentStructurer(
            [Param("a", int), Param("b", int)], shares_input=True
        )
        assert shared.structure(args) is args

    @given(
        st.dictionaries(
            st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]),
            _ROUTE_VALUES,
        )
    )
    def test_route_general_and_full_paths_agree(
        self, args: dict[str, object]
    ) -> None:
        """Same values, same types, same errors, whichever path decides."""
        structurer = ArgumentStructurer(_ROUTE_PARAMS)
        assert structurer.structure is not structurer._general
        routed = _outcome(structurer.structure, args)
        assert routed == _outcome(structurer._general, args)
        assert routed == _outcome(structurer._structure, args)
