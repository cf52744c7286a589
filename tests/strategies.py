"""Shared Hypothesis strategies: generated tool signatures, schema instances.

* :func:`signatures` draws random parameter lists over the types toolctx
  supports (scalars, unions, literals, enums, containers, TypedDicts,
  attrs classes, dataclasses, ``Annotated``, nested), and
  :func:`build_function` turns one into a real function by ``exec`` of
  its source text, with the annotations naming the generated classes in
  the function's globals; :class:`Harness` registers it for dispatch.
* :data:`CONSTRAINED_TYPES` adds constraints (bounds, steps, lengths,
  patterns, in annotated-types' and pydantic's spellings) and
  :data:`PYDANTIC_TYPES`/:data:`MODELS` pydantic v2 models (fields of
  generated types, every ``extra`` setting, nested).
* :func:`from_schema` draws JSON instances of a JSON Schema, for exactly
  the subset of Draft 2020-12 that ``toolctx._schema`` (and pydantic)
  emits; :func:`near_schema` draws values at and beside its every bound,
  size and type, valid or not.
* :func:`mutation_sites` and :func:`mutate` break a valid instance in one
  way (a wrong type, a missing or extra key, ``true`` or ``"1"`` for a
  number, a value outside an enum, a duplicate set item, a value beyond
  a constraint), and say which argument path the validator should blame.
* :func:`conforms` checks a structured value against its Python type.

Why not hypothesis-jsonschema: its 0.23.1 release calls the private
``many.more()`` of Hypothesis, which Hypothesis 6.170.10 removed
(``AttributeError: 'many' object has no attribute 'more'``); it works with
``hypothesis<6.170.10`` only. Rather than hold Hypothesis back, this
module generates instances itself. It handles only the keywords our
schema generator writes and raises on any other, so a new keyword in
``toolctx._schema`` fails loudly here instead of being ignored; the tests
check every instance with ``jsonschema.Draft202012Validator`` (formats
included), so the generator is verified too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import itertools
import json
import keyword
import math
import re
import typing
import uuid

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union

import annotated_types
import attrs
import jsonschema
import pydantic

from hypothesis import strategies as st
from typing_extensions import NotRequired, Required, TypedDict, is_typeddict

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    tool,
)
from toolctx._types.schema import DECIMAL_PATTERN


NoneType = type(None)
DEFAULT: Any = type("Default", (), {"__repr__": lambda _: "DEFAULT"})()
"""The default of every optional parameter and field: not JSON, so the
schema has no ``default`` for it, and a value the tool can recognise."""

TOOL_NAME = "generated"
GENERATED_MODULE = "toolctx_generated"
"""The ``__module__`` of generated functions and classes: a module that
does not exist, so no one looks for their source (finding a class in a
module's source means parsing the whole module, once per class)."""
JsonPath = tuple[str | int, ...]

_counter = itertools.count()


def _fresh(prefix: str) -> str:
    """A class name no other generated class has."""
    return f"{prefix}{next(_counter)}"


# -- generated types ---------------------------------------------------------

_HASHABLE_CLASSES: set[type] = set()
_SCALAR_TYPES = (str, int, float, bool, NoneType, decimal.Decimal)
_FORMAT_TYPES = (dt.datetime, dt.date, dt.time, uuid.UUID)

IDENTIFIERS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name)
)
CONTEXT_FIELD_NAMES = (
    "invocation_id",
    "session_id",
    "turn",
    "user_id",
    "agent_id",
    "tool_name",
    "tool_call_id",
    "parent_invocation_id",
    "metadata",
    "state",
    "prior_results",
    "values",
    "scope",
    "ctx",
    "context",
)
PARAMETER_NAMES = st.sampled_from(CONTEXT_FIELD_NAMES) | IDENTIFIERS
"""Parameter names, often the name of a context field."""

_LITERAL_VALUES = (
    st.text(alphabet="abcxyz", max_size=3)
    | st.integers(-3, 3)
    | st.booleans()
    | st.none()
)
_ENUM_VALUES = (
    st.text(alphabet="abcxyz", max_size=3)
    | st.integers(-3, 3)
    | st.none()
    | st.sampled_from([0.5, -2.25, True])
)


def is_hashable(tp: Any) -> bool:
    """Whether every structured value of generated type *tp* is hashable."""
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp in _SCALAR_TYPES or tp in _FORMAT_TYPES or origin is Literal:
        return True
    if origin is Union:
        return all(map(is_hashable, args))
    if origin is tuple:
        return all(a is Ellipsis or is_hashable(a) for a in args)
    if origin is frozenset:
        return True  # its items are hashable by construction
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return True
    return tp in _HASHABLE_CLASSES


def _literal(values: Sequence[object]) -> Any:
    return Literal.__getitem__(tuple(values))


def _enum(values: Sequence[object]) -> type[enum.Enum]:
    members = [(f"m{i}", value) for i, value in enumerate(values)]
    return enum.Enum(_fresh("Enum"), members, module=GENERATED_MODULE)  # type: ignore[return-value]


def _union(members: list[Any]) -> Any:
    return Union.__getitem__(tuple(members))


LITERALS: st.SearchStrategy[Any] = st.lists(
    _LITERAL_VALUES, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)
).map(_literal)
"""``Literal`` types of str, int, bool and None values."""

ENUMS: st.SearchStrategy[Any] = st.lists(
    # unique=True compares with ==, so no two members alias (1 == True).
    _ENUM_VALUES,
    min_size=1,
    max_size=4,
    unique=True,
).map(_enum)
"""``Enum`` classes with str, int, float, bool and None values."""

LEAF_TYPES: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([str, int, float, bool, NoneType]),
    st.sampled_from([*_FORMAT_TYPES, Any]),
    LITERALS,
    ENUMS,
)
"""Types with no type arguments."""


@attrs.frozen
class Field:
    """One field of a generated class.

    Attributes:
        name: The field (and JSON property) name.
        annotation: Its type.
        required: Whether it has no default.
    """

    name: str
    annotation: Any
    required: bool


def _fields(
    children: st.SearchStrategy[Any],
) -> st.SearchStrategy[list[Field]]:
    return st.lists(
        st.builds(Field, IDENTIFIERS, children, st.booleans()),
        min_size=1,
        max_size=3,
        unique_by=lambda f: f.name,
    )


def _required_first(fields: list[Field]) -> list[Field]:
    return sorted(fields, key=lambda f: not f.required)


def _typeddict(fields: list[Field], total: bool) -> Any:
    annotations: dict[str, Any] = {}
    for f in fields:
        tp = f.annotation
        if f.required != total:
            tp = Required[tp] if f.required else NotRequired[tp]
        annotations[f.name] = tp
    cls: Any = TypedDict(_fresh("TD"), annotations, total=total)  # type: ignore[misc]
    cls.__module__ = GENERATED_MODULE
    return cls


def _dataclass(fields: list[Field], frozen: bool) -> type:
    spec: list[Any] = [
        (f.name, f.annotation)
        if f.required
        else (f.name, f.annotation, dataclasses.field(default=DEFAULT))
        for f in _required_first(fields)
    ]
    cls = dataclasses.make_dataclass(_fresh("DC"), spec, frozen=frozen)
    cls.__module__ = GENERATED_MODULE
    if frozen and all(is_hashable(f.annotation) for f in fields):
        _HASHABLE_CLASSES.add(cls)
    return cls


def _attrs_class(fields: list[Field], frozen: bool, private: bool) -> type:
    # A private name ("_x") gets the JSON key "x" (attrs' default alias).
    these = {
        ("_" if private else "") + f.name: attrs.field(type=f.annotation)
        if f.required
        else attrs.field(type=f.annotation, default=DEFAULT)
        for f in _required_first(fields)
    }
    cls = attrs.make_class(_fresh("AC"), these, frozen=frozen)
    cls.__module__ = GENERATED_MODULE
    if frozen and all(is_hashable(f.annotation) for f in fields):
        _HASHABLE_CLASSES.add(cls)
    return cls


