"""Constraints and pydantic models: the schema and the validator agree.

The properties of ``test_properties.py``, over generated types that hold
constraints (bounds, steps, lengths and patterns on ``int``, ``float``,
``Decimal``, strings, arrays, sets and mappings, in every spelling:
annotated-types, ``Interval``/``Len``, pydantic ``Field`` and
``StringConstraints``) and over pydantic v2 models (``create_model``,
fields of generated types, defaults, every ``extra`` setting, frozen,
nested in each other and in containers):

- the schema of the generated tool is valid Draft 2020-12;
- instances drawn from it are accepted and reach the function with the
  declared types;
- the same instances broken in one way (a bound, a length, a type, a
  key, a repeated set item) are rejected, naming the path;
- on values near the schema (at and beside every bound, size and type),
  the validator accepts exactly what ``jsonschema`` accepts;
- a constraint on a type it does not bound, or one toolctx cannot
  enforce, is a ``SchemaError`` when the tool is made.

What the generators leave out, each a difference the docs state
(docs/types.md) or one that only pydantic decides, inside a model:

- a ``Decimal`` given as text: toolctx bounds it, the schema bounds only
  the number (drawn texts are of numbers within the bounds);
- ``multipleOf`` with steps that are not binary fractions, and numbers
  far from zero: toolctx divides the decimals JSON writes, jsonschema
  binary floats (the steps drawn are 0.25, 0.5, 2 and 3, the numbers
  small);
- inside a model, float steps (pydantic allows a tolerance) and
  ``Decimal`` (pydantic's own rules);
- line breaks and non-ASCII digits in strings checked against a
  ``pattern``: toolctx reads the pattern as ECMA-262 (``$`` is the end of
  the text, digits are ASCII), ``jsonschema`` with Python's ``re``
  (test_patterns.py compares toolctx with an ECMA-262 engine).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import typing

from typing import Annotated, Any, Literal, Optional

import annotated_types as at
import jsonschema
import pytest

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import Field, StringConstraints

from strategies import (
    CONSTRAINED_LEAVES,
    CONSTRAINED_MUTATION_TYPES,
    CONSTRAINED_TYPES,
    DEFAULT,
    MODEL_MUTATION_TYPES,
    MODELS,
    MUTATIONS,
    PARAMETER_NAMES,
    PYDANTIC_TYPES,
    Harness,
    Mutation,
    Parameter,
    Signature,
    conforms,
    from_schema,
    mutate,
    near_schema,
    render_path,
    signatures,
    validator,
)
from toolctx.exceptions import SchemaError, ToolArgumentsError


pytestmark = pytest.mark.filterwarnings(
    # Hypothesis names a strategy in its statistics when a filter retries;
    # the names of strategies built from generated schemas are long.
    "ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"
)

SLOW = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
]

FAMILIES: dict[str, st.SearchStrategy[Signature]] = {
    "constraints": signatures(
        must_include=CONSTRAINED_LEAVES, types=CONSTRAINED_TYPES, most=2
    ),
    "models": signatures(must_include=MODELS, types=PYDANTIC_TYPES, most=2),
}
"""Signatures with a constrained parameter, or with a pydantic model."""


class TestValidInstances:
    """Whatever the schema allows, the validator accepts."""

    @pytest.mark.parametrize("family", sorted(FAMILIES))
    @settings(max_examples=25, deadline=None, suppress_health_check=SLOW)
    @given(data=st.data())
    def test_schema_instances_are_accepted(
        self, family: str, data: st.DataObject
    ) -> None:
        """A valid Draft 2020-12 schema; its instances run the tool."""
        signature = data.draw(FAMILIES[family], label="signature")
        harness = Harness(signature)
        jsonschema.Draft202012Validator.check_schema(harness.schema)
        instance = data.draw(from_schema(harness.schema), label="instance")
        if family == "models":
            instance = pydantic_spelling(instance)
        errors = list(validator(harness.schema).iter_errors(instance))
        assert not errors, f"the generator broke the schema: {errors[0]}"

        result = harness.dispatch(instance)

        assert not result.is_error, result.error
        [received] = harness.calls
        for param in signature.parameters:
            value = received[param.name]
            if param.name in instance:
                assert conforms(value, param.annotation), (param, value)
            else:
                assert value is DEFAULT


MUTATION_SIGNATURES = {
    (family, kind): signatures(
        must_include=must_include[kind], types=types, most=2
    )
    for family, must_include, types in [
        ("constraints", CONSTRAINED_MUTATION_TYPES, CONSTRAINED_TYPES),
        ("models", MODEL_MUTATION_TYPES, PYDANTIC_TYPES),
    ]
    for kind in MUTATIONS
}
"""Per family and mutation: signatures with a parameter of a type that
makes the mutation possible."""


class TestMutatedInstances:
    """Every broken instance is an argument error naming the broken path."""

    @pytest.mark.parametrize("family", sorted(FAMILIES))
    @pytest.mark.parametrize("kind", sorted(MUTATIONS))
    @settings(max_examples=6, deadline=None, suppress_health_check=SLOW)
    @given(data=st.data())
    def test_mutations_are_rejected(
        self, family: str, kind: str, data: st.DataObject
    ) -> None:
        """A value out of bounds, of a wrong type, key or item is refused.

        Not a repeated set item in a model: pydantic merges it (its own
        rule, though its schema says ``uniqueItems``).
        """
        if family == "models" and kind == "duplicate_item":
            pytest.skip("pydantic merges repeated set items")
        signature = data.draw(
            MUTATION_SIGNATURES[family, kind], label="signature"
        )
        harness = Harness(signature)
        instance = data.draw(from_schema(harness.schema), label="instance")
        if family == "models":
            instance = pydantic_spelling(instance)
        mutations = mutate(kind, harness.schema, instance)
        assume(mutations)
        mutation = data.draw(st.sampled_from(mutations), label="mutation")
        if family == "models" and kind in {"out_of_enum", "bool_for_number"}:
            # pydantic matches Literal options as Python compares them
            # (true is 1, 1.0 is 1): a number may be an option to it
            assume(
                not isinstance(_at(mutation), (int, float))
                or not _options_at(harness.schema, mutation.path)
            )

        result = harness.dispatch(mutation.instance)

        assert harness.calls == [], "the tool ran with bad arguments"
        assert isinstance(result.exception, ToolArgumentsError), result.error
        blamed = [e.path for e in result.exception.errors]
        path = render_path(mutation.path)
        if mutation.unions:
            # A union reports the problems of its closest member, which
            # may not be the member the instance was drawn from.
            outer = mutation.unions[0]
            named = [p for p in blamed if p == path or _under(p, outer)]
        else:
            named = [p for p in blamed if p == path]
        assert named, f"{path!r} not blamed in {result.error!r}"
        assert all(f"{p}: " in (result.error or "") for p in named)


def pydantic_spelling(value: object) -> object:
    """*value* with every integral float an integer (``1.0`` -> ``1``).

    pydantic's strict JSON mode refuses ``1.0`` for an ``int``, which
    JSON Schema calls an integer; it takes ``1`` for a ``float`` (small
    ones: pydantic 2.11 refuses an integer a float cannot hold exactly).
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [pydantic_spelling(item) for item in value]
    if isinstance(value, dict):
        return {k: pydantic_spelling(v) for k, v in value.items()}
    return value


