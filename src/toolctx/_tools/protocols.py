"""The structural types: ``Tool`` and ``Interceptor``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from toolctx._context.execution import ExecutionContext
from toolctx._records import ToolCall, ToolDefinition, ToolResult


@runtime_checkable
class Tool(Protocol):
    """Anything with ``definition()`` and ``execute(args)`` is a tool.

    Existing tool classes keep working unchanged; they may call
    :func:`toolctx.execution_context` to read the running call's context.
    ``execute`` may be ``async def``.

    ``execute`` gets the model's decoded JSON object as it is: nothing
    checks it against ``definition().parameters`` unless the tool is
    registered with ``Registry.register(tool, check_arguments=True)``
    (extra ``toolctx[jsonschema]``), which validates every call's
    arguments against that schema first and answers arguments that do
    not fit with an error result naming each problem's path.

    Example:
        >>> from toolctx import ToolDefinition
        >>> class Echo:
        ...     def definition(self) -> ToolDefinition:
        ...         return ToolDefinition(name="echo")
        ...     def execute(self, args):
        ...         return dict(args)
        >>> isinstance(Echo(), Tool)
        True

    .. versionadded:: 0.1.0
    """

    def definition(self) -> ToolDefinition:
        """Return what the model is told about this tool."""
        ...

    def execute(self, args: Mapping[str, Any]) -> Any:
        """Run the tool with the model's decoded arguments."""
        ...


@runtime_checkable
class Interceptor(Protocol):
    """Hooks around every dispatched call.

    ``before`` runs in list order before the tool, may return a context
    with more metadata, and may raise :class:`toolctx.ToolDenied` to stop
    the call. ``after`` runs in reverse order, for every interceptor whose
    ``before`` ran, and may replace the result.

    .. versionadded:: 0.1.0
    """

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Inspect the call; return the context to run it with."""
        ...

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Inspect the result; return the result to hand back."""
        ...
