"""``FunctionTool``: a typed function as a tool, with schema and checks.

:class:`FunctionTool` (what :func:`~toolctx.tool` returns) computes at
construction the tool's definition, its argument checks and its output
step, and checks the options the decorator takes (:func:`check_tool_name`
and the title and approval checks). :mod:`toolctx.tools.function`
re-exports all of it with the decorator.
"""

from __future__ import annotations

import functools
import inspect
import re

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, cast, final

from typing_extensions import ParamSpec

from toolctx._records import ToolAnnotations, ToolCall, ToolDefinition
from toolctx.context.current import get_current
from toolctx.context.execution import ExecutionContext
from toolctx.context.keys import MISSING
from toolctx.exceptions import (
    InvalidToolNameError,
    NoExecutionContextError,
    ToolArgumentsError,
)
from toolctx.tools._signature import admits_none, read_parameters


if TYPE_CHECKING:
    from toolctx.tools.arguments import ArgumentStructurer


P = ParamSpec("P")
R = TypeVar("R")

TOOL_NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # use fullmatch
_MAX_NAME_SHOWN = 80


def check_tool_name(name: object) -> str:
    """Return *name* if providers accept it; else InvalidToolNameError."""
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        shown = repr(name)
        if len(shown) > _MAX_NAME_SHOWN:
            shown = f"{shown[: _MAX_NAME_SHOWN - 3]}..."
        msg = (
            f"Invalid tool name {shown}: providers accept 1-64 characters "
            "from a-z, A-Z, 0-9, '_' and '-'. Pass a valid one with "
            "@tool(name=...)."
        )
        raise InvalidToolNameError(msg)
    return name


