"""The steps of one call that every dispatch path shares.

Decoding the model's arguments, turning failures into model-readable
messages and building results. Kept free of control flow so that
:mod:`toolctx.dispatch.core` and the shells read top to bottom; the
awaiting primitives the shells use are in
:mod:`toolctx.dispatch.awaiting`.
"""

from __future__ import annotations

import asyncio

from collections.abc import Mapping
from time import perf_counter_ns
from typing import Any

from toolctx._frozen import freeze_mapping
from toolctx._records import (
    NO_CHANGES,
    NO_METADATA,
    ToolCall,
    ToolResult,
    new_result,
)
from toolctx._text import bounded, escaped, exception_text
from toolctx._types.decode import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    DecodeError,
)
from toolctx._types.decode import decode_arguments as decode
from toolctx.context.execution import (
    ExecutionContext,
    recorder_of,
)
from toolctx.context.session import Session
from toolctx.dispatch.awaiting import RaisedError, caller_cancelled
from toolctx.exceptions import (
    MAX_LISTED_TOOLS,
    ToolArgumentsError,
    ToolDenied,
    ToolTimeoutError,
)
from toolctx.tools.arguments import Structurer
from toolctx.tools.function import ToolEntry


class Failure(Exception):  # noqa: N818 - internal control flow
    """A tool-level failure that becomes an error result.

    Its message is :func:`~toolctx._text.escaped`: the exception text or
    the model-chosen name it quotes may hold a lone surrogate, which no
    provider's JSON or the MCP wire can carry.
    """

    def __init__(
        self, message: str, exception: BaseException | None = None
    ) -> None:
        message = escaped(message)
        super().__init__(message)
        self.message = message
        self.exception = exception


# -- arguments -------------------------------------------------------------


def decode_arguments(
    call: ToolCall, entry: ToolEntry, limits: ArgumentLimits = DEFAULT_LIMITS
) -> dict[str, Any]:
    """Return the call's arguments as a dict, or raise :class:`Failure`.

    The one decoder (:func:`toolctx._types.decode.decode_arguments`)
    applies the limits and JSON's rules; its refusal becomes a message
    naming the tool and the keys it takes.
    """
    try:
        return decode(call.arguments, limits)
    except DecodeError as exc:
        raise bad_text(call, entry, exc) from None


def bad_text(call: ToolCall, entry: ToolEntry, exc: DecodeError) -> Failure:
    """The failure for argument text the decoder refused."""
    return Failure(_argument_message(call, entry, exc), exc.cause)


def bad_arguments(call: ToolCall, exc: ToolArgumentsError) -> Failure:
    """The failure for arguments the tool's checks refused."""
    named = exc.with_tool_name(call.name)
    return Failure(str(named), named)


def _argument_message(
    call: ToolCall, entry: ToolEntry, exc: DecodeError
) -> str:
    keys = list(entry.definition.parameters.get("properties") or {})
    expected = (
        " with the keys " + ", ".join(keys)
        if keys
        else " (this tool takes no arguments: send {})"
    )
    start = f"The arguments for tool {call.name!r}"
    if exc.kind == "size":
        return f"{start} are {exc.problem}. Send less data."
    if exc.kind == "json":
        return f"{start} are {exc.problem}. Send one JSON object{expected}."
    return f"{start} must be a JSON object{expected}, got {exc.detail}."


def structure(
    call: ToolCall, structurer: Structurer, args: Mapping[str, Any]
) -> dict[str, Any]:
    """Validate *args* with *structurer*; bad arguments raise Failure."""
    try:
        return structurer.structure(args)
    except ToolArgumentsError as exc:
        raise bad_arguments(call, exc) from None


# -- the call's context -------------------------------------------------------

EMPTY_TEMPLATE = ExecutionContext(invocation_id="")


def resolve_template(
    context: object, bound: ExecutionContext | None
) -> tuple[ExecutionContext, Session | None]:
    """Return the template for a dispatch, and the session if one was given.

    None inherits the bound context (or an empty one); a :class:`Session`
    supplies a template built from its state.

    Raises:
        TypeError: *context* is of another type (a host bug).
    """
    if isinstance(context, Session):
        return context.context(), context
    return template_of(context, bound), None


def template_of(
    context: object, bound: ExecutionContext | None
) -> ExecutionContext:
    """The template for a dispatch given *context*, which is no session.

    None inherits *bound*, the bound context (or an empty one).

    Raises:
        TypeError: *context* is neither an ExecutionContext nor None.
    """
    if context is None:
        return EMPTY_TEMPLATE if bound is None else bound
    if type(context) is ExecutionContext:
        return context
    raise _not_a_context(context)


