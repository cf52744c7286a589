"""Provider formats: what every provider module shares.

Rendering of result text, registration order, fresh copies, payload
errors, imports without the SDKs, and -- for every provider -- that no
host-only field ever reaches a rendered message.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from collections.abc import Callable
from typing import Any

import pytest

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    SchemaError,
    ToolCall,
    ToolctxError,
    ToolResult,
    publish,
    set_state,
    tool,
)
from toolctx.providers import (
    ProviderPayloadError,
    ProviderSchemaError,
    anthropic,
    gemini,
    mcp,
    openai,
)
from toolctx.providers._render import content_text


SECRET = "s3cr3t-9f1c2b7e-never-render-me"

TOOL_LISTS: dict[str, Callable[[Registry], list[dict[str, Any]]]] = {
    "openai": openai.tools,
    "openai-strict": lambda r: openai.tools(r, strict=True),
    "openai-responses": openai.responses_tools,
    "anthropic": anthropic.tools,
    "gemini": lambda r: [
        d for t in gemini.tools(r) for d in t["function_declarations"]
    ],
    "mcp": mcp.tools,
}
RENDERERS: dict[str, Callable[[ToolResult], dict[str, Any]]] = {
    "openai": openai.result_message,
    "openai-responses": openai.responses_result_item,
    "anthropic": anthropic.result_message,
    "anthropic-many": lambda r: anthropic.results_message([r, r]),
    "gemini": gemini.result_message,
    "gemini-many": lambda r: gemini.results_message([r, r]),
    "mcp": mcp.result_message,
}
PARSERS: dict[str, Callable[[object], object]] = {
    "openai": openai.parse_calls,
    "openai-responses": openai.parse_responses_calls,
    "anthropic": anthropic.parse_calls,
    "gemini": gemini.parse_calls,
    "mcp": mcp.parse_calls,
}


def _name(entry: dict[str, Any]) -> str:
    """The tool name of one entry of any provider's tool list."""
    name = entry.get("name", entry.get("function", {}).get("name"))
    assert isinstance(name, str)
    return name


@tool
def zeta(x: int) -> int:
    """Return x."""
    return x


@tool
def alpha(text: str = "hi") -> str:
    """Return the text."""
    return text


@tool
def mid(flag: bool) -> dict[str, bool]:
    """Wrap the flag."""
    return {"flag": flag}


@pytest.fixture(name="registry")
def _registry() -> Registry:
    return Registry([zeta, alpha, mid])


class TestContentText:
    """The text a model sees of a result."""

    def test_str_output_is_kept_as_is(self) -> None:
        """A str output is the text itself, not a JSON string literal."""
        result = ToolResult(name="t", output='he said "hi"')
        assert content_text(result) == 'he said "hi"'

    def test_other_output_is_compact_json(self) -> None:
        """Non-str output is compact JSON that keeps non-ASCII text."""
        result = ToolResult(name="t", output={"city": "Zürich", "n": [1, 2]})
        assert content_text(result) == '{"city":"Zürich","n":[1,2]}'

    def test_none_output_is_null(self) -> None:
        """A tool that returned None shows the JSON null."""
        assert content_text(ToolResult(name="t")) == "null"

    def test_error_shows_the_error_message(self) -> None:
        """An error result shows its error message, not its output."""
        result = ToolResult(
            name="t", is_error=True, error="bad unit", output={"x": 1}
        )
        assert content_text(result) == "bad unit"

    def test_error_without_message_still_says_something(self) -> None:
        """An error result without a message names the failed tool."""
        result = ToolResult(name="t", is_error=True)
        assert content_text(result) == "Tool 't' failed."

    def test_non_json_output_is_a_clear_type_error(self) -> None:
        """A hand-built result with non-JSON output names the tool."""
        result = ToolResult(name="t", output=object())
        with pytest.raises(TypeError, match="tool 't' is not JSON data"):
            content_text(result)