@final
class FunctionTool(Generic[P, R]):
    """A tool made from a function by :func:`tool`.

    Still callable exactly like the function (same signature for mypy),
    with ``__wrapped__``, ``__name__`` and ``__doc__`` kept. As a
    :class:`~toolctx.Tool` it offers ``definition()`` (name, description
    and a JSON Schema derived from the type hints and docstring) and
    ``execute(args)`` (validate the model's arguments strictly, call the
    function, return JSON-safe output).

    Attributes:
        fn: The decorated function.
        name: The tool's name.
        description: The description the model sees.
        is_async: Whether ``fn`` is a coroutine function.
        is_stream: Whether ``fn`` is a generator function: a streaming
            tool whose yields are partial output.
        is_async_stream: Whether ``fn`` is an async generator function.
        context_parameters: Names of parameters annotated
            ``ExecutionContext``; the dispatcher injects them.
        requires: Permissions the call needs (see the authorization
            interceptor).
        timeout: Seconds before an async dispatch gives up, or None.
        inline: Run this sync tool on the event loop under ``adispatch``
            instead of a worker thread (only for cheap, non-blocking code).
        title: A short human-readable name for user interfaces, or None.
        annotations: Hints about the tool's behaviour, or None.
        needs_approval: Whether a call waits for a person: True, or a
            function ``(call, context) -> bool``; None when never.
        structurer: The argument checks compiled from the parameters, which
            :meth:`structure_arguments` runs (and the dispatcher, through
            the tool's call plan).
        output_step: Turns a return value (for a streaming tool, one
            chunk) into JSON-safe output: checked against the declared
            return type, then converted; content parts pass as parts.

    .. versionadded:: 0.1.0
    """

    __wrapped__: Callable[P, R]

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        requires: Iterable[str] = (),
        timeout: float | None = None,
        inline: bool = False,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
        needs_approval: ApprovalCheck = False,
    ) -> None:
        from toolctx._docstrings import parse_docstring
        from toolctx._types.output import output_step, to_json
        from toolctx._types.schema import output_schema, parameters_schema
        from toolctx.content import content_output, may_carry_content
        from toolctx.tools.arguments import ArgumentStructurer

        if not callable(cast("object", fn)):
            msg = f"@tool needs a function, got {type(fn).__name__}."
            raise TypeError(msg)
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = check_tool_name(
            name if name is not None else getattr(fn, "__name__", None)
        )
        self.is_async = inspect.iscoroutinefunction(fn)
        self.is_stream = inspect.isgeneratorfunction(fn)
        self.is_async_stream = inspect.isasyncgenfunction(fn)
        if timeout is not None and not timeout > 0:
            msg = f"timeout must be positive seconds, got {timeout!r}."
            raise ValueError(msg)
        self.timeout = timeout
        self.inline = inline
        self.title = _check_title(title)
        if annotations is not None and not isinstance(
            cast("object", annotations), ToolAnnotations
        ):
            msg = (
                "annotations= takes a toolctx.ToolAnnotations, got "
                f"{type(annotations).__name__}; write annotations="
                "ToolAnnotations(read_only=True, ...)."
            )
            raise TypeError(msg)
        self.annotations = annotations
        self.needs_approval = _check_approval(needs_approval)
        if isinstance(requires, str):
            msg = (
                f"requires= takes a list of permissions, got the string "
                f"{requires!r}; write requires=[{requires!r}]."
            )
            raise TypeError(msg)
        self.requires = frozenset(requires)
        owner = getattr(fn, "__qualname__", self.name)
        raw_doc = getattr(fn, "__doc__", None)  # as written: see _docstrings
        doc = parse_docstring(
            raw_doc if isinstance(raw_doc, str) else inspect.getdoc(fn)
        )
        self.description = (
            description if description is not None else doc.summary
        )
        params, ctx_params, hints = read_parameters(
            fn,
            owner,
            doc.params,
            raw_doc if isinstance(raw_doc, str) else None,
        )
        self.context_parameters = ctx_params
        self._context_optional = all(
            admits_none(hints[name]) for name in ctx_params
        )
        self._params = tuple(params)
        stream = self.is_stream or self.is_async_stream
        returns = hints.get("return", MISSING)
        # A tool whose return names a content part returns parts: no JSON
        # schema, no JSON check. One that says nothing may return parts.
        carries = not stream and may_carry_content(returns)
        self._definition = ToolDefinition(
            name=self.name,
            description=self.description,
            parameters=parameters_schema(params, owner=owner),
            output_schema=None
            if carries
            else output_schema(
                hints.get("return"), owner=owner, stream=stream
            ),
            title=self.title,
            annotations=annotations,
        )
        self.structurer: ArgumentStructurer = ArgumentStructurer(
            params, owner=owner, shares_input=not ctx_params
        )
        self.output_step: Callable[[Any], Any]
        if carries:
            self.output_step = content_output(to_json)
        else:
            step = output_step(returns, owner=owner, stream=stream)
            self.output_step = (
                content_output(step)
                if not stream and any(returns is x for x in _SAYS_NOTHING)
                else step
            )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the function directly, exactly as if undecorated."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<toolctx.FunctionTool {self.name!r} of {self.fn!r}>"

    def definition(self) -> ToolDefinition:
        """Return the tool's definition (computed once, at decoration).

        .. versionadded:: 0.1.0
        """
        return self._definition

    def structure_arguments(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate *args* and return the keyword arguments for ``fn``.

        Raises:
            ToolArgumentsError: Every wrong, missing or unknown argument.

        .. versionadded:: 0.1.0
        """
        try:
            return self.structurer.structure(args)
        except ToolArgumentsError as exc:
            raise exc.with_tool_name(self.name) from None

    def execute(self, args: Mapping[str, Any]) -> Any:
        """Validate *args*, call the function, return JSON-safe output.

        Parameters annotated ``ExecutionContext`` receive the bound
        context. For an ``async def`` function this returns an awaitable.

        Raises:
            ToolArgumentsError: The arguments do not fit the parameters.
            NoExecutionContextError: The function declares an
                ``ExecutionContext`` parameter and no context is bound.

        .. versionadded:: 0.1.0
        """
        from toolctx.tools.arguments import unstructure_output

        kwargs = self.structure_arguments(args)
        if self.context_parameters:
            ctx = get_current()
            if ctx is None and not self._context_optional:
                raise NoExecutionContextError
            for pname in self.context_parameters:
                kwargs[pname] = ctx
        fn: Callable[..., Any] = self.fn
        if self.is_async:
            return _unstructure_later(fn(**kwargs))
        return unstructure_output(fn(**kwargs))


async def _unstructure_later(awaitable: Any) -> Any:
    from toolctx.tools.arguments import unstructure_output

    return unstructure_output(await awaitable)


_SAYS_NOTHING: Final = (MISSING, Any, object)

ApprovalCheck = bool | Callable[[ToolCall, ExecutionContext], object]
"""``needs_approval``: always, never, or decided per call.

A check's result is read as a condition (truthy holds the call); an
``async def`` check is awaited.
"""


def _check_approval(
    value: object,
) -> Callable[[ToolCall, ExecutionContext], object] | bool | None:
    if value is False or value is None:
        return None
    if value is True or callable(value):
        return value
    msg = (
        "needs_approval= takes True, False or a function (call, context) "
        f"-> bool, got {type(value).__name__}."
    )
    raise TypeError(msg)


def _check_title(title: object) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str) or not title.strip():
        msg = f"title= takes a non-empty string, got {title!r:.80}."
        raise TypeError(msg)
    return title
