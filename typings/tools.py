"""Typing cases: @tool keeps the function's signature; results are typed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import assert_type

from toolctx import (
    Dispatcher,
    ExecutionContext,
    FunctionTool,
    Registry,
    Tool,
    ToolCall,
    ToolChunk,
    ToolDefinition,
    ToolProgress,
    ToolResult,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool(name="greeter", description="Greets.")
async def greet(name: str, *, excited: bool = False) -> str:
    """Greet."""
    return name + ("!" if excited else "")


assert_type(add(1, 2), int)
assert_type(add.definition(), ToolDefinition)
assert_type(add.name, str)


async def use_greet() -> None:
    assert_type(await greet("ada", excited=True), str)


registry = Registry()


@registry.tool
def ping() -> str:
    """Ping."""
    return "pong"


@registry.tool(name="pong2")
def pong() -> bool:
    """Pong."""
    return True


assert_type(ping, FunctionTool[[], str])
assert_type(ping(), str)
assert_type(pong(), bool)

dispatcher = Dispatcher(registry)
result = dispatcher.dispatch(ToolCall("ping", "{}"))
assert_type(result, ToolResult)
assert_type(result.is_error, bool)
assert_type(result.error, str | None)
assert_type(dispatcher.dispatch_all([ToolCall("ping")]), list[ToolResult])


async def use_async() -> None:
    assert_type(await dispatcher.adispatch(ToolCall("ping")), ToolResult)
    assert_type(
        await dispatcher.adispatch_all([ToolCall("ping")]), list[ToolResult]
    )


def use_stream() -> None:
    for item in dispatcher.stream(ToolCall("ping")):
        assert_type(item, ToolChunk | ToolProgress | ToolResult)


async def use_astream() -> None:
    async for item in dispatcher.astream(ToolCall("ping")):
        assert_type(item, ToolChunk | ToolProgress | ToolResult)


@tool
def maybe_who(ctx: ExecutionContext | None = None) -> str:
    """Say who is calling, if anyone."""
    return "nobody" if ctx is None else str(ctx.user_id)


assert_type(maybe_who(), str)
assert_type(maybe_who(ExecutionContext(user_id="ada")), str)


class PlainTool:
    """A plain tool class: definition() and execute()."""

    def definition(self) -> ToolDefinition:
        """Describe it."""
        return ToolDefinition(name="plain")

    def execute(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Echo the arguments."""
        return dict(args)


assert_type(
    Registry().register(PlainTool(), check_arguments=True, check_formats=True),
    Tool,
)
