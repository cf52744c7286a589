"""Tools served over MCP in tests/test_mcp_server.py and tests/test_cli.py.

Module-level on purpose: ``python -m toolctx serve tests.mcp_app:registry``
imports this module in a subprocess.
"""

from __future__ import annotations

import argparse
import enum

from typing import Annotated, Any

import attrs

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolDenied,
    ToolResult,
    execution_context,
    publish,
)
from toolctx.mcp.meta import context_meta


class Unit(enum.Enum):
    """A temperature unit."""

    C = "c"
    F = "f"


@attrs.frozen
class Reading:
    """One thermometer reading."""

    value: float
    unit: Unit = Unit.C


registry = Registry()


@registry.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@registry.tool
def whoami(ctx: ExecutionContext) -> dict[str, Any]:
    """Report the context this call runs in."""
    return {
        "invocation_id": ctx.invocation_id,
        "session_id": ctx.session_id,
        "tool_call_id": ctx.tool_call_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "user_id": ctx.user_id,
        "agent_id": ctx.agent_id,
        "turn": ctx.turn,
        "tool_name": ctx.tool_name,
        "metadata": dict(ctx.metadata),
        "scope": type(ctx.scope).__name__ if ctx.scope is not None else None,
    }


@registry.tool
def convert(
    readings: list[Reading],
    to: Annotated[Unit, "The target unit."] = Unit.F,
    note: str | None = None,
) -> list[Reading]:
    """Convert thermometer readings.

    Args:
        readings: The readings to convert.
        to: The unit to convert to.
        note: Ignored.
    """
    out = []
    for r in readings:
        if r.unit is to:
            out.append(r)
        elif to is Unit.F:
            out.append(Reading(r.value * 9 / 5 + 32, Unit.F))
        else:
            out.append(Reading((r.value - 32) * 5 / 9, Unit.C))
    return out


@registry.tool
def explode() -> None:
    """Always fails."""
    msg = "the reactor is offline"
    raise RuntimeError(msg)


@registry.tool
def outgoing_meta() -> dict[str, Any]:
    """Show the _meta this call would send to another MCP server."""
    return context_meta(include_user=True)


@registry.tool
async def greet(name: str) -> str:
    """Greet someone, asynchronously.

    Args:
        name: Who to greet.
    """
    return f"hello {name} from {execution_context().session_id}"


@registry.tool
def leaky() -> str:
    """Publish a host-only secret and return a plain answer."""
    publish("secret", "hunter2")
    return "ok"


@registry.tool
def parse_flags(flags: list[str]) -> dict[str, Any]:
    """Parse command-line flags with argparse (which exits on bad input).

    Args:
        flags: The flags, e.g. ["--count", "3"].
    """
    parser = argparse.ArgumentParser(prog="parse_flags")
    parser.add_argument("--count", type=int, default=1)
    return vars(parser.parse_args(flags))


SECRET = "db-password=hunter2-correct-horse"
"""A secret that host code puts in exception messages (never for clients)."""


class DenyAll:
    """An interceptor that refuses every call (for Dispatcher targets)."""

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Refuse."""
        raise ToolDenied("nothing is allowed here")

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Pass the result through."""
        return result


class Broken:
    """An interceptor with a bug whose message carries a secret."""

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Fail on ``add``, exit on ``greet``, pass the others through."""
        if call.name == "add":
            msg = f"cannot connect with {SECRET}"
            raise RuntimeError(msg)
        if call.name == "greet":
            raise SystemExit(f"giving up: {SECRET}")
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Pass the result through."""
        return result


denying = Dispatcher(registry, interceptors=[DenyAll()])

broken = Dispatcher(
    registry, interceptors=[Broken()], include_exception_messages=False
)

not_a_registry = {"add": add}
