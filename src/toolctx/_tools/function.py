"""``@tool``: a typed function becomes a tool with schema and validator.

:class:`FunctionTool` (what :func:`tool` returns) computes at
construction the tool's definition, its argument checks and its output
step, and checks the options the decorator takes (:func:`check_tool_name`
and the title and approval checks).

:func:`read_parameters` turns a function's signature, type hints and
docstring into the model-visible :class:`~toolctx._tools.params.Param`
list, the names of the parameters that receive the ``ExecutionContext``,
and the resolved hints, rejecting with :class:`~toolctx.SchemaError`
what cannot become a JSON parameter. :func:`admits_none` says whether a
hint takes ``None``.

The registry compiles one :class:`ToolEntry` per tool at registration:
what the dispatcher calls and how (:data:`SYNC`, :data:`ASYNC`,
:data:`STREAM`, :data:`ASYNC_STREAM`), with the argument checks and the
output step taken from a :class:`~toolctx.FunctionTool` (or, for a plain
tool registered with ``check_arguments=True``, its schema check).
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing

from collections.abc import Callable, Iterable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Generic,
    TypeVar,
    cast,
    final,
    overload,
)

from typing_extensions import ParamSpec

from toolctx._context.current import get_current
from toolctx._context.execution import ExecutionContext
from toolctx._records import ToolAnnotations, ToolCall, ToolDefinition
from toolctx._tools.params import Param
from toolctx._types.nodes import MISSING, type_name
from toolctx.exceptions import (
    InvalidToolNameError,
    NoExecutionContextError,
    SchemaError,
    ToolArgumentsError,
)


if TYPE_CHECKING:
    from toolctx._tools.arguments import ArgumentStructurer, Structurer
    from toolctx._tools.protocols import Tool


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
        from toolctx._tools.arguments import ArgumentStructurer
        from toolctx._types.output import output_step, to_json
        from toolctx._types.schema import output_schema, parameters_schema
        from toolctx.content import content_output, may_carry_content

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
        from toolctx._types.output import to_json

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
        return to_json(fn(**kwargs))


async def _unstructure_later(awaitable: Any) -> Any:
    from toolctx._types.output import to_json

    return to_json(await awaitable)


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


def _is_context_hint(hint: object) -> bool:
    """``ExecutionContext``, ``ExecutionContext | None``, ``Annotated``."""
    if hint is ExecutionContext:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _is_context_hint(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return len(members) == 1 and _is_context_hint(members[0])
    return False


def admits_none(hint: object) -> bool:
    """Whether ``None`` is a value of *hint* (unknown forms: assume so)."""
    if hint is None or hint is type(None) or hint is Any or hint is object:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return admits_none(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(admits_none(a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        return None in typing.get_args(hint)
    value = getattr(hint, "__value__", None)  # PEP 695 alias
    if value is not None:
        return admits_none(value)
    supertype = getattr(hint, "__supertype__", None)  # NewType
    if supertype is not None:
        return admits_none(supertype)
    return not isinstance(hint, type) and origin is None


def _as_written(fn: Callable[..., Any], name: str, hint: object) -> object:
    """*name*'s annotation as written.

    CPython 3.10's ``get_type_hints`` adds ``Optional`` to a parameter
    that defaults to None; the written one says whether the author did.
    """
    try:
        written = inspect.get_annotations(fn, eval_str=True).get(name, hint)
    except Exception:  # noqa: BLE001 - the resolved hint is good enough
        return hint
    return written


def _field_default(
    default: object,
) -> tuple[object, Callable[[], object] | None] | None:
    """``(default, factory)`` of a pydantic ``= Field(...)`` default.

    None when *default* is not a pydantic ``FieldInfo`` (pydantic is not
    imported here: a ``FieldInfo`` can only exist once it is).
    """
    cls = type(default)
    if cls.__name__ != "FieldInfo" or not cls.__module__.startswith(
        "pydantic"
    ):
        return None
    factory = getattr(default, "default_factory", None)
    value = getattr(default, "default", MISSING)
    if type(value).__name__ == "PydanticUndefinedType":
        value = MISSING
    return value, factory if callable(factory) else None


def _annotated_default(
    hint: object,
) -> tuple[object, Callable[[], object] | None] | None:
    """``(default, factory)`` of ``Annotated[T, Field(default=...)]``.

    The last pydantic ``FieldInfo`` in the hint's metadata that sets a
    default or a default factory, as pydantic reads it; None when none
    does.
    """
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    found = None
    for item in getattr(hint, "__metadata__", ()):
        field = _field_default(item)
        if field is not None and (field[0] is not MISSING or field[1]):
            found = field
    return found


def _field_param(
    name: str, hint: object, default: object, description: str | None
) -> Param | None:
    """The parameter a pydantic ``Field`` default makes, else None.

    ``= Field(...)`` or, with no default of the function's own,
    ``Annotated[T, Field(default=...)]``: the validator fills the
    default (or calls the factory) when the argument is absent.
    """
    field = _field_default(default)
    annotation = hint
    if field is not None:
        annotation = typing.Annotated[hint, default]
    if default is MISSING or field == (MISSING, None):
        # the function's own default wins; pydantic merges the Fields
        field = _annotated_default(hint) or field
    if field is None:
        return None
    value, factory = field
    return Param(name, annotation, value, description, factory, fill=True)


def _missing_annotation(owner: str, name: str, doc: str | None) -> str:
    """The message for a parameter without a type annotation."""
    from toolctx._docstrings import documented_type

    documented = documented_type(doc, name)
    head = (
        f"Cannot build a schema for parameter {name!r} of {owner}: it has "
        "no type annotation."
    )
    if documented is None:
        return f"{head} Annotate it, e.g. `{name}: str`."
    return (
        f"{head} The docstring gives its type: annotate it "
        f"`{name}: {documented}`."
    )


def read_parameters(
    fn: Callable[..., Any],
    owner: str,
    docs: Mapping[str, str],
    raw_doc: str | None = None,
) -> tuple[list[Param], tuple[str, ...], dict[str, Any]]:
    """The model-visible parameters, the injected ones, and all the hints."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        msg = f"Cannot read the signature of {owner}: {exc}"
        raise SchemaError(msg, function=owner) from None
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - reported as SchemaError
        msg = (
            f"Cannot resolve the type hints of {owner}: "
            f"{type(exc).__name__}: {exc}. Make every annotation importable "
            "at module level."
        )
        raise SchemaError(msg, function=owner) from None
    params: list[Param] = []
    ctx_params: list[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            kind = {
                p.VAR_POSITIONAL: "*args",
                p.VAR_KEYWORD: "**kwargs",
                p.POSITIONAL_ONLY: "positional-only",
            }[p.kind]
            msg = (
                f"Cannot use parameter {p.name!r} of {owner} in a tool: "
                f"{kind} parameters have no JSON name. Declare every "
                "parameter as a normal or keyword-only one."
            )
            raise SchemaError(msg, function=owner, parameter=p.name)
        if p.name not in hints:
            msg = _missing_annotation(owner, p.name, raw_doc)
            raise SchemaError(msg, function=owner, parameter=p.name)
        hint = hints[p.name]
        if _is_context_hint(hint):
            ctx_params.append(p.name)
            continue
        default = MISSING if p.default is p.empty else p.default
        param = _field_param(p.name, hint, default, docs.get(p.name))
        if param is not None:
            params.append(param)
            continue
        written = _as_written(fn, p.name, hint) if default is None else hint
        if default is None and not admits_none(written):
            shown = type_name(written)
            msg = (
                f"Parameter {p.name!r} of {owner} defaults to None, but its "
                f"type {shown} does not admit None. Write "
                f"`{p.name}: {shown} | None = None`, or give it a default "
                "of its own type."
            )
            raise SchemaError(msg, function=owner, parameter=p.name)
        params.append(Param(p.name, hint, default, docs.get(p.name)))
    return params, tuple(ctx_params), hints
