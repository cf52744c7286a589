"""Exceptions raised by toolctx: every one of them, in one tree.

Every exception toolctx raises on purpose inherits :class:`ToolctxError`,
so ``except toolctx.ToolctxError`` catches them all. Some also inherit a
builtin base so that code written against the builtin keeps working::

    ToolctxError
    ├── NoExecutionContextError        (also LookupError)
    ├── MissingContextValueError       (also LookupError)
    ├── ScopeError                     (also TypeError)
    ├── ContextKeyConflictError        (also TypeError)
    ├── ContextValueTypeError          (also TypeError)
    ├── ContextDataError               (also ValueError)
    ├── DuplicateToolError             (also ValueError)
    ├── UnknownToolError               (also KeyError)
    ├── InvalidToolNameError           (also ValueError)
    ├── ToolReferenceError             (also LookupError)
    ├── SchemaError                    (also TypeError)
    │   └── ProviderSchemaError        (toolctx.providers)
    ├── ToolArgumentsError             (also ValueError; ArgumentError each)
    ├── ToolOutputError                (also TypeError)
    ├── ToolTimeoutError               (also TimeoutError)
    ├── ApprovalError                  (also ValueError)
    ├── ApprovalDenied                 (on a declined call's result)
    ├── ToolDenied
    │   └── PermissionDenied           (toolctx.interceptors.Authorization)
    ├── SessionStoreError
    │   ├── SessionSchemaError
    │   ├── SessionConflictError
    │   └── SessionAccessError
    ├── McpUnavailableError            (also ImportError)
    └── ProviderPayloadError           (also ValueError)

    LostContextWarning                 (a RuntimeWarning, opt-in)

:class:`ArgumentError` is not an exception: it is one wrong argument, a
record a :class:`ToolArgumentsError` carries.

Tool-level failures (an unknown tool, bad arguments, a denial, the tool
raising) never escape :meth:`toolctx.Dispatcher.dispatch`: they become
error results. The exceptions above reach *host* code only.

:class:`ToolctxError`'s ``__reduce__`` pickles an exception as its
arguments and attributes, so subclasses with their own ``__init__`` cross
processes intact; pickles name the classes here, ``toolctx.exceptions``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import attrs

from toolctx._text import bounded


__all__ = [
    "MAX_LISTED_TOOLS",
    "MAX_PROBLEM_LENGTH",
    "MAX_REPORTED_PROBLEMS",
    "ApprovalDenied",
    "ApprovalError",
    "ArgumentError",
    "ContextDataError",
    "ContextKeyConflictError",
    "ContextValueTypeError",
    "DuplicateToolError",
    "InvalidToolNameError",
    "LostContextWarning",
    "McpUnavailableError",
    "MissingContextValueError",
    "NoExecutionContextError",
    "PermissionDenied",
    "ProviderPayloadError",
    "ProviderSchemaError",
    "SchemaError",
    "ScopeError",
    "SessionAccessError",
    "SessionConflictError",
    "SessionSchemaError",
    "SessionStoreError",
    "ToolArgumentsError",
    "ToolDenied",
    "ToolOutputError",
    "ToolReferenceError",
    "ToolTimeoutError",
    "ToolctxError",
    "UnknownToolError",
]


class ToolctxError(Exception):
    """Base class of every exception toolctx raises on purpose.

    .. versionadded:: 0.1.0
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle as (args, attributes) without calling __init__ again, so
        # that subclasses with their own __init__ signature cross processes
        # intact (process pools, Dask).
        return (_unpickle, (type(self), self.args, self.__dict__))


def _unpickle(
    cls: type[ToolctxError], args: tuple[Any, ...], state: dict[str, Any]
) -> ToolctxError:
    exc = cls.__new__(cls, *args)
    # OSError's __new__ (TimeoutError's) leaves args to an overridden
    # __init__, which is not called here.
    exc.args = args
    exc.__dict__.update(state)
    return exc


