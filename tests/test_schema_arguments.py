"""A plain tool's arguments, checked against its own schema on request.

A plain tool (``definition()`` + ``execute()``) brings its own JSON Schema.
``Registry.register(tool, check_arguments=True)`` validates each call's
arguments against it (with the ``jsonschema`` library) before
``execute`` runs, and reports problems in the shape ``@tool`` does: an
error result naming every wrong argument by its path. Without the flag,
nothing changes: ``execute`` gets whatever the model sent.
"""

from __future__ import annotations

import asyncio
import json
import sys

from collections.abc import Mapping
from typing import Any

import pytest

from toolctx import (
    Dispatcher,
    Registry,
    SchemaError,
    ToolCall,
    ToolDefinition,
    ToolResult,
    tool,
)


pytest.importorskip("jsonschema")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "pattern": "^[a-z ]+$"},
        "limit": {"type": "integer", "minimum": 1},
        "order": {"enum": ["asc", "desc"]},
        "filters": {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["tags"],
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class Search:
    """A plain tool class that records what ``execute`` was given."""

    def __init__(self, schema: Mapping[str, Any] = SCHEMA) -> None:
        self.schema = schema
        self.seen: list[Mapping[str, Any]] = []

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name="search", description="Search.", parameters=self.schema
        )

    def execute(self, args: Mapping[str, Any]) -> Any:
        self.seen.append(args)
        return {"hits": [], "args": dict(args)}


def _run(dispatcher: Dispatcher, call: ToolCall, path: str) -> ToolResult:
    """Dispatch *call* on one path: one call, a batch or a stream."""
    if path == "dispatch":
        return dispatcher.dispatch(call)
    if path == "adispatch":
        return asyncio.run(dispatcher.adispatch(call))
    if path == "dispatch_all":
        return dispatcher.dispatch_all([call])[0]
    if path == "adispatch_all":
        return asyncio.run(dispatcher.adispatch_all([call]))[0]
    if path == "stream":
        items = list(dispatcher.stream(call))
    else:

        async def collect() -> list[object]:
            return [item async for item in dispatcher.astream(call)]

        items = asyncio.run(collect())
    result = items[-1]
    assert isinstance(result, ToolResult)
    return result


PATHS = [
    "dispatch",
    "adispatch",
    "dispatch_all",
    "adispatch_all",
    "stream",
    "astream",
]

VIOLATIONS = [
    pytest.param(
        {"query": "cats", "limit": "5"},
        'limit: expected an integer, got the string "5"',
        id="type",
    ),
    pytest.param(
        {"limit": 3},
        "query: missing required argument (expected a string)",
        id="required",
    ),
    pytest.param(
        {"query": "cats", "page": 2},
        "page: unexpected argument (allowed: query, limit, order, filters)",
        id="additionalProperties",
    ),
    pytest.param(
        {"query": "cats", "order": "random"},
        "order: expected one of 'asc', 'desc', got the string \"random\"",
        id="enum",
    ),
    pytest.param(
        {"query": "DROP TABLE"},
        "query: expected a string matching '^[a-z ]+$', got the string "
        '"DROP TABLE"',
        id="pattern",
    ),
    pytest.param(
        {"query": "cats", "filters": {"tags": ["a", 7]}},
        "filters.tags[1]: expected a string, got 7",
        id="nested-type",
    ),
    pytest.param(
        {"query": "cats", "filters": {}},
        "filters.tags: missing required property (expected an array)",
        id="nested-required",
    ),
    pytest.param(
        {"query": "cats", "filters": {"tags": [], "colour": "red"}},
        "filters.colour: unexpected property (allowed: tags)",
        id="nested-additionalProperties",
    ),
    pytest.param(
        {"query": "cats", "limit": 0},
        "limit: expected a number >= 1, got 0",
        id="minimum",
    ),
]