def _extend(
    children: st.SearchStrategy[Any], *, with_attrs: bool = True
) -> st.SearchStrategy[Any]:
    """Types built from *children*: containers, unions and classes.

    With *with_attrs* False, no attrs classes (pydantic has no schema
    for them).
    """
    hashable = children.filter(is_hashable)
    attrs_classes = st.builds(
        _attrs_class, _fields(children), st.booleans(), st.booleans()
    )
    return st.one_of(
        children.map(lambda t: list[t]),  # type: ignore[valid-type]
        children.map(lambda t: tuple[t, ...]),  # type: ignore[valid-type]
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: tuple.__class_getitem__(tuple(ts))
        ),
        hashable.map(lambda t: set[t]),  # type: ignore[valid-type]
        hashable.map(lambda t: frozenset[t]),  # type: ignore[valid-type]
        children.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        children.map(lambda t: typing.Optional[t]),  # noqa: UP045
        children.map(lambda t: Annotated[t, "A description."]),
        st.lists(children, min_size=2, max_size=3).map(_union),
        st.builds(_typeddict, _fields(children), st.booleans()),
        st.builds(_dataclass, _fields(children), st.booleans()),
        *([attrs_classes] if with_attrs else []),
    )


TYPES: st.SearchStrategy[Any] = st.recursive(LEAF_TYPES, _extend, max_leaves=5)
"""Any supported parameter type, nesting bounded."""


# -- constrained types -------------------------------------------------------

PATTERNS = ("^[ab]", "[01]$", "^[a-c0-9]+$", "b")
"""The ``pattern`` constraints drawn: simple, and read the same as
ECMA-262 (toolctx) and by Python's ``re`` (jsonschema), for strings
without line breaks."""
PATTERN_ALPHABET = "abc01x"
"""The characters of strings drawn for a ``pattern``: each pattern
matches many of them, and misses many."""


def _annotated(tp: Any, metadata: Sequence[object]) -> Any:
    """``Annotated[tp, *metadata]``."""
    arguments = (tp, *metadata)
    return Annotated[arguments]


@st.composite
def _metadata(
    draw: st.DrawFn, bounds_strategy: st.SearchStrategy[dict[str, Any]]
) -> list[object]:
    """Drawn bounds (``Field`` arguments), in one of their spellings.

    annotated-types objects one by one (``Ge``, ``MaxLen``...),
    grouped (``Interval``, ``Len``), pydantic ``Field(...)``, or, for
    strings, pydantic ``StringConstraints(...)``.
    """
    bounds = draw(bounds_strategy)
    spelling = draw(_SPELLINGS)
    if spelling == "field":
        return [pydantic.Field(**bounds)]
    interval = {k: v for k, v in bounds.items() if k in _INTERVAL}
    lengths = {k: v for k, v in bounds.items() if k in _LENGTHS}
    others = [
        _SEPARATE[k](v)
        for k, v in bounds.items()
        if k not in _INTERVAL and k not in _LENGTHS
    ]
    if spelling == "separate" or (not interval and not lengths):
        return [
            *(_SEPARATE[k](v) for k, v in interval.items()),
            *(_SEPARATE[k](v) for k, v in lengths.items()),
            *others,
        ]
    grouped: list[object] = []
    if interval:
        grouped.append(annotated_types.Interval(**interval))
    if lengths:
        low = lengths.get("min_length", 0)
        high = lengths.get("max_length")
        pattern = bounds.get("pattern")
        if pattern is not None and draw(st.booleans()):
            grouped.append(
                pydantic.StringConstraints(
                    min_length=low, max_length=high, pattern=pattern
                )
            )
            others = []
        else:
            grouped.append(annotated_types.Len(low, high))
    return [*grouped, *others]


_SPELLINGS = st.sampled_from(["separate", "grouped", "field"])
_LOWER = st.sampled_from(["ge", "gt", None])
_UPPER = st.sampled_from(["le", "lt", None])
_MAYBE = st.booleans()
_INTERVAL = frozenset({"gt", "ge", "lt", "le"})
_LENGTHS = frozenset({"min_length", "max_length"})
_SEPARATE: dict[str, Callable[[Any], object]] = {
    "gt": annotated_types.Gt,
    "ge": annotated_types.Ge,
    "lt": annotated_types.Lt,
    "le": annotated_types.Le,
    "multiple_of": annotated_types.MultipleOf,
    "min_length": annotated_types.MinLen,
    "max_length": annotated_types.MaxLen,
    "pattern": lambda p: pydantic.Field(pattern=p),
}


def _bounds(
    scale: str,
    steps: Sequence[Any],
    numbers: Sequence[Callable[[decimal.Decimal], Any]],
) -> st.SearchStrategy[dict[str, Any]]:
    """Satisfiable bounds: some multiple of the step lies in between.

    The bounds are multiples of the decimal *scale*, made one of
    *numbers* (``int``, ``float``, ``Decimal``); the step is one of
    *steps*, or none.
    """
    unit = decimal.Decimal(scale)
    step_strategy = st.none() | st.sampled_from(steps) if steps else st.none()
    number_strategy = st.sampled_from(numbers)

    @st.composite
    def bounds(draw: st.DrawFn) -> dict[str, Any]:
        number = draw(number_strategy)
        low = draw(_BOUND_UNITS) * unit
        width = draw(_WIDTH_UNITS) * unit
        step = draw(step_strategy)
        if step is not None:
            width = max(width, 2 * decimal.Decimal(str(step)) + unit)
        found: dict[str, Any] = {}
        lower = draw(_LOWER)
        upper = draw(_UPPER)
        if lower is not None:
            found[lower] = number(low)
        if upper is not None:
            found[upper] = number(low + width)
        if step is not None:
            found["multiple_of"] = step
        return found or {"ge": number(low)}

    return bounds()


_BOUND_UNITS = st.integers(-6, 6)
_WIDTH_UNITS = st.integers(2, 8)


@st.composite
def _lengths(draw: st.DrawFn, most: int = 2) -> dict[str, Any]:
    """A minimum length up to *most*, a maximum at or above it."""
    low = draw(st.integers(0, most))
    high = draw(st.integers(low, low + 3)) if draw(_MAYBE) else None
    bounds: dict[str, Any] = {}
    if low or high is None:
        bounds["min_length"] = low
    if high is not None:
        bounds["max_length"] = high
    return bounds


def _constrained(
    types: st.SearchStrategy[Any], bounds: st.SearchStrategy[dict[str, Any]]
) -> st.SearchStrategy[Any]:
    """``Annotated[T, ...]``: a drawn type with drawn bounds."""
    return st.builds(_annotated, types, _metadata(bounds))


@st.composite
def _string_bounds(draw: st.DrawFn) -> dict[str, Any]:
    """Lengths and maybe a pattern, satisfiable together."""
    bounds = draw(_lengths())
    pattern = draw(st.none() | st.sampled_from(PATTERNS))
    if pattern is not None:
        bounds["pattern"] = pattern
        bounds["min_length"] = max(bounds.get("min_length", 0), 1)
        if bounds.get("max_length", 1) < 1:
            bounds["max_length"] = 1
    return bounds


