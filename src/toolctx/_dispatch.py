"""``Dispatcher``: run the model's tool calls, each in its own context."""

from __future__ import annotations

import asyncio
import inspect
import logging

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Iterable,
    Iterator,
    Sequence,
)
from concurrent.futures import Executor
from contextvars import copy_context
from functools import partial
from time import perf_counter_ns
from typing import Any, cast, final

import attrs

from toolctx import _calls
from toolctx._arguments import unstructure_output
from toolctx._calls import Failure
from toolctx._context import (
    ExecutionContext,
    derive_call_context,
)

# toolctx._diagnostics swaps set_current/reset_current here while
# lost-context diagnostics are on: bind call contexts only through them.
from toolctx._current import get_current, reset_current, set_current
from toolctx._fastpath import adispatch_flat, dispatch_flat
from toolctx._protocols import Interceptor
from toolctx._records import ToolCall, ToolChunk, ToolResult, frozen_view
from toolctx._registry import (
    ASYNC,
    ASYNC_STREAM,
    STREAM,
    SYNC,
    Registry,
    ToolEntry,
)
from toolctx._remote import RemoteCall, RemoteOutcome, run_remote
from toolctx._session import Session
from toolctx.exceptions import ToolctxError, ToolDenied


_log = logging.getLogger("toolctx")