class TestChecked:
    """``check_arguments=True``: the schema is enforced before ``execute``."""

    @pytest.mark.parametrize("path", PATHS)
    def test_valid_arguments_pass_unchanged(self, path: str) -> None:
        """Arguments that fit the schema reach ``execute`` exactly as sent."""
        search = Search()
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(search, check_arguments=True)
        sent = {"query": "cats", "limit": 2, "filters": {"tags": ["x"]}}

        result = _run(dispatcher, ToolCall("search", json.dumps(sent)), path)

        assert not result.is_error, result.error
        assert search.seen == [sent]
        assert result.output == {"hits": [], "args": sent}

    @pytest.mark.parametrize("path", PATHS)
    @pytest.mark.parametrize(("arguments", "problem"), VIOLATIONS)
    def test_each_violation_is_an_error_result_naming_its_path(
        self, path: str, arguments: dict[str, Any], problem: str
    ) -> None:
        """A violation is an error result with its path; nothing runs."""
        search = Search()
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(search, check_arguments=True)

        result = _run(dispatcher, ToolCall("search", arguments, "c1"), path)

        assert result.is_error
        assert result.error == (
            f"Invalid arguments for tool 'search': {problem}"
        )
        assert search.seen == []

    def test_every_problem_is_reported_at_once(self) -> None:
        """All problems come in one message, so one retry can fix them."""
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(Search(), check_arguments=True)
        arguments = {"limit": "5", "order": "up", "filters": {"tags": [1]}}

        result = dispatcher.dispatch(ToolCall("search", arguments))

        assert result.error == (
            "Invalid arguments for tool 'search': "
            "filters.tags[0]: expected a string, got 1; "
            'limit: expected an integer, got the string "5"; '
            "order: expected one of 'asc', 'desc', got the string \"up\"; "
            "query: missing required argument (expected a string)"
        )

    def test_the_message_stays_bounded(self) -> None:
        """A flood of unknown keys gives a short, counted message."""
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(Search(), check_arguments=True)
        arguments = {"query": "x"} | {f"k{i}": i for i in range(5000)}

        result = dispatcher.dispatch(ToolCall("search", arguments))

        assert result.is_error
        assert result.error is not None
        assert len(result.error) < 3000
        assert "more unexpected arguments" in result.error

    def test_the_exception_is_a_tool_arguments_error(self) -> None:
        """Hosts see a ``ToolArgumentsError`` with one record per problem."""
        from toolctx.exceptions import ToolArgumentsError

        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(Search(), check_arguments=True)

        result = dispatcher.dispatch(ToolCall("search", {"limit": 0}))

        assert isinstance(result.exception, ToolArgumentsError)
        assert [(e.path, e.message) for e in result.exception.errors] == [
            ("limit", "expected a number >= 1, got 0"),
            ("query", "missing required argument (expected a string)"),
        ]

    def test_formats_are_annotations_unless_asked(self) -> None:
        """``format`` is asserted only with ``check_formats=True``."""
        schema = {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}},
        }
        lenient, strict = Search(schema), Search(schema)
        registry = Registry()
        registry.register(lenient, check_arguments=True)
        dispatcher = Dispatcher(registry)
        assert not dispatcher.dispatch(
            ToolCall("search", {"id": "x"})
        ).is_error

        registry.register(
            strict, check_arguments=True, check_formats=True, replace=True
        )
        result = dispatcher.dispatch(ToolCall("search", {"id": "x"}))
        assert result.error == (
            "Invalid arguments for tool 'search': id: expected a string in "
            "the format 'uuid', got the string \"x\""
        )

    @pytest.mark.parametrize("path", PATHS)
    def test_a_ref_that_does_not_resolve_is_an_error_result(
        self, path: str
    ) -> None:
        """A "$ref" is never fetched: unresolved, the call fails cleanly."""
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": "http://127.0.0.1:9/a.json"}},
        }
        search = Search(schema)
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(search, check_arguments=True)

        result = _run(dispatcher, ToolCall("search", {"a": 1}), path)

        assert result.error == (
            "Invalid arguments for tool 'search': could not check the "
            'arguments against the tool\'s schema (a "$ref" in it does not '
            "resolve); the tool cannot be called now"
        )
        assert search.seen == []

    def test_a_local_ref_is_followed(self) -> None:
        """A "$ref" into the schema's own ``$defs`` checks as usual."""
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "integer"}},
        }
        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(Search(schema), check_arguments=True)

        assert dispatcher.dispatch(ToolCall("search", {"a": 1})).output == {
            "hits": [],
            "args": {"a": 1},
        }
        assert dispatcher.dispatch(ToolCall("search", {"a": "1"})).error == (
            "Invalid arguments for tool 'search': a: expected an integer, "
            'got the string "1"'
        )

    def test_check_formats_needs_check_arguments(self) -> None:
        """``check_formats`` alone is refused: it would check nothing."""
        with pytest.raises(ValueError, match="needs check_arguments=True"):
            Registry().register(Search(), check_formats=True)

    def test_an_invalid_schema_is_refused_at_registration(self) -> None:
        """A schema jsonschema cannot use fails ``register``, not a call."""
        bad = Search({"type": "object", "properties": {"q": {"type": 5}}})

        with pytest.raises(SchemaError, match=r"tool 'search'.*properties"):
            Registry().register(bad, check_arguments=True)

    def test_missing_jsonschema_names_the_extra(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without jsonschema the error says which extra to install."""
        monkeypatch.setitem(sys.modules, "jsonschema", None)
        registry = Registry()

        with pytest.raises(ImportError, match=r"toolctx\[jsonschema\]"):
            registry.register(Search(), check_arguments=True)
        assert "search" not in registry

    def test_a_function_tool_is_checked_anyway(self) -> None:
        """On a ``@tool`` function the flag changes nothing."""

        @tool
        def add(a: int, b: int) -> int:
            """Add."""
            return a + b

        dispatcher = Dispatcher(Registry())
        dispatcher.registry.register(add, check_arguments=True)

        assert (
            dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2})).output == 3
        )
        assert dispatcher.dispatch(
            ToolCall("add", {"a": "1", "b": 2})
        ).error == (
            "Invalid arguments for tool 'add': a: expected an integer, got "
            'the string "1"'
        )


class TestUnchecked:
    """Without the flag a plain tool gets the model's arguments as sent."""

    @pytest.mark.parametrize("path", PATHS)
    @pytest.mark.parametrize(("arguments", "problem"), VIOLATIONS)
    def test_arguments_reach_execute_unchecked(
        self, path: str, arguments: dict[str, Any], problem: str
    ) -> None:
        """Schema violations reach ``execute`` unchanged, as before."""
        del problem
        search = Search()
        dispatcher = Dispatcher(Registry([search]))

        result = _run(dispatcher, ToolCall("search", arguments), path)

        assert not result.is_error, result.error
        assert search.seen == [arguments]


class TestPatternsMeanECMA262:
    r"""A plain tool's ``pattern`` means what JSON Schema says, as @tool's.

    JSON Schema's patterns are ECMA-262 regular expressions: ``$`` is
    the end of the text and ``\d`` is an ASCII digit. Python's ``re``
    would let ``"admin\n"`` through ``^[a-z0-9]+$`` and take Arabic
    digits for ``\d``; the opt-in check refuses both, as every JSON
    Schema validator and toolctx's own validator do.
    """

    SCHEMA: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "user": {"type": "string", "pattern": "^[a-z0-9]+$"},
            "code": {"type": "string", "pattern": "^\\d+$"},
            "tags": {
                "type": "object",
                "patternProperties": {"^[a-z]+$": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }

    def _call(self, args: dict[str, Any]) -> ToolResult:
        registry = Registry()
        registry.register(Search(self.SCHEMA), check_arguments=True)
        return Dispatcher(registry).dispatch(ToolCall("search", args))

    def test_dollar_is_the_end_of_the_text(self) -> None:
        r"""``"admin\n"`` does not match ``^[a-z0-9]+$``."""
        assert not self._call({"user": "admin"}).is_error
        result = self._call({"user": "admin\n"})
        assert result.is_error
        assert "user" in (result.error or "")

    def test_digits_are_ascii(self) -> None:
        r"""``\d`` takes 0-9 only, not Arabic-Indic digits."""
        assert not self._call({"code": "123"}).is_error
        result = self._call({"code": "\u0661\u0662"})
        assert result.is_error
        assert "code" in (result.error or "")

    def test_pattern_properties_and_additional_properties(self) -> None:
        """A key matches ``patternProperties`` by ECMA rules, or is extra."""
        assert not self._call({"tags": {"red": 1}}).is_error
        bad_value = self._call({"tags": {"red": "x"}})
        assert bad_value.is_error
        assert "tags.red" in (bad_value.error or "")
        extra = self._call({"tags": {"red\n": 1}})
        assert extra.is_error
        assert "tags" in (extra.error or "")

    def test_a_pattern_ecma_does_not_have_is_refused_at_registration(
        self,
    ) -> None:
        r"""Python-only syntax (``\Z``) is a SchemaError naming the pattern."""
        schema = {
            "type": "object",
            "properties": {"q": {"type": "string", "pattern": "^a\\Z"}},
        }
        with pytest.raises(SchemaError, match="ECMA-262"):
            Registry().register(Search(schema), check_arguments=True)