def constrained_leaves(
    *,
    float_steps: Sequence[float] = (0.5, 0.25, 2),
    decimals: bool = True,
) -> st.SearchStrategy[Any]:
    """Constrained ``int``, ``float``, ``str`` and ``Decimal`` types.

    Bounds, steps, lengths and patterns, in every spelling. Float steps
    are exact binary fractions, so a multiple is the same number whether
    divided as a decimal (toolctx) or a binary float (jsonschema);
    pydantic's models check float steps with a tolerance of their own,
    so model fields take ``float_steps=()``, and no ``Decimal`` (inside
    a model, pydantic's rules for it stay). A ``Decimal``'s bounds are
    ``Decimal`` or ``float`` numbers, tenths (``0.3``, which a binary
    float only comes close to).
    """
    leaves = [
        _constrained(st.just(int), _bounds("1", (2, 3), (int,))),
        _constrained(st.just(float), _bounds("0.5", float_steps, (float,))),
        _constrained(st.just(str), _string_bounds()),
    ]
    if decimals:
        decimal_bounds = _bounds(
            "0.1", (decimal.Decimal("0.25"), 0.5, 2), (decimal.Decimal, float)
        )
        leaves.append(_constrained(st.just(decimal.Decimal), decimal_bounds))
    return st.one_of(leaves)


CONSTRAINED_LEAVES = constrained_leaves()
"""Constrained scalar types (see :func:`constrained_leaves`)."""


def _sized(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Containers of *children* with a minimum and/or maximum size."""
    lengths = _lengths()
    return st.one_of(
        _constrained(children.map(lambda t: list[t]), lengths),  # type: ignore[valid-type]
        _constrained(children.map(lambda t: tuple[t, ...]), lengths),  # type: ignore[valid-type]
        _constrained(children.map(lambda t: dict[str, t]), lengths),  # type: ignore[valid-type]
        # at least one item: a set of a type of one value is satisfiable
        _constrained(_sets(children), _lengths(1)),
    )


def _sets(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``set[T]`` and ``frozenset[T]`` of hashable types.

    The item types are leaves (constrained or not) or the hashable
    types *children* draws; most drawn types are not hashable, so
    filtering *children* alone would reject most draws.
    """
    return st.builds(
        lambda t, frozen: frozenset[t] if frozen else set[t],  # type: ignore[valid-type]
        st.one_of(
            LEAF_TYPES.filter(is_hashable),  # not Any
            constrained_leaves(float_steps=(), decimals=False),
            children.filter(is_hashable),
        ),
        st.booleans(),
    )


def _extend_constrained(
    children: st.SearchStrategy[Any],
) -> st.SearchStrategy[Any]:
    """:func:`_extend`, and sized containers as often as the others."""
    return st.one_of(_extend(children), _sized(children))


CONSTRAINED_TYPES: st.SearchStrategy[Any] = st.recursive(
    CONSTRAINED_LEAVES | LEAF_TYPES, _extend_constrained, max_leaves=4
)
"""Any supported type, constraints included, nesting bounded."""


# -- pydantic models -----------------------------------------------------------

MODEL_FIELD_NAMES = IDENTIFIERS.filter(
    lambda name: (
        not name.startswith("model_") and not hasattr(pydantic.BaseModel, name)
    )
)
"""Field names pydantic takes without a warning (none shadows a
``BaseModel`` attribute)."""
EXTRA_SETTINGS = (None, "ignore", "forbid", "allow")
"""A model's ``extra``: None leaves pydantic's default (``"ignore"``)."""


def _model(
    fields: list[Field], extra: str | None, frozen: bool
) -> type[pydantic.BaseModel]:
    config = pydantic.ConfigDict(frozen=frozen)
    if extra is not None:
        config["extra"] = extra  # type: ignore[typeddict-item]
    spec: dict[str, Any] = {
        f.name: (f.annotation, ... if f.required else DEFAULT) for f in fields
    }
    cls = pydantic.create_model(
        _fresh("PM"), __config__=config, __module__=GENERATED_MODULE, **spec
    )
    if frozen and all(is_hashable(f.annotation) for f in fields):
        _HASHABLE_CLASSES.add(cls)
    return cls  # type: ignore[no-any-return]


def _models(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Pydantic v2 models with fields of the types *children* draws."""
    fields = st.lists(
        st.builds(Field, MODEL_FIELD_NAMES, children, st.booleans()),
        min_size=1,
        max_size=3,
        unique_by=lambda f: f.name,
    )
    return st.builds(
        _model, fields, st.sampled_from(EXTRA_SETTINGS), st.booleans()
    )


_MODEL_LEAVES = constrained_leaves(float_steps=(), decimals=False) | LEAF_TYPES


def _extend_pydantic(
    children: st.SearchStrategy[Any],
) -> st.SearchStrategy[Any]:
    """Types pydantic takes as fields: no attrs classes; models nest."""
    return st.one_of(
        _extend(children, with_attrs=False),
        _sized(children),
        _models(children),
        _models(children),
    )


PYDANTIC_TYPES: st.SearchStrategy[Any] = st.recursive(
    _MODEL_LEAVES, _extend_pydantic, max_leaves=4
)
"""Types pydantic models take as fields, models among them."""

MODELS: st.SearchStrategy[Any] = _models(PYDANTIC_TYPES)
"""pydantic v2 models (``create_model``): fields of generated types,
required or defaulting to ``DEFAULT``, every ``extra`` setting, frozen
or not, models nested in fields, containers and classes."""


def _required_field_class(inner: Any) -> st.SearchStrategy[Any]:
    field = Field("n", inner, required=True)
    return st.one_of(
        st.just(_typeddict([field], total=True)),
        st.builds(_dataclass, st.just([field]), st.booleans()),
        st.builds(
            _attrs_class, st.just([field]), st.booleans(), st.booleans()
        ),
    )


NUMERIC_TYPES: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([int, float, int | None, tuple[int, str]]),
    st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(
        _literal
    ),
    st.sampled_from([int, float]).flatmap(_required_field_class),
)
"""Types whose generated instances always hold a number somewhere."""

ENUM_TYPES: st.SearchStrategy[Any] = st.builds(
    lambda t, i: (t, tuple[t, int], list[t])[i],  # type: ignore[valid-type]
    LITERALS | ENUMS,
    st.integers(0, 2),
)
"""Types whose instances always hold a ``Literal`` or enum value."""

SET_TYPES: st.SearchStrategy[Any] = _sets(TYPES)
"""``set``/``frozenset`` types of hashable items."""


def models_holding(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Models with a required field ``n`` of a type *inner* draws.

    Zero to two more fields of :data:`PYDANTIC_TYPES`, any ``extra``.
    """
    others = st.lists(
        st.builds(
            Field,
            MODEL_FIELD_NAMES.filter(lambda name: name != "n"),
            PYDANTIC_TYPES,
            st.booleans(),
        ),
        max_size=2,
        unique_by=lambda f: f.name,
    )
    return st.builds(
        lambda first, rest, extra, frozen: _model(
            [first, *rest], extra, frozen
        ),
        inner.map(lambda tp: Field("n", tp, required=True)),
        others,
        st.sampled_from(EXTRA_SETTINGS),
        st.booleans(),
    )


_CONSTRAINED_NUMBERS = CONSTRAINED_LEAVES.filter(
    lambda tp: _unwrap(tp) is not str
)
CONSTRAINED_MUTATION_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "wrong_type": CONSTRAINED_LEAVES,
    "missing_key": CONSTRAINED_LEAVES,
    "extra_key": CONSTRAINED_LEAVES,
    "bool_for_number": _CONSTRAINED_NUMBERS,
    "string_for_number": _CONSTRAINED_NUMBERS,
    "out_of_enum": ENUM_TYPES,
    "duplicate_item": _constrained(_sets(CONSTRAINED_TYPES), _lengths(1)),
    "out_of_bounds": CONSTRAINED_LEAVES | CONSTRAINED_TYPES,
}
"""For each mutation, constrained types that make it possible."""

_MODEL_NUMERIC_TYPES = st.one_of(
    st.sampled_from([int, float, int | None, tuple[int, str]]),
    st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(
        _literal
    ),
    constrained_leaves(float_steps=(), decimals=False).filter(
        lambda tp: _unwrap(tp) is not str
    ),
)
MODEL_MUTATION_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "wrong_type": MODELS,
    "missing_key": MODELS,
    "extra_key": MODELS,
    "bool_for_number": models_holding(_MODEL_NUMERIC_TYPES),
    "string_for_number": models_holding(_MODEL_NUMERIC_TYPES),
    "out_of_enum": models_holding(ENUM_TYPES),
    "duplicate_item": models_holding(_sets(PYDANTIC_TYPES)),
    "out_of_bounds": models_holding(
        constrained_leaves(float_steps=(), decimals=False)
        | _sized(PYDANTIC_TYPES)
    ),
}
"""For each mutation, models that make it possible (see
:data:`MUTATION_TYPES`)."""


