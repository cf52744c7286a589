"""A call held for approval is never handed to a framework's model as if it ran.

The adapters render results with the providers' renderer, which refuses a
pending result naming ``Dispatcher.resume``: the framework's run stops
with that error rather than the model seeing an empty output.
"""

from __future__ import annotations

import pytest

from toolctx import Dispatcher, Registry


def _dispatcher() -> Dispatcher:
    registry = Registry()

    @registry.tool(needs_approval=True)
    def wire(amount: int) -> str:
        """Wire money (waits for a person)."""
        return "wired"

    return Dispatcher(registry)


def test_langchain_refuses_a_held_call() -> None:
    """tool.invoke(tool_call) raises, naming resume; the tool did not run."""
    pytest.importorskip("langchain_core")
    from toolctx.adapters.langchain import tools

    (wire,) = tools(_dispatcher())
    with pytest.raises(ValueError, match=r"waiting for approval.*resume"):
        wire.invoke(
            {
                "type": "tool_call",
                "name": "wire",
                "args": {"amount": 5},
                "id": "c1",
            }
        )


def test_openai_agents_refuses_a_held_call() -> None:
    """on_invoke_tool raises, naming resume."""
    pytest.importorskip("agents")
    import asyncio

    from agents.tool_context import ToolContext

    from toolctx.adapters.openai_agents import function_tools

    (wire,) = function_tools(_dispatcher())
    ctx = ToolContext(
        context=None,
        tool_name="wire",
        tool_call_id="c1",
        tool_arguments='{"amount": 5}',
    )
    with pytest.raises(ValueError, match=r"waiting for approval.*resume"):
        asyncio.run(wire.on_invoke_tool(ctx, '{"amount": 5}'))
