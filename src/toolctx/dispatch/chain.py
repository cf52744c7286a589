"""The interceptor loop: every ``before`` in order, every ``after`` last first.

One :class:`Chain` per dispatcher, built from its interceptors; the core
(:class:`~toolctx.dispatch.core.Core`) runs it around every call that has
interceptors, on every path.
"""

from __future__ import annotations

import logging

from collections.abc import Callable
from typing import cast, final

from toolctx._records import ToolCall, ToolResult
from toolctx.context.execution import (
    ExecutionContext,
    derive_call_context,
    recorder_of,
)
from toolctx.dispatch.steps import Failure, denied, error_result
from toolctx.exceptions import ToolctxError, ToolDenied
from toolctx.tools.protocols import Interceptor


_log = logging.getLogger("toolctx")


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