# -- signatures and functions ------------------------------------------------


@attrs.frozen
class Parameter:
    """One parameter of a generated tool function.

    Attributes:
        name: The parameter name.
        annotation: Its type.
        required: Whether it has no default (else its default is DEFAULT).
        kw_only: Whether it is keyword-only.
    """

    name: str
    annotation: Any
    required: bool
    kw_only: bool


@attrs.frozen
class Signature:
    """A generated tool signature.

    Attributes:
        parameters: The model-visible parameters, in signature order.
        context_parameter: The name of a parameter annotated
            ``ExecutionContext``, or None.
        context_index: Where the context parameter sits among the
            required positional parameters (or keyword-only ones).
    """

    parameters: tuple[Parameter, ...]
    context_parameter: str | None = None
    context_index: int = 0

    def annotation(self, name: str) -> Any:
        """The annotation of the model-visible parameter *name*."""
        return next(p.annotation for p in self.parameters if p.name == name)


def _ordered(params: list[Parameter]) -> tuple[Parameter, ...]:
    """Legal Python order: positional required, positional optional, kw."""
    positional = [p for p in params if not p.kw_only]
    positional.sort(key=lambda p: not p.required)
    return (*positional, *(p for p in params if p.kw_only))


@st.composite
def signatures(
    draw: st.DrawFn,
    must_include: st.SearchStrategy[Any] | None = None,
    types: st.SearchStrategy[Any] = TYPES,
    most: int = 4,
) -> Signature:
    """Draw a signature: 0-4 parameters, maybe a context parameter.

    Args:
        draw: Hypothesis's draw function.
        must_include: Also add a required parameter of a type drawn from
            this strategy (so a particular kind of value is present).
        types: The parameter types.
        most: At most this many parameters (besides *must_include*).
    """
    names = draw(
        st.lists(PARAMETER_NAMES, min_size=0, max_size=most + 1, unique=True)
    )
    context_parameter: str | None = None
    with_context = draw(st.booleans())
    if names and with_context:
        context_parameter = names.pop()
    params = [
        Parameter(name, draw(types), draw(st.booleans()), draw(st.booleans()))
        for name in names[:most]
    ]
    if must_include is not None:
        name = draw(PARAMETER_NAMES.filter(lambda n: n not in names))
        if name == context_parameter:
            context_parameter = None
        params.insert(
            draw(st.integers(0, len(params))),
            Parameter(name, draw(must_include), True, draw(st.booleans())),
        )
    return Signature(
        _ordered(params), context_parameter, draw(st.integers(0, 5))
    )


def parameter_list(signature: Signature, namespace: dict[str, Any]) -> str:
    """The parameter list source of *signature*, e.g. ``a: T0, *, b: T1``.

    Every annotation is a name (``T0``, ``T1``...) bound in *namespace*
    (the function's globals), so ``typing.get_type_hints`` resolves them
    as it would module-level classes; optional parameters default to
    ``_DEFAULT`` and the context parameter is ``_Context``, both bound
    here too.
    """
    namespace["_DEFAULT"] = DEFAULT
    namespace["_Context"] = ExecutionContext
    positional: list[str] = []
    keyword_only: list[str] = []
    for i, p in enumerate(signature.parameters):
        namespace[f"T{i}"] = p.annotation
        text = f"{p.name}: T{i}" + ("" if p.required else " = _DEFAULT")
        (keyword_only if p.kw_only else positional).append(text)
    if signature.context_parameter is not None:
        text = f"{signature.context_parameter}: _Context"
        required = [t for t in positional if "=" not in t]
        if signature.context_index % 2:
            keyword_only.insert(0, text)
        else:
            positional.insert(
                signature.context_index % (len(required) + 1), text
            )
    params = positional + (["*", *keyword_only] if keyword_only else [])
    return ", ".join(params)


def build_function(
    signature: Signature, capture: Callable[[dict[str, Any]], None]
) -> Callable[..., None]:
    """Return a real function with *signature* that passes its arguments on.

    The function is made by ``exec`` of its source text (parameters from
    :func:`parameter_list`). The body calls ``capture(locals())``.
    """
    namespace: dict[str, Any] = {
        "__name__": GENERATED_MODULE,
        "_capture": capture,
    }
    source = (
        f"def {TOOL_NAME}({parameter_list(signature, namespace)}) -> None:\n"
        "    _capture(dict(locals()))\n"
    )
    exec(source, namespace)  # noqa: S102 - our own generated source
    return namespace[TOOL_NAME]  # type: ignore[no-any-return]


class Harness:
    """A generated tool, registered and ready to dispatch.

    Attributes:
        signature: The tool's generated signature.
        calls: The arguments of every call that reached the function.
        tool: The decorated function.
        schema: Its ``parameters`` JSON Schema.
        dispatcher: A dispatcher of a registry holding only the tool.
    """

    def __init__(self, signature: Signature) -> None:
        self.signature = signature
        self.calls: list[dict[str, Any]] = []
        self.tool = tool(build_function(signature, self.calls.append))
        self.schema = dict(self.tool.definition().parameters)
        self.dispatcher = Dispatcher(Registry([self.tool]))

    def dispatch(self, instance: object) -> ToolResult:
        """Send *instance* as the model would: JSON text."""
        return self.dispatcher.dispatch(
            ToolCall(TOOL_NAME, json.dumps(instance), id="call-1"),
            ExecutionContext(user_id="host-user"),
        )


# -- checking structured values ----------------------------------------------


def _unwrap(tp: Any) -> Any:
    """*tp* without ``Annotated``, ``Required`` and ``NotRequired``."""
    while typing.get_origin(tp) in {Required, NotRequired, Annotated}:
        tp = typing.get_args(tp)[0]
    return tp


def conforms(  # noqa: PLR0912
    value: object, tp: Any, *, open_dicts: bool = False
) -> bool:
    """Whether *value* is exactly of the generated type *tp*.

    Exact types: an ``int`` parameter gets an ``int`` (never a ``bool``
    or ``float``), a ``float`` one a ``float``, a ``frozenset`` one a
    ``frozenset``; class fields left out hold ``DEFAULT``.

    With *open_dicts*, a TypedDict may hold keys it does not declare:
    inside a pydantic model with ``extra="allow"``, pydantic applies
    that setting to the TypedDicts and dataclasses the model holds (and
    its schema says so), up to the next model.
    """

    def inner(item: object, hint: Any) -> bool:
        return conforms(item, hint, open_dicts=open_dicts)

    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return True
    if tp is NoneType:
        return value is None
    if tp in _SCALAR_TYPES or tp in _FORMAT_TYPES:
        return type(value) is tp
    if origin is Union:
        return any(inner(value, arg) for arg in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin in {list, set, frozenset}:
        return type(value) is origin and all(
            inner(v, args[0])
            for v in value  # type: ignore[attr-defined]
        )
    if origin is tuple:
        if type(value) is not tuple:
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(inner(v, args[0]) for v in value)
        return len(value) == len(args) and all(map(inner, value, args))
    if origin is dict:
        return type(value) is dict and all(
            type(k) is str and inner(v, args[1]) for k, v in value.items()
        )
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return (
            type(value) is dict
            and (open_dicts or set(value) <= set(hints))
            and tp.__required_keys__ <= set(value)
            and all(inner(v, hints[k]) for k, v in value.items() if k in hints)
        )
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return type(value) is tp
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        allow = tp.model_config.get("extra") == "allow"
        return type(value) is tp and all(
            (getattr(value, name) is DEFAULT)
            or conforms(
                getattr(value, name), field.annotation, open_dicts=allow
            )
            for name, field in tp.model_fields.items()
        )
    if attrs.has(tp) or dataclasses.is_dataclass(tp):
        if type(value) is not tp:
            return False
        hints = typing.get_type_hints(tp)
        return all(
            (getattr(value, name) is DEFAULT)
            or inner(getattr(value, name), hint)
            for name, hint in hints.items()
        )
    msg = f"conforms() does not know the type {tp!r}"
    raise AssertionError(msg)


# -- JSON values ---------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    JSON_SCALARS,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.text(max_size=4), c, max_size=3)
    ),
    max_leaves=6,
)
"""Any JSON value (bounded), for ``{}`` schemas."""


