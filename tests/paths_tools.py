"""The tools tests/test_paths.py sends through every dispatch path.

One tool for each *kind* (sync function, async function, sync generator,
async generator, hand-written ``execute`` class), with and without an
``ExecutionContext`` parameter, for each *behaviour* (return what it
received, publish and set state, raise one of the exceptions tools really
raise, return a value JSON cannot carry), in a default and an
``inline=True`` variant. Every tool is a module-level attribute on
purpose: a spawned worker process finds it by importing this module (see
``TOOLS`` and :func:`tool_for`).

The function tools share one signature, ``(n: int, text: str = "",
x: float = 0.0, data: Any = None)``, so that one list of hostile argument
texts fits them all; the ``ctx`` variants add a ``ctx: ExecutionContext``
parameter, first, second or keyword-only depending on the kind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, NoReturn

from toolctx import (
    ExecutionContext,
    FunctionTool,
    ToolDefinition,
    ToolDenied,
    execution_context,
    publish,
    set_state,
    tool,
)


KINDS = ("sync", "async", "gen", "agen", "plain")
"""Tool kinds: function, coroutine function, generator, async generator,
and a hand-written class with ``definition()`` and ``execute(args)``."""

FUNCTION_KINDS = ("sync", "async", "gen", "agen")
"""The kinds made with ``@tool`` (they may take an ExecutionContext)."""


class UnprintableError(Exception):
    """An exception whose ``__str__`` and ``__repr__`` raise."""

    def __str__(self) -> str:
        msg = "UnprintableError.__str__ failed"
        raise RuntimeError(msg)

    def __repr__(self) -> str:
        msg = "UnprintableError.__repr__ failed"
        raise RuntimeError(msg)


def context_view(ctx: ExecutionContext) -> dict[str, Any]:
    """What a tool reports of its context: the fields every path keeps.

    Invocation ids are fresh per call, so only their presence is shown;
    ``prior_results`` and the session state other than ``seed`` differ on
    purpose between ``dispatch_all`` and ``adispatch_all`` (see
    docs/concurrency.md), so they are left out.
    """
    return {
        "user_id": ctx.user_id,
        "session_id": ctx.session_id,
        "turn": ctx.turn,
        "agent_id": ctx.agent_id,
        "tool_name": ctx.tool_name,
        "tool_call_id": ctx.tool_call_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "has_invocation_id": bool(ctx.invocation_id),
        "metadata": dict(ctx.metadata),
        "seed": ctx.state.get("seed"),
    }


def _view(value: object, bound: ExecutionContext) -> object:
    """A received argument as the tool reports it."""
    if isinstance(value, ExecutionContext):
        return {"context_parameter_is_the_bound_context": value is bound}
    return value


def _echo(received: Mapping[str, Any]) -> dict[str, Any]:
    bound = execution_context()
    return {
        "args": {k: _view(v, bound) for k, v in received.items()},
        "context": context_view(bound),
    }


def _record(received: Mapping[str, Any]) -> None:
    ctx = execution_context()
    publish("seen", sorted(received))
    publish("tool", ctx.tool_name)
    set_state("count", len(received))
    set_state("last_call", ctx.tool_call_id)


def _recorded(received: Mapping[str, Any]) -> dict[str, Any]:
    _record(received)
    return _echo(received)


def _record_then_fail(received: Mapping[str, Any]) -> NoReturn:
    _record(received)
    msg = "failed after publishing"
    raise ValueError(msg)


def _value_error(_: Mapping[str, Any]) -> NoReturn:
    msg = "the input was refused"
    raise ValueError(msg)


def _empty_error(_: Mapping[str, Any]) -> NoReturn:
    raise ValueError


def _system_exit(_: Mapping[str, Any]) -> NoReturn:
    raise SystemExit(3)  # what argparse does on bad input


def _stop_iteration(_: Mapping[str, Any]) -> Any:
    return next(iter(()))  # next() on an empty iterator


def _stop_async_iteration(_: Mapping[str, Any]) -> NoReturn:
    raise StopAsyncIteration


def _cancelled(_: Mapping[str, Any]) -> Any:
    """Wait on a future someone else cancelled: CancelledError."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    future.cancel()
    return future.result()


