"""The sans-IO core of a call: everything its result depends on.

A call goes through three steps, and only the middle one differs between
sync, async, streaming and remote calls:

1. :meth:`Core.prepare` derives the call's context, runs the
   interceptors' ``before``, finds the tool and checks the arguments. It
   returns a :class:`Prepared` call, or the finished :class:`ToolResult`
   when the call cannot run (denied, unknown tool, bad arguments).
2. A shell in :mod:`toolctx._dispatch.run` or :mod:`toolctx._dispatch.stream`
   binds the context, runs the tool body and unbinds it: the only code
   that binds a call's context and the only code that awaits.
3. :meth:`Core.finish` turns the body's outcome into the result: the
   output step (declared type, then JSON), or the failure the model reads;
   then the interceptors' ``after``, last first.

Nothing here awaits, and nothing binds a context or does I/O except to
log a failed call (:meth:`Core.error`, the one place a failure becomes a
result), so every path decides a result, and logs it, the same way.

Here too: the steps every path shares (decoding the model's arguments,
turning failures into model-readable messages, building results), the
:class:`Prepared` call and its one constructor :func:`prepared`, and
:class:`Chain`, the one interceptor loop (every ``before`` in order,
every ``after`` last first) the core runs around every call that has
interceptors. The awaiting primitives the shells use are in
:mod:`toolctx._dispatch.run`.
"""

from __future__ import annotations

import asyncio
import logging

from collections.abc import Callable, Mapping
from time import perf_counter_ns
from typing import Any, cast, final

from toolctx._context.current import SEAM
from toolctx._context.execution import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
    recorder_of,
)
from toolctx._context.session import Session
from toolctx._dispatch.approvals import Approvals, Checking, checked_call
from toolctx._dispatch.run import RaisedError, caller_cancelled
from toolctx._frozen import freeze_mapping
from toolctx._ids import new_invocation_id
from toolctx._records import (
    NO_CHANGES,
    NO_METADATA,
    ToolCall,
    ToolProgress,
    ToolResult,
    new_result,
)
from toolctx._text import bounded, escaped, exception_text
from toolctx._tools.arguments import Structurer
from toolctx._tools.function import ToolEntry
from toolctx._tools.protocols import Interceptor
from toolctx._types.decode import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    DecodeError,
)
from toolctx._types.decode import decode_arguments as decode
from toolctx.exceptions import (
    MAX_LISTED_TOOLS,
    ToolArgumentsError,
    ToolctxError,
    ToolDenied,
    ToolTimeoutError,
)


_log = logging.getLogger("toolctx")