def json_key(value: object) -> object:
    """A hashable key, equal for values JSON Schema calls equal.

    ``1`` and ``1.0`` are equal; ``true`` and ``1`` are not.
    """
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(map(json_key, value)))
    if isinstance(value, dict):
        return (
            "object",
            frozenset((k, json_key(v)) for k, v in value.items()),
        )
    return (type(value).__name__, value)


# -- formats -------------------------------------------------------------------

# RFC 3339, which JSON Schema's date-time, date and time formats follow,
# within what Python's datetime holds (and rfc3339-validator accepts):
# years 0001-9999, no leap second (":60").
_OFFSETS = st.sampled_from(["Z", "z"]) | st.builds(
    "{}{:02d}:{:02d}".format,
    st.sampled_from("+-"),
    st.integers(0, 23),
    st.integers(0, 59),
)
_FRACTIONS = st.just("") | st.from_regex(r"\.[0-9]{1,9}", fullmatch=True)
_DATES = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)).map(
    lambda d: d.isoformat()
)
_TIMES = st.builds(
    "{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    _FRACTIONS,
    _OFFSETS,
)
FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date": _DATES,
    "time": _TIMES,
    "date-time": st.builds(
        "{}{}{}".format, _DATES, st.sampled_from("Tt"), _TIMES
    ),
    "uuid": st.builds(
        lambda u, upper: str(u).upper() if upper else str(u),
        st.uuids(),
        st.booleans(),
    ),
}
"""String formats the schema generator writes, and their strategies."""

_RFC3339_TIME = re.compile(
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    re.IGNORECASE,
)


def _rfc3339_date(text: str) -> bool:
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) is None:
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _rfc3339_time(instance: object) -> bool:
    if not isinstance(instance, str):
        return True  # formats only constrain strings
    return _RFC3339_TIME.fullmatch(instance) is not None


def _rfc3339_datetime(instance: object) -> bool:
    if not isinstance(instance, str):
        return True  # formats only constrain strings
    date, sep, time = instance[:10], instance[10:11], instance[11:]
    return sep in {"T", "t"} and _rfc3339_date(date) and _rfc3339_time(time)


def format_checker() -> jsonschema.FormatChecker:
    """Return jsonschema's Draft 2020-12 format checker, gaps filled.

    jsonschema checks ``date-time`` and ``time`` only when the optional
    ``rfc3339-validator`` package is installed; without it, RFC 3339
    checks written from the RFC's grammar stand in, so that every format
    the schema generator writes is really checked.
    """
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers.update(
        jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    )
    if "date-time" not in checker.checkers:
        checker.checks("date-time")(_rfc3339_datetime)
    if "time" not in checker.checkers:
        checker.checks("time")(_rfc3339_time)
    return checker


FORMAT_CHECKER = format_checker()


def validator(schema: Mapping[str, Any]) -> jsonschema.Draft202012Validator:
    """A Draft 2020-12 validator for *schema* that checks formats."""
    return jsonschema.Draft202012Validator(
        schema, format_checker=FORMAT_CHECKER
    )


# -- instances from a schema -----------------------------------------------------

_KNOWN_KEYWORDS = frozenset(
    {
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "const",
        "default",
        "description",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "pattern",
        "prefixItems",
        "properties",
        "required",
        "title",
        "type",
        "uniqueItems",
    }
)
_NUMBER_KEYWORDS = frozenset(
    {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}
)


@attrs.frozen
class _Range:
    """The numbers a schema's bounds allow: ``low <= x <= high``."""

    low: float | None = None
    high: float | None = None
    exclude_low: bool = False
    exclude_high: bool = False

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> _Range:
        """The range of *schema*'s bound keywords."""
        if "minimum" in schema and "exclusiveMinimum" in schema:
            msg = "from_schema() handles one lower bound"
            raise ValueError(msg)
        if "maximum" in schema and "exclusiveMaximum" in schema:
            msg = "from_schema() handles one upper bound"
            raise ValueError(msg)
        return cls(
            schema.get("minimum", schema.get("exclusiveMinimum")),
            schema.get("maximum", schema.get("exclusiveMaximum")),
            "exclusiveMinimum" in schema,
            "exclusiveMaximum" in schema,
        )

    def __contains__(self, value: float) -> bool:
        if self.low is not None and (
            value <= self.low if self.exclude_low else value < self.low
        ):
            return False
        return self.high is None or (
            value < self.high if self.exclude_high else value <= self.high
        )

    def multiples(self, step: float) -> st.SearchStrategy[float]:
        """The multiples of *step* in the range (exact for our steps)."""
        low = None if self.low is None else math.floor(self.low / step) - 1
        high = None if self.high is None else math.ceil(self.high / step) + 1
        if low is None:
            low = (40 if high is None else high) - 80
        if high is None:
            high = low + 80
        return (
            st.integers(low, high)
            .map(lambda k: k * step)
            .filter(lambda v: v in self)
        )

    def edges(self) -> list[float]:
        """The bounds."""
        return [edge for edge in (self.low, self.high) if edge is not None]

    def inclusive_edges(self) -> list[float]:
        """The bounds that are in the range."""
        return [edge for edge in self.edges() if edge in self]