@final
class Dispatcher:
    """Runs tool calls against a registry, each with its own context.

    For every call the dispatcher derives the call's
    :class:`ExecutionContext` from the given template (fresh
    ``invocation_id``, ``tool_name``, ``tool_call_id``, and
    ``parent_invocation_id`` when dispatched from inside another call),
    binds it in the context variable for exactly the duration of the call
    and restores the previous value afterwards, whatever happens.
    Tool-level failures never raise: they come back as
    ``ToolResult(is_error=True)`` with a message a model can act on.

    Args:
        registry: The tools to dispatch to.
        interceptors: Hooks run around every call: ``before`` in order,
            ``after`` in reverse.
        default_timeout: Seconds an ``adispatch`` may take when the tool
            sets no timeout of its own; None for no limit.
        include_exception_messages: Put the exception's type and message
            in the error the model sees when a tool raises; with False the
            model sees only that the tool failed (the exception stays on
            ``ToolResult.exception`` for the host).
        max_argument_size: Most characters (or bytes) of argument text a
            call may carry; larger calls become error results.
        max_argument_depth: Deepest nesting of arrays and objects in the
            arguments.
        executor: A ``concurrent.futures.Executor`` that runs the tool
            bodies elsewhere: a process pool, a Dask client's executor, any
            executor whose workers can import the tools. Interceptors, the
            call's context and session state stay in this process; the
            call, the tool's import reference and the serialized context
            travel, and the whole result comes back. None runs tools here.
        scope_loader: With an *executor*: the import reference
            (``"package.module:function"``) of a worker-side function
            ``(ExecutionContext) -> object`` that rebuilds the scope from
            serialized identity. The scope itself never crosses a process.

    Example:
        >>> from toolctx import Registry, ToolCall, execution_context
        >>> registry = Registry()
        >>> @registry.tool
        ... def whoami() -> str:
        ...     '''Say who is calling.'''
        ...     return execution_context().user_id or "nobody"
        >>> dispatcher = Dispatcher(registry)
        >>> ctx = ExecutionContext(user_id="ada")
        >>> dispatcher.dispatch(ToolCall("whoami", "{}"), ctx).output
        'ada'

    .. versionadded:: 0.1.0
    """

    __slots__ = (
        "_executor",
        "_flat",
        "_get_entry",
        "_interceptors",
        "_limits",
        "_scope_loader",
        "default_timeout",
        "include_exception_messages",
        "registry",
    )

    def __init__(
        self,
        registry: Registry,
        *,
        interceptors: Sequence[Interceptor] = (),
        default_timeout: float | None = None,
        include_exception_messages: bool = True,
        max_argument_size: int = 1_000_000,
        max_argument_depth: int = 64,
        executor: Executor | None = None,
        scope_loader: str | None = None,
    ) -> None:
        if not isinstance(cast("object", registry), Registry):
            msg = (
                "Dispatcher() takes a toolctx.Registry, got "
                f"{type(registry).__name__}."
            )
            raise TypeError(msg)
        for i in interceptors:
            if not isinstance(cast("object", i), Interceptor):
                msg = (
                    f"Interceptor {i!r} needs before(call, context) and "
                    "after(call, context, result) methods."
                )
                raise TypeError(msg)
        if default_timeout is not None and not default_timeout > 0:
            msg = f"default_timeout must be positive, got {default_timeout!r}."
            raise ValueError(msg)
        self.registry = registry
        self._get_entry = registry._entries.get  # noqa: SLF001 - hot path
        self._interceptors = tuple(interceptors)
        self.default_timeout = default_timeout
        self.include_exception_messages = include_exception_messages
        for name, value in (
            ("max_argument_size", max_argument_size),
            ("max_argument_depth", max_argument_depth),
        ):
            if type(value) is not int or value < 1:
                msg = f"{name} must be a positive int, got {value!r}."
                raise ValueError(msg)
        self._limits = _calls.ArgumentLimits(
            max_size=max_argument_size, max_depth=max_argument_depth
        )
        if executor is not None and not isinstance(
            cast("object", executor), Executor
        ):
            msg = (
                "executor must be a concurrent.futures.Executor, got "
                f"{type(executor).__name__}."
            )
            raise TypeError(msg)
        if scope_loader is not None:
            from toolctx._remote import check_reference

            check_reference(scope_loader, "scope_loader")
            if executor is None:
                msg = "scope_loader only applies with an executor."
                raise ValueError(msg)
        self._executor = executor
        self._scope_loader = scope_loader
        # Calls of plain sync function tools take _fastpath.dispatch_flat.
        self._flat = not self._interceptors and executor is None

    @property
    def executor(self) -> Executor | None:
        """Where tool bodies run: None for this process.

        .. versionadded:: 0.1.0
        """
        return self._executor

    @property
    def interceptors(self) -> tuple[Interceptor, ...]:
        """The interceptors, in ``before`` order.

        .. versionadded:: 0.1.0
        """
        return self._interceptors

    def __repr__(self) -> str:
        return (
            f"<toolctx.Dispatcher(num_tools={len(self.registry)}, "
            f"num_interceptors={len(self._interceptors)})>"
        )

    # -- sync --------------------------------------------------------------

    def dispatch(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> ToolResult:
        """Run one tool call; tool failures come back as error results.

        An ``async def`` tool runs to completion on a private event loop
        when no loop is running in this thread; a generator tool runs to
        the end and its chunks become the output list. Timeouts apply to
        :meth:`adispatch` only: a sync call cannot be interrupted.

        Args:
            call: The model's call.
            context: The template: an :class:`ExecutionContext`, a
                :class:`Session` (its state changes are applied after the
                call), or None to inherit the running call's context (or an
                empty one outside any call).

        Raises:
            TypeError: *call* or *context* has the wrong type (a host bug).
            ToolctxError: The tool is ``async def`` and an event loop is
                running in this thread; use :meth:`adispatch` there.

        .. versionadded:: 0.1.0
        """
        start = perf_counter_ns()
        bound = get_current()
        if type(call) is not ToolCall:
            raise _not_a_call(call)
        template, session = _calls.resolve_template(context, bound)
        if self._flat:
            entry = self._get_entry(call.name)
            if entry is not None and entry.flat:
                result = dispatch_flat(
                    self, call, template, bound, start, entry
                )
                if session is not None:
                    session.record(result)
                return result
        result = self._run(call, template, bound, start)
        if session is not None:
            session.record(result)
        return result

    def dispatch_all(
        self,
        calls: Iterable[ToolCall],
        context: ExecutionContext | Session | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one turn in order; results in input order.

        Each call gets its own invocation id and sees the results of the
        earlier ones in ``prior_results``. A failed call does not stop the
        others.

        .. versionadded:: 0.1.0
        """
        calls = list(calls)
        if isinstance(context, Session):
            return [self.dispatch(call, context) for call in calls]
        template, _ = _calls.resolve_template(context, get_current())
        results: list[ToolResult] = []
        prior = template.prior_results
        for call in calls:
            result = self.dispatch(
                call,
                attrs.evolve(template, prior_results=prior)
                if results
                else template,
            )
            results.append(result)
            # Each result is frozen once, however many calls follow it.
            prior = (*prior, frozen_view(result))
        return results

    def _run(
        self,
        call: ToolCall,
        template: ExecutionContext,
        bound: ExecutionContext | None,
        start: int,
    ) -> ToolResult:
        ctx = _calls.call_context(call, template, bound)
        ran = 0
        if self._interceptors:
            ctx, ran, refused = self._before(call, ctx, start)
            if refused is not None:
                return self._after(call, ctx, ran, refused)
        try:
            entry = self._entry(call)
            if self._executor is None:
                output = self._execute(call, entry, ctx)
            else:
                remote = self._remote_call(call, entry, ctx)
                output = self._remote_sync(remote, call, ctx)
        except Failure as failure:
            result = _calls.error_result(call, ctx, failure, start)
        except BaseException:
            # Cancellation, KeyboardInterrupt: interceptors whose before ran
            # still see the call end (spans closed, audit written).
            if ran:
                self._unwind(
                    call, ctx, ran, _cancelled_result(call, ctx, start)
                )
            raise
        else:
            result = _calls.ok_result(call, ctx, output, start)
        if ran:
            result = self._after(call, ctx, ran, result)
        return result

    def _execute(
        self, call: ToolCall, entry: ToolEntry, ctx: ExecutionContext
    ) -> Any:
        """Run the tool here with *ctx* bound; return JSON-safe output."""
        mode = entry.mode
        if mode in {ASYNC, ASYNC_STREAM}:
            _calls.check_no_loop(entry)
        fn, args = _calls.prepare(call, entry, ctx, self._limits)
        is_function = entry.function_tool is not None
        token = set_current(ctx)
        try:
            value = fn(**args) if is_function else fn(args)
            if mode == SYNC:
                if not is_function and inspect.isawaitable(value):
                    value = _calls.run_to_end(value)
            elif mode == ASYNC:
                value = _calls.run_to_end(value)
            elif mode == STREAM:
                value = _calls.collect(value)
            else:
                value = _calls.run_to_end(_calls.acollect(value))
            return unstructure_output(value)
        except BaseException as exc:  # noqa: BLE001 - _failure re-raises
            raise self._failure(call, exc) from None
        finally:
            reset_current(token)

    # -- async -------------------------------------------------------------

    async def adispatch(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> ToolResult:
        """Run one tool call from async code; failures become error results.

        Async tools run in the current task; sync tools run in a worker
        thread that sees the same context (unless declared
        ``@tool(inline=True)``), so the event loop is never blocked.
        Cancelling the awaiting task propagates ``CancelledError`` and
        leaves no context bound and no session state changed. A call that
        exceeds its timeout becomes an error result.

        .. versionadded:: 0.1.0
        """
        start = perf_counter_ns()
        bound = get_current()
        if type(call) is not ToolCall:
            raise _not_a_call(call)
        template, session = _calls.resolve_template(context, bound)
        entry = (
            self._get_entry(call.name)
            if self._flat and self.default_timeout is None
            else None
        )
        if entry is not None and entry.flat_async:
            result = await adispatch_flat(
                self, call, template, bound, start, entry
            )
        elif entry is not None and entry.flat and entry.inline:
            result = dispatch_flat(self, call, template, bound, start, entry)
        else:
            result = await self._arun(call, template, bound, start)
        if session is not None:
            session.record(result)
        return result

    async def adispatch_all(
        self,
        calls: Iterable[ToolCall],
        context: ExecutionContext | Session | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one turn concurrently; results in input order.

        Each call gets its own invocation id and task; a failure does not
        cancel the others. With a :class:`Session`, state changes are
        applied in input order once all calls have finished; if the
        batch is cancelled, none are.

        .. versionadded:: 0.1.0
        """
        calls = list(calls)
        for call in calls:
            if type(call) is not ToolCall:
                raise _not_a_call(call)
        start = perf_counter_ns()
        bound = get_current()
        template, session = _calls.resolve_template(context, bound)
        results = await asyncio.gather(
            *(self._arun(call, template, bound, start) for call in calls)
        )
        if session is not None:
            for result in results:
                session.record(result)
        return list(results)

    async def _arun(
        self,
        call: ToolCall,
        template: ExecutionContext,
        bound: ExecutionContext | None,
        start: int,
    ) -> ToolResult:
        ctx = _calls.call_context(call, template, bound)
        ran = 0
        if self._interceptors:
            ctx, ran, refused = self._before(call, ctx, start)
            if refused is not None:
                return self._after(call, ctx, ran, refused)
        try:
            entry = self._entry(call)
            timeout = entry.timeout or self.default_timeout
            if self._executor is None:
                output = await self._aexecute_here(call, entry, ctx, timeout)
            else:
                remote = self._remote_call(call, entry, ctx, timeout)
                output = await self._remote_async(remote, call, ctx, timeout)
        except Failure as failure:
            result = _calls.error_result(call, ctx, failure, start)
        except BaseException:
            # Cancellation, KeyboardInterrupt: interceptors whose before ran
            # still see the call end (spans closed, audit written).
            if ran:
                self._unwind(
                    call, ctx, ran, _cancelled_result(call, ctx, start)
                )
            raise
        else:
            result = _calls.ok_result(call, ctx, output, start)
        if ran:
            result = self._after(call, ctx, ran, result)
        return result

    async def _aexecute_here(
        self,
        call: ToolCall,
        entry: ToolEntry,
        ctx: ExecutionContext,
        timeout: float | None,
    ) -> Any:
        """Run the tool here with *ctx* bound; return JSON-safe output."""
        fn, args = _calls.prepare(call, entry, ctx, self._limits)
        token = set_current(ctx)
        try:
            value = await self._aexecute(entry, fn, args, timeout, call)
            return unstructure_output(value)
        except BaseException as exc:  # noqa: BLE001 - _failure re-raises
            raise self._failure(call, exc, awaited=True) from None
        finally:
            reset_current(token)

    async def _aexecute(
        self,
        entry: ToolEntry,
        fn: Any,
        args: Any,
        timeout: float | None,
        call: ToolCall,
    ) -> Any:
        """Run the body with the call's context bound (by the caller)."""
        mode = entry.mode
        if mode == SYNC and entry.inline:
            # Captured: StopIteration cannot leave this coroutine as itself.
            value = _calls.thread_result(
                _calls.in_thread(partial(_calls.invoke, entry, fn, args))
            )
        else:
            if mode == ASYNC:
                work = _calls.invoke(entry, fn, args)
            elif mode == ASYNC_STREAM:
                work = _calls.acollect(_calls.invoke(entry, fn, args))
            else:
                body = partial(_calls.invoke, entry, fn, args)
                if mode == STREAM:
                    body = partial(_run_then_collect, body)
                loop = asyncio.get_running_loop()
                work = _in_worker(
                    loop.run_in_executor(
                        None, copy_context().run, _calls.in_thread, body
                    )
                )
            value = await _calls.await_tool(
                work
                if timeout is None
                else _calls.with_timeout(work, timeout, call.name)
            )
        if (
            mode == SYNC
            and entry.function_tool is None
            and inspect.isawaitable(value)
        ):
            value = await _calls.await_tool(value)
        return value

    # -- streaming -----------------------------------------------------------

    def stream(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> Iterator[ToolChunk | ToolResult]:
        """Run one call: each chunk of a streaming tool, then the result.

        A generator tool's yields arrive as :class:`ToolChunk` objects as
        they are produced; the last item is always the :class:`ToolResult`
        (whose output lists every chunk). Other tools yield only their
        result. The tool sees its own context on every resume. Closing the
        iterator early (``close()``, or ``break`` inside
        ``contextlib.closing``) closes the tool's generator with its
        context bound, restores everything, and records the call as
        cancelled: interceptors' ``after`` and the session see an error
        result holding the chunks so far; no state change is applied. If
        the tool's cleanup raises then, ``close()`` still returns normally
        (the consumer asked to stop) and that result carries the tool's
        failure instead. Whatever the tool raises in a step, its
        ``SystemExit`` and a ``CancelledError`` of its own included, ends
        the stream with an error result, as with :meth:`dispatch`; only
        ``KeyboardInterrupt``-like exceptions propagate, and the call is
        still recorded as cancelled.

        .. versionadded:: 0.1.0
        """
        from toolctx._streaming import stream_sync

        return stream_sync(self, call, context)

    def astream(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> AsyncIterator[ToolChunk | ToolResult]:
        """Async :meth:`stream`: chunks as they come, then the result.

        Works for sync and async generator tools (a sync generator's steps
        run in a worker thread). The tool sees its own context on every
        resume, whatever task iterates and whatever context that task has
        bound. ``aclose()`` or ``break`` records the call as cancelled, as
        with :meth:`stream`. Cancelling the iterating task records it as
        cancelled too, and raises ``CancelledError`` there once the tool's
        generator has been closed; a sync generator's step running in its
        worker thread cannot be interrupted, so the cancellation takes
        effect when that step returns.

        .. versionadded:: 0.1.0
        """
        from toolctx._streaming import stream_async

        return stream_async(self, call, context)

    # -- other processes -----------------------------------------------------

    def _remote_call(
        self,
        call: ToolCall,
        entry: ToolEntry,
        ctx: ExecutionContext,
        timeout: float | None = None,
    ) -> RemoteCall:
        """Validate here (fast errors), then describe the call as data."""
        args = _calls.decode_arguments(call, entry, self._limits)
        ft = entry.function_tool
        if ft is not None:
            _calls.structure(call, ft, args)
        # A tool the workers cannot import is a host bug: TypeError.
        return RemoteCall.for_tool(
            entry.tool,
            args,
            ctx,
            scope_loader=self._scope_loader,
            timeout=timeout,
            include_exception_messages=self.include_exception_messages,
        )

    def _remote_sync(
        self, remote: RemoteCall, call: ToolCall, ctx: ExecutionContext
    ) -> Any:
        assert self._executor is not None  # noqa: S101 - checked by caller
        try:
            outcome = self._executor.submit(run_remote, remote).result()
        except Exception as exc:  # noqa: BLE001 - executor failures are results
            raise _executor_failure(call, exc) from None
        return _apply_outcome(outcome, ctx)

    async def _remote_async(
        self,
        remote: RemoteCall,
        call: ToolCall,
        ctx: ExecutionContext,
        timeout: float | None,
    ) -> Any:
        assert self._executor is not None  # noqa: S101 - checked by caller
        future = asyncio.wrap_future(self._executor.submit(run_remote, remote))
        try:
            outcome = (
                await future
                if timeout is None
                else await _calls.with_timeout(future, timeout, call.name)
            )
        except _calls.ToolTimeoutError as exc:
            raise Failure(str(exc), exc) from None
        except Exception as exc:  # noqa: BLE001 - executor failures are results
            raise _executor_failure(call, exc) from None
        return _apply_outcome(outcome, ctx)

    # -- shared steps ------------------------------------------------------

    def _entry(self, call: ToolCall) -> ToolEntry:
        entry = self._get_entry(call.name)
        if entry is None:
            raise _calls.unknown_tool(call, list(self.registry))
        return entry

    def _failure(
        self, call: ToolCall, exc: BaseException, *, awaited: bool = False
    ) -> Failure:
        """The failure for what a tool body raised, as the model reads it.

        Re-raises *exc* instead when it must propagate (see
        :func:`toolctx._calls.propagates`; *awaited*: it came out of an
        ``await``, so it may be the caller's own cancellation).
        """
        if _calls.propagates(exc, awaited=awaited):
            raise exc
        return _calls.tool_failure(
            call, exc, detail=self.include_exception_messages
        )

    def _before(
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
            for interceptor in self._interceptors:
                try:
                    new = interceptor.before(call, ctx)
                except ToolDenied as exc:
                    failure = _calls.denied(call, exc)
                    refused = _calls.error_result(call, ctx, failure, start)
                    return ctx, ran, refused
                ran += 1
                ctx = self._checked_context(call, interceptor, ctx, new)
        except BaseException:
            if ran:
                name = type(interceptor).__name__
                failure = Failure(
                    f"The call to tool {call.name!r} did not run: "
                    f"interceptor {name} failed before it."
                )
                self._unwind(
                    call,
                    ctx,
                    ran,
                    _calls.error_result(call, ctx, failure, start),
                )
            raise
        return ctx, ran, None

    def _checked_context(
        self,
        call: ToolCall,
        interceptor: Interceptor,
        ctx: ExecutionContext,
        new: object,
    ) -> ExecutionContext:
        """The context *interceptor*'s ``before`` returned, checked."""
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
        recorder = ctx._recorder  # noqa: SLF001
        if (
            new._recorder is not recorder  # noqa: SLF001
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

    def _after(
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
        for interceptor in reversed(self._interceptors[:ran]):
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

    def _unwind(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        result: ToolResult,
    ) -> None:
        """:meth:`_after` while another exception propagates.

        The propagating exception wins; one raised by an ``after`` here is
        logged with its traceback instead of replacing it.
        """
        try:
            self._after(call, ctx, ran, result)
        except BaseException:  # noqa: BLE001 - the caller re-raises its own
            _log.exception(
                "An interceptor's after() failed for tool call %r "
                "(invocation %s) while the call was being abandoned",
                call.name,
                ctx.invocation_id,
            )


def _apply_outcome(outcome: RemoteOutcome, ctx: ExecutionContext) -> Any:
    """Copy what the worker recorded onto this call; raise its failure."""
    recorder = ctx._recorder  # noqa: SLF001
    assert recorder is not None  # noqa: S101 - a dispatched call
    if outcome.metadata:
        recorder.metadata = outcome.typed_metadata()
    if outcome.error is not None:
        raise Failure(outcome.error, outcome.exception)
    if outcome.state_changes:
        recorder.state_changes = outcome.typed_state_changes()
    return outcome.output


def _cancelled_result(
    call: ToolCall, ctx: ExecutionContext, start: int
) -> ToolResult:
    failure = Failure(f"The call to tool {call.name!r} was cancelled.")
    return _calls.error_result(call, ctx, failure, start)


def _executor_failure(call: ToolCall, exc: Exception) -> Failure:
    # Executor errors name hosts, ports and pids (Dask's CommClosedError,
    # a broken pool): the host gets them on ToolResult.exception.
    return Failure(
        f"Tool {call.name!r} could not run: its worker process failed "
        f"({type(exc).__name__}). Try again; if it keeps failing, tell the "
        "user the tool is unavailable right now.",
        exc,
    )


async def _in_worker(future: Awaitable[tuple[bool, Any]]) -> Any:
    """The value of a worker-thread body, or its error raised here."""
    return _calls.thread_result(await future)


def _run_then_collect(body: Any) -> list[Any]:
    return _calls.collect(body())


def _not_a_call(call: object) -> TypeError:
    return TypeError(
        f"dispatch() takes a ToolCall, got {type(call).__name__}. Build one "
        "with ToolCall(name, arguments, id), or parse provider payloads "
        "with toolctx.providers.<provider>.parse_calls()."
    )