class NoExecutionContextError(ToolctxError, LookupError):
    """Raised by :func:`toolctx.execution_context` outside a tool call.

    .. versionadded:: 0.1.0
    """

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or (
                "No ExecutionContext is bound: execution_context() works "
                "only while a tool call runs. Dispatch the call with "
                "Dispatcher.dispatch()/adispatch(), or bind a context "
                "yourself with `with toolctx.use_context(ctx):` (tests, "
                "direct calls). Code that may run outside a call can use "
                "toolctx.current_context(), which returns None instead. If "
                "this runs in a thread the tool started itself, submit the "
                "work with toolctx.bind_context(fn) or a "
                "toolctx.ContextThreadPoolExecutor."
            )
        )

    def __str__(self) -> str:
        return str(self.args[0])


class MissingContextValueError(ToolctxError, LookupError):
    """A required typed value is not set on the context.

    Attributes:
        key: The name of the missing :class:`toolctx.ContextKey`.

    .. versionadded:: 0.1.0
    """

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"The context has no value for key {key!r} and the key has "
            f"no default. Set it on the template context with "
            f"ctx.with_value(KEY, value) before dispatching, or read it "
            f"with ctx.get(KEY) to get None instead of an error."
        )

    def __str__(self) -> str:
        return str(self.args[0])


class ScopeError(ToolctxError, TypeError):
    """The context's runtime scope is missing or of another type.

    .. versionadded:: 0.1.0
    """


class ContextKeyConflictError(ToolctxError, TypeError):
    """Two :class:`toolctx.ContextKey` objects share a name, not a type.

    .. versionadded:: 0.1.0
    """


class ContextValueTypeError(ToolctxError, TypeError):
    """A value does not match the type its :class:`~toolctx.ContextKey` holds.

    .. versionadded:: 0.1.0
    """


class ContextDataError(ToolctxError, ValueError):
    """Context or result data cannot be serialized or read back.

    .. versionadded:: 0.1.0
    """


class LostContextWarning(RuntimeWarning):
    """``current_context()`` found no context while a call runs elsewhere.

    Issued only with ``enable_lost_context_diagnostics(warn=True)`` (or
    ``TOOLCTX_DEBUG_LOST_CONTEXT=warn``). Code that legitimately runs
    outside calls (a log listener thread, a server's other requests) warns
    too while a call is running, which is why it is a separate opt-in.

    .. versionadded:: 0.1.0
    """


class DuplicateToolError(ToolctxError, ValueError):
    """A tool with this name is already registered.

    Attributes:
        name: The tool name.

    .. versionadded:: 0.1.0
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"A tool named {name!r} is already registered. Pick another "
            f"name with @tool(name=...), unregister the old one first, or "
            f"pass replace=True to swap it in place."
        )


MAX_LISTED_TOOLS = 30
"""Most tool names an unknown-tool message lists."""


class UnknownToolError(ToolctxError, KeyError):
    """No tool with this name is registered.

    Attributes:
        name: The name that was asked for.

    .. versionadded:: 0.1.0
    """

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = tuple(available)
        listed = self.available[:MAX_LISTED_TOOLS]
        shown = ", ".join(repr(n) for n in listed)
        more = len(self.available) - len(listed)
        more_text = f" and {more} more" if more else ""
        super().__init__(
            f"No tool named {bounded(repr(name), 200)} is registered. "
            + (
                f"Registered tools: {shown}{more_text}."
                if self.available
                else "The registry is empty."
            )
        )

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidToolNameError(ToolctxError, ValueError):
    """A tool name breaks the providers' rule ``^[a-zA-Z0-9_-]{1,64}$``.

    .. versionadded:: 0.1.0
    """


class SchemaError(ToolctxError, TypeError):
    """A type hint that cannot become JSON Schema, raised at decoration.

    Attributes:
        function: The qualified name of the decorated function.
        parameter: The parameter whose hint failed, or None.

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        message: str,
        *,
        function: str | None = None,
        parameter: str | None = None,
    ) -> None:
        self.function = function
        self.parameter = parameter
        super().__init__(message)


class ToolReferenceError(ToolctxError, LookupError):
    """An import reference (``"package.module:name"``) does not resolve.

    Raised in the worker process when the module cannot be imported or has
    no such attribute, or when the object found is not what was expected.

    .. versionadded:: 0.1.0
    """