def _at(mutation: Mutation) -> object:
    """The value *mutation* put at its path."""
    value: Any = mutation.instance
    for part in mutation.path:
        value = value[part]
    return value


def _options_at(schema: dict[str, Any], path: tuple[Any, ...]) -> bool:
    """Whether a schema at *path* lists options (``enum``, ``const``)."""
    defs = schema.get("$defs", {})

    def opened(node: Any) -> list[Any]:
        if not isinstance(node, dict):
            return []
        if "$ref" in node:
            return opened(defs[node["$ref"].removeprefix("#/$defs/")])
        out = [node]
        for choice in node.get("anyOf", []) + node.get("oneOf", []):
            out.extend(opened(choice))
        return out

    nodes = opened(schema)
    for part in path:
        inner: list[Any] = []
        for node in nodes:
            if isinstance(part, str):
                found = node.get("properties", {}).get(part)
                found = found or node.get("additionalProperties")
            else:
                prefix = node.get("prefixItems", [])
                found = prefix[part] if part < len(prefix) else None
                found = found or node.get("items")
            inner.extend(opened(found))
        nodes = inner
    return any("enum" in node or "const" in node for node in nodes)


def _repeats(value: object) -> bool:
    """Whether an array in *value* holds two JSON-equal items."""
    if isinstance(value, dict):
        return any(_repeats(item) for item in value.values())
    if not isinstance(value, list):
        return False
    keys = [json.dumps(item, sort_keys=True) for item in value]
    return len(set(keys)) < len(keys) or any(_repeats(i) for i in value)


def _under(rendered: str, prefix: tuple[str | int, ...]) -> bool:
    """Whether the rendered path *rendered* is *prefix* or inside it."""
    head = render_path(prefix)
    if not head:
        return bool(rendered)
    return rendered == head or rendered.startswith((f"{head}.", f"{head}["))


