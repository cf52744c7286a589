"""toolctx tools as a Pydantic AI toolset (``toolctx[pydantic-ai]``).

:func:`toolset` turns a :class:`~toolctx.Dispatcher`'s registry into a
Pydantic AI ``AbstractToolset``: one tool per registered tool, in
registration order, with the same name, description and JSON Schema.
Pydantic AI's tool manager calls it like any toolset; each call is
dispatched through the dispatcher (interceptors, timeouts, sessions and
all), with the :class:`~toolctx.ExecutionContext` built from the run's
``RunContext`` and the call id the model gave.

What the model sees:

* A result: the output as the providers render it (a ``str`` as it is,
  other JSON data as compact JSON); content parts
  (:mod:`toolctx.content`) as Pydantic AI ``BinaryContent`` and text.
* An error result (unknown arguments, a refused value, the tool raising,
  an interceptor denying): toolctx's message, word for word, as a
  *failed* tool return (Pydantic AI's ``ToolFailed``): providers with an
  error channel get it there (Anthropic ``is_error``), the others as
  ``{"error": "<message>"}``. A failed return does not use up the tool's
  ``max_retries``, so the run goes on and the model may correct itself;
  bound a model that never does with ``UsageLimits``.
* Never the context's scope, ``ToolResult.metadata`` (``publish``) or
  ``state_changes``: published metadata becomes the tool return's
  host-only ``metadata``.

Arguments are checked once, by toolctx: the toolset's argument validator
only decodes the model's JSON with toolctx's own strict decoder (so
Pydantic AI's hooks see the arguments the tool will get) and leaves
anything it refuses for the dispatcher to word.

Importing this module imports Pydantic AI; without it, the import fails
with an ``ImportError`` naming the extra to install.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import inspect

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar, cast, overload

from toolctx._context.execution import ExecutionContext
from toolctx._context.session import Session
from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._records import ToolCall, ToolDefinition, ToolResult
from toolctx._types.decode import DecodeError, decode_arguments
from toolctx.content import File, Part, Text, parts_of
from toolctx.providers._render import content_text, plain


try:
    from pydantic_ai import BinaryContent, RunContext, ToolFailed, ToolReturn
    from pydantic_ai.tools import ToolDefinition as PydanticToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as exc:  # pragma: no cover - tested in a subprocess
    _msg = (
        "toolctx.adapters.pydantic_ai needs Pydantic AI, which is not "
        f"installed ({exc}). Install it with: pip install "
        "'toolctx[pydantic-ai]'"
    )
    raise ImportError(_msg, name=exc.name) from exc

from toolctx._types.decode import ArgumentLimits


__all__ = ["toolset"]

_DepsT = TypeVar("_DepsT")

_Template = ExecutionContext | Session | None
_ContextFactory = Callable[
    [RunContext[_DepsT]], _Template | Awaitable[_Template]
]
"""``context(run_context)`` -> the template of one call, or an awaitable.

