"""``@tool``: a typed function becomes a tool with schema and validator.

This module holds the :func:`tool` decorator and is where the tool
machinery is imported from: it re-exports :class:`FunctionTool` and the
name check (from :mod:`toolctx.tools._function_tool`) and each tool's
call plan, :class:`ToolEntry`, with its modes (from
:mod:`toolctx.tools._entry`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar, overload

from typing_extensions import ParamSpec

from toolctx._records import ToolAnnotations
from toolctx.tools._entry import ASYNC, ASYNC_STREAM, STREAM, SYNC, ToolEntry
from toolctx.tools._function_tool import (
    TOOL_NAME_PATTERN,
    ApprovalCheck,
    FunctionTool,
    check_tool_name,
)


__all__ = [
    "ASYNC",
    "ASYNC_STREAM",
    "STREAM",
    "SYNC",
    "TOOL_NAME_PATTERN",
    "ApprovalCheck",
    "FunctionTool",
    "ToolEntry",
    "check_tool_name",
    "tool",
]

P = ParamSpec("P")
R = TypeVar("R")


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires: Iterable[str] = (),
    timeout: float | None = None,
    inline: bool = False,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
    needs_approval: ApprovalCheck = False,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires: Iterable[str] = (),
    timeout: float | None = None,
    inline: bool = False,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
    needs_approval: ApprovalCheck = False,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a tool from a sync or async function, bare or with options.

    The JSON Schema comes from the type hints (``Annotated[T, "text"]``
    adds a description) and the docstring (Google, NumPy or reST parameter
    descriptions); the first docstring paragraphs become the description.
    A parameter annotated ``ExecutionContext`` is injected by the
    dispatcher and never appears in the schema.

    Args:
        fn: The function (when used bare, as ``@tool``).
        name: The tool's name; defaults to the function's ``__name__``.
        description: Overrides the docstring's description.
        requires: Permissions a call needs, for the authorization
            interceptor.
        timeout: Seconds an ``adispatch`` of this tool may take.
        inline: Run a sync tool on the event loop under ``adispatch``
            instead of a worker thread. Only for cheap, non-blocking code.
        title: A short human-readable name for user interfaces (MCP
            clients show it); the model sees ``name`` and ``description``.
        annotations: Hints about the tool's behaviour
            (:class:`~toolctx.ToolAnnotations`: read-only, destructive,
            idempotent, open-world), for clients; never enforced.
        needs_approval: Make calls wait for a person: ``True`` for every
            call, or a function ``(call, context)`` deciding per call
            (``call.arguments`` is the checked, decoded mapping): its
            result is read as a condition (anything truthy holds the
            call), an ``async def`` check is awaited, and a check that
            raises fails the call. A
            waiting call runs nothing and returns a result whose
            ``approval`` holds the request for
            :meth:`Dispatcher.resume <toolctx.Dispatcher.resume>`.

    Raises:
        SchemaError: A hint cannot become JSON Schema; names the parameter.
        InvalidToolNameError: The name breaks ``^[a-zA-Z0-9_-]{1,64}$``.

    Example:
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> add(1, 2)
        3
        >>> add.definition().parameters["required"]
        ['a', 'b']

    .. versionadded:: 0.1.0
    """

    def decorate(f: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(
            f,
            name=name,
            description=description,
            requires=requires,
            timeout=timeout,
            inline=inline,
            title=title,
            annotations=annotations,
            needs_approval=needs_approval,
        )

    if fn is not None:
        return decorate(fn)
    return decorate