AGREEMENT: dict[str, st.SearchStrategy[Signature]] = {
    "constrained scalars": signatures(types=CONSTRAINED_LEAVES),
    "constrained types": FAMILIES["constraints"],
    "models": FAMILIES["models"],
}


class TestAgreement:
    """The validator accepts exactly what ``jsonschema`` accepts."""

    @pytest.mark.parametrize("family", list(AGREEMENT))
    @settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
    @given(data=st.data())
    def test_validator_agrees_with_jsonschema(
        self, family: str, data: st.DataObject
    ) -> None:
        """Values at, beside and beyond every constraint read the same.

        In a model, pydantic's own rules: an integral float is not an
        integer (drawn as the integer), repeated set items are merged
        (not drawn).
        """
        harness = Harness(data.draw(AGREEMENT[family], label="signature"))
        instance: Any = data.draw(
            near_schema(harness.schema), label="instance"
        )
        if family == "models":
            instance = pydantic_spelling(instance)
            assume(not _repeats(instance))
        valid = validator(harness.schema).is_valid(instance)

        result = harness.dispatch(instance)

        if valid:
            assert not result.is_error, result.error
        else:
            assert isinstance(result.exception, ToolArgumentsError), (
                "jsonschema refuses what the validator accepts"
            )


class _Colour(enum.Enum):
    RED = "red"


_NOT_NUMBERS = [str, bool, type(None), list[int], dt.date, Literal[1, 2]]
_NOT_SIZED = [int, float, bool, type(None), Literal["a"], _Colour, dt.date]
_MISFITS = st.one_of(
    st.tuples(
        st.sampled_from(_NOT_NUMBERS),
        st.sampled_from(
            [at.Ge(0), at.Lt(1), at.MultipleOf(2), Field(le=3), Field(gt=1)]
        ),
    ),
    st.tuples(
        st.sampled_from(_NOT_SIZED),
        st.sampled_from([at.MinLen(1), at.MaxLen(2), at.Len(1, 2)]),
    ),
    st.tuples(
        st.sampled_from([int, list[str], dict[str, str], _Colour]),
        st.just(Field(pattern="^a")),
    ),
    st.tuples(
        st.sampled_from([int | None, Optional[str], list[int] | str]),  # noqa: UP045
        st.sampled_from([at.Ge(0), at.MaxLen(2), Field(pattern="^a")]),
    ),
)
"""A constraint on a type it does not bound (a union among them)."""
_UNENFORCEABLE = st.sampled_from(
    [
        (int, at.Predicate(lambda v: v > 0)),
        (str, StringConstraints(to_lower=True)),
        (str, StringConstraints(strip_whitespace=True, max_length=3)),
        (float, Field(allow_inf_nan=True)),
        (int, at.MultipleOf(0)),
        (float, at.MultipleOf(-0.5)),
        (float, at.Ge(float("nan"))),
        (int, at.Le(float("inf"))),
        (int, at.Ge("1")),
        (int, at.Gt(True)),
        (str, at.MinLen(-1)),
        (list[int], at.MaxLen(1.5)),  # type: ignore[arg-type]
        (str, Field(pattern="(")),
    ]
)
"""A constraint toolctx cannot enforce, or one with a value it cannot
use (a zero or negative step, NaN, infinity, a string for a number, a
negative or fractional length, a broken pattern)."""


class TestMisplacedConstraints:
    """A constraint toolctx cannot apply is refused, never dropped."""

    @settings(max_examples=40, deadline=None)
    @given(
        case=_MISFITS | _UNENFORCEABLE,
        name=PARAMETER_NAMES,
        nested=st.booleans(),
    )
    def test_is_a_schema_error_at_decoration(
        self, case: tuple[Any, object], name: str, *, nested: bool
    ) -> None:
        """A SchemaError names the parameter and the constraint, briefly.

        The same for a parameter's own type and for a type nested in a
        class field; the tool is never made.
        """
        tp, constraint = case
        annotation: Any = Annotated[tp, constraint]
        if annotation.__metadata__[0] is not constraint:
            # typing caches Annotated[...] by equality, and Gt(True) ==
            # Gt(1): build the alias itself so the drawn constraint is
            # the one the tool sees.
            annotation = typing._AnnotatedAlias(tp, (constraint,))  # type: ignore[attr-defined]
        if nested:
            annotation = dataclasses.make_dataclass(
                "Holder", [("inner", annotation)]
            )
        signature = Signature((Parameter(name, annotation, True, False),))

        with pytest.raises(SchemaError) as caught:
            Harness(signature)

        message = str(caught.value)
        assert caught.value.parameter == name
        assert f"parameter {name!r}" in message
        assert "constraint" in message
        assert len(message) < 600, message