def _unprintable(_: Mapping[str, Any]) -> NoReturn:
    raise UnprintableError


def _denied(_: Mapping[str, Any]) -> NoReturn:
    msg = "the user said no"
    raise ToolDenied(msg)


def _square(received: Mapping[str, Any]) -> Any:
    n = received.get("n", 0)
    return n * n if type(n) is int else n


BEHAVIOURS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "echo": _echo,
    "record": _recorded,
    "record_then_fail": _record_then_fail,
    "value_error": _value_error,
    "empty_error": _empty_error,
    "system_exit": _system_exit,
    "stop_iteration": _stop_iteration,
    "stop_async_iteration": _stop_async_iteration,
    "cancelled": _cancelled,
    "unprintable": _unprintable,
    "denied": _denied,
    "square": _square,
    "nan": lambda _: {"value": float("nan")},
    "infinity": lambda _: float("-inf"),
    "huge_int": lambda _: 10**5000,
    "surrogate": lambda _: "lone \ud800 surrogate",
    "unserializable": lambda _: {"value": object()},
}
"""What a tool does with the arguments it received: return or raise."""


def act(behaviour: str, received: Mapping[str, Any]) -> Any:
    """Do *behaviour* with the *received* arguments (sync tools)."""
    return BEHAVIOURS[behaviour](received)


async def aact(behaviour: str, received: Mapping[str, Any]) -> Any:
    """Do *behaviour* from a coroutine, after giving the loop a turn.

    ``cancelled`` awaits an asyncio future that was cancelled by someone
    else, as a tool awaiting a shared request would.
    """
    await asyncio.sleep(0)
    if behaviour == "cancelled":
        future = asyncio.get_running_loop().create_future()
        future.cancel()
        return await future
    return act(behaviour, received)


def chunks(behaviour: str, received: Mapping[str, Any]) -> Iterator[Any]:
    """A generator tool's body: one chunk, then *behaviour* as a chunk."""
    yield {"step": 0, "tool": execution_context().tool_name}
    yield act(behaviour, received)


async def achunks(
    behaviour: str, received: Mapping[str, Any]
) -> AsyncIterator[Any]:
    """An async generator tool's body, like :func:`chunks`."""
    yield {"step": 0, "tool": execution_context().tool_name}
    yield await aact(behaviour, received)


# -- the tools ----------------------------------------------------------------


def _make_sync(behaviour: str, with_ctx: bool) -> Callable[..., Any]:
    if with_ctx:

        def f_ctx(
            n: int,
            text: str = "",
            *,
            ctx: ExecutionContext,
            x: float = 0.0,
            data: Any = None,
        ) -> Any:
            """A sync tool that takes its context."""
            return act(
                behaviour,
                {"n": n, "text": text, "ctx": ctx, "x": x, "data": data},
            )

        return f_ctx

    def f(n: int, text: str = "", x: float = 0.0, data: Any = None) -> Any:
        """A sync tool."""
        return act(behaviour, {"n": n, "text": text, "x": x, "data": data})

    return f


def _make_async(behaviour: str, with_ctx: bool) -> Callable[..., Any]:
    if with_ctx:

        async def f_ctx(
            ctx: ExecutionContext,
            n: int,
            text: str = "",
            x: float = 0.0,
            data: Any = None,
        ) -> Any:
            """An async tool that takes its context."""
            return await aact(
                behaviour,
                {"n": n, "text": text, "ctx": ctx, "x": x, "data": data},
            )

        return f_ctx

    async def f(
        n: int, text: str = "", x: float = 0.0, data: Any = None
    ) -> Any:
        """An async tool."""
        return await aact(
            behaviour, {"n": n, "text": text, "x": x, "data": data}
        )

    return f


def _make_gen(behaviour: str, with_ctx: bool) -> Callable[..., Any]:
    if with_ctx:

        def f_ctx(
            n: int,
            ctx: ExecutionContext,
            text: str = "",
            x: float = 0.0,
            data: Any = None,
        ) -> Iterator[Any]:
            """A generator tool that takes its context."""
            yield from chunks(
                behaviour,
                {"n": n, "text": text, "ctx": ctx, "x": x, "data": data},
            )

        return f_ctx

    def f(
        n: int, text: str = "", x: float = 0.0, data: Any = None
    ) -> Iterator[Any]:
        """A generator tool."""
        yield from chunks(
            behaviour, {"n": n, "text": text, "x": x, "data": data}
        )

    return f


