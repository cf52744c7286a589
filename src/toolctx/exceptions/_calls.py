"""The exceptions of one call: its arguments, output, time and approval.

Arguments that do not match the tool's parameters (each wrong one an
:class:`ArgumentError`), output with no JSON form, a timeout, a denial
by an interceptor or by ``Authorization``, and the approval of a
call a person is asked about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import attrs

from toolctx._text import bounded
from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError


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

    __module__ = PUBLIC_MODULE

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

    __module__ = PUBLIC_MODULE

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

    __module__ = PUBLIC_MODULE


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

    __module__ = PUBLIC_MODULE

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

    __module__ = PUBLIC_MODULE

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

    __module__ = PUBLIC_MODULE

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

    __module__ = PUBLIC_MODULE


class ApprovalDenied(ToolctxError):  # noqa: N818 - reads as what happened
    """On the error result of a call a person declined.

    Attributes:
        reason: Why, as the person gave it (or None).

    .. versionadded:: 0.2.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, message: str, reason: str | None) -> None:
        super().__init__(message)
        self.reason = reason
