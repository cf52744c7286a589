"""Hostile or malformed argument text becomes an error result, never a crash."""

from __future__ import annotations

import json

from typing import Any

import pytest

from hypothesis import given
from hypothesis import strategies as st

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    current_context,
    execution_context,
)


def make_dispatcher() -> Dispatcher:
    """A dispatcher with small limits and two tools."""
    registry = Registry()

    @registry.tool
    def echo(value: Any = None) -> Any:
        """Return the value."""
        return value

    @registry.tool
    def whoami(note: str = "") -> str | None:
        """Return the caller."""
        return execution_context().user_id

    return Dispatcher(
        registry, max_argument_size=10_000, max_argument_depth=16
    )


@pytest.fixture(name="dispatcher")
def _dispatcher() -> Dispatcher:
    return make_dispatcher()


FUZZ_DISPATCHER = make_dispatcher()


class TestLimits:
    """Each refusal names the problem so a model can fix it."""

    def test_too_large(self, dispatcher: Dispatcher) -> None:
        """Text over max_argument_size is refused before parsing."""
        text = json.dumps({"value": "x" * 20_000})
        result = dispatcher.dispatch(ToolCall("echo", text))
        assert result.is_error
        assert "too large" in (result.error or "")
        assert "limit is 10000" in (result.error or "")

    def test_too_deep(self, dispatcher: Dispatcher) -> None:
        """Nesting past max_argument_depth is refused."""
        deep = "[" * 40 + "]" * 40
        result = dispatcher.dispatch(ToolCall("echo", f'{{"value": {deep}}}'))
        assert result.is_error
        assert "nested deeper than 16 levels" in (result.error or "")

    def test_deep_but_allowed(self, dispatcher: Dispatcher) -> None:
        """Nesting within the limit passes, even in long text."""
        value = [[["x" * 100] * 5]]
        result = dispatcher.dispatch(
            ToolCall("echo", json.dumps({"value": value}))
        )
        assert result.output == value

    def test_recursion_bomb(self, dispatcher: Dispatcher) -> None:
        """Nesting deep enough to break the parser is an error result."""
        big = Dispatcher(dispatcher.registry, max_argument_size=10**7)
        bomb = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
        result = big.dispatch(ToolCall("echo", bomb))
        assert result.is_error
        assert current_context() is None

    @pytest.mark.parametrize(
        ("text", "needle"),
        [
            ('{"value": NaN}', "NaN is not valid JSON"),
            ('{"value": Infinity}', "Infinity is not valid JSON"),
            ('{"value": -Infinity}', "Infinity is not valid JSON"),
            ('{"value": 1e999}', "too large"),
            ('{"value": 1, "value": 2}', "duplicate key 'value'"),
            ('{"value": {"a": 1, "a": 1}}', "duplicate key 'a'"),
            ('{"value": "\\ud800"}', "lone UTF-16 surrogate"),
            ('{"value": "\\udc00x"}', "lone UTF-16 surrogate"),
            ('{"value": ' + "9" * 5000 + "}", "not valid JSON"),
        ],
    )
    def test_refused_values(
        self, dispatcher: Dispatcher, text: str, needle: str
    ) -> None:
        """Non-JSON numbers, duplicate keys and lone surrogates are refused."""
        result = dispatcher.dispatch(ToolCall("echo", text))
        assert result.is_error
        assert needle in (result.error or "")

    def test_valid_surrogate_pair(self, dispatcher: Dispatcher) -> None:
        """A proper surrogate pair escape (an emoji) is accepted."""
        result = dispatcher.dispatch(
            ToolCall("echo", '{"value": "\\ud83d\\ude00"}')
        )
        assert result.output == "\U0001f600"

    def test_escaped_backslash_is_not_a_surrogate(
        self, dispatcher: Dispatcher
    ) -> None:
        r"""The literal text \ud800 (an escaped backslash) is fine."""
        result = dispatcher.dispatch(
            ToolCall("echo", '{"value": "\\\\ud800"}')
        )
        assert result.output == "\\ud800"

    def test_invalid_utf8_bytes(self, dispatcher: Dispatcher) -> None:
        """Bytes that are not UTF-8 are an error result."""
        result = dispatcher.dispatch(ToolCall("echo", b'{"value": "\xff"}'))
        assert result.is_error
        assert "not valid JSON" in (result.error or "")

    def test_bad_limits(self, dispatcher: Dispatcher) -> None:
        """Limits must be positive ints."""
        with pytest.raises(ValueError, match="max_argument_depth"):
            Dispatcher(dispatcher.registry, max_argument_depth=0)


class TestModelCannotSetContext:
    """Arguments never reach context fields or injected parameters."""

    @pytest.mark.parametrize(
        "field",
        ["user_id", "session_id", "invocation_id", "scope", "ctx", "context"],
    )
    def test_context_field_as_argument(
        self, dispatcher: Dispatcher, field: str
    ) -> None:
        """An argument named like a context field is an unknown argument."""
        result = dispatcher.dispatch(
            ToolCall("whoami", json.dumps({field: "root"})),
            ExecutionContext(user_id="ada"),
        )
        assert result.is_error
        assert f"{field}: unexpected argument" in (result.error or "")


json_text = st.text(max_size=200) | st.binary(max_size=200)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10),
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(st.text(max_size=5), c, max_size=4)
    ),
    max_leaves=20,
)


class TestFuzz:
    """Arbitrary input never crashes dispatch and never leaves a context bound."""

    @given(raw=json_text)
    def test_arbitrary_text_and_bytes(self, raw: str | bytes) -> None:
        """Any text or bytes yields a result; errors are error results."""
        for name in ("echo", "whoami", "missing"):
            result = FUZZ_DISPATCHER.dispatch(ToolCall(name, raw))
            assert result.is_error or result.error is None
            assert current_context() is None

    @given(value=json_values)
    def test_arbitrary_json(self, value: object) -> None:
        """Any JSON value as arguments yields a result, never an exception."""
        text = json.dumps(value)
        for name in ("echo", "whoami"):
            result = FUZZ_DISPATCHER.dispatch(ToolCall(name, text))
            if not isinstance(value, dict):
                assert result.is_error or value is None
            assert current_context() is None
