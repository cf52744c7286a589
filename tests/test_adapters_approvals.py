"""A call held for approval is never handed to a framework's model as if it ran.

The adapters render results with the providers' renderer, which refuses a
pending result naming ``Dispatcher.resume``: the framework's run stops
with that error rather than the model seeing an empty output.
"""

from __future__ import annotations

import asyncio

from typing import Any

import pytest

from toolctx import Dispatcher, ExecutionContext, Registry, ToolCall


def _says_why(call: ToolCall, context: ExecutionContext) -> Any:
    """A check returning its reason (truthy): the call waits (#19)."""
    return call.arguments["amount"] > 1 and "over the limit"


async def _asks_a_service(call: ToolCall, context: ExecutionContext) -> bool:
    """An async check: awaited, never skipped (#19)."""
    await asyncio.sleep(0)
    return True


CHECKS = [True, _says_why, _asks_a_service]


def _dispatcher(check: Any = True) -> Dispatcher:
    registry = Registry()

    @registry.tool(needs_approval=check)
    def wire(amount: int) -> str:
        """Wire money (waits for a person)."""
        raise AssertionError("a held call ran")

    return Dispatcher(registry)


@pytest.mark.parametrize("check", CHECKS)
def test_langchain_refuses_a_held_call(check: Any) -> None:
    """tool.invoke(tool_call) raises, naming resume; the tool did not run."""
    pytest.importorskip("langchain_core")
    from toolctx.adapters.langchain import tools

    (wire,) = tools(_dispatcher(check))
    with pytest.raises(ValueError, match=r"waiting for approval.*resume"):
        wire.invoke(
            {
                "type": "tool_call",
                "name": "wire",
                "args": {"amount": 5},
                "id": "c1",
            }
        )


@pytest.mark.parametrize("check", CHECKS)
def test_openai_agents_refuses_a_held_call(check: Any) -> None:
    """on_invoke_tool raises, naming resume."""
    pytest.importorskip("agents")
    from agents.tool_context import ToolContext

    from toolctx.adapters.openai_agents import function_tools

    (wire,) = function_tools(_dispatcher(check))
    ctx = ToolContext(
        context=None,
        tool_name="wire",
        tool_call_id="c1",
        tool_arguments='{"amount": 5}',
    )
    with pytest.raises(ValueError, match=r"waiting for approval.*resume"):
        asyncio.run(wire.on_invoke_tool(ctx, '{"amount": 5}'))
