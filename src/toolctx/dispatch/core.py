"""The sans-IO core of a call: everything its result depends on.

A call goes through three steps, and only the middle one differs between
sync, async, streaming and remote calls:

1. :meth:`Core.prepare` derives the call's context, runs the
   interceptors' ``before``, finds the tool and checks the arguments. It
   returns a :class:`Prepared` call, or the finished :class:`ToolResult`
   when the call cannot run (denied, unknown tool, bad arguments).
2. A shell in :mod:`toolctx.dispatch.run` or :mod:`toolctx.dispatch.stream`
   binds the context, runs the tool body and unbinds it: the only code
   that binds a call's context and the only code that awaits.
3. :meth:`Core.finish` turns the body's outcome into the result: the
   output step (declared type, then JSON), or the failure the model reads;
   then the interceptors' ``after``, last first.

Nothing here awaits, and nothing binds a context or does I/O except to
log a failed call (:meth:`Core.error`, the one place a failure becomes a
result), so every path decides a result, and logs it, the same way.
"""

from __future__ import annotations

import logging

from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, cast, final

from toolctx._ids import new_invocation_id
from toolctx._records import (
    NO_CHANGES,
    NO_METADATA,
    ToolCall,
    ToolProgress,
    ToolResult,
    new_result,
)
from toolctx._types.decode import ArgumentLimits, DecodeError
from toolctx._types.decode import decode_arguments as decode
from toolctx.context.current import SEAM
from toolctx.context.execution import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
    recorder_of,
)
from toolctx.dispatch.approvals import Approvals, Checking, checked_call
from toolctx.dispatch.chain import Chain
from toolctx.dispatch.prepared import Prepared, prepared
from toolctx.dispatch.steps import (
    Failure,
    bad_arguments,
    bad_text,
    error_result,
    ok_result,
    propagates,
    tool_failure,
    unknown_tool,
)
from toolctx.exceptions import ToolArgumentsError, ToolDenied
from toolctx.tools.function import ToolEntry
from toolctx.tools.protocols import Interceptor


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
        first: the shell settles it (:func:`~toolctx.dispatch.approvals.
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
        :func:`toolctx.dispatch.steps.propagates`).
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