@final
class Core:
    """What a dispatcher decides about every call, without running one.

    Args:
        entries: The registry's name -> call plan lookup.
        names: The registered names, for the unknown-tool message.
        interceptors: Run around every call.
        limits: Bounds on the argument text.
        detail: Put the exception's text in a failed call's message.
        log: Log every failed call on the ``toolctx`` logger (False in a
            remote worker: the dispatcher that sent the call logs it).
        approvals: What the dispatcher holds for a person, and how.
    """

    __slots__ = (
        "approvals",
        "chain",
        "detail",
        "entries",
        "interceptors",
        "limits",
        "listeners",
        "log",
        "names",
        "progress",
    )

    def __init__(
        self,
        entries: Callable[[str], ToolEntry | None],
        names: Callable[[], list[str]],
        interceptors: tuple[Interceptor, ...],
        limits: ArgumentLimits,
        *,
        detail: bool,
        log: bool = True,
        approvals: Approvals | None = None,
    ) -> None:
        self.approvals = Approvals() if approvals is None else approvals
        self.entries = entries
        self.log = log
        self.names = names
        self.interceptors = interceptors
        self.chain = Chain(interceptors)
        self.limits = limits
        self.detail = detail
        # The hosts' progress listeners, and what a call's recorder sends
        # its reports to: None while nobody listens (the common case).
        self.listeners: tuple[Callable[[ToolProgress], object], ...] = ()
        self.progress: Callable[[ToolProgress], None] | None = None

    def listen(
        self, listener: Callable[[ToolProgress], object]
    ) -> Callable[[], None]:
        """Send every progress report to *listener*; return the undo."""
        self.listeners = (*self.listeners, listener)
        self.progress = self.emit

        def unsubscribe() -> None:
            kept = list(self.listeners)
            if listener in kept:
                kept.remove(listener)
            self.listeners = tuple(kept)
            if not kept:
                self.progress = None

        return unsubscribe

    def emit(self, report: ToolProgress) -> None:
        """Hand *report* to every listener; one that raises is logged."""
        for listener in self.listeners:
            try:
                listener(report)
            except Exception:  # noqa: BLE001 - a listener never breaks a call
                _log.exception(
                    "A progress listener (%r) raised; the call goes on.",
                    listener,
                )

    # -- before the body -----------------------------------------------------

    def prepare(  # noqa: C901, PLR0912 - the hot path, in one frame
        self,
        call: ToolCall,
        template: ExecutionContext,
        bound: ExecutionContext | None,
        start: int,
        resumed: str | None = None,
    ) -> Prepared | ToolResult | Checking:
        """Everything before the body runs; the result if it cannot run.

        A :class:`Checking` when the tool's approval check has to run
        first: the shell settles it (:func:`~toolctx._dispatch.approvals.
        settle` or ``asettle``), which hands it to :meth:`decide`.

        *resumed*: the invocation id the call runs as, past the approval
        gate (an approved call being resumed, or a call its check let
        through).
        """
        recorder = CallRecorder()
        progress = self.progress
        if progress is not None:
            recorder.progress = progress
        ctx = derive_call_context(
            template,
            new_invocation_id() if resumed is None else resumed,
            call.name,
            call.id,
            bound.invocation_id
            if bound is not None and recorder_of(bound) is not None
            else template.parent_invocation_id,
            recorder,
        )
        entry = self.entries(call.name)
        if entry is not None and entry.approval is not None and not resumed:
            gated = self.gate(call, ctx, entry, start)
            if gated is not None:
                return gated
        ran = 0
        if self.interceptors:
            ctx, ran, refused = self.chain.before(call, ctx, start)
            if refused is not None:
                self.logged(call, ctx, refused.error, refused.exception)
                return self.chain.after(call, ctx, ran, refused)
        try:
            if entry is None:
                failure = unknown_tool(call, self.names())
            else:
                try:
                    decoded = decode(call.arguments, self.limits)
                    structurer = entry.structurer
                    if structurer is None:
                        args = decoded
                    else:
                        args = structurer.structure(decoded)
                        for name in entry.context_parameters:
                            args[name] = ctx
                except DecodeError as exc:
                    failure = bad_text(call, entry, exc)
                except ToolArgumentsError as exc:
                    failure = bad_arguments(call, exc)
                else:
                    return prepared(
                        call, ctx, entry, args, decoded, ran, start
                    )
        except BaseException:
            self.abandon_call(call, ctx, ran, start)
            raise
        # The model's to fix (no such tool, arguments it must correct):
        # logged without a traceback, at DEBUG.
        return self.end(
            call, ctx, ran, self.error(call, ctx, failure, start, refused=True)
        )

    def gate(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        entry: ToolEntry,
        start: int,
    ) -> ToolResult | Checking | None:
        """The approval gate: held, a check to run, or None (go on).

        None when the arguments do not fit (the usual path turns them into
        an error result); the held result for ``needs_approval=True``;
        else the :class:`Checking` a shell settles.
        """
        checked = checked_call(call, entry, self.limits)
        if checked is None:
            return None
        check = entry.approval
        if callable(check):
            return Checking(call, checked, ctx, entry, check, start)
        return self.hold(call, checked, ctx, entry, start)

    def decide(
        self,
        c: Checking,
        ok: bool,
        value: object,
        *,
        awaited: bool = False,
    ) -> Prepared | ToolResult:
        """Hold, fail or go on, once *c*'s check returned *value* (*ok*).

        Whatever the check returns is read as a condition: truthy holds
        the call. A check that raised (or whose value has no truth) fails
        the call with nothing run; *awaited* as for :meth:`finish`.
        """
        if ok:
            try:
                holds = bool(value)
            except BaseException as exc:  # noqa: BLE001 - failure re-raises
                ok, value = False, exc
        if not ok:
            failure = self.failure(
                c.call, cast("BaseException", value), awaited=awaited
            )
            return self.error(c.call, c.ctx, failure, c.start)
        if holds:
            return self.hold(c.call, c.checked, c.ctx, c.entry, c.start)
        passed = self.prepare(
            c.call, c.ctx, None, c.start, c.ctx.invocation_id
        )
        assert type(passed) is not Checking  # noqa: S101 - past the gate
        return passed

    def hold(
        self,
        call: ToolCall,
        checked: ToolCall,
        ctx: ExecutionContext,
        entry: ToolEntry,
        start: int,
    ) -> ToolResult:
        """The pending result of a call that waits for a person.

        A request that cannot be made (a context toolctx cannot store)
        fails the call, with nothing run.
        """
        try:
            request = self.approvals.request(checked, ctx, entry)
        except BaseException as exc:  # noqa: BLE001 - failure re-raises
            return self.error(call, ctx, self.failure(call, exc), start)
        recorder = recorder_of(ctx)
        if recorder is not None:
            recorder.close()
        held = new_result(
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
        self.chain.tell_approval(call, ctx, held)
        return held

    # -- after the body ------------------------------------------------------

    def finish(
        self, p: Prepared, ok: bool, value: Any, *, awaited: bool = False
    ) -> ToolResult:
        """The result of a body that returned *value* (*ok*) or raised it.

        *awaited*: the exception came out of an ``await``, so it may be
        the caller's own cancellation, which propagates (as do
        ``KeyboardInterrupt`` and the like) once the interceptors whose
        ``before`` ran have seen the call end.
        """
        call = p.call
        failure: Failure | None = None
        try:
            if ok:
                try:
                    output = p.entry.output(value)
                except BaseException as exc:  # noqa: BLE001 - failure raises
                    failure = self.failure(call, exc)
            else:
                failure = self.failure(call, value, awaited=awaited)
        except BaseException:
            self.abandon(p)
            raise
        if failure is not None:
            return self.failed(p, failure)
        # Outside the try: an ``after`` that raises is not abandoned.
        result = ok_result(call, p.ctx, output, p.start)
        if p.ran:
            return self.chain.after(call, p.ctx, p.ran, result)
        return result

    def failed(
        self, p: Prepared, failure: Failure, output: Any = None
    ) -> ToolResult:
        """The result of a call that failed with *failure*."""
        result = self.error(p.call, p.ctx, failure, p.start, output)
        return self.end(p.call, p.ctx, p.ran, result)

    def succeeded(self, p: Prepared, output: Any) -> ToolResult:
        """The result of a call whose JSON-safe *output* is ready."""
        result = ok_result(p.call, p.ctx, output, p.start)
        return self.end(p.call, p.ctx, p.ran, result)

    def error(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        failure: Failure,
        start: int,
        output: Any = None,
        *,
        refused: bool = False,
    ) -> ToolResult:
        """The error result of *failure*, logged (see :meth:`logged`).

        *refused*: the call was refused before it ran, for the model to
        fix (unknown tool, bad arguments): logged at DEBUG.
        """
        self.logged(
            call,
            ctx,
            failure.message,
            failure.exception,
            logging.DEBUG if refused else None,
        )
        return error_result(call, ctx, failure, start, output)

    def logged(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        message: str | None,
        exc: BaseException | None,
        level: int | None = None,
    ) -> None:
        """Log one failed call on the ``toolctx`` logger, for the host.

        Each failed call is logged once, by the dispatcher that ran it
        (whatever path: sync, async, batch, stream, resume, executor),
        with its tool name, call id and invocation id in the message and
        as the record's ``toolctx_tool_name``, ``toolctx_tool_call_id``
        and ``toolctx_invocation_id``; the call's context is bound while
        the record is made, so a
        :class:`~toolctx.interceptors.ContextLogFilter` adds the rest of
        its ids. Arguments the model must correct are logged at DEBUG
        and a denial at INFO, without a traceback; anything else (the
        tool raised, timed out, returned what cannot be sent, its worker
        died) at ERROR with the exception and its traceback, even when
        the model is not shown the exception's text
        (``include_exception_messages=False``). The scope is never
        logged.
        """
        if level is None:
            if isinstance(exc, ToolArgumentsError):
                level = logging.DEBUG
            elif isinstance(exc, ToolDenied):
                level = logging.INFO
            else:
                level = logging.ERROR
        if not self.log or not _log.isEnabledFor(level):
            return
        token = SEAM.bind(ctx)
        try:
            _log.log(
                level,
                "Tool call %r failed (call id %s, invocation %s): %s",
                call.name[:100],
                call.id,
                ctx.invocation_id,
                message,
                exc_info=exc if level >= logging.ERROR else None,
                extra={
                    "toolctx_tool_name": call.name,
                    "toolctx_tool_call_id": call.id,
                    "toolctx_invocation_id": ctx.invocation_id,
                },
            )
        finally:
            SEAM.unbind(token)

    def failure(
        self, call: ToolCall, exc: BaseException, *, awaited: bool = False
    ) -> Failure:
        """The failure for what a tool body raised, as the model reads it.

        Re-raises *exc* instead when it must propagate (see
        :func:`toolctx._dispatch.core.propagates`).
        """
        if propagates(exc, awaited=awaited):
            raise exc
        return tool_failure(call, exc, detail=self.detail)

    def end(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        result: ToolResult,
    ) -> ToolResult:
        """*result*, through the ``after`` of the interceptors that ran."""
        return self.chain.after(call, ctx, ran, result) if ran else result

    def abandon(self, p: Prepared, failure: Failure | None = None) -> None:
        """Let the interceptors see a call end that is being abandoned.

        For a call whose caller was cancelled (or interrupted): the
        ``after`` of every interceptor whose ``before`` ran sees an error
        result (*failure*, else "cancelled") while the exception
        propagates; their own errors are logged, not raised.
        """
        self.abandon_call(p.call, p.ctx, p.ran, p.start, failure)

    def abandon_call(  # noqa: PLR0917 - the parts of a call
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        start: int,
        failure: Failure | None = None,
        output: Any = None,
    ) -> None:
        """:meth:`abandon` for a call that has no :class:`Prepared` yet."""
        if not ran:
            return
        if failure is None:
            failure = Failure(f"The call to tool {call.name!r} was cancelled.")
        self.chain.unwind(
            call, ctx, ran, error_result(call, ctx, failure, start, output)
        )


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


@final
class Prepared:
    """One call, checked and ready for its body to run.

    Attributes:
        call: The model's call.
        ctx: The call's context, as the interceptors left it.
        entry: The tool's call plan.
        args: What to call the body with: keyword arguments (context
            parameters included) for a function tool, else the decoded
            arguments mapping.
        decoded: The decoded arguments (what a remote worker receives).
        ran: How many interceptors' ``before`` ran.
        start: ``perf_counter_ns()`` when the dispatch began.
    """

    __slots__ = ("args", "call", "ctx", "decoded", "entry", "ran", "start")

    call: ToolCall
    ctx: ExecutionContext
    entry: ToolEntry
    args: dict[str, Any]
    decoded: dict[str, Any]
    ran: int
    start: int


def prepared(  # noqa: PLR0917 - built in one place, on every call
    call: ToolCall,
    ctx: ExecutionContext,
    entry: ToolEntry,
    args: dict[str, Any],
    decoded: dict[str, Any],
    ran: int,
    start: int,
) -> Prepared:
    """A :class:`Prepared` call, built without an ``__init__`` frame.

    ``object.__new__`` and plain slot stores cost half of a class call
    with an ``__init__`` (this runs on every dispatch).
    """
    p = _new(Prepared)
    p.call = call
    p.ctx = ctx
    p.entry = entry
    p.args = args
    p.decoded = decoded
    p.ran = ran
    p.start = start
    return p


_new = object.__new__


@final
class Chain:
    """A dispatcher's interceptors, run around each call.

    Args:
        interceptors: In the order their ``before`` runs.
    """

    __slots__ = ("interceptors", "last_first", "on_approval")

    def __init__(self, interceptors: tuple[Interceptor, ...]) -> None:
        self.interceptors = interceptors
        self.last_first = interceptors[::-1]
        # Interceptors' optional on_approval(call, context, result) hooks:
        # told when a call is held and when a held call is declined.
        self.on_approval: tuple[Callable[..., object], ...] = tuple(
            hook
            for hook in (getattr(i, "on_approval", None) for i in interceptors)
            if callable(hook)
        )

    def before(
        self, call: ToolCall, ctx: ExecutionContext, start: int
    ) -> tuple[ExecutionContext, int, ToolResult | None]:
        """Run every ``before`` in order.

        Returns the context the tool gets, how many ``before`` ran, and
        the error result if one denied the call. If one raises anything
        else, the ``after`` of those that ran still see the call end
        (spans closed, audit written) before the exception propagates.
        """
        ran = 0
        interceptor: Interceptor | None = None
        try:
            for interceptor in self.interceptors:
                try:
                    new = interceptor.before(call, ctx)
                except ToolDenied as exc:
                    failure = denied(call, exc)
                    refused = error_result(call, ctx, failure, start)
                    return ctx, ran, refused
                ran += 1
                ctx = _checked_context(call, interceptor, ctx, new)
        except BaseException:
            if ran:
                name = type(interceptor).__name__
                failure = Failure(
                    f"The call to tool {call.name!r} did not run: "
                    f"interceptor {name} failed before it."
                )
                self.unwind(
                    call, ctx, ran, error_result(call, ctx, failure, start)
                )
            raise
        return ctx, ran, None

    def after(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        result: ToolResult,
    ) -> ToolResult:
        """Run the ``after`` of the first *ran* interceptors, last first.

        Every one runs, even when an earlier one raises; the first
        exception is raised once all have run.
        """
        error: BaseException | None = None
        last_first = self.last_first
        for interceptor in (
            last_first if ran == len(last_first) else last_first[-ran:]
        ):
            try:
                new = interceptor.after(call, ctx, result)
                if type(cast("object", new)) is not ToolResult:
                    msg = (
                        f"{type(interceptor).__name__}.after() must return "
                        f"a ToolResult, got {type(new).__name__}."
                    )
                    raise TypeError(msg)  # noqa: TRY301 - collected
                result = new
            except BaseException as exc:  # noqa: BLE001 - raised below
                if error is None:
                    error = exc
        if error is not None:
            raise error
        return result

    def unwind(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        result: ToolResult,
    ) -> None:
        """:meth:`after` while another exception propagates.

        The propagating exception wins; one raised by an ``after`` here is
        logged with its traceback instead of replacing it.
        """
        try:
            self.after(call, ctx, ran, result)
        except BaseException:  # noqa: BLE001 - the caller re-raises its own
            _log.exception(
                "An interceptor's after() failed for tool call %r "
                "(invocation %s) while the call was being abandoned",
                call.name,
                ctx.invocation_id,
            )

    def tell_approval(
        self, call: ToolCall, ctx: ExecutionContext, result: ToolResult
    ) -> None:
        """Tell the interceptors' ``on_approval`` hooks of *result*.

        A hook that raises is logged and the others still hear.
        """
        for hook in self.on_approval:
            try:
                hook(call, ctx, result)
            except Exception:  # noqa: BLE001 - a hook never breaks a call
                _log.exception(
                    "An interceptor's on_approval hook (%r) raised for tool "
                    "%r (invocation %s); the call goes on.",
                    hook,
                    call.name,
                    ctx.invocation_id,
                )


def _checked_context(
    call: ToolCall,
    interceptor: Interceptor,
    ctx: ExecutionContext,
    new: object,
) -> ExecutionContext:
    """The context *interceptor*'s ``before`` returned, checked."""
    if new is ctx:  # passed on as it was: nothing to check
        return ctx
    if type(new) is not ExecutionContext:
        msg = (
            f"{type(interceptor).__name__}.before() must return an "
            f"ExecutionContext, got {type(new).__name__}."
        )
        raise TypeError(msg)
    if new.invocation_id != ctx.invocation_id:
        msg = (
            f"{type(interceptor).__name__}.before() changed the "
            "invocation_id; derive the context with with_metadata() "
            "or with_value() instead."
        )
        raise ToolctxError(msg)
    recorder = recorder_of(ctx)
    if (
        recorder_of(new) is not recorder
        or new.tool_name != call.name
        or new.tool_call_id != call.id
    ):
        # The call's own fields are the dispatcher's, however the
        # interceptor built the context.
        assert recorder is not None  # noqa: S101 - set by call_context
        new = derive_call_context(
            new,
            new.invocation_id,
            call.name,
            call.id,
            new.parent_invocation_id,
            recorder,
        )
    return new
