"""The steps of one call that every dispatch path shares.

Decoding the model's arguments, turning failures into model-readable
messages, building results, and the awaiting primitives the shells use.
Kept free of control flow so that :mod:`toolctx.dispatch.core` and the
shells read top to bottom.
"""

from __future__ import annotations

import asyncio
import sys

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
)
from time import perf_counter_ns
from typing import Any, Final

from toolctx._frozen import freeze_mapping
from toolctx._records import (
    NO_CHANGES,
    NO_METADATA,
    ToolCall,
    ToolResult,
    new_result,
)
from toolctx._text import bounded, exception_text
from toolctx._types.decode import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    DecodeError,
)
from toolctx._types.decode import decode_arguments as decode
from toolctx.context.current import get_current
from toolctx.context.execution import (
    ExecutionContext,
    recorder_of,
)
from toolctx.context.session import Session
from toolctx.exceptions import (
    MAX_LISTED_TOOLS,
    ToolArgumentsError,
    ToolctxError,
    ToolDenied,
    ToolTimeoutError,
)
from toolctx.tools.arguments import ArgumentStructurer
from toolctx.tools.function import ToolEntry


class Failure(Exception):  # noqa: N818 - internal control flow
    """A tool-level failure that becomes an error result."""

    def __init__(
        self, message: str, exception: BaseException | None = None
    ) -> None:
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
    call: ToolCall, structurer: ArgumentStructurer, args: Mapping[str, Any]
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
    if context is None:
        return (EMPTY_TEMPLATE if bound is None else bound), None
    if type(context) is ExecutionContext:
        return context, None
    if isinstance(context, Session):
        return context.context(), context
    raise _not_a_context(context)


def template_of(context: object) -> ExecutionContext:
    """The template for a dispatch given *context*: not a session.

    None inherits the bound context (or an empty one).

    Raises:
        TypeError: *context* is neither an ExecutionContext nor None.
    """
    if context is None:
        bound = get_current()
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
    if type(exc) is _RaisedError:
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


AWAIT_DIRECTLY: Final = sys.version_info >= (3, 11)
"""Whether a tool's awaitable is awaited as it is, not through
:func:`await_tool` (which is then the identity)."""

if sys.version_info >= (3, 11):

    def caller_cancelled() -> bool:
        """Whether the running task has been asked to cancel."""
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return False
        return task is not None and task.cancelling() > 0

    def await_tool(work: Awaitable[Any]) -> Awaitable[Any]:
        """What to await for a tool's awaitable: *work* itself.

        :func:`caller_cancelled` tells the caller's cancellation from the
        tool's own ``CancelledError`` here, so no wrapper is needed.
        """
        return work

else:  # pragma: no cover - CPython 3.10

    def caller_cancelled() -> bool:
        """Whether the running task has been asked to cancel.

        CPython 3.10 keeps no count of cancel requests: any
        ``CancelledError`` seen at an ``await`` is taken for the caller's;
        :func:`await_tool` makes a tool's own one distinguishable.
        """
        return True

    async def await_tool(work: Awaitable[Any]) -> Any:
        """Await a tool's awaitable in a child task.

        ``asyncio.wait`` raises ``CancelledError`` only when the awaiting
        task itself is cancelled; a tool that ends with a
        ``CancelledError`` of its own comes back as a finished task, whose
        error is wrapped so that it becomes a tool failure. The child runs
        :func:`captured`, so that a tool's ``SystemExit`` never reaches the
        event loop (a task re-raises it there).
        """
        task = asyncio.ensure_future(captured(work))
        try:
            await asyncio.wait({task})
        except BaseException:
            await _cancel_and_wait(task)
            raise
        return thread_result(task.result())


def in_thread(body: Any) -> tuple[bool, Any]:
    """Run *body* in a worker thread; ``(True, value)`` or ``(False, exc)``.

    Whatever the body raises comes back as a value: a future cannot carry
    ``StopIteration`` (the awaiting task would hang), and a
    ``CancelledError`` raised there must not pass for the awaiting task's
    own cancellation. :func:`thread_result` re-raises it in the caller.
    """
    try:
        return True, body()
    except BaseException as exc:  # noqa: BLE001 - re-raised by thread_result
        return False, exc