def _text(name: str, value: object) -> None:
    """Refuse an :class:`ArgumentError` field that is not a str."""
    if not isinstance(value, str):
        msg = (
            f"ArgumentError(path, message) takes two str, got {name}="
            f"{type(value).__name__}."
        )
        raise TypeError(msg)


@attrs.frozen
class ArgumentError:
    """One wrong argument: where it is and what was wrong with it.

    Attributes:
        path: Where in the arguments, e.g. ``"unit"`` or
            ``"items[0].name"``; empty for the arguments object itself.
        message: What was expected and what was given.

    .. versionadded:: 0.1.0
    """

    path: str = attrs.field(validator=lambda _, a, v: _text(a.name, v))
    message: str = attrs.field(validator=lambda _, a, v: _text(a.name, v))

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


MAX_REPORTED_PROBLEMS = 20
"""Most problems a :class:`ToolArgumentsError` message spells out."""

MAX_PROBLEM_LENGTH = 300
"""Most characters of one problem in a :class:`ToolArgumentsError`."""


class ToolArgumentsError(ToolctxError, ValueError):
    """The model's arguments do not match the tool's parameters.

    The message lists every wrong argument with what was expected and what
    was given, so a model can correct all of them in one retry. It stays
    bounded whatever the arguments: at most
    :data:`MAX_REPORTED_PROBLEMS` problems of at most
    :data:`MAX_PROBLEM_LENGTH` characters each, then a count of the rest.

    A tool may raise it too, to refuse arguments its types cannot: the
    model sees the problems as it sees toolctx's own.

    Args:
        errors: The problems: one message (a ``str``) or one
            :class:`ArgumentError`, or an iterable of them (a ``str``
            item is a problem with the arguments as a whole).
        tool_name: The tool whose arguments failed, if known.

    Attributes:
        tool_name: The tool whose arguments failed, if known.
        errors: One :class:`ArgumentError` per problem, in path order.

    Raises:
        TypeError: *errors* is not one of the above (a mapping, bytes, a
            number), or *tool_name* is neither a str nor None.

    Example:
        >>> str(ToolArgumentsError("n must be even"))
        'Invalid arguments: n must be even'
        >>> error = ToolArgumentsError([ArgumentError("n", "must be even")])
        >>> str(error.with_tool_name("halve"))
        "Invalid arguments for tool 'halve': n: must be even"

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        errors: str | ArgumentError | Iterable[ArgumentError | str],
        *,
        tool_name: str | None = None,
    ) -> None:
        if tool_name is not None and not isinstance(
            cast("object", tool_name), str
        ):
            msg = (
                "ToolArgumentsError(tool_name=...) takes a str or None, got "
                f"{type(tool_name).__name__}."
            )
            raise TypeError(msg)
        self.tool_name = tool_name
        self.errors = _problems(errors)
        head = (
            f"Invalid arguments for tool {tool_name!r}"
            if tool_name
            else "Invalid arguments"
        )
        shown = [
            bounded(str(error), MAX_PROBLEM_LENGTH)
            for error in self.errors[:MAX_REPORTED_PROBLEMS]
        ]
        more = len(self.errors) - len(shown)
        if more > 0:
            shown.append(
                f"and {more} more problem{'s' if more > 1 else ''}: fix "
                "these first"
            )
        super().__init__(f"{head}: " + "; ".join(shown) if shown else head)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_arguments_error, (self.errors, self.tool_name))

    def with_tool_name(self, tool_name: str) -> ToolArgumentsError:
        """Return the same error, naming *tool_name* in its message."""
        return ToolArgumentsError(self.errors, tool_name=tool_name)


def _rebuild_arguments_error(
    errors: tuple[ArgumentError, ...], tool_name: str | None
) -> ToolArgumentsError:
    """Unpickle a :class:`ToolArgumentsError` (its args hold the message)."""
    return ToolArgumentsError(errors, tool_name=tool_name)


_ACCEPTED = (
    "Pass one message (a str), one ArgumentError(path, message), or a "
    "list of them."
)


def _problems(
    errors: str | ArgumentError | Iterable[ArgumentError | str],
) -> tuple[ArgumentError, ...]:
    """*errors* as a tuple of problems; TypeError for anything else."""
    given = cast("object", errors)
    if isinstance(given, str):
        return (ArgumentError("", given),)
    if isinstance(given, ArgumentError):
        return (given,)
    if isinstance(given, (bytes, bytearray, Mapping)) or not isinstance(
        given, Iterable
    ):
        msg = (
            "ToolArgumentsError() takes the problems with the arguments, "
            f"got {type(given).__name__}. {_ACCEPTED}"
        )
        raise TypeError(msg)
    problems: list[ArgumentError] = []
    for index, item in enumerate(cast("Iterable[object]", given)):
        if isinstance(item, ArgumentError):
            problems.append(item)
        elif isinstance(item, str):
            problems.append(ArgumentError("", item))
        else:
            msg = (
                f"ToolArgumentsError() problem {index} is a "
                f"{type(item).__name__}, not a str or an ArgumentError. "
                f"{_ACCEPTED}"
            )
            raise TypeError(msg)
    return tuple(problems)


class ToolOutputError(ToolctxError, TypeError):
    """A tool's output cannot be sent to the model.

    It has no JSON form (a NaN, an object of an unknown class, a context
    or result carrying host-only data), or it does not match the tool's
    declared return type. The dispatcher turns it into an error result
    (the tool's side effects have happened); the message names the
    problem and where it sits.

    .. versionadded:: 0.1.0
    """


class ToolTimeoutError(ToolctxError, TimeoutError):
    """A call ran past its timeout (becomes an error result).

    The dispatcher stops waiting for the call; whether the tool stopped
    too depends on how it ran. An ``async def`` tool is cancelled; a sync
    tool's worker thread cannot be stopped, nor can a call that a process
    pool or a Dask worker has started: it runs to its end, and its side
    effects happen after the model was told of the timeout. The message
    the model reads says which, so that it does not blindly repeat a call
    with side effects (sending an email twice); hosts read
    :attr:`may_still_run` on ``ToolResult.exception``.

    Attributes:
        tool_name: The tool that timed out, if known.
        timeout: The limit it ran past, in seconds, if known.
        may_still_run: Whether the tool's body may still be running (and
            its effects still take place): True for a sync tool in a
            worker thread, a call running in another process, or an
            async tool that did not stop when cancelled.
        started: False when the call never started (it waited for a
            worker until the time ran out): nothing of it ran.

    Example:
        >>> error = ToolTimeoutError(
        ...     "...", tool_name="send", timeout=5.0, may_still_run=True
        ... )
        >>> error.may_still_run, error.started
        (True, True)

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        message: str,
        *,
        tool_name: str | None = None,
        timeout: float | None = None,
        may_still_run: bool = False,
        started: bool = True,
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.timeout = timeout
        self.may_still_run = may_still_run
        self.started = started