def _make_agen(behaviour: str, with_ctx: bool) -> Callable[..., Any]:
    if with_ctx:

        async def f_ctx(
            n: int,
            text: str = "",
            x: float = 0.0,
            data: Any = None,
            *,
            ctx: ExecutionContext,
        ) -> AsyncIterator[Any]:
            """An async generator tool that takes its context."""
            async for item in achunks(
                behaviour,
                {"n": n, "text": text, "ctx": ctx, "x": x, "data": data},
            ):
                yield item

        return f_ctx

    async def f(
        n: int, text: str = "", x: float = 0.0, data: Any = None
    ) -> AsyncIterator[Any]:
        """An async generator tool."""
        async for item in achunks(
            behaviour, {"n": n, "text": text, "x": x, "data": data}
        ):
            yield item

    return f


_MAKERS: dict[str, Callable[[str, bool], Callable[..., Any]]] = {
    "sync": _make_sync,
    "async": _make_async,
    "gen": _make_gen,
    "agen": _make_agen,
}


class PlainTool:
    """A hand-written tool: ``definition()`` and ``execute(args)``.

    It receives the decoded arguments unvalidated, as such tools do, and
    describes them with the function tools' schema.
    """

    def __init__(
        self, name: str, behaviour: str, parameters: Mapping[str, Any]
    ) -> None:
        self.name = name
        self.behaviour = behaviour
        self.parameters = parameters

    def definition(self) -> ToolDefinition:
        """The same schema as the function tools."""
        return ToolDefinition(
            name=self.name,
            description="A hand-written tool.",
            parameters=self.parameters,
        )

    def execute(self, args: Mapping[str, Any]) -> Any:
        """Do the behaviour with the arguments as they came."""
        return act(self.behaviour, dict(args))


def tool_name(kind: str, with_ctx: bool, behaviour: str) -> str:
    """The registered name of a tool (the inline variant shares it)."""
    return f"{kind}_{'ctx_' if with_ctx else ''}{behaviour}"


def attribute_name(
    kind: str, with_ctx: bool, behaviour: str, inline: bool
) -> str:
    """The module attribute that holds a tool."""
    return tool_name(kind, with_ctx, behaviour) + (
        "__inline" if inline else ""
    )


TOOLS: dict[tuple[str, bool, str, bool], Any] = {}
"""Every tool by ``(kind, with_ctx, behaviour, inline)``."""


@tool
def control(tag: str) -> dict[str, str]:
    """A well-behaved tool called before and after the tool under test.

    Args:
        tag: Which of the two calls this is.
    """
    publish("control", tag)
    set_state(f"control_{tag}", tag)
    return {"tag": tag, "user": execution_context().user_id or ""}


def _register_all() -> None:
    module = globals()
    for behaviour in BEHAVIOURS:
        for kind in FUNCTION_KINDS:
            for with_ctx in (False, True):
                for inline in (False, True):
                    fn = _MAKERS[kind](behaviour, with_ctx)
                    t: FunctionTool[..., Any] = tool(
                        name=tool_name(kind, with_ctx, behaviour),
                        inline=inline,
                    )(fn)
                    TOOLS[kind, with_ctx, behaviour, inline] = t
                    module[
                        attribute_name(kind, with_ctx, behaviour, inline)
                    ] = t
        schema = TOOLS["sync", False, behaviour, False].definition()
        plain = PlainTool(
            tool_name("plain", False, behaviour), behaviour, schema.parameters
        )
        for inline in (False, True):
            TOOLS["plain", False, behaviour, inline] = plain
        module[attribute_name("plain", False, behaviour, False)] = plain


_register_all()


def tool_for(kind: str, with_ctx: bool, behaviour: str, inline: bool) -> Any:
    """The tool for one combination (a plain tool has no context variant).

    ``inline`` is a ``@tool`` option, so the plain tool ignores it.
    """
    return TOOLS[kind, with_ctx and kind != "plain", behaviour, inline]
