"""Generated signatures: the schema and the validator agree, both ways.

For random tool signatures over every supported type, instances drawn
from the tool's own JSON Schema are accepted and reach the function with
exactly the declared types; the same instances broken in one way are
rejected as error results naming the broken argument path.
"""

from __future__ import annotations

import json

from typing import Any

import jsonschema
import pytest

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from strategies import (
    DEFAULT,
    MUTATION_TYPES,
    MUTATIONS,
    TOOL_NAME,
    Signature,
    build_function,
    conforms,
    from_schema,
    mutate,
    render_path,
    signatures,
    validator,
)
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    tool,
)
from toolctx.exceptions import ToolArgumentsError


class Harness:
    """A generated tool, registered and ready to dispatch."""

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


SLOW = [HealthCheck.too_slow, HealthCheck.filter_too_much]


class TestValidInstances:
    """Whatever the schema allows, the validator accepts."""

    @settings(max_examples=150, suppress_health_check=SLOW)
    @given(signature=signatures(), data=st.data())
    def test_schema_instances_are_accepted(
        self, signature: Signature, data: st.DataObject
    ) -> None:
        """Instances of a generated tool's schema run it with typed values."""
        harness = Harness(signature)
        jsonschema.Draft202012Validator.check_schema(harness.schema)
        instance = data.draw(from_schema(harness.schema), label="instance")
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
                assert not param.required
                assert value is DEFAULT
        if signature.context_parameter is not None:
            ctx = received[signature.context_parameter]
            assert type(ctx) is ExecutionContext
            assert ctx.invocation_id == result.invocation_id
            assert ctx.user_id == "host-user"

    @settings(max_examples=100, suppress_health_check=SLOW)
    @given(signature=signatures())
    def test_context_parameter_is_never_in_the_schema(
        self, signature: Signature
    ) -> None:
        """The schema lists exactly the model-visible parameters, in order."""
        harness = Harness(signature)
        names = [p.name for p in signature.parameters]
        assert list(harness.schema["properties"]) == names
        assert harness.schema.get("required", []) == [
            p.name for p in signature.parameters if p.required
        ]
        assert harness.schema["additionalProperties"] is False
        assert harness.tool.context_parameters == (
            ()
            if signature.context_parameter is None
            else (signature.context_parameter,)
        )


class TestMutatedInstances:
    """Every broken instance is an argument error naming the broken path."""

    @pytest.mark.parametrize("kind", sorted(MUTATIONS))
    @settings(max_examples=60, suppress_health_check=SLOW)
    @given(data=st.data())
    def test_mutations_are_rejected(
        self, kind: str, data: st.DataObject
    ) -> None:
        """A wrong type, key, number or set item is a ToolArgumentsError."""
        signature = data.draw(
            signatures(must_include=MUTATION_TYPES[kind]), label="signature"
        )
        harness = Harness(signature)
        instance = data.draw(from_schema(harness.schema), label="instance")
        mutations = mutate(kind, harness.schema, instance)
        assume(mutations)
        mutation = data.draw(st.sampled_from(mutations), label="mutation")

        result = harness.dispatch(mutation.instance)

        assert harness.calls == [], "the tool ran with bad arguments"
        assert result.is_error
        assert isinstance(result.exception, ToolArgumentsError), (
            result.exception
        )
        blamed = [e.path for e in result.exception.errors]
        path = render_path(mutation.path)
        if mutation.unions:
            # A union reports the problems of its closest member, which
            # may not be the member the instance was drawn from.
            outer = mutation.unions[0]
            named = [
                p
                for p in blamed
                if p == path or _under(p, outer) or (not outer and p)
            ]
        else:
            named = [p for p in blamed if p == path]
        assert named, f"{path!r} not blamed in {result.error!r}"
        assert all(f"{p}: " in (result.error or "") for p in named)


def _under(rendered: str, prefix: tuple[str | int, ...]) -> bool:
    """Whether the rendered path *rendered* is *prefix* or inside it."""
    head = render_path(prefix)
    if not head:
        return bool(rendered)
    return rendered == head or rendered.startswith((f"{head}.", f"{head}["))