class _Instances:
    """Builds instance strategies for one schema document."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.refs: dict[str, st.SearchStrategy[Any]] = {}

    def ref(self, ref: str) -> st.SearchStrategy[Any]:
        name = ref.removeprefix("#/$defs/")
        if name not in self.refs:
            self.refs[name] = st.deferred(lambda: self.of(self.defs[name]))
        return self.refs[name]

    def of(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:  # noqa: PLR0912
        unknown = set(schema) - _KNOWN_KEYWORDS
        if unknown:
            msg = (
                f"from_schema() does not handle {sorted(unknown)} in {schema}"
            )
            raise ValueError(msg)
        if "$ref" in schema:
            return self.ref(schema["$ref"])
        if "enum" in schema:
            return self.options(schema["enum"])
        if "const" in schema:
            return self.options([schema["const"]])
        number = decimal_number(schema)
        if number is not None:
            return self.decimal(number)
        if "anyOf" in schema:
            return st.one_of([self.of(s) for s in schema["anyOf"]])
        kind = schema.get("type")
        if kind is None:
            return JSON_VALUES
        if kind == "string":
            return self.string(schema)
        if kind in {"integer", "number"}:
            return self.number(schema, integer=kind == "integer")
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "array":
            return self.array(schema)
        if kind == "object":
            return self.object(schema)
        msg = f"from_schema() does not handle the type {kind!r}"
        raise ValueError(msg)

    def options(self, values: list[object]) -> st.SearchStrategy[Any]:
        return _json_equal(st.sampled_from(values))

    def decimal(self, number: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        """A ``Decimal``: a number of its bounds, or the number's text.

        The schema bounds only the number; toolctx bounds the text too
        (a documented difference), so the text is of a bounded number.
        """
        numbers = _Instances.number(self, number, integer=False)
        return numbers | numbers.map(_decimal_text)

    def string(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        fmt = schema.get("format")
        if fmt is not None:
            return FORMATS[fmt]
        low = schema.get("minLength", 0)
        high = schema.get("maxLength", low + 6)
        pattern = schema.get("pattern")
        if pattern is None:
            return st.text(min_size=low, max_size=high)
        # Not .filter(regex.search): Hypothesis rewrites that filter into
        # from_regex(), which leaves the alphabet (and draws "0\n" for
        # "[01]$").
        regex = re.compile(pattern)
        return st.text(PATTERN_ALPHABET, min_size=low, max_size=high).filter(
            lambda text: regex.search(text) is not None
        )

    def number(
        self, schema: Mapping[str, Any], *, integer: bool
    ) -> st.SearchStrategy[Any]:
        step = schema.get("multipleOf")
        if step is None and not _NUMBER_KEYWORDS & set(schema):
            if integer:
                return st.integers(-(2**53), 2**53) | st.integers(-99, 99).map(
                    float
                )
            return st.integers(-(2**53), 2**53) | st.floats(
                allow_nan=False, allow_infinity=False
            )
        bounds = _Range.of(schema)
        if step is not None:
            if integer and type(step) is not int:
                msg = "from_schema() handles integer steps for integers"
                raise ValueError(msg)
            numbers = bounds.multiples(step)
        else:
            numbers = bounds.multiples(1)
            edges = [
                edge
                for edge in bounds.inclusive_edges()
                if not integer or float(edge).is_integer()
            ]
            if edges:  # the bound itself, exactly
                numbers |= st.sampled_from(edges)
            if not integer:
                numbers |= st.floats(
                    bounds.low,
                    bounds.high,
                    exclude_min=bounds.exclude_low and bounds.low is not None,
                    exclude_max=bounds.exclude_high
                    and bounds.high is not None,
                    allow_nan=False,
                    allow_infinity=False,
                )
        return _json_equal(numbers)

    def array(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        if "prefixItems" in schema:
            prefix = [self.of(s) for s in schema["prefixItems"]]
            if schema.get("items", True) is not False and schema.get(
                "maxItems"
            ) != len(prefix):
                msg = "from_schema() handles closed prefixItems only"
                raise ValueError(msg)
            return st.tuples(*prefix).map(list)
        low = schema.get("minItems", 0)
        high = max(low, min(schema.get("maxItems", 3), 3))
        items = schema.get("items", {})
        return st.lists(
            self.of(items),
            min_size=low,
            max_size=high,
            unique_by=json_key if schema.get("uniqueItems") else None,
        )

    def object(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", {})
        low = schema.get("minProperties", 0)
        high = schema.get("maxProperties", max(low, 3))
        if properties and {"minProperties", "maxProperties"} & set(schema):
            msg = "from_schema() handles property counts of mappings only"
            raise ValueError(msg)
        fixed = st.fixed_dictionaries(
            {k: self.of(properties[k]) for k in required},
            optional={
                k: self.of(v)
                for k, v in properties.items()
                if k not in required
            },
        )
        if extra is False:
            return fixed
        more = st.dictionaries(
            st.text(max_size=4).filter(lambda k: k not in properties),
            JSON_VALUES if extra is True else self.of(extra),
            min_size=low,
            max_size=high,
        )
        return st.builds(lambda a, b: {**b, **a}, fixed, more)


def decimal_number(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The number member of a ``Decimal``'s schema, or None.

    toolctx writes a ``Decimal`` as ``anyOf`` a number (its bounds on it)
    and a string of :data:`~toolctx._types.schema.DECIMAL_PATTERN`.
    """
    members = schema.get("anyOf")
    if (
        isinstance(members, list)
        and len(members) == 2
        and members[0].get("type") == "number"
        and members[1] == {"type": "string", "pattern": DECIMAL_PATTERN}
    ):
        return members[0]  # type: ignore[no-any-return]
    return None


def _decimal_text(value: object) -> str:
    """The decimal text of a number (``"0.25"``, ``"1e-05"``, ``"3"``)."""
    return repr(value) if isinstance(value, float) else str(value)


