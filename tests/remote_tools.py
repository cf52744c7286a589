"""Tools that worker processes import by reference in tests/test_remote*.

Everything here is module-level on purpose: a worker process (a spawned
process pool, a Dask worker) finds the tools, the context keys and the
scope loader by importing this module.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
import time

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import attrs

from toolctx import (
    ContextKey,
    ExecutionContext,
    Registry,
    ToolDefinition,
    ToolDenied,
    current_context,
    execution_context,
    publish,
    set_state,
    tool,
)
from toolctx.content import Image, Text


@attrs.frozen
class Tenant:
    """A typed context value that must survive the trip as a Tenant."""

    name: str
    plan: str


@attrs.frozen
class User:
    """The runtime scope: rebuilt in the worker by load_scope."""

    name: str
    pid: int


TENANT = ContextKey("remote_tests.tenant", Tenant)
AUDIT = ContextKey("remote_tests.audit", Tenant)
LOADED: list[str] = []


def load_scope(ctx: ExecutionContext) -> User:
    """Rebuild the scope from the serialized identity (the user id)."""
    LOADED.append(ctx.invocation_id)
    return User(name=f"user:{ctx.user_id}", pid=os.getpid())


def broken_loader(ctx: ExecutionContext) -> User:
    """A scope loader that fails."""
    msg = f"no such user {ctx.user_id!r}"
    raise LookupError(msg)


not_callable_loader = 42

DB_PASSWORD = "pg-s3cret-7f1c"


def leaky_loader(ctx: ExecutionContext) -> User:
    """A scope loader whose error quotes a secret, as drivers often do."""
    msg = (
        f"could not connect to postgres://admin:{DB_PASSWORD}@db.internal"
        f"/users to load {ctx.user_id!r}"
    )
    raise ConnectionError(msg)


@tool
def whoami(ctx: ExecutionContext) -> dict[str, Any]:
    """Report what the worker sees of the call's context."""
    return {
        "pid": os.getpid(),
        "invocation_id": ctx.invocation_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "tool_call_id": ctx.tool_call_id,
        "tool_name": ctx.tool_name,
        "session_id": ctx.session_id,
        "user_id": ctx.user_id,
        "agent_id": ctx.agent_id,
        "turn": ctx.turn,
        "metadata": dict(ctx.metadata),
        "state": dict(ctx.state),
        "prior": [r.name for r in ctx.prior_results],
        "bound_is_param": execution_context() is ctx,
        "scope_is_none": ctx.scope is None,
    }


@tool
def tenant_info() -> dict[str, Any]:
    """Read a typed value: it must come back as a Tenant."""
    tenant = execution_context().require(TENANT)
    return {"type": type(tenant).__name__, "name": tenant.name}


@tool
def record(n: int) -> int:
    """Publish metadata and set state, then return twice *n*."""
    publish(AUDIT, Tenant(name="acme", plan=f"plan-{n}"))
    publish("plain", {"n": n})
    set_state("count", n)
    set_state(TENANT, Tenant(name="globex", plan="pro"))
    return n * 2


@tool
def explode(message: str) -> None:
    """Raise a ValueError after publishing something."""
    publish("before", "crash")
    set_state("lost", True)
    raise ValueError(message)


class LockedError(Exception):
    """An exception that cannot be pickled (it holds a lock)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


@tool
def explode_unpicklable() -> None:
    """Raise an exception that cannot cross a process."""
    msg = "holding a lock"
    raise LockedError(msg)


@tool
def deny() -> None:
    """Refuse from inside the tool."""
    msg = "the user said no"
    raise ToolDenied(msg)


@tool
def needs_scope() -> dict[str, Any]:
    """Read the scope as a User."""
    user = execution_context().scope_as(User)
    return {"name": user.name, "scope_pid": user.pid, "pid": os.getpid()}


@tool
def publish_unserializable() -> str:
    """Publish a value that has no JSON form."""
    publish("thing", object())
    return "done"


@tool
async def async_whoami(delay: float = 0.0) -> dict[str, Any]:
    """Sleep, then report the context seen inside the event loop."""
    await asyncio.sleep(delay)
    ctx = execution_context()
    set_state("async", True)
    return {"invocation_id": ctx.invocation_id, "user_id": ctx.user_id}


@tool
def countdown(n: int) -> Iterator[int]:
    """A generator tool: its chunks become the output list."""
    yield from range(n, 0, -1)
    set_state("counted", n)


@tool
async def acountdown(n: int) -> AsyncIterator[dict[str, Any]]:
    """An async generator tool that reads its context on every step."""
    for i in range(n):
        await asyncio.sleep(0)
        yield {"i": i, "user": execution_context().user_id}


@tool(name="renamed_tool")
def renamed_impl(text: str) -> str:
    """A tool whose name differs from its function's name."""
    return text.upper()


def shout(text: str) -> str:
    """A plain function that a tool below wraps under another name."""
    return text.upper() + "!"


loud = tool(name="loud", timeout=5)(shout)


def plain_add(a: int, b: int) -> int:
    """Add two integers (a plain function, registered undecorated)."""
    return a + b


class WeatherTool:
    """A hand-written Tool: definition() and execute(args)."""

    def definition(self) -> ToolDefinition:
        """Describe the tool."""
        return ToolDefinition(
            name="weather",
            description="Weather for a city.",
            parameters={
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        )

    def execute(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer from the arguments and the context."""
        ctx = execution_context()
        publish("source", "fake")
        return {"city": args["city"], "user": ctx.user_id}


weather = WeatherTool()


class NotATool:
    """Has no definition()/execute()."""


registry = Registry([whoami, record, plain_add, weather])


@tool
def parse_flags(argv: list[str]) -> dict[str, Any]:
    """Parse command-line flags with argparse, which exits on bad input."""
    parser = argparse.ArgumentParser(prog="parse_flags", add_help=False)
    parser.add_argument("--count", type=int, required=True)
    return vars(parser.parse_args(argv))


@tool
def first_of(items: list[int]) -> int:
    """Return the first item: next() raises StopIteration on none."""
    return next(iter(items))


@tool
async def await_cancelled_future() -> str:
    """Await a future that someone else cancels: CancelledError."""
    future = asyncio.get_running_loop().create_future()
    future.cancel()
    await future
    return "unreachable"


@tool
def raise_cancelled() -> None:
    """A sync tool raising CancelledError itself (no task to cancel)."""
    raise asyncio.CancelledError


class UnprintableError(Exception):
    """An exception whose message cannot be read: ``str()`` raises."""

    def __str__(self) -> str:
        msg = "no message for you"
        raise RuntimeError(msg)


@tool
def raise_unprintable() -> None:
    """Raise an exception whose ``__str__`` raises."""
    raise UnprintableError


@tool
def crash_worker() -> None:
    """Kill the worker process outright (a lost call)."""
    os._exit(3)


@tool(timeout=0.1)
def sleepy(seconds: float) -> str:
    """A sync tool that outlives its timeout."""
    time.sleep(seconds)
    return "late"


def context_is_clear() -> bool:
    """Whether no context is bound in this worker (run after a call)."""
    return current_context() is None


def worker_pid() -> int:
    """The worker's pid."""
    return os.getpid()


def loaded_scopes() -> list[str]:
    """The invocation ids load_scope saw in this process."""
    return list(LOADED)


@tool
def snapshot(caption: str) -> list[Text | Image]:
    """Return a caption and an image: content parts cross the process."""
    return [caption, Image(b"\x89PNG\r\n\x1a\n-remote", "image/png")]
