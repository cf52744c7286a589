"""How a tool function's parameters become its schema, or a clear error."""

from __future__ import annotations

import asyncio

from typing import Annotated

import pytest

from pydantic import Field

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    SchemaError,
    ToolCall,
    ToolResult,
    tool,
)


class TestOptionalContextParameter:
    """``ctx: ExecutionContext | None = None`` is injected too."""

    def test_injected_and_not_in_the_schema(self) -> None:
        """The dispatcher passes the call's context; the model sees none."""
        registry = Registry()

        @registry.tool
        def who(ctx: ExecutionContext | None = None) -> str | None:
            """Say who is calling."""
            return None if ctx is None else ctx.user_id

        assert who.definition().parameters["properties"] == {}
        template = ExecutionContext(user_id="ada")
        result = Dispatcher(registry).dispatch(ToolCall("who", "{}"), template)
        assert result.output == "ada"

    def test_direct_execute_without_a_context_gets_none(self) -> None:
        """Outside a call, an optional context parameter is None."""

        @tool
        def who(ctx: ExecutionContext | None = None) -> str:
            """Say who is calling."""
            return "nobody" if ctx is None else str(ctx.user_id)

        assert who.execute({}) == "nobody"
        assert who() == "nobody"


class TestNoneDefaults:
    """``x: T = None`` must say ``T | None``."""

    def test_refused_with_the_fix(self) -> None:
        """The message names the parameter and the annotation to write."""
        namespace: dict[str, object] = {}
        exec("def f(x: int = None) -> int: return 1", namespace)  # noqa: S102
        with pytest.raises(SchemaError) as info:
            tool(namespace["f"])  # type: ignore[arg-type]

        assert info.value.parameter == "x"
        assert "Write `x: int | None = None`" in str(info.value)

    @pytest.mark.parametrize(
        "source",
        [
            "def f(x: int | None = None) -> int: return 1",
            "def f(x: Optional[int] = None) -> int: return 1",
            "def f(x: Any = None) -> int: return 1",
            "def f(x: Literal['a', None] = None) -> int: return 1",
            "def f(x: Annotated[int | None, 'n'] = None) -> int: return 1",
        ],
    )
    def test_types_that_admit_none_are_fine(self, source: str) -> None:
        """Optional, Any, a Literal with None: None is a valid default."""
        namespace: dict[str, object] = {}
        exec(  # noqa: S102 - one signature per case
            "from typing import Annotated, Any, Literal, Optional\n" + source,
            namespace,
        )
        made = tool(namespace["f"])  # type: ignore[arg-type]
        assert "x" not in made.definition().parameters.get("required", [])


class TestMissingAnnotations:
    """A missing annotation is an error that suggests the right type."""

    @pytest.mark.parametrize(
        ("doc", "suggested"),
        [
            ("Do.\n\n    Args:\n        n (integer): How many.\n", "int"),
            (
                (
                    "Do.\n\n    Parameters\n    ----------\n"
                    "    n : list[int]\n        How many.\n"
                ),
                "list[int]",
            ),
            ("Do.\n\n    :param n: How many.\n    :type n: float\n", "float"),
            ("Do.\n\n    :param str n: How many.\n", "str"),
        ],
        ids=["google", "numpy", "rest-type", "rest-param"],
    )
    def test_the_docstring_type_is_suggested(
        self, doc: str, suggested: str
    ) -> None:
        """``n (integer)`` in the docstring suggests ``n: int``."""

        def f(n):  # type: ignore[no-untyped-def]
            return n

        f.__doc__ = doc
        with pytest.raises(SchemaError) as info:
            tool(f)
        assert f"annotate it `n: {suggested}`" in str(info.value)

    def test_without_a_documented_type_str_is_the_example(self) -> None:
        """Nothing to go on: the message shows the form to write."""

        def f(n):  # type: ignore[no-untyped-def]
            """Do."""
            return n

        with pytest.raises(SchemaError, match=r"Annotate it, e\.g\. `n: str`"):
            tool(f)


class TestOptionalContextIsNeverAnArgument:
    """The model cannot fill an optional context parameter."""

    def test_an_argument_with_its_name_is_unexpected(self) -> None:
        """``{"ctx": ...}`` is refused like any unknown argument."""
        registry = Registry()

        @registry.tool
        def who(ctx: ExecutionContext | None = None) -> str:
            """Say who is calling."""
            return "nobody" if ctx is None else str(ctx.user_id)

        result = Dispatcher(registry).dispatch(
            ToolCall("who", '{"ctx": {"user_id": "root"}}')
        )
        assert result.is_error
        assert result.error is not None
        assert "ctx: unexpected argument" in result.error


