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

Nothing here does I/O, binds a context or awaits, so every path decides a
result the same way.
"""

from __future__ import annotations

import logging

from collections.abc import Callable
from typing import Any, cast, final

from toolctx._ids import new_invocation_id
from toolctx._records import ToolCall, ToolProgress, ToolResult
from toolctx._types.decode import ArgumentLimits, DecodeError
from toolctx._types.decode import decode_arguments as decode
from toolctx.context.execution import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
    recorder_of,
)
from toolctx.dispatch.approvals import pending
from toolctx.dispatch.steps import (
    Failure,
    bad_arguments,
    bad_text,
    denied,
    error_result,
    ok_result,
    propagates,
    tool_failure,
    unknown_tool,
)
from toolctx.exceptions import ToolArgumentsError, ToolctxError, ToolDenied
from toolctx.tools.function import ToolEntry
from toolctx.tools.protocols import Interceptor


_log = logging.getLogger("toolctx")


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
class Core:
    """What a dispatcher decides about every call, without running one.

    Args:
        entries: The registry's name -> call plan lookup.
        names: The registered names, for the unknown-tool message.
        interceptors: Run around every call.
        limits: Bounds on the argument text.
        detail: Put the exception's text in a failed call's message.
    """

    __slots__ = (
        "detail",
        "entries",
        "interceptors",
        "last_first",
        "limits",
        "listeners",
        "names",
        "on_approval",
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
    ) -> None:
        self.entries = entries
        self.names = names
        self.interceptors = interceptors
        self.last_first = interceptors[::-1]
        self.limits = limits
        self.detail = detail
        # The hosts' progress listeners, and what a call's recorder sends
        # its reports to: None while nobody listens (the common case).
        self.listeners: tuple[Callable[[ToolProgress], object], ...] = ()
        self.progress: Callable[[ToolProgress], None] | None = None
        # Interceptors' optional on_approval(call, context, result) hooks:
        # told when a call is held and when a held call is declined.
        self.on_approval: tuple[Callable[..., object], ...] = tuple(
            hook
            for hook in (getattr(i, "on_approval", None) for i in interceptors)
            if callable(hook)
        )

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
    ) -> Prepared | ToolResult:
        """Everything before the body runs; the result if it cannot run.

        *resumed*: the invocation id of an approved call being resumed
        (it runs as that invocation, and is not held for approval again).
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
            held = self.held(call, ctx, entry, start)
            if held is not None:
                return held
        ran = 0
        if self.interceptors:
            ctx, ran, refused = self.before(call, ctx, start)
            if refused is not None:
                return self.after(call, ctx, ran, refused)
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
        return self.end(
            call, ctx, ran, error_result(call, ctx, failure, start)
        )

    def held(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        entry: ToolEntry,
        start: int,
    ) -> ToolResult | None:
        """The pending result of a call that waits for a person, or None.

        A tool's approval check that raises fails the call like the tool
        raising would (no interceptor has run).
        """
        try:
            held = pending(call, ctx, entry, self.limits, start)
        except BaseException as exc:  # noqa: BLE001 - failure re-raises
            return error_result(call, ctx, self.failure(call, exc), start)
        if held is not None:
            self.tell_approval(call, ctx, held)
        return held

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
            return self.after(call, p.ctx, p.ran, result)
        return result

    def failed(
        self, p: Prepared, failure: Failure, output: Any = None
    ) -> ToolResult:
        """The result of a call that failed with *failure*."""
        result = error_result(p.call, p.ctx, failure, p.start, output)
        return self.end(p.call, p.ctx, p.ran, result)

    def succeeded(self, p: Prepared, output: Any) -> ToolResult:
        """The result of a call whose JSON-safe *output* is ready."""
        result = ok_result(p.call, p.ctx, output, p.start)
        return self.end(p.call, p.ctx, p.ran, result)

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
        return self.after(call, ctx, ran, result) if ran else result

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
        self.unwind(
            call, ctx, ran, error_result(call, ctx, failure, start, output)
        )

    # -- the interceptor loop ------------------------------------------------

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