def _not_a_context(context: object) -> TypeError:
    return TypeError(
        "context must be an ExecutionContext, a Session or None, got "
        f"{type(context).__name__}."
    )


# -- failures ----------------------------------------------------------------


def unknown_tool(call: ToolCall, names: list[str]) -> Failure:
    """The failure for a name that is not registered."""
    name = bounded(repr(call.name), 200)
    if not names:
        return Failure(f"Unknown tool {name}. No tools are available.")
    shown = ", ".join(names[:MAX_LISTED_TOOLS])
    more = len(names) - MAX_LISTED_TOOLS
    more_text = f" and {more} more" if more > 0 else ""
    return Failure(
        f"Unknown tool {name}. Available tools: {shown}{more_text}. "
        "Call one of them by its exact name."
    )


def denied(call: ToolCall, exc: ToolDenied) -> Failure:
    """The failure for an interceptor's denial."""
    reason = bounded(exc.reason)
    return Failure(f"Call to tool {call.name!r} was denied: {reason}", exc)


def tool_failure(
    call: ToolCall, exc: BaseException, *, detail: bool
) -> Failure:
    """The failure for an exception raised while the tool ran."""
    if type(exc) is RaisedError:
        exc = exc.original
    if isinstance(exc, ToolArgumentsError):
        return Failure(str(exc.with_tool_name(call.name)), exc)
    if isinstance(exc, ToolDenied):
        return denied(call, exc)
    if isinstance(exc, ToolTimeoutError):
        return Failure(str(exc), exc)
    if not detail:
        return Failure(f"Tool {call.name!r} failed.", exc)
    return Failure(f"Tool {call.name!r} failed: {exception_text(exc)}", exc)


def propagates(exc: BaseException, *, awaited: bool) -> bool:
    """Whether *exc*, raised by a tool body, escapes the dispatcher.

    Everything a tool raises is a tool failure (an error result), its
    ``SystemExit`` included, except ``KeyboardInterrupt``, ``GeneratorExit``
    and other ``BaseException`` subclasses that are not ``SystemExit``,
    and the *caller's own* cancellation. A ``CancelledError`` the tool
    raised itself (it awaited a future someone else cancelled) is a tool
    failure: the caller's task was not cancelled. Cancellation reaches a
    task only at an ``await``, so a ``CancelledError`` out of code that
    did not await (*awaited* False) is always the tool's own.
    """
    if isinstance(exc, (Exception, SystemExit)):
        return False
    if isinstance(exc, asyncio.CancelledError):
        return awaited and caller_cancelled()
    return True


def cancelled(call: ToolCall) -> Failure:
    """The failure recorded when a consumer closes a stream early."""
    return Failure(
        f"The stream of tool {call.name!r} was closed before it finished."
    )


# -- results -----------------------------------------------------------------


def ok_result(
    call: ToolCall, ctx: ExecutionContext, output: Any, start: int
) -> ToolResult:
    """A successful result carrying what the call published."""
    rec = recorder_of(ctx)
    metadata = NO_METADATA
    changes = NO_CHANGES
    if rec is not None:
        rec.close()
        if rec.metadata is not None:
            metadata = freeze_mapping(
                rec.metadata, "ToolResult.metadata", deep=False
            )
        if rec.state_changes is not None:
            changes = freeze_mapping(
                rec.state_changes, "ToolResult.state_changes", deep=False
            )
    return new_result(
        call.name,
        call.id,
        ctx.invocation_id,
        output,
        False,  # noqa: FBT003
        None,
        None,
        metadata,
        changes,
        perf_counter_ns() - start,
        None,
    )


def error_result(
    call: ToolCall,
    ctx: ExecutionContext,
    failure: Failure,
    start: int,
    output: Any = None,
) -> ToolResult:
    """An error result; published metadata kept, state changes dropped."""
    rec = recorder_of(ctx)
    metadata = NO_METADATA
    if rec is not None:
        rec.close()
    if rec is not None and rec.metadata is not None:
        metadata = freeze_mapping(
            rec.metadata, "ToolResult.metadata", deep=False
        )
    return new_result(
        call.name,
        call.id,
        ctx.invocation_id,
        output,
        True,  # noqa: FBT003
        failure.message,
        failure.exception,
        metadata,
        NO_CHANGES,
        perf_counter_ns() - start,
        None,
    )
