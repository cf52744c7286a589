"""toolctx tools as OpenAI Agents SDK ``FunctionTool`` objects.

:func:`function_tools` turns a :class:`~toolctx.Dispatcher`'s registry
into the Agents SDK's own :class:`agents.FunctionTool` list, for
``Agent(tools=...)``. The SDK runs its loop as usual; when the model calls
one of the tools, the call goes through the dispatcher (interceptors,
validation, sessions, timeouts) with the :class:`~toolctx.ExecutionContext`
built from the run's own context, and the model gets the text toolctx
renders for every provider.

Importing this module imports the SDK (``pip install
'toolctx[openai-agents]'``); ``import toolctx`` never does.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import inspect

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias, cast

from toolctx._context.execution import ExecutionContext
from toolctx._context.session import Session
from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._records import ToolCall, ToolDefinition, ToolResult
from toolctx.exceptions import ProviderSchemaError
from toolctx.providers._dialects_openai import openai_strict
from toolctx.providers._render import content_parts, content_text, plain
from toolctx.providers.openai import responses_result_item


try:
    from agents import (
        FunctionTool,
        RunContextWrapper,
        ToolOutputFileContent,
        ToolOutputImage,
        ToolOutputText,
    )
    from agents.exceptions import UserError
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    _msg = (
        "toolctx.adapters.openai_agents needs the OpenAI Agents SDK (the "
        f"'agents' package), which could not be imported: {exc}. Install "
        "it with: pip install 'toolctx[openai-agents]'"
    )
    raise ImportError(_msg, name="agents") from exc


__all__ = ["ContextFunction", "function_tools"]

_Template: TypeAlias = ExecutionContext | Session | None
"""What a ``context=`` callable returns: the template of the call."""

ContextFunction: TypeAlias = Callable[
    [RunContextWrapper[Any], ToolContext[Any]],
    _Template | Awaitable[_Template],
]
"""The ``context=`` callable: ``(run_context_wrapper, tool_context)``."""

_Output: TypeAlias = (
    str | list[ToolOutputText | ToolOutputImage | ToolOutputFileContent]
)


def function_tools(
    dispatcher: Dispatcher, *, context: ContextFunction | None = None
) -> list[FunctionTool]:
    """The dispatcher's tools as Agents SDK ``FunctionTool`` objects.

    One tool per registered tool, in registration order, with the same
    name, description and parameters schema. The list is a snapshot:
    call again after registering or unregistering tools.

    Invoking a tool (the SDK does, when the model calls it) dispatches
    ``ToolCall(name, arguments, id=tool_context.tool_call_id)`` through
    ``dispatcher.adispatch`` with a template:

    * by default, the run's context (``Runner.run(..., context=...)``,
      the wrapper's ``.context``) when it is an
      :class:`~toolctx.ExecutionContext` or a :class:`~toolctx.Session`
      (whose state changes are then applied after each call); anything
      else gives the dispatcher's own default, an empty template (or,
      when the agent runs inside a toolctx tool, that call's context, so
      the tool calls of a sub-agent record their parent invocation);
    * with *context*, what ``context(run_context_wrapper, tool_context)``
      returns (an ExecutionContext, a Session or None, or an awaitable
      of one). The SDK hands a tool one :class:`agents.ToolContext`,
      which is the run's ``RunContextWrapper`` plus the call's name, id
      and arguments, so both arguments are that object.

    The model gets what every toolctx provider renders for the result:
    an error result's message exactly as toolctx words it (invalid
    arguments, unknown tool, the tool raising, an interceptor denying),
    else the output (a ``str`` as it is, other data as compact JSON).
    Content parts (:mod:`toolctx.content`) become the SDK's own
    ``ToolOutputText`` / ``ToolOutputImage`` / ``ToolOutputFileContent``
    outputs, the same ``input_text`` / ``input_image`` / ``input_file``
    parts :func:`toolctx.providers.openai.responses_result_item` sends
    (audio and image types the API cannot take become a short text
    notice). The
    scope and the host-only fields (``metadata``, ``state_changes``,
    ``exception``) never reach the model.

    **Strict schemas.** ``strict_json_schema`` is True exactly when the
    tool's schema is already in OpenAI strict form: every object closed,
    every property required, only keywords strict mode supports; that
    is, when toolctx's strict rewrite (the one
    ``toolctx.providers.openai.tools(strict=True)`` sends) leaves it
    unchanged, and the SDK's own strict conversion does too. For those
    tools, strict mode changes nothing the model is told and makes the
    API hold the model to the schema. Other schemas (optional
    parameters with defaults, ``dict[str, T]``, constraints such as
    ``minLength``) go with ``strict_json_schema=False`` and unchanged:
    strict conversion would make optional parameters required or drop
    constraints, so the model would be told something other than what
    the tool accepts. toolctx validates the arguments either way.

    Args:
        dispatcher: Runs the calls; its registry supplies the tools.
        context: Builds each call's template from the SDK's run context;
            None for the default above.

    Returns:
        A new list of ``agents.FunctionTool``, one per registered tool.

    Raises:
        TypeError: *dispatcher* is not a Dispatcher, or *context* is not
            callable.

    Example:
        >>> from toolctx import Dispatcher, Registry
        >>> registry = Registry()
        >>> @registry.tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> [(t.name, t.strict_json_schema) for t in function_tools(
        ...     Dispatcher(registry))]
        [('add', True)]

    .. versionadded:: 0.2.0
    """
    if not isinstance(cast("object", dispatcher), Dispatcher):
        msg = (
            "function_tools() takes a toolctx.Dispatcher, got "
            f"{type(dispatcher).__name__}."
        )
        raise TypeError(msg)
    if context is not None and not callable(cast("object", context)):
        msg = (
            "context must be a callable (run_context_wrapper, "
            "tool_context) -> ExecutionContext | Session | None, got "
            f"{type(context).__name__}."
        )
        raise TypeError(msg)
    return [
        _function_tool(dispatcher, definition, context)
        for definition in dispatcher.registry.definitions()
    ]


def _function_tool(
    dispatcher: Dispatcher,
    definition: ToolDefinition,
    context: ContextFunction | None,
) -> FunctionTool:
    """One FunctionTool that dispatches *definition*'s calls."""
    name = definition.name
    adispatch = dispatcher.adispatch

    if context is None:

        async def invoke(
            tool_context: ToolContext[Any], arguments: str
        ) -> Any:
            template = tool_context.context
            if not isinstance(template, (ExecutionContext, Session)):
                template = None
            call = ToolCall(name, arguments, tool_context.tool_call_id)
            return _for_model(await adispatch(call, template))

    else:

        async def invoke(
            tool_context: ToolContext[Any], arguments: str
        ) -> Any:
            template = await _template(context, tool_context)
            call = ToolCall(name, arguments, tool_context.tool_call_id)
            return _for_model(await adispatch(call, template))

    parameters = plain(definition.parameters)
    if _strict_form(definition, parameters):
        try:
            built = _build(definition, parameters, invoke, strict=True)
        except UserError:
            pass
        else:
            if built.params_json_schema == parameters:
                return built
    return _build(definition, parameters, invoke, strict=False)