def _json_equal(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The values drawn, or JSON-equal spellings of them (``1.0``, ``1``)."""
    return st.builds(_spelled, values, st.booleans())


def _spelled(value: object, as_float: bool) -> object:
    """*value*, or (*as_float*) the float of an integer: JSON-equal."""
    if as_float and type(value) is int and abs(value) <= 2**53:
        return float(value)
    return value


def from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Draw JSON instances of *schema* (the subset toolctx writes).

    Handles ``type``, ``enum``, ``const``, ``anyOf``, ``$ref``/``$defs``,
    ``properties``/``required``/``additionalProperties``, ``items``/
    ``prefixItems``/``minItems``/``maxItems``/``uniqueItems``, the
    bounds (``minimum``, ``exclusiveMaximum``... and ``multipleOf``),
    ``minLength``/``maxLength``/``pattern``, ``minProperties``/
    ``maxProperties``, and the ``date-time``, ``date``, ``time`` and
    ``uuid`` formats; ``title``, ``description`` and ``default`` are
    ignored, and any other keyword raises ``ValueError``. Sizes are kept
    small; a ``pattern`` is met by filtering strings of
    :data:`PATTERN_ALPHABET`.
    """
    return _Instances(schema.get("$defs", {})).of(schema)


# -- instances near a schema ---------------------------------------------------

_WRONG: list[object] = [None, True, 0, 1.5, "x", [], {}]
_WRONG_VALUES = st.sampled_from([*_WRONG, "1"])
_WRONG_NOT_DECIMAL = st.sampled_from(_WRONG)
_NEAR_NUMBERS = (
    st.integers(-20, 20)
    | st.integers(-40, 40).map(lambda k: k / 4)
    | st.floats(-25, 25)
)


class _Near(_Instances):
    """Values on both sides of every constraint and type of a schema.

    Each node is, most of the time, what the schema describes with its
    constraints loosened (numbers at and beside the bounds, strings,
    arrays and objects one shorter or longer than allowed, repeated set
    items, missing and unknown keys), and otherwise a value of some other
    JSON type. Numbers stay small: far from zero, a float's shortest
    decimal text and its binary value disagree on ``multipleOf``.
    """

    def of(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        near = super().of(schema)
        if "$ref" in schema:
            return near  # the definition itself is near already
        # "1" is a Decimal's text, which the schema does not bound
        decimal_schema = decimal_number(schema) is not None
        wrong = _WRONG_NOT_DECIMAL if decimal_schema else _WRONG_VALUES
        return st.one_of(near, near, near, near, near, wrong)

    def options(self, values: list[object]) -> st.SearchStrategy[Any]:
        return super().options(values) | _LITERAL_VALUES

    def decimal(self, number: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        # Numbers on both sides of the bounds; text only of numbers in
        # them, as the schema does not bound the text (documented).
        return self.number(number, integer=False) | super().decimal(number)

    def string(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        fmt = schema.get("format")
        if fmt is not None:
            return FORMATS[fmt] | st.sampled_from(["", "x", "2020-13-45"])
        low = max(schema.get("minLength", 0) - 1, 0)
        high = schema.get("maxLength", low + 5) + 1
        near = st.text(PATTERN_ALPHABET, min_size=low, max_size=high)
        return super().string(schema) | near

    def number(
        self, schema: Mapping[str, Any], *, integer: bool
    ) -> st.SearchStrategy[Any]:
        edges = _Range.of(schema).edges()
        points = [e + d for e in edges for d in (-1, -0.5, 0.5, 1)]
        step = schema.get("multipleOf")
        if step is not None:
            points.extend([step, 2 * step, -step, step / 2, 3 * step + 1])
        near = super().number(schema, integer=integer) | _NEAR_NUMBERS
        if edges:  # each bound itself, exactly, often
            near = st.one_of(near, _json_equal(st.sampled_from(edges)))
        if points:
            near = st.one_of(near, _json_equal(st.sampled_from(points)))
        return near

    def array(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        if "prefixItems" in schema:
            prefix = st.tuples(*(self.of(s) for s in schema["prefixItems"]))
            return prefix.map(list) | st.builds(
                _resized, prefix.map(list), st.integers(-1, 1), JSON_SCALARS
            )
        low = max(schema.get("minItems", 0) - 1, 0)
        high = schema.get("maxItems", 3) + 1
        near = st.lists(
            self.of(schema.get("items", {})),
            min_size=low,
            max_size=min(high, low + 4),
        )
        return super().array(schema) | near

    def object(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", {})
        if not properties:
            low = max(schema.get("minProperties", 0) - 1, 0)
            high = schema.get("maxProperties", low + 2) + 1
            values = JSON_VALUES if isinstance(extra, bool) else self.of(extra)
            near = st.dictionaries(
                st.text(max_size=3), values, min_size=low, max_size=high
            )
            return super().object(schema) | near
        required = schema.get("required", [])
        fixed = st.fixed_dictionaries(
            {k: self.of(properties[k]) for k in required},
            optional={
                k: self.of(v)
                for k, v in properties.items()
                if k not in required
            },
        )
        # now and then a key is missing, or an unknown one is there
        fixed = st.one_of(
            *[fixed] * 7, st.builds(_one_less, fixed, st.integers(0, 9))
        )
        unknown = st.one_of(*[st.just({})] * 7, st.just({"zz": 1}))
        return st.builds(lambda a, b: {**b, **a}, fixed, unknown)


def _one_less(value: dict[str, Any], index: int) -> dict[str, Any]:
    """*value* without one of its keys (as it is, when it has none)."""
    if not value:
        return value
    key = list(value)[index % len(value)]
    return {k: v for k, v in value.items() if k != key}


def _resized(items: list[Any], change: int, more: object) -> list[Any]:
    """*items* one shorter (-1), the same (0) or one longer (1)."""
    if change < 0:
        return items[:-1]
    return [*items, more] if change > 0 else items


def near_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Draw JSON values near *schema*: some valid, many just not.

    For agreement tests: the validator and ``jsonschema`` must say the
    same of each (see :class:`_Near`). The root keeps its JSON type (an
    arguments object stays an object).
    """
    near = _Near(schema.get("$defs", {}))
    if schema.get("type") == "object":
        return _Instances.object(near, schema)
    return _Instances.of(near, schema)


# -- mutations -----------------------------------------------------------------

KINDS = ("null", "boolean", "integer", "fraction", "string", "array", "object")
_SAMPLES: dict[str, object] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "fraction": 0.5,
    "string": "x",
    "array": [],
    "object": {},
}


@attrs.frozen
class Site:
    """A node of a valid instance, with the schema that node matched.

    Attributes:
        path: Where the node sits, from the arguments object.
        schema: The schema at that position (a union, a ``$ref``...).
        resolved: The member that the node matched, ``$ref`` resolved.
        value: The node's value.
        unions: Paths of the ``anyOf`` nodes on the way, outermost first.
    """

    path: JsonPath
    schema: Mapping[str, Any]
    resolved: Mapping[str, Any]
    value: Any
    unions: tuple[JsonPath, ...]


def _deref(
    schema: Mapping[str, Any], defs: Mapping[str, Any]
) -> Mapping[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].removeprefix("#/$defs/")]
    return schema


def accepted_kinds(
    schema: Mapping[str, Any], defs: Mapping[str, Any]
) -> set[str]:
    """The value kinds (see :data:`KINDS`) that *schema* may accept."""
    schema = _deref(schema, defs)
    if "anyOf" in schema:
        return set().union(*(accepted_kinds(s, defs) for s in schema["anyOf"]))
    if "enum" in schema or "const" in schema:
        return {_kind(v) for v in _options(schema)}
    kind = schema.get("type")
    if kind is None:
        return set(KINDS)
    if kind == "number":
        return {"integer", "fraction"}
    return {kind}


def _options(schema: Mapping[str, Any]) -> list[object]:
    """The values of an ``enum`` or ``const`` schema."""
    if "const" in schema:
        return [schema["const"]]
    return list(schema["enum"])


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer()
    ):
        return "integer"
    if isinstance(value, float):
        return "fraction"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def mutation_sites(schema: Mapping[str, Any], instance: Any) -> list[Site]:
    """Every node of the valid *instance*, root first."""
    defs = schema.get("$defs", {})
    check = validator(schema)
    sites: list[Site] = []

    def matches(value: object, sub: Mapping[str, Any]) -> bool:
        sub_check = check.evolve(schema={**sub, "$defs": defs})
        return bool(sub_check.is_valid(value))

    def walk(
        value: Any,
        sub: Mapping[str, Any],
        path: JsonPath,
        unions: tuple[JsonPath, ...],
    ) -> None:
        resolved = _deref(sub, defs)
        while "anyOf" in resolved:
            unions = (*unions, path)
            resolved = _deref(
                next(m for m in resolved["anyOf"] if matches(value, m)), defs
            )
        sites.append(Site(path, sub, resolved, value, unions))
        if isinstance(value, dict):
            properties = resolved.get("properties", {})
            extra = resolved.get("additionalProperties", {})
            for key, item in value.items():
                child = properties.get(key, extra)
                if isinstance(child, Mapping) and child:
                    walk(item, child, (*path, key), unions)
        elif isinstance(value, list):
            prefix = resolved.get("prefixItems", [])
            items = resolved.get("items", {})
            for index, item in enumerate(value):
                child = prefix[index] if index < len(prefix) else items
                if isinstance(child, Mapping) and child:
                    walk(item, child, (*path, index), unions)

    walk(instance, schema, (), ())
    return sites


@attrs.frozen
class Mutation:
    """One way to break a valid instance.

    Attributes:
        kind: Which mutation (see :data:`MUTATIONS`).
        path: The argument path that was broken.
        instance: The broken instance.
        unions: ``anyOf`` nodes above *path*; the validator may blame a
            path inside the outermost one instead of *path* itself.
    """

    kind: str
    path: JsonPath
    instance: Any
    unions: tuple[JsonPath, ...]


def _replace(instance: Any, path: JsonPath, value: object) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = list(instance) if isinstance(instance, list) else dict(instance)
    copy[head] = _replace(instance[head], tuple(rest), value)  # type: ignore[index]
    return copy


def _wrong_type(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not site.path:
        return []
    kinds = accepted_kinds(site.schema, defs)
    return [(site.path, _SAMPLES[k]) for k in KINDS if k not in kinds]


def _missing_key(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not isinstance(site.value, dict):
        return []
    out: list[tuple[JsonPath, object]] = []
    for key in site.resolved.get("required", []):
        if key in site.value:
            smaller = {k: v for k, v in site.value.items() if k != key}
            out.append(((*site.path, key), smaller))
    return out


def _extra_key(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not isinstance(site.value, dict):
        return []
    if site.resolved.get("additionalProperties", True) is not False:
        return []
    key = "zz_unexpected"
    while key in site.resolved.get("properties", {}):
        key += "_"
    return [((*site.path, key), {**site.value, key: 1})]


def _bool_for_number(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    kinds = accepted_kinds(site.schema, defs)
    if not site.path or "integer" not in kinds or "boolean" in kinds:
        return []
    return [(site.path, True), (site.path, False)]


def _string_for_number(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    kinds = accepted_kinds(site.schema, defs)
    if not site.path or "integer" not in kinds or "string" in kinds:
        return []
    value = site.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(int(value)) if _kind(value) == "integer" else repr(value)
        return [(site.path, text)]
    return [(site.path, "1")]


def _out_of_enum(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not site.path or not {"enum", "const"} & set(site.resolved):
        return []
    values = _options(site.resolved)
    strings = [v for v in values if isinstance(v, str)]
    numbers = [
        v
        for v in values
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    candidates: list[object] = []
    if strings:
        candidates.append(max(strings, key=len) + "_not_listed")
    if numbers:
        candidates.append(int(max(numbers)) + 1)
    if any(isinstance(v, bool) for v in values):
        candidates.extend([True, False])
    listed = {json_key(v) for v in values}
    return [(site.path, c) for c in candidates if json_key(c) not in listed]


def _duplicate_item(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not site.resolved.get("uniqueItems") or not site.value:
        return []
    value = site.value
    return [
        ((*site.path, len(value)), [*value, value[i]])
        for i in range(len(value))
    ]


def _out_of_bounds(  # noqa: PLR0912 - one branch per keyword
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    """Values just beyond the constraints of the site's schema."""
    schema, value = site.resolved, site.value
    if not site.path:
        return []
    out: list[object] = []
    if _kind(value) in {"integer", "fraction"}:
        if "minimum" in schema:
            out.append(schema["minimum"] - 1)
        if "exclusiveMinimum" in schema:
            out.append(schema["exclusiveMinimum"])
        if "maximum" in schema:
            out.append(schema["maximum"] + 1)
        if "exclusiveMaximum" in schema:
            out.append(schema["exclusiveMaximum"])
        if "multipleOf" in schema:
            out.append(value + schema["multipleOf"] / 2)
    elif isinstance(value, str):
        if schema.get("minLength", 0) > 0:
            out.append(value[: schema["minLength"] - 1])
        if "maxLength" in schema:
            out.append(value + "x" * (schema["maxLength"] - len(value) + 1))
        if "pattern" in schema:
            regex = re.compile(schema["pattern"])
            out.extend(
                text
                for text in ("zz", "b0a", "x", "ca")
                if not regex.search(text)
            )
    elif isinstance(value, list) and "prefixItems" not in schema:
        if schema.get("minItems", 0) > 0:
            out.append(value[: schema["minItems"] - 1])
        if "maxItems" in schema and not schema.get("uniqueItems"):
            extra = schema["maxItems"] - len(value) + 1
            if value:
                out.append(value + value[:1] * extra)
    elif isinstance(value, dict) and "properties" not in schema:
        if schema.get("minProperties", 0) > 0:
            keep = list(value)[: schema["minProperties"] - 1]
            out.append({k: value[k] for k in keep})
        if "maxProperties" in schema and value:
            first = next(iter(value.values()))
            count = schema["maxProperties"] - len(value) + 1
            more = {f"zz_more{i}": first for i in range(count)}
            out.append({**value, **more})
    return [(site.path, node) for node in out]


_SiteMutation = Callable[
    [Site, Mapping[str, Any]], list[tuple[JsonPath, object]]
]
MUTATIONS: dict[str, _SiteMutation] = {
    "wrong_type": _wrong_type,
    "missing_key": _missing_key,
    "extra_key": _extra_key,
    "bool_for_number": _bool_for_number,
    "string_for_number": _string_for_number,
    "out_of_enum": _out_of_enum,
    "duplicate_item": _duplicate_item,
    "out_of_bounds": _out_of_bounds,
}
"""Each mutation: ``(site, defs) -> [(blamed path, new node value)]``."""

MUTATION_TYPES: dict[str, st.SearchStrategy[Any] | None] = {
    "wrong_type": None,
    "missing_key": None,
    "extra_key": None,
    "bool_for_number": NUMERIC_TYPES,
    "string_for_number": NUMERIC_TYPES,
    "out_of_enum": ENUM_TYPES,
    "duplicate_item": SET_TYPES,
    "out_of_bounds": CONSTRAINED_LEAVES | CONSTRAINED_TYPES,
}
"""A parameter type that makes each mutation possible (None: any)."""


def mutate(
    kind: str, schema: Mapping[str, Any], instance: Any
) -> list[Mutation]:
    """Every *kind* mutation of the valid *instance* that *schema* rejects."""
    defs = schema.get("$defs", {})
    check = validator(schema)
    out: list[Mutation] = []
    for site in mutation_sites(schema, instance):
        for path, node in MUTATIONS[kind](site, defs):
            broken = _replace(instance, site.path, node)
            if not check.is_valid(broken):
                out.append(Mutation(kind, path, broken, site.unions))
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def render_path(path: JsonPath) -> str:
    """A path as toolctx's messages write it: ``a.b[0]``, ``m["x y"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


# -- ECMA-262 patterns ---------------------------------------------------------

_ECMA_ATOMS = (
    "a",
    "b",
    "1",
    "\u00e9",
    "\\n",
    "\\r",
    ".",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "[a-c]",
    "[^a]",
    "[\\d_]",
    "[^\\s\\d]",
    "[\\S]",
    "[\\W1]",
    "[]",
    "[^]",
    "[\\u2028-\\u2029]",
    "\\u00e9",
    "\\x61",
    "\\u{1F600}",
    "\\uD83D\\uDE00",
    "\\.",
    "\\$",
    "[.$^]",
    "[-a]",
    "\\cJ",
    "\\0",
    "\\t",
)
"""Atoms of the patterns drawn: literals, escapes and classes whose
meaning differs between ECMA-262 and Python's ``re``, and some that
agree."""
_ECMA_ASSERTIONS = ("^", "$", "\\b", "\\B")
_ECMA_QUANTIFIERS = ("", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?")
ECMA_TEXT_ALPHABET = (
    "ab1_A\u00e9\u0661 \n\r\t\u2028\u2029\u00a0\ufeff\u0085\u180e"
    "\U0001f600.$-\x00"
)
"""The characters of strings matched against drawn patterns: ASCII and
other digits and letters, every kind of line break and space (ECMA-262's
and Python's), an astral character."""


@st.composite
def _ecma_term(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    """An atom and a quantifier, a group, a lookaround or an assertion."""
    kind = draw(
        st.sampled_from(["atom", "atom", "group", "look", "behind", "assert"])
    )
    if kind == "assert":
        return draw(st.sampled_from(_ECMA_ASSERTIONS))
    if kind == "look":
        opener = draw(st.sampled_from(["(?=", "(?!"]))
        return f"{opener}{draw(inner)})"
    if kind == "behind":  # Python's re needs a fixed width: one atom
        opener = draw(st.sampled_from(["(?<=", "(?<!"]))
        return f"{opener}{draw(st.sampled_from(_ECMA_ATOMS))})"
    if kind == "group":
        opener = draw(st.sampled_from(["(", "(?:", "(?<g>"]))
        atom = f"{opener}{draw(inner)})"
    else:
        atom = draw(st.sampled_from(_ECMA_ATOMS))
    return atom + draw(st.sampled_from(_ECMA_QUANTIFIERS))


def _ecma_disjunction(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """One to three alternatives of up to three terms each."""
    alternative = st.lists(_ecma_term(inner), max_size=3).map("".join)
    return st.lists(alternative, min_size=1, max_size=3).map("|".join)


ECMA_PATTERNS: st.SearchStrategy[str] = st.recursive(
    _ecma_disjunction(st.just("")),
    _ecma_disjunction,
    max_leaves=4,
).filter(lambda pattern: pattern.count("(?<g>") <= 1)
"""ECMA-262 patterns (``u`` flag) from a small grammar: literals,
escapes, classes, assertions, groups, lookarounds, quantifiers."""
