"""The exceptions of one call: its arguments, output, time and approval.

Arguments that do not match the tool's parameters (each wrong one an
:class:`ArgumentError`), output with no JSON form, a timeout, a denial
by an interceptor or by ``Authorization``, and the approval of a
call a person is asked about.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from toolctx._text import bounded
from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError


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

    path: str
    message: str

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

    Attributes:
        tool_name: The tool whose arguments failed, if known.
        errors: One :class:`ArgumentError` per problem, in path order.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(
        self, errors: Sequence[ArgumentError], *, tool_name: str | None = None
    ) -> None:
        self.tool_name = tool_name
        self.errors = tuple(errors)
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
        super().__init__(f"{head}: " + "; ".join(shown))

    def with_tool_name(self, tool_name: str) -> ToolArgumentsError:
        """Return the same error, naming *tool_name* in its message."""
        return ToolArgumentsError(self.errors, tool_name=tool_name)


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

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


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
