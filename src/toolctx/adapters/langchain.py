"""toolctx tools as LangChain tools, for LangGraph and ``create_agent``.

:func:`tools` turns a :class:`~toolctx.Dispatcher`'s registry into
LangChain :class:`~langchain_core.tools.BaseTool` objects, one per
registry tool, in registration order, with the same name, description
and JSON Schema (``args_schema`` is the schema dict itself). Invoking
one with a tool call (what ``ToolNode`` and ``create_agent`` do)
dispatches it through the dispatcher and returns a
:class:`~langchain_core.messages.ToolMessage`:

- ``content``: what every toolctx provider renders for the model: a
  ``str`` output as it is, other output as compact JSON, an error
  result as its error message, worded exactly as toolctx words it.
  Content parts (:mod:`toolctx.content`) become LangChain's standard
  ``text``, ``image`` and ``file`` blocks; an audio part, which
  LangChain allows in no tool message, a short text saying so;
- ``status``: ``"error"`` for an error result, else ``"success"``;
- ``artifact``: the result's host-only metadata
  (:func:`toolctx.publish`) as a ``dict``, or None when the tool
  published none. LangChain never sends an artifact to the model.

Tool-level failures (bad arguments, the tool raising, an interceptor
denying) never raise out of the tool: the model reads toolctx's message
and can retry. The context's ``scope``, ``ToolResult.state_changes`` and
``ToolResult.exception`` never reach a message.

The call's context comes from the ``RunnableConfig`` LangChain passes
to every tool, in every run loop (a direct ``invoke``, LangGraph's
``ToolNode``, ``create_agent``): ``context(config)`` returns the template
(an :class:`~toolctx.ExecutionContext`, a :class:`~toolctx.Session`, or
None). The default, :func:`default_context`, takes
``config["configurable"]["toolctx_context"]``, else the LangGraph run's
``context`` (``graph.invoke(..., context=...)``), when it is an
``ExecutionContext`` or a ``Session``.

Importing this module imports ``langchain_core``; ``import toolctx``
never does. Install it with ``pip install 'toolctx[langchain]'``.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, cast

from toolctx._context.execution import ExecutionContext
from toolctx._context.session import Session
from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._records import ToolCall, ToolResult
from toolctx.content import Audio, File, Image, Part, Text
from toolctx.providers._render import (
    b64,
    content_parts,
    content_text,
    notice,
    plain,
)


try:
    from langchain_core.messages import ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from pydantic import PrivateAttr
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    _msg = (
        "toolctx.adapters.langchain needs langchain-core, which is not "
        f"installed ({exc}). Install it with: pip install "
        "'toolctx[langchain]'"
    )
    raise ImportError(_msg, name=exc.name) from exc

__all__ = [
    "CONFIG_KEY",
    "ContextFactory",
    "ToolctxTool",
    "default_context",
    "graph_context",
    "tools",
]

CONFIG_KEY: Final = "toolctx_context"
"""The ``configurable`` key :func:`default_context` reads.

.. versionadded:: 0.2.0
"""

# LangGraph keeps the run's Runtime (its context, store, stream writer)
# under this key of the config's "configurable"; langgraph.runtime's own
# get_runtime() reads it there. Reading it from the config LangChain
# passes to the tool (rather than through get_runtime(), which reads a
# ContextVar) also works in async tools on Python 3.10.
_RUNTIME_KEY: Final = "__pregel_runtime"

ContextFactory = Callable[[RunnableConfig], ExecutionContext | Session | None]
"""Builds a call's template from the tool's ``RunnableConfig``.