class TestFieldDefaults:
    """``= Field(...)`` is the parameter's default plus its metadata."""

    @staticmethod
    def _registry() -> Registry:
        pydantic = pytest.importorskip("pydantic")
        registry = Registry()

        @registry.tool
        def repeat(
            text: str,
            n: int = pydantic.Field(2, ge=0, description="How often."),
            tags: list[str] = pydantic.Field(default_factory=list),  # noqa: B008
        ) -> list[object]:
            """Repeat a text."""
            return [text * n, tags]

        return registry

    @pytest.mark.parametrize("path", ["fast", "intercepted"])
    def test_absent_arguments_get_the_field_default(self, path: str) -> None:
        """The tool gets 2 and a fresh list, never a ``FieldInfo``."""
        from doubles import PassThrough

        interceptors = [PassThrough()] if path == "intercepted" else []
        dispatcher = Dispatcher(self._registry(), interceptors=interceptors)
        first = dispatcher.dispatch(ToolCall("repeat", '{"text": "ab"}'))
        assert first.output == ["abab", []]
        given = dispatcher.dispatch(
            ToolCall("repeat", '{"text": "a", "n": 3, "tags": ["x"]}')
        )
        assert given.output == ["aaa", ["x"]]

    def test_the_field_constraint_is_enforced(self) -> None:
        """``ge=0`` refuses -1, naming the bound."""
        dispatcher = Dispatcher(self._registry())
        result = dispatcher.dispatch(
            ToolCall("repeat", '{"text": "a", "n": -1}')
        )
        assert result.error is not None
        assert "n: expected an integer >= 0, got -1" in result.error
        schema = self._registry()["repeat"].definition().parameters
        assert schema["properties"]["n"]["description"] == "How often."


@tool
def scale(
    value: float,
    factor: Annotated[float, Field(default=5.0, ge=0)],
    tags: Annotated[list[str], Field(default_factory=list)],
    offset: Annotated[int, Field(default=1, description="Added.")] = 3,
) -> list[object]:
    """Scale a value.

    Args:
        value: The value.
        factor: How much.
        tags: Labels.
        offset: Ignored: the ``Field`` description wins.
    """
    tags.append("seen")
    return [value * factor + offset, tags]


class TestAnnotatedFieldDefaults:
    """``Annotated[T, Field(default=...)]`` is optional, as in pydantic."""

    def test_the_schema_shows_the_default(self) -> None:
        """Not required; ``default`` shown as for ``= 5.0``; bounds kept."""
        schema = scale.definition().parameters
        assert schema["required"] == ["value"]
        assert schema["properties"]["factor"] == {
            "type": "number",
            "minimum": 0,
            "description": "How much.",
            "default": 5.0,
        }
        assert schema["properties"]["tags"] == {
            "type": "array",
            "items": {"type": "string"},
            "description": "Labels.",
        }

    def test_the_functions_own_default_wins(self) -> None:
        """``Annotated[int, Field(default=1)] = 3`` defaults to 3 (pydantic)."""
        schema = scale.definition().parameters
        assert schema["properties"]["offset"]["default"] == 3
        assert schema["properties"]["offset"]["description"] == "Added."

    @pytest.mark.parametrize("path", ["fast", "intercepted"])
    def test_dispatch_without_the_arguments(self, path: str) -> None:
        """The tool gets 5.0, a fresh list per call, and 3."""
        from doubles import PassThrough

        interceptors = [PassThrough()] if path == "intercepted" else []
        dispatcher = Dispatcher(Registry([scale]), interceptors=interceptors)
        call = ToolCall("scale", '{"value": 2}', "c1")
        assert dispatcher.dispatch(call).output == [13.0, ["seen"]]
        assert dispatcher.dispatch(call).output == [13.0, ["seen"]]

    def test_every_dispatch_path_fills_them(self) -> None:
        """``adispatch`` and both batches fill the defaults too."""
        dispatcher = Dispatcher(Registry([scale]))
        calls = [ToolCall("scale", '{"value": 1}', f"c{i}") for i in (1, 2)]

        async def run() -> list[ToolResult]:
            one = await dispatcher.adispatch(calls[0])
            return [one, *await dispatcher.adispatch_all(calls)]

        results = [*asyncio.run(run()), *dispatcher.dispatch_all(calls)]
        assert [r.output for r in results] == [[8.0, ["seen"]]] * 5

    def test_a_field_without_a_default_keeps_the_annotated_one(self) -> None:
        """``Annotated[int, Field(default=2)] = Field(ge=0)`` defaults to 2."""

        def count(n: int = Field(ge=0)) -> int:
            """Count."""
            return n

        count.__annotations__ = {
            "n": Annotated[int, Field(default=2)],
            "return": int,
        }
        counted = tool(count)
        schema = counted.definition().parameters
        assert schema["properties"]["n"] == {
            "type": "integer",
            "minimum": 0,
            "default": 2,
        }
        result = Dispatcher(Registry([counted])).dispatch(
            ToolCall("count", "{}", "c1")
        )
        assert result.output == 2

    def test_the_constraint_still_holds(self) -> None:
        """A given value still meets ``ge=0``."""
        dispatcher = Dispatcher(Registry([scale]))
        result = dispatcher.dispatch(
            ToolCall("scale", '{"value": 1, "factor": -1}', "c1")
        )
        assert "factor: expected a number >= 0, got -1" in (result.error or "")
