"""``ToolEntry``: each registered tool's call plan, and the call modes.

The registry compiles one :class:`ToolEntry` per tool at registration:
what the dispatcher calls and how (:data:`SYNC`, :data:`ASYNC`,
:data:`STREAM`, :data:`ASYNC_STREAM`), with the argument checks and the
output step taken from a :class:`~toolctx.FunctionTool` (or, for a plain
tool registered with ``check_arguments=True``, its schema check).
:mod:`toolctx.tools.function` re-exports all of it.
"""

from __future__ import annotations

import inspect

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, final

from toolctx._records import ToolCall, ToolDefinition
from toolctx.context.execution import ExecutionContext
from toolctx.tools._function_tool import FunctionTool


if TYPE_CHECKING:
    from toolctx.tools.arguments import Structurer
    from toolctx.tools.protocols import Tool


SYNC: Final = 0
"""``ToolEntry.mode``: a plain function or ``execute``."""
ASYNC: Final = 1
"""``ToolEntry.mode``: a coroutine function."""
STREAM: Final = 2
"""``ToolEntry.mode``: a generator function (streaming tool)."""
ASYNC_STREAM: Final = 3
"""``ToolEntry.mode``: an async generator function (streaming tool)."""


def _mode(fn: Callable[..., Any]) -> int:
    if inspect.iscoroutinefunction(fn):
        return ASYNC
    if inspect.isasyncgenfunction(fn):
        return ASYNC_STREAM
    if inspect.isgeneratorfunction(fn):
        return STREAM
    return SYNC


@final
class ToolEntry:
    """One registered tool's call plan, compiled once at registration.

    Everything a call of the tool needs that does not depend on the call:
    what to call and how (``fn``, keyword arguments or one mapping), its
    mode, the argument checks, the parameters that get the context, and
    the output step (the declared return type checked, then JSON).

    Attributes:
        tool: The registered tool.
        definition: Its definition, read once.
        function_tool: The tool if it is a :class:`FunctionTool`.
        fn: What to call: the function, or the tool's ``execute``.
        spread: Call ``fn(**kwargs)`` (a function tool); else ``fn(args)``.
        mode: :data:`SYNC`, :data:`ASYNC`, :data:`STREAM` or
            :data:`ASYNC_STREAM`.
        structurer: The argument checks of a function tool; for a plain
            tool, its schema check when registered with
            ``check_arguments=True``, else None.
        context_parameters: Parameters that receive the call's context.
        output: The output step of a result (for a streaming tool, of
            the list of its chunks).
        chunk: The output step of one chunk of a streaming tool.
        timeout: The tool's own timeout in seconds, or None.
        inline: Run a sync tool in the event loop's thread.
        approval: None, or whether (True, or a check of the call) a call
            waits for a person.
    """

    __slots__ = (
        "approval",
        "chunk",
        "context_parameters",
        "definition",
        "fn",
        "function_tool",
        "inline",
        "mode",
        "output",
        "spread",
        "structurer",
        "timeout",
        "tool",
    )

    def __init__(
        self,
        tool: Tool,
        definition: ToolDefinition,
        *,
        check: Structurer | None = None,
    ) -> None:
        from toolctx._types.output import to_json
        from toolctx.content import content_output

        self.tool = tool
        self.definition = definition
        ft = tool if isinstance(tool, FunctionTool) else None
        self.function_tool: FunctionTool[Any, Any] | None = ft
        self.fn: Callable[..., Any] = ft.fn if ft is not None else tool.execute
        self.spread = ft is not None
        self.mode = _mode(self.fn)
        self.timeout: float | None = ft.timeout if ft is not None else None
        self.inline: bool = ft.inline if ft is not None else False
        # Whether a call waits for a person: None (never), True, or the
        # tool's own check (call, context) -> a condition (or awaitable).
        self.approval: (
            Callable[[ToolCall, ExecutionContext], object] | bool | None
        ) = ft.needs_approval if ft is not None else None
        self.structurer: Structurer | None = (
            ft.structurer if ft is not None else check
        )
        self.context_parameters: tuple[str, ...] = (
            tuple(ft.context_parameters) if ft is not None else ()
        )
        step: Callable[[Any], Any] = (
            ft.output_step if ft is not None else content_output(to_json)
        )
        self.chunk = step
        # A streaming tool's chunks go through the step as they come, so
        # the list of them is output as it is.
        self.output: Callable[[Any], Any] = (
            _as_collected if self.mode in {STREAM, ASYNC_STREAM} else step
        )


def _as_collected(chunks: Any) -> Any:
    return chunks