async def captured(work: Awaitable[Any]) -> tuple[bool, Any]:
    """Await *work*; ``(True, value)`` or ``(False, exc)``, like in_thread.

    For awaitables run in a task of their own (timeouts): a task re-raises
    a ``SystemExit`` or ``KeyboardInterrupt`` into the event loop, which
    would stop it.
    """
    try:
        return True, await work
    except BaseException as exc:  # noqa: BLE001 - re-raised by thread_result
        return False, exc


async def _cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel the tool's *task* because the caller was cancelled.

    As when the tool is awaited directly, the caller's ``CancelledError``
    is raised once the tool's own cleanup has run (its ``finally`` blocks
    may await); a worker thread cannot be stopped, so its future is
    cancelled at once and the thread finishes on its own.
    """
    task.cancel()
    try:
        await asyncio.wait({task})
    finally:
        task.cancel()


def thread_result(outcome: tuple[bool, Any]) -> Any:
    """The value of an *outcome* (see :func:`in_thread`), or raise it."""
    ok, value = outcome
    if ok:
        return value
    if isinstance(value, (asyncio.CancelledError, StopIteration)):
        # Neither may cross a coroutine frame as itself.
        raise _RaisedError(value) from None
    raise value


class _RaisedError(Exception):
    """What a tool raised, carried where it could not travel as itself.

    A ``StopIteration`` cannot leave a coroutine frame (it becomes a
    ``RuntimeError``), and a tool's own ``CancelledError`` must not pass
    for the caller's; :func:`tool_failure` unwraps it.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original


def cancelled(call: ToolCall) -> Failure:
    """The failure recorded when a consumer closes a stream early."""
    return Failure(
        f"The stream of tool {call.name!r} was closed before it finished."
    )


def loop_running() -> bool:
    """Whether an event loop is running in this thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def check_no_loop(entry: ToolEntry) -> None:
    """Refuse to run an async tool from sync code inside a running loop."""
    if loop_running():
        msg = (
            f"Tool {entry.definition.name!r} is async and an event loop is "
            "running in this thread: use `await dispatcher.adispatch(call, "
            "context)` instead of dispatch()."
        )
        raise ToolctxError(msg)


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


# -- awaiting --------------------------------------------------------------


def run_to_end(value: Awaitable[Any]) -> Any:
    """Run *value* on a private event loop (``asyncio.run``); its result.

    The loop's main task never ends with the tool's exception: it is
    carried out by :func:`captured` and raised here. (``asyncio.run`` in
    the main thread reprs what the task raised while restoring its SIGINT
    handler; an exception whose ``repr`` fails would leave that handler
    installed and break every later ``asyncio.run`` of the process.)
    """
    return thread_result(asyncio.run(captured(value)))


async def with_timeout(
    value: Awaitable[Any], timeout: float, name: str
) -> Any:
    """Await *value* for at most *timeout* seconds.

    Raises:
        ToolTimeoutError: The time ran out; the work was cancelled (a
            worker thread cannot be stopped and finishes on its own).
    """
    task = asyncio.ensure_future(captured(value))
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:
        await _cancel_and_wait(task)
        raise
    if task in done:
        return thread_result(task.result())
    task.cancel()
    msg = (
        f"Tool {name!r} timed out after {timeout:g} seconds and was "
        "cancelled. Try again with a smaller request, or tell the user the "
        "tool is slow right now."
    )
    raise ToolTimeoutError(msg)


def collect(gen: Iterator[Any], step: Callable[[Any], Any]) -> list[Any]:
    """Run a sync generator tool to the end; its chunks through *step*."""
    return [step(item) for item in gen]


async def acollect(
    agen: AsyncIterator[Any], step: Callable[[Any], Any]
) -> list[Any]:
    """Run an async generator tool to the end; its chunks through *step*."""
    return [step(item) async for item in agen]