.. versionadded:: 0.2.0
"""

_NO_CONFIG: Final[RunnableConfig] = {}


def graph_context(config: RunnableConfig) -> Any:
    """Return the LangGraph run's ``context``, or None outside a graph run.

    That is the object passed as ``graph.invoke(input, context=...)`` (or
    to a ``create_agent`` agent's ``invoke``): what a LangGraph tool reads
    as ``ToolRuntime.context``. Use it in a custom ``context=`` callable
    of :func:`tools`.

    Args:
        config: The ``RunnableConfig`` the tool was invoked with.

    .. versionadded:: 0.2.0
    """
    configurable = config.get("configurable")
    if not configurable:
        return None
    return getattr(configurable.get(_RUNTIME_KEY), "context", None)


def default_context(
    config: RunnableConfig,
) -> ExecutionContext | Session | None:
    """Return the template the config carries, or None.

    In order: ``config["configurable"]["toolctx_context"]``
    (:data:`CONFIG_KEY`), then the LangGraph run's ``context``
    (:func:`graph_context`) when it is an :class:`ExecutionContext` or a
    :class:`Session`. None otherwise: the call then runs with an empty
    template, or inherits the running call's context when the graph runs
    inside a toolctx tool (a sub-agent), like ``Dispatcher.dispatch``
    with ``context=None``.

    Args:
        config: The ``RunnableConfig`` the tool was invoked with.

    Raises:
        TypeError: ``configurable["toolctx_context"]`` holds something
            else (a host bug: the call must not run without its user).

    .. versionadded:: 0.2.0
    """
    configurable = config.get("configurable")
    if configurable:
        found = configurable.get(CONFIG_KEY)
        if found is not None:
            if isinstance(found, (ExecutionContext, Session)):
                return found
            msg = (
                f'config["configurable"]["{CONFIG_KEY}"] must be a '
                "toolctx.ExecutionContext or Session, got "
                f"{type(found).__name__}."
            )
            raise TypeError(msg)
    found = graph_context(config)
    if isinstance(found, (ExecutionContext, Session)):
        return found
    return None


class ToolctxTool(BaseTool):
    """One toolctx tool as a LangChain tool (made by :func:`tools`).

    ``name``, ``description`` and ``args_schema`` (the JSON Schema dict)
    are the tool's definition. Calls go through the dispatcher given to
    :func:`tools`: ``invoke`` through ``Dispatcher.dispatch``, ``ainvoke``
    through ``Dispatcher.adispatch``, with the template that the
    ``context`` callable builds from the ``RunnableConfig``.

    Invoked with a tool call (``{"type": "tool_call", "name", "args",
    "id"}``), the tool returns a ``ToolMessage`` (see the module
    docstring); with plain arguments it returns the content alone, as
    LangChain tools do (an error result as its message).

    .. versionadded:: 0.2.0
    """

    _dispatcher: Dispatcher = PrivateAttr()
    _context: ContextFactory = PrivateAttr()

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # LangChain's own step validates against a pydantic args_schema
        # and spreads the arguments as keywords (where they could collide
        # with the config it adds); toolctx validates, so the call travels
        # whole, as one positional argument. A str input is JSON text.
        call = ToolCall(self.name, tool_input, tool_call_id)
        return cast("tuple[str, ...]", (call,)), {}

    def _run(
        self,
        *args: Any,
        config: RunnableConfig = _NO_CONFIG,
        **kwargs: Any,  # noqa: ARG002 - the signature BaseTool calls
    ) -> Any:
        """Dispatch the call with ``Dispatcher.dispatch``."""
        call = _call_of(args)
        template = self._context(config)
        return self._reply(self._dispatcher.dispatch(call, template), call)

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig = _NO_CONFIG,
        **kwargs: Any,  # noqa: ARG002 - the signature BaseTool calls
    ) -> Any:
        """Dispatch the call with ``Dispatcher.adispatch``."""
        call = _call_of(args)
        template = self._context(config)
        result = await self._dispatcher.adispatch(call, template)
        return self._reply(result, call)

    def _reply(self, result: ToolResult, call: ToolCall) -> Any:
        """The ToolMessage for *result*, or its content without a call id."""
        content = _content(result)
        if call.id is None:
            return content
        return ToolMessage(
            content=content,
            tool_call_id=call.id,
            name=self.name,
            status="error" if result.is_error else "success",
            artifact=dict(result.metadata) if result.metadata else None,
        )


def _content(result: ToolResult) -> str | list[str | dict[str, Any]]:
    """What the model sees of *result*: text, or content blocks."""
    parts = content_parts(result)
    if parts is None:
        return content_text(result)
    return [_block(part) for part in parts]


_NO_AUDIO: Final = "LangChain tool messages carry no audio"


def _block(part: Part) -> dict[str, Any]:
    """*part* as a LangChain standard content block.

    Only the block types LangChain allows in a tool message
    (``TOOL_MESSAGE_BLOCK_TYPES``): ``ToolNode`` turns content holding
    any other type into JSON text, data included. Audio is not among
    them, so an audio part becomes a short text notice.
    """
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Audio):
        return {"type": "text", "text": notice(part, _NO_AUDIO)}
    block: dict[str, Any] = {
        "type": "image" if isinstance(part, Image) else "file",
        "base64": b64(part),
        "mime_type": part.mime_type,
    }
    if isinstance(part, File) and part.name is not None:
        # Where LangChain's provider translators look for a file's name.
        block["extras"] = {"filename": part.name}
    return block


def _call_of(args: tuple[Any, ...]) -> ToolCall:
    """The ToolCall ``_to_args_and_kwargs`` packed, or a clear TypeError."""
    if len(args) == 1 and type(args[0]) is ToolCall:
        return args[0]
    msg = (
        "A toolctx LangChain tool runs through invoke()/ainvoke() (or "
        "run()/arun()), which build its call; do not call _run() directly."
    )
    raise TypeError(msg)


def tools(
    dispatcher: Dispatcher, *, context: ContextFactory | None = None
) -> list[BaseTool]:
    """Return the dispatcher's tools as LangChain tools, in registry order.

    Pass the list to ``ToolNode``, ``create_agent`` or a chat model's
    ``bind_tools``. The list is a snapshot of the registry: call
    :func:`tools` again after registering or removing tools (a removed
    tool's calls become "Unknown tool" error results).

    Args:
        dispatcher: Runs the calls (its interceptors, timeouts and limits
            apply).
        context: Builds each call's template from the tool's
            ``RunnableConfig``: an :class:`ExecutionContext`, a
            :class:`Session` (its state changes are applied after each
            call) or None. Defaults to :func:`default_context`.

    Raises:
        TypeError: *dispatcher* is not a Dispatcher, or *context* is not
            callable.

    .. versionadded:: 0.2.0
    """
    if not isinstance(cast("object", dispatcher), Dispatcher):
        msg = (
            "tools() takes a toolctx.Dispatcher, got "
            f"{type(dispatcher).__name__}."
        )
        raise TypeError(msg)
    if context is None:
        context = default_context
    elif not callable(cast("object", context)):
        msg = (
            "context must be a callable taking the RunnableConfig and "
            "returning an ExecutionContext, a Session or None, got "
            f"{type(context).__name__}."
        )
        raise TypeError(msg)
    made: list[BaseTool] = []
    for definition in dispatcher.registry.definitions():
        tool = ToolctxTool(
            name=definition.name,
            description=definition.description,
            args_schema=plain(definition.parameters),
        )
        tool._dispatcher = dispatcher  # noqa: SLF001 - set once, here
        tool._context = context  # noqa: SLF001
        made.append(tool)
    return made
