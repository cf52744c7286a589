"""Calls that wait for a person: the request, and what resuming needs.

A tool declared ``@tool(needs_approval=...)`` is checked in
:meth:`Core.prepare <toolctx.dispatch.core.Core.prepare>` before any
interceptor runs: arguments that do not fit are an ordinary error result
(the call goes the usual way); arguments that fit and a check that says
so make the call *pending*: a result whose ``approval`` is an
:class:`~toolctx.ApprovalRequest`, and nothing ran. Resuming rebuilds the
call's own context from the request, adds the scope the host supplies
now, and prepares the call again under the same invocation id, so the
interceptors see it once, when it really runs.
"""

from __future__ import annotations

import datetime as dt
import threading

from time import perf_counter_ns
from typing import TYPE_CHECKING, Final, cast

from toolctx._frozen import freeze_mapping, thaw
from toolctx._records import (
    NO_CHANGES,
    NO_METADATA,
    ApprovalRequest,
    ToolCall,
    ToolResult,
    new_result,
)
from toolctx._text import bounded
from toolctx._types.decode import DecodeError
from toolctx._types.decode import decode_arguments as decode
from toolctx.context.codec import context_to_dict
from toolctx.context.execution import ExecutionContext
from toolctx.context.session import Session
from toolctx.exceptions import (
    ApprovalDenied,
    ApprovalError,
    ToolArgumentsError,
)
from toolctx.tools.registry import digest


if TYPE_CHECKING:
    from toolctx._records import ToolDefinition
    from toolctx._types.decode import ArgumentLimits
    from toolctx.tools.function import ToolEntry

MAX_REASON: Final = 500
"""Longest denial reason passed to the model; longer ones are cut."""


def tool_fingerprint(definition: ToolDefinition) -> str:
    """The digest of one tool's definition, as a request records it."""
    return digest(definition.to_dict())


def pending(
    call: ToolCall,
    ctx: ExecutionContext,
    entry: ToolEntry,
    limits: ArgumentLimits,
    start: int,
) -> ToolResult | None:
    """The pending result of *call*, or None if it goes the usual way.

    None when the arguments do not fit (the usual path turns them into an
    error result) or when the tool's check says this call needs no
    approval. What the check raises propagates to the usual failure
    handling of the caller.
    """
    try:
        decoded = decode(call.arguments, limits)
        if entry.structurer is not None:
            entry.structurer.structure(decoded)
    except (DecodeError, ToolArgumentsError):
        return None
    arguments = freeze_mapping(decoded, "ApprovalRequest.call.arguments")
    checked = ToolCall(call.name, arguments, call.id)
    check = entry.approval
    if check is not True and not (
        callable(check) and check(checked, ctx) is True
    ):
        return None
    request = ApprovalRequest(
        call=checked,
        invocation_id=ctx.invocation_id,
        parent_invocation_id=ctx.parent_invocation_id,
        context=freeze_mapping(
            context_to_dict(ctx), "ApprovalRequest.context"
        ),
        tool_fingerprint=tool_fingerprint(entry.definition),
        requested_at=dt.datetime.now(dt.timezone.utc).isoformat(),
    )
    return new_result(
        call.name,
        call.id,
        ctx.invocation_id,
        None,
        False,  # noqa: FBT003
        None,
        None,
        NO_METADATA,
        NO_CHANGES,
        perf_counter_ns() - start,
        request,
    )


class Claims:
    """The invocations this dispatcher has resumed: each only once.

    With a :class:`~toolctx.Session`, the session's ``pending`` decides
    (it survives a restart through a session store); without one, this
    process's memory does (one id string per resumed call).
    """

    __slots__ = ("_done", "_lock")

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, request: ApprovalRequest, session: Session | None) -> None:
        """Mark *request* resumed, or raise :class:`ApprovalError`."""
        inv = request.invocation_id
        with self._lock:
            if inv in self._done:
                raise _twice(request)
            if session is not None and session.resolve(inv) is None:
                msg = (
                    f"The call to {request.call.name!r} (invocation {inv}) "
                    f"is not pending in session {session.id!r}: it was "
                    "resumed already, or made in another session. Nothing "
                    "ran."
                )
                raise ApprovalError(msg)
            self._done.add(inv)


def _twice(request: ApprovalRequest) -> ApprovalError:
    return ApprovalError(
        f"The call to {request.call.name!r} (invocation "
        f"{request.invocation_id}) was resumed already; a request is "
        "resumed once. Nothing ran."
    )


def check_request(
    request: object, entry: ToolEntry | None, approved: object
) -> ApprovalRequest:
    """*request* if it can be resumed against *entry*, else a clear error."""
    if not isinstance(request, ApprovalRequest):
        msg = (
            "resume() takes the ApprovalRequest of a pending result "
            f"(result.approval), got {type(request).__name__}."
        )
        raise TypeError(msg)
    if type(approved) is not bool:
        msg = (
            f"resume() approved= must be True or False, got {approved!r:.40}."
        )
        raise TypeError(msg)
    name = request.call.name
    if entry is None:
        msg = (
            f"The tool {name!r} of this request is not registered here, so "
            "the call cannot be resumed. Register the same tool, or tell "
            "the model the call was not made."
        )
        raise ApprovalError(msg)
    if tool_fingerprint(entry.definition) != request.tool_fingerprint:
        msg = (
            f"The tool {name!r} changed since this call was requested (its "
            "definition is not the one the person approved): the call is "
            "refused. Ask for a new approval of a new call."
        )
        raise ApprovalError(msg)
    return request


def resumed_template(
    request: ApprovalRequest, context: ExecutionContext | Session | None
) -> ExecutionContext:
    """The call's stored context with the scope supplied now.

    The scope of *context* (a template or a session); with none, no scope
    here (a dispatcher with an executor and a ``scope_loader`` has the
    worker rebuild it, as for any call).
    """
    scope: object = None
    if isinstance(context, (ExecutionContext, Session)):
        scope = context.scope
    elif cast("object", context) is not None:
        msg = (
            "resume() context= takes an ExecutionContext or a Session (for "
            f"its scope), got {type(context).__name__}."
        )
        raise TypeError(msg)
    return ExecutionContext.from_dict(thaw(request.context), scope=scope)


def denied_result(request: ApprovalRequest, reason: str | None) -> ToolResult:
    """The error result of a call a person declined, worded for the model."""
    name = request.call.name
    said = "" if reason is None else f" Reason: {bounded(reason, MAX_REASON)}"
    message = (
        f"The call to {name!r} was not approved by a person, so it did not "
        f"run.{said} Do not repeat it unless the user asks again."
    )
    return ToolResult(
        name=name,
        call_id=request.call.id,
        invocation_id=request.invocation_id,
        is_error=True,
        error=message,
        exception=ApprovalDenied(message, reason),
    )