class TestToolLists:
    """Every provider's tool list."""

    @pytest.mark.parametrize("provider", sorted(TOOL_LISTS))
    def test_registration_order(
        self, provider: str, registry: Registry
    ) -> None:
        """Tools come in registration order, not sorted by name."""
        names = [_name(e) for e in TOOL_LISTS[provider](registry)]
        assert names == ["zeta", "alpha", "mid"]

    @pytest.mark.parametrize("provider", sorted(TOOL_LISTS))
    def test_order_follows_replace_and_reregister(
        self, provider: str, registry: Registry
    ) -> None:
        """replace=True keeps the position; re-registering appends."""

        @tool(name="zeta")
        def new_zeta(x: int) -> int:
            """Return x, replaced."""
            return x

        registry.register(new_zeta, replace=True)
        registry.unregister("alpha")
        registry.register(alpha)
        entries = TOOL_LISTS[provider](registry)
        assert [_name(e) for e in entries] == ["zeta", "mid", "alpha"]
        assert "Return x, replaced." in json.dumps(entries[0])

    @pytest.mark.parametrize("provider", sorted(TOOL_LISTS))
    def test_entries_are_fresh_copies(
        self, provider: str, registry: Registry
    ) -> None:
        """Mutating a returned list never changes the registry's schemas."""
        before = json.dumps([d.to_dict() for d in registry.definitions()])
        first = TOOL_LISTS[provider](registry)
        for entry in first:
            schema = (
                entry.get("parameters")
                or entry.get("function", {}).get("parameters")
                or entry.get("input_schema")
                or entry.get("inputSchema")
                or entry.get("parameters_json_schema")
            )
            assert isinstance(schema, dict)
            schema["properties"].clear()
            schema["mutated"] = True
        after = json.dumps([d.to_dict() for d in registry.definitions()])
        assert after == before
        assert TOOL_LISTS[provider](registry) != first

    @pytest.mark.parametrize("provider", sorted(TOOL_LISTS))
    def test_same_registry_same_json(
        self, provider: str, registry: Registry
    ) -> None:
        """The same registrations give byte-identical JSON every time."""
        dump = json.dumps(TOOL_LISTS[provider](registry))
        assert json.dumps(TOOL_LISTS[provider](registry)) == dump

    @pytest.mark.parametrize("provider", sorted(TOOL_LISTS))
    def test_empty_registry(self, provider: str) -> None:
        """An empty registry gives an empty list."""
        assert TOOL_LISTS[provider](Registry()) == []

    def test_context_parameter_is_never_offered(self) -> None:
        """An injected ExecutionContext parameter is in no provider schema."""

        @tool
        def whoami(ctx: ExecutionContext, loud: bool = False) -> str:
            """Say who calls."""
            return ctx.user_id or ""

        registry = Registry([whoami])
        for provider, make in TOOL_LISTS.items():
            assert "ctx" not in json.dumps(make(registry)), provider


def _leaky_results() -> list[ToolResult]:
    """Results whose host-only fields (and context) all carry SECRET."""

    @tool
    def leaky(x: int) -> dict[str, int]:
        """Publish host-only data, then answer."""
        publish("audit", SECRET)
        set_state("token", SECRET)
        return {"x": x}

    @tool
    def broken() -> None:
        """Fail with a secret in the exception."""
        raise RuntimeError(SECRET)

    registry = Registry([leaky, broken])
    dispatcher = Dispatcher(registry, include_exception_messages=False)
    context = ExecutionContext(
        user_id=SECRET, metadata={"api_key": SECRET}, scope=SECRET
    )
    results = dispatcher.dispatch_all(
        [ToolCall("leaky", '{"x": 1}', "c1"), ToolCall("broken", "{}", "c2")],
        context,
    )
    assert results[0].metadata["audit"] == SECRET
    assert results[0].state_changes["token"] == SECRET
    assert SECRET in str(results[1].exception)
    by_hand = ToolResult(
        name="manual",
        call_id="c3",
        output="fine",
        metadata={"k": SECRET},
        state_changes={"k": SECRET},
        exception=ValueError(SECRET),
    )
    failed_by_hand = ToolResult(
        name="manual",
        call_id="c4",
        is_error=True,
        error="it failed",
        metadata={"k": SECRET},
        exception=ValueError(SECRET),
    )
    return [*results, by_hand, failed_by_hand]


class TestNoHostOnlyFields:
    """Host-only data never reaches what the model sees."""

    @pytest.mark.parametrize("provider", sorted(RENDERERS))
    def test_secret_never_rendered(self, provider: str) -> None:
        """Metadata, state changes, exceptions and context stay out."""
        for result in _leaky_results():
            rendered = json.dumps(RENDERERS[provider](result))
            assert SECRET not in rendered, (provider, result.name)

    def test_gemini_part_and_anthropic_block_too(self) -> None:
        """The single-part helpers render no host-only field either."""
        for result in _leaky_results():
            assert SECRET not in json.dumps(gemini.result_part(result))
            assert SECRET not in json.dumps(anthropic.result_block(result))