class ToolDenied(ToolctxError):  # noqa: N818 - the contract's name
    """Raised by an interceptor's ``before`` to reject a call.

    The dispatcher turns it into an error result whose message is
    *reason*; the tool does not run.

    Attributes:
        reason: Why the call was denied, in words a model can act on.

    .. versionadded:: 0.1.0
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _denial_reason(missing: tuple[str, ...], user_id: str | None) -> str:
    quoted = [repr(p) for p in missing]
    if len(quoted) == 1:
        needs = f"the permission {quoted[0]}"
        tail = "the permission is missing"
    else:
        needs = f"the permissions {', '.join(quoted[:-1])} and {quoted[-1]}"
        tail = "these permissions are missing"
    who = "the caller" if user_id is None else f"user {user_id!r}"
    return (
        f"it requires {needs}, which {who} lacks. Do not retry; tell the "
        f"user {tail}."
    )


class PermissionDenied(ToolDenied):
    """Raised by :class:`Authorization` when the caller lacks permissions.

    The dispatcher turns it into an error result (the tool does not run);
    hosts find it on ``ToolResult.exception``.

    Attributes:
        tool_name: The tool that was called.
        missing: The permissions the caller lacks, sorted.
        user_id: The caller's ``user_id``, if the context has one.

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        tool_name: str,
        missing: Iterable[str],
        user_id: str | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.missing = tuple(sorted(missing))
        self.user_id = user_id
        super().__init__(_denial_reason(self.missing, user_id))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool_name, self.missing, self.user_id))


