"""Typing cases that mypy must reject.

Each line carries ``# type: ignore[code]``; mypy runs with
``warn_unused_ignores`` (part of ``--strict``), so if a line ever starts to
type-check, the now-unused ignore fails the run.
"""

from __future__ import annotations

from toolctx import ContextKey, ExecutionContext, Registry, ToolCall, tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


add("1", 2)  # type: ignore[arg-type]
add(1)  # type: ignore[call-arg]
add(1, 2, c=3)  # type: ignore[call-arg]
wrong: str = add(1, 2)  # type: ignore[assignment]

ctx = ExecutionContext()
ctx.user_id = "mallory"  # type: ignore[misc]
ctx.turn = 2  # type: ignore[misc]
ExecutionContext("positional")  # type: ignore[call-arg]
ExecutionContext(turn="1")  # type: ignore[arg-type]

TENANT = ContextKey("rejected_tenant", str)
ctx.with_value(TENANT, 3)  # type: ignore[misc]
number: int = ctx.require(TENANT)  # type: ignore[assignment]

Registry().register(42)  # type: ignore[arg-type]
ToolCall(name=1)  # type: ignore[arg-type]