def _build(
    definition: ToolDefinition,
    parameters: dict[str, Any],
    invoke: Callable[[ToolContext[Any], str], Awaitable[Any]],
    *,
    strict: bool,
) -> FunctionTool:
    return FunctionTool(
        name=definition.name,
        description=definition.description,
        params_json_schema=parameters,
        on_invoke_tool=invoke,
        strict_json_schema=strict,
    )


def _strict_form(
    definition: ToolDefinition, parameters: dict[str, Any]
) -> bool:
    """Whether strict mode would leave *parameters* as they are."""
    try:
        return openai_strict(parameters, tool=definition.name) == parameters
    except ProviderSchemaError:
        return False


async def _template(
    context: ContextFunction, tool_context: ToolContext[Any]
) -> _Template:
    """What the host's *context* callable returns for this call."""
    template: object = context(tool_context, tool_context)
    if inspect.isawaitable(template):
        template = await template
    if template is None or isinstance(template, (ExecutionContext, Session)):
        return template
    msg = (
        "The context= callable given to function_tools() must return an "
        "ExecutionContext, a Session or None, got "
        f"{type(template).__name__}."
    )
    raise TypeError(msg)


def _for_model(result: ToolResult) -> _Output:
    """What the model sees of *result*: toolctx's text, or content parts."""
    if content_parts(result) is None:
        return content_text(result)
    # The Responses API parts toolctx's OpenAI provider renders, as the
    # SDK's own tool outputs: the SDK turns them back into the same parts.
    output = responses_result_item(result)["output"]
    if isinstance(output, str):  # pragma: no cover - content is a list
        return output
    return [_sdk_output(part) for part in output]


def _sdk_output(
    part: Mapping[str, Any],
) -> ToolOutputText | ToolOutputImage | ToolOutputFileContent:
    """One Responses API ``input_*`` part as the SDK's tool output."""
    kind = part.get("type")
    if kind == "input_text":
        return ToolOutputText(text=part["text"])
    if kind == "input_image":
        return ToolOutputImage(image_url=part["image_url"])
    if kind == "input_file":
        return ToolOutputFileContent(
            file_data=part["file_data"], filename=part.get("filename")
        )
    msg = f"Unexpected function call output part {kind!r:.40}."
    raise TypeError(msg)