class ApprovalError(ToolctxError, ValueError):
    """A :meth:`Dispatcher.resume` that cannot go ahead (a host error).

    Raised when the request is not what was held (changed on its way,
    or it cannot be verified: not pending in the given session, not
    remembered by this dispatcher, no valid signature), has expired, was
    resumed already, when the resume context names another user or
    session, when its tool is no longer registered, or when the tool's
    definition changed since the request was made (the person approved a
    different call). The message says which; nothing ran.

    .. versionadded:: 0.2.0
    """


class ApprovalDenied(ToolctxError):  # noqa: N818 - reads as what happened
    """On the error result of a call a person declined.

    Attributes:
        reason: Why, as the person gave it (or None).

    .. versionadded:: 0.2.0
    """

    def __init__(self, message: str, reason: str | None) -> None:
        super().__init__(message)
        self.reason = reason


class SessionStoreError(ToolctxError):
    """A session store refused or failed an operation.

    .. versionadded:: 0.1.0
    """


class SessionSchemaError(SessionStoreError):
    """The database's schema is not one this version of toolctx can use.

    .. versionadded:: 0.1.0
    """


class SessionConflictError(SessionStoreError):
    """The stored version is not the one the caller expected.

    Attributes:
        session_id: The session's id.
        expected: The ``expected_version`` passed to ``save``.
        actual: The stored version (0 when the session does not exist).

    .. versionadded:: 0.1.0
    """

    def __init__(self, session_id: str, expected: int, actual: int) -> None:
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"Session {session_id!r} is at version {actual}, not "
            f"{expected}: it was saved (or deleted) since you read it. Load "
            f"it again, reapply your change and save with the new version."
        )


class SessionAccessError(SessionStoreError):
    """The session id is owned by another tenant.

    Raised by ``save``; ``load`` and ``delete`` of another tenant's id act
    as if the id did not exist, so they do not reveal it.

    Attributes:
        session_id: The id that could not be written.

    .. versionadded:: 0.1.0
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"Session {session_id!r} belongs to another tenant; this scope "
            f"cannot overwrite it. Session ids are global to a store: give "
            f"every new session a fresh, unguessable id (uuid.uuid4().hex)."
        )


class McpUnavailableError(ToolctxError, ImportError):
    """The ``mcp`` package is not installed.

    .. versionadded:: 0.1.0
    """


class ProviderSchemaError(SchemaError):
    """A tool's parameter schema cannot be written in a provider's dialect.

    Raised by ``tools()`` when a schema uses something the provider
    rejects: a free-form object under OpenAI strict mode, say, or a
    recursive type that only recurses through required fields under
    Gemini. The message names the tool, the place in the schema and what
    to change. A subclass of :class:`toolctx.SchemaError`.

    Attributes:
        provider: The provider module's name, e.g. ``"gemini"``.
        tool: The tool's name.
        path: Where in the schema, as a JSON Pointer (``""`` for the root).

    .. versionadded:: 0.1.0
    """

    def __init__(
        self, message: str, *, provider: str, tool: str, path: str
    ) -> None:
        self.provider = provider
        self.tool = tool
        self.path = path
        super().__init__(message, function=tool)


class ProviderPayloadError(ToolctxError, ValueError):
    """A response payload is not shaped the way the provider documents.

    Raised by ``parse_calls`` for a payload of the wrong type or structure
    (for example a tool call without a name), and by ``result_message``
    when a result lacks what the provider requires (such as the call id
    OpenAI and Anthropic match results by).

    Attributes:
        provider: The provider module's name, e.g. ``"openai"``.

    .. versionadded:: 0.1.0
    """

    def __init__(self, message: str, *, provider: str) -> None:
        self.provider = provider
        super().__init__(message)