class TestWrongResultType:
    """Renderers say what they take when given something else."""

    @pytest.mark.parametrize("provider", sorted(RENDERERS))
    def test_a_call_is_not_a_result(self, provider: str) -> None:
        """Passing a ToolCall instead of a ToolResult is a clear TypeError."""
        with pytest.raises(TypeError, match=r"takes a toolctx\.ToolResult"):
            RENDERERS[provider](ToolCall("x", "{}", "c"))  # type: ignore[arg-type]

    @pytest.mark.parametrize("module", [anthropic, gemini])
    def test_one_result_to_results_message(self, module: Any) -> None:
        """results_message() points to result_message() for one result."""
        result = ToolResult(name="x", call_id="c")
        with pytest.raises(TypeError, match="use result_message"):
            module.results_message(result)


class TestPayloadErrors:
    """Payloads that are not the provider's shape raise clearly."""

    @pytest.mark.parametrize("provider", sorted(PARSERS))
    def test_wrong_type(self, provider: str) -> None:
        """A number is no response: ProviderPayloadError, a ValueError."""
        with pytest.raises(ProviderPayloadError) as info:
            PARSERS[provider](42)
        assert isinstance(info.value, ToolctxError)
        assert isinstance(info.value, ValueError)
        assert "got int" in str(info.value)

    @pytest.mark.parametrize(
        ("parse", "payload", "hint"),
        [
            (openai.parse_calls, {"output": []}, "parse_responses_calls"),
            (openai.parse_responses_calls, {"choices": []}, "parse_calls"),
            (anthropic.parse_calls, {"candidates": []}, "a Message"),
            (gemini.parse_calls, {"choices": []}, "GenerateContentResponse"),
        ],
    )
    def test_another_apis_payload(
        self, parse: Callable[[object], object], payload: object, hint: str
    ) -> None:
        """Another API's response raises instead of parsing to nothing."""
        with pytest.raises(ProviderPayloadError, match=hint) as info:
            parse(payload)
        assert "another API's payload" in str(info.value)

    def test_none_means_no_calls(self) -> None:
        """A missing tool_calls list (None) has no calls."""
        assert openai.parse_calls(None) == []

    def test_errors_carry_the_provider(self) -> None:
        """ProviderPayloadError names the provider module."""
        with pytest.raises(ProviderPayloadError) as info:
            mcp.parse_calls("nope")
        assert info.value.provider == "mcp"

    def test_schema_error_is_a_schema_error(self) -> None:
        """ProviderSchemaError is caught by except SchemaError."""

        @tool
        def free(data: dict[str, int]) -> None:
            """Take anything."""

        with pytest.raises(SchemaError) as info:
            openai.tools(Registry([free]), strict=True)
        assert isinstance(info.value, ProviderSchemaError)
        assert info.value.tool == "free"
        assert info.value.provider == "openai"


class TestArgumentsStayModelOutput:
    """Malformed arguments become error results at dispatch, not raises."""

    def test_invalid_json_text(self, registry: Registry) -> None:
        """Broken JSON text passes through and dispatches to an error."""
        message = {
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "zeta", "arguments": "{x: 1"},
                }
            ]
        }
        [call] = openai.parse_calls(message)
        result = Dispatcher(registry).dispatch(call)
        assert result.is_error
        assert "not valid JSON" in (result.error or "")

    def test_non_object_arguments(self, registry: Registry) -> None:
        """A JSON array as input becomes JSON text the dispatcher refuses."""
        block = {"type": "tool_use", "id": "t", "name": "zeta", "input": [1]}
        [call] = anthropic.parse_calls([block])
        assert call.arguments == "[1]"
        result = Dispatcher(registry).dispatch(call)
        assert result.is_error
        assert "must be a JSON object" in (result.error or "")

    def test_mapping_arguments_are_copied(self) -> None:
        """A parsed call does not share the payload's arguments dict."""
        args = {"x": 1}
        [call] = anthropic.parse_calls(
            [{"type": "tool_use", "id": "t", "name": "zeta", "input": args}]
        )
        args["x"] = 2
        assert call.arguments == {"x": 1}


def test_modules_import_without_any_sdk() -> None:
    """The provider modules import and work with every SDK blocked."""
    code = textwrap.dedent(
        """
        import sys
        for name in ("openai", "anthropic", "google", "google.genai",
                     "mcp", "mcp_types", "pydantic"):
            sys.modules[name] = None  # makes `import name` fail
        from toolctx import Dispatcher, Registry, tool
        from toolctx.providers import anthropic, gemini, mcp, openai

        @tool
        def ping() -> str:
            '''Answer pong.'''
            return "pong"

        registry = Registry([ping])
        for module in (openai, anthropic, gemini, mcp):
            assert module.tools(registry)
        [call] = mcp.parse_calls(
            {"id": 1, "method": "tools/call", "params": {"name": "ping"}}
        )
        result = Dispatcher(registry).dispatch(call)
        assert mcp.result_message(result)["content"][0]["text"] == "pong"
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
