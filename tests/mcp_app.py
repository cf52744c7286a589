"""Tools served over MCP in tests/test_mcp_server.py and tests/test_cli.py.

Module-level on purpose: ``python -m toolctx serve tests.mcp_app:registry``
imports this module in a subprocess.
"""

from __future__ import annotations

import argparse
import enum
import os
import subprocess
import sys

from typing import Annotated, Any

import attrs

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolAnnotations,
    ToolCall,
    ToolDenied,
    ToolResult,
    execution_context,
    publish,
    report_progress,
    tool,
)
from toolctx.content import Audio, File, Image, Part
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


# -- lively: metadata, content, progress, noise, a registry that grows -------

lively = Registry()
"""Tools for the issue #12 behaviours (tests/test_mcp_*.py)."""

PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image"
"""The bytes the picture tool returns as its image."""


@lively.tool(
    title="Read aloud",
    annotations=ToolAnnotations(read_only=True, open_world=False),
)
def loud(text: str) -> str:
    """Write *text* to stdout in every way a tool might, and return it.

    Args:
        text: What to write.
    """
    print(f"print {text}")  # noqa: T201 - the point of the tool
    sys.stdout.write(f"buffered {text}, flushed at exit\n")  # no flush
    os.write(1, f"fd1 {text}\n".encode())
    subprocess.run(
        [sys.executable, "-c", f"print('child {text}')"], check=True
    )
    return text


@lively.tool(
    annotations=ToolAnnotations(destructive=True, idempotent=False),
)
def grow(name: str) -> str:
    """Register a new tool called *name* (the tool list changes).

    Args:
        name: The new tool's name.
    """

    def extra() -> str:
        """A tool added at run time."""
        return name

    lively.register(tool(name=name)(extra))
    return f"registered {name}"


@lively.tool
def steps(n: int) -> int:
    """Report progress n times (a sync tool: it runs in a worker thread).

    Args:
        n: How many steps.
    """
    for i in range(1, n + 1):
        report_progress(i, n, f"step {i}")
    return n


@lively.tool
async def async_steps(n: int) -> int:
    """Report progress n times from an async tool.

    Args:
        n: How many steps.
    """
    for i in range(1, n + 1):
        report_progress(i, total=None, message=None if i % 2 else f"s{i}")
    return n


@lively.tool
def picture() -> list[Part]:
    """Return text, an image, a sound and a file."""
    return [
        "A chart",
        Image(PNG, "image/png"),
        Audio(b"RIFF0000WAVE", "audio/wav"),
        File(b"%PDF-1.7", "application/pdf", name="q3 report.pdf"),
    ]


@lively.tool
def reading() -> Reading:
    """Return one reading (an object output)."""
    return Reading(21.5)


@lively.tool
def readings() -> list[Reading]:
    """Return two readings (an array output: wrapped as result)."""
    return [Reading(20.0), Reading(70.0, Unit.F)]


@lively.tool
def crash(why: str) -> int:
    """Fail with a RuntimeError.

    Args:
        why: The message.
    """
    raise RuntimeError(why)