An :class:`~toolctx.ExecutionContext` or a :class:`~toolctx.Session` (its
state changes are applied after the call), or None for the context bound
where the agent runs (an empty one outside any toolctx call).
"""


@overload
def toolset(
    dispatcher: Dispatcher, *, context: None = None
) -> AbstractToolset[object]: ...
@overload
def toolset(
    dispatcher: Dispatcher, *, context: _ContextFactory[_DepsT]
) -> AbstractToolset[_DepsT]: ...
def toolset(
    dispatcher: Dispatcher,
    *,
    context: _ContextFactory[Any] | None = None,
) -> AbstractToolset[Any]:
    """Return the dispatcher's tools as a Pydantic AI toolset.

    Args:
        dispatcher: Runs every call; its registry supplies the tools, read
            again on every run step (tools registered later show up).
        context: ``context(run_context)`` returns the template of each
            call: an ``ExecutionContext``, a ``Session`` or None (or an
            awaitable of one, to load a session, say). The
            default takes ``run_context.deps`` if it is an
            ``ExecutionContext`` or ``Session``; with other deps, the
            context bound where the agent runs (outside any toolctx call,
            an empty one). Either way the call's ``tool_call_id`` is the
            model's call id.

    Returns:
        A toolset for ``Agent(toolsets=[...])``. Without *context* it
        works with any ``deps_type``; with one, with the deps type that
        *context* reads.

    Raises:
        TypeError: *dispatcher* is not a ``Dispatcher``, or *context* is
            not callable.

    Example:
        >>> import asyncio
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from toolctx import Dispatcher, ExecutionContext, Registry
        >>> from toolctx import execution_context
        >>> registry = Registry()
        >>> @registry.tool
        ... def whoami() -> str:
        ...     '''Say who is calling.'''
        ...     return execution_context().user_id or "nobody"
        >>> agent = Agent(
        ...     TestModel(),
        ...     deps_type=ExecutionContext,
        ...     toolsets=[toolset(Dispatcher(registry))],
        ... )
        >>> ada = ExecutionContext(user_id="ada")
        >>> asyncio.run(agent.run("hi", deps=ada)).output
        '{"whoami":"ada"}'

    .. versionadded:: 0.2.0
    """
    if not isinstance(cast("object", dispatcher), Dispatcher):
        msg = (
            "toolset() takes a toolctx.Dispatcher, got "
            f"{type(dispatcher).__name__}."
        )
        raise TypeError(msg)
    if context is not None and not callable(cast("object", context)):
        msg = (
            "toolset(context=...) takes a function of the RunContext "
            "that returns an ExecutionContext, a Session or None, got "
            f"{type(context).__name__}."
        )
        raise TypeError(msg)
    return _ToolctxToolset(dispatcher, context)


def _from_deps(run_context: RunContext[Any]) -> _Template:
    """The default template: the deps if they are a context or a session."""
    deps = run_context.deps
    if type(deps) is ExecutionContext or isinstance(deps, Session):
        return deps
    return None


class _Undecoded(dict[str, Any]):
    """Arguments toolctx's decoder refused, kept for the dispatcher to word.

    Empty as a dict (what Pydantic AI's hooks see); ``raw`` is what the
    model sent, which the dispatcher decodes again to build its message.
    """

    __slots__ = ("raw",)

    def __init__(self, raw: object) -> None:
        super().__init__()
        self.raw = raw


class _ToolctxValidator:
    """A Pydantic AI args validator that only decodes, as toolctx does.

    Pydantic AI validates a call's arguments before the toolset runs it.
    Checking them there (types, required keys) would be a second
    validation, worded by pydantic; this validator decodes the JSON with
    toolctx's strict decoder and the dispatcher's limits, and hands what
    it refuses on untouched (:class:`_Undecoded`), so the one check is
    the dispatcher's and so is the message the model reads.
    """

    __slots__ = ("_limits",)

    def __init__(self, limits: ArgumentLimits) -> None:
        self._limits = limits

    def validate_json(
        self,
        input: str | bytes | bytearray,  # noqa: A002 - the protocol's name
        *,
        allow_partial: object = False,
        **kwargs: object,
    ) -> dict[str, Any]:
        """Decode the model's argument text, or keep it undecoded."""
        del allow_partial, kwargs
        raw = bytes(input) if isinstance(input, bytearray) else input
        try:
            return decode_arguments(raw, self._limits)
        except DecodeError:
            return _Undecoded(raw)

    def validate_python(
        self,
        input: object,  # noqa: A002 - the protocol's name
        *,
        allow_partial: object = False,
        **kwargs: object,
    ) -> dict[str, Any]:
        """Check decoded arguments are JSON data, or keep them undecoded."""
        del allow_partial, kwargs
        try:
            return decode_arguments(input, self._limits)
        except DecodeError:
            return _Undecoded(input)


class _ToolctxToolset(AbstractToolset[_DepsT], Generic[_DepsT]):
    """The toolset :func:`toolset` returns (see there)."""

    def __init__(
        self, dispatcher: Dispatcher, context: _ContextFactory[_DepsT] | None
    ) -> None:
        self._dispatcher = dispatcher
        self._context = context
        self._validator = _ToolctxValidator(
            ArgumentLimits(
                max_size=dispatcher.max_argument_size,
                max_depth=dispatcher.max_argument_depth,
            )
        )
        # The registry's definitions at the last get_tools() and what they
        # became, as one pair (replaced whole): rebuilt when one changed.
        self._cache: tuple[
            list[ToolDefinition], list[PydanticToolDefinition]
        ] = ([], [])

    def __repr__(self) -> str:
        return f"<toolctx pydantic-ai toolset for {self._dispatcher!r}>"

    @property
    def id(self) -> str | None:
        """None: give the toolset an id by wrapping it, if you need one."""
        return None

    @property
    def label(self) -> str:
        """How Pydantic AI names the toolset in its error messages."""
        return "toolctx toolset"

    async def get_tools(
        self, ctx: RunContext[_DepsT]
    ) -> dict[str, ToolsetTool[_DepsT]]:
        """The registry's tools, in registration order."""
        definitions = self._dispatcher.registry.definitions()
        seen, converted = self._cache
        if len(seen) != len(definitions) or any(
            a is not b for a, b in zip(seen, definitions, strict=True)
        ):
            converted = [_definition(d) for d in definitions]
            self._cache = (definitions, converted)
        validator = self._validator
        max_retries = ctx.max_retries
        return {
            d.name: ToolsetTool(
                toolset=self,
                tool_def=d,
                max_retries=max_retries,
                args_validator=validator,
            )
            for d in converted
        }

    async def call_tool(
        self,
        name: str,
        tool_args: dict[str, Any],
        ctx: RunContext[_DepsT],
        tool: ToolsetTool[_DepsT],
    ) -> Any:
        """Dispatch the call; return what the model sees of its result.

        Raises:
            ToolFailed: The call's result is an error; its message is
                toolctx's.
            TypeError: The context function returned something other than
                an ExecutionContext, a Session or None.
        """
        del tool
        arguments: Any = (
            tool_args.raw if type(tool_args) is _Undecoded else tool_args
        )
        factory = self._context
        if factory is None:
            template = _from_deps(ctx)
        else:
            made = factory(ctx)
            template = await made if inspect.isawaitable(made) else made
            _check_template(template)
        result = await self._dispatcher.adispatch(
            ToolCall(name, arguments, ctx.tool_call_id),
            template,
        )
        if result.is_error:
            raise ToolFailed(content_text(result))
        content = _model_content(result)
        if result.metadata:
            return ToolReturn(content, metadata=dict(result.metadata))
        return content


def _check_template(template: object) -> None:
    """Refuse (TypeError) a context function's result of another type."""
    if (
        template is None
        or type(template) is ExecutionContext
        or isinstance(template, Session)
    ):
        return
    msg = (
        "The context function given to toolctx.adapters.pydantic_ai."
        "toolset() must return an ExecutionContext, a Session or None, "
        f"got {type(template).__name__}."
    )
    raise TypeError(msg)


def _definition(definition: ToolDefinition) -> PydanticToolDefinition:
    """The Pydantic AI definition of a toolctx tool (fresh plain dicts)."""
    metadata: dict[str, Any] = {}
    if definition.title is not None:
        metadata["title"] = definition.title
    if definition.annotations is not None:
        metadata["annotations"] = definition.annotations.to_dict()
    output_schema = definition.output_schema
    return PydanticToolDefinition(
        name=definition.name,
        description=definition.description,
        parameters_json_schema=plain(definition.parameters),
        return_schema=None if output_schema is None else plain(output_schema),
        metadata=metadata or None,
    )


def _model_content(result: ToolResult) -> Any:
    """The tool return for a successful *result*."""
    parts = parts_of(result.output)
    if parts is None:
        return content_text(result)
    return [_native(part) for part in parts]


def _native(part: Part) -> str | BinaryContent:
    """A content part as Pydantic AI content: text, or BinaryContent."""
    if isinstance(part, Text):
        return part.text
    if isinstance(part, File) and part.name is not None:
        return BinaryContent(
            part.data, media_type=part.mime_type, identifier=part.name
        )
    return BinaryContent(part.data, media_type=part.mime_type)
