"""``Dispatcher``: run the model's tool calls, each in its own context.

A thin public shell over the call pipeline:
:class:`~toolctx._dispatch.core.Core` decides everything a result
depends on, and the shells of :mod:`toolctx._dispatch.run`,
:mod:`toolctx._dispatch.stream` and :mod:`toolctx._dispatch.executor` run
the body. This module resolves the template, picks the shell, and
records results in a session.
"""

from __future__ import annotations

import asyncio

from collections import deque
from collections.abc import (
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from concurrent.futures import Executor
from functools import partial
from time import perf_counter_ns
from typing import TYPE_CHECKING, cast, final

from toolctx._context.current import get_current
from toolctx._context.execution import ExecutionContext, with_prior_results
from toolctx._context.session import Session
from toolctx._dispatch.approvals import (
    MIN_KEY_BYTES,
    Approvals,
    Checking,
    Resumption,
    asettle,
    check_request,
    denied_result,
    resumed_template,
    settle,
)
from toolctx._dispatch.core import (
    Core,
    Prepared,
    resolve_template,
    template_of,
)
from toolctx._dispatch.run import run_async, run_sync
from toolctx._dispatch.stream import (
    areplay,
    check_call,
    collect_progress,
    replay,
    stream_async,
    stream_sync,
    streams,
)
from toolctx._records import (
    ApprovalRequest,
    ToolCall,
    ToolChunk,
    ToolProgress,
    ToolResult,
    frozen_view,
)
from toolctx._tools.protocols import Interceptor
from toolctx._tools.registry import Registry
from toolctx._types.decode import ArgumentLimits


if TYPE_CHECKING:
    from toolctx._dispatch.executor import RemoteExecutor


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
    ``ToolResult(is_error=True)`` with a message a model can act on, and
    each is logged once on the ``toolctx`` logger for the host (at ERROR
    with its traceback when the tool ran and failed; a denial at INFO and
    arguments the model must fix at DEBUG, without one).

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
            A plain ``ProcessPoolExecutor`` one of whose worker processes
            dies (which leaves it unusable) is replaced with a new one
            made with the same ``max_workers``, ``mp_context``,
            ``initializer``, ``initargs`` and ``max_tasks_per_child``:
            :attr:`executor` is then the new pool, which the host shuts
            down when done. The call that was running there is an error
            result saying its worker died; later calls run in the new
            pool. Another executor (a subclass, Dask) is never replaced.
        scope_loader: With an *executor*: the import reference
            (``"package.module:function"``) of a worker-side function
            ``(ExecutionContext) -> object`` that rebuilds the scope from
            serialized identity. The scope itself never crosses a process.
        approval_key: Secret bytes (at least 16; use
            ``secrets.token_bytes(32)``) to sign every held call's
            :class:`~toolctx.ApprovalRequest` with (HMAC-SHA256), so that
            :meth:`resume` can verify a request that comes back without
            its session, from a review UI, a queue or another process.
            Give every dispatcher that resumes the same key. Needs
            *approval_lifetime*.
        approval_lifetime: Seconds a held call stays resumable; an
            expired request is refused (declining it is allowed). None:
            requests do not expire.

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
        "_approvals",
        "_core",
        "_default_timeout",
        "_executor",
        "_scope_loader",
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
        approval_key: bytes | None = None,
        approval_lifetime: float | None = None,
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
        self._default_timeout = default_timeout
        for name, value in (
            ("max_argument_size", max_argument_size),
            ("max_argument_depth", max_argument_depth),
        ):
            if type(value) is not int or value < 1:
                msg = f"{name} must be a positive int, got {value!r}."
                raise ValueError(msg)
        limits = ArgumentLimits(
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
            from toolctx.remote.references import check_reference

            check_reference(scope_loader, "scope_loader")
            if executor is None:
                msg = "scope_loader only applies with an executor."
                raise ValueError(msg)
        self._executor = _remote(executor)
        self._scope_loader = scope_loader
        self._approvals = _approvals(approval_key, approval_lifetime)
        self._core = Core(
            registry.entry,
            partial(list, registry),
            tuple(interceptors),
            limits,
            detail=include_exception_messages,
            approvals=self._approvals,
        )

    @property
    def executor(self) -> Executor | None:
        """Where tool bodies run: None for this process.

        The executor given to the dispatcher, or the process pool that
        replaced it after one of its workers died (see *executor*).

        .. versionadded:: 0.1.0
        """
        remote = self._executor
        return None if remote is None else remote.executor

    @property
    def interceptors(self) -> tuple[Interceptor, ...]:
        """The interceptors, in ``before`` order.

        .. versionadded:: 0.1.0
        """
        return self._core.interceptors

    @property
    def default_timeout(self) -> float | None:
        """Seconds an ``adispatch`` may take when the tool sets none.

        .. versionadded:: 0.1.0
        """
        return self._default_timeout

    @property
    def approval_lifetime(self) -> float | None:
        """Seconds a held call stays resumable; None for ever.

        .. versionadded:: 0.1.0
        """
        return self._approvals.lifetime

    @property
    def include_exception_messages(self) -> bool:
        """Whether the model sees a failed tool's exception text.

        .. versionadded:: 0.1.0
        """
        return self._core.detail

    @property
    def max_argument_size(self) -> int:
        """Most characters (or bytes) of argument text a call may carry.

        .. versionadded:: 0.2.0
        """
        return self._core.limits.max_size

    @property
    def max_argument_depth(self) -> int:
        """Deepest nesting of arrays and objects in a call's arguments.

        .. versionadded:: 0.2.0
        """
        return self._core.limits.max_depth

    def __repr__(self) -> str:
        return (
            f"<toolctx.Dispatcher(num_tools={len(self.registry)}, "
            f"num_interceptors={len(self._core.interceptors)})>"
        )

    def _prepare(
        self, call: ToolCall, context: ExecutionContext | Session | None
    ) -> tuple[Prepared | ToolResult | Checking, Session | None]:
        """Everything before the body, for the paths that take a session."""
        if type(call) is not ToolCall:
            raise _not_a_call(call)
        bound = get_current()
        template, session = resolve_template(context, bound)
        return (
            self._core.prepare(call, template, bound, perf_counter_ns()),
            session,
        )

    # -- sync ----------------------------------------------------------------

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
        bound = get_current()
        if type(context) is not ExecutionContext:
            if isinstance(context, Session):
                return _recorded(
                    context, self.dispatch(call, context.context())
                )
            context = template_of(context, bound)
        if type(call) is not ToolCall:
            raise _not_a_call(call)
        p = self._core.prepare(call, context, bound, perf_counter_ns())
        if type(p) is Prepared:
            return self._run_body(p)
        if type(p) is Checking:
            p = settle(self._core, p)
            if type(p) is Prepared:
                return self._run_body(p)
        return p

    def _run(
        self, p: Prepared | ToolResult | Checking, session: Session | None
    ) -> ToolResult:
        """Run a prepared call's body here or elsewhere; record the result."""
        if type(p) is Checking:
            p = settle(self._core, p)
        result = p if type(p) is not Prepared else self._run_body(p)
        if session is not None:
            session.record(result)
        return result

    def _run_body(self, p: Prepared) -> ToolResult:
        """Run *p*'s body: here, or in the executor."""
        if self._executor is None:
            return run_sync(self._core, p)
        return self._elsewhere(p)

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
        template, _ = resolve_template(context, get_current())
        results: list[ToolResult] = []
        prior = template.prior_results
        for call in calls:
            result = self.dispatch(
                call,
                with_prior_results(template, prior) if results else template,
            )
            results.append(result)
            # Each result is frozen once, however many calls follow it.
            prior += (frozen_view(result),)
        return results

    def _elsewhere(self, p: Prepared) -> ToolResult:
        from toolctx._dispatch.executor import remote_call, run_elsewhere

        assert self._executor is not None  # noqa: S101 - checked by caller
        remote = remote_call(self._core, p, self._scope_loader, None)
        return run_elsewhere(self._core, p, self._executor, remote)

    # -- async ---------------------------------------------------------------

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
        bound = get_current()
        if type(context) is not ExecutionContext:
            if isinstance(context, Session):
                result = await self.adispatch(call, context.context())
                return _recorded(context, result)
            context = template_of(context, bound)
        if type(call) is not ToolCall:
            raise _not_a_call(call)
        p = self._core.prepare(call, context, bound, perf_counter_ns())
        if type(p) is Prepared:
            return await self._arun_body(p)
        if type(p) is Checking:
            p = await asettle(self._core, p)
            if type(p) is Prepared:
                return await self._arun_body(p)
        return p

    async def _arun_prepared(
        self, p: Prepared | ToolResult | Checking, session: Session | None
    ) -> ToolResult:
        """:meth:`_run` from async code."""
        if type(p) is Checking:
            p = await asettle(self._core, p)
        result = p if type(p) is not Prepared else await self._arun_body(p)
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
        template, session = resolve_template(context, bound)
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
        p = self._core.prepare(call, template, bound, start)
        if type(p) is Prepared:
            return await self._arun_body(p)
        if type(p) is Checking:
            p = await asettle(self._core, p)
            if type(p) is Prepared:
                return await self._arun_body(p)
        return p

    async def _arun_body(self, p: Prepared) -> ToolResult:
        """Run *p*'s body from async code: here, or in the executor."""
        if self._executor is None:
            return await run_async(
                self._core, p, p.entry.timeout or self._default_timeout
            )
        return await self._aelsewhere(p)

    async def _aelsewhere(self, p: Prepared) -> ToolResult:
        from toolctx._dispatch.executor import arun_elsewhere, remote_call

        assert self._executor is not None  # noqa: S101 - checked by caller
        timeout = p.entry.timeout or self._default_timeout
        remote = remote_call(self._core, p, self._scope_loader, timeout)
        return await arun_elsewhere(
            self._core, p, self._executor, remote, timeout
        )

    # -- streaming -----------------------------------------------------------

    def stream(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> Iterator[ToolChunk | ToolProgress | ToolResult]:
        """Run one call: each chunk of a streaming tool, then the result.

        A generator tool's yields arrive as :class:`ToolChunk` objects as
        they are produced; the last item is always the :class:`ToolResult`
        (whose output lists every chunk). Other tools yield only their
        result. What the tool reports with :func:`toolctx.report_progress`
        arrives as :class:`ToolProgress` records, in order with the chunks
        (for a tool that does not stream, all before its result; a call
        run by an *executor* in another process reports none). The tool
        sees its own context on every resume. Closing the iterator early
        (``close()``, or ``break`` inside ``contextlib.closing``) closes
        the tool's generator with its context bound, restores everything,
        and records the call as
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
        check_call(call, "stream")
        if not streams(self._core, self.executor, call):
            p, session = self._prepare(call, context)
            if type(p) is Checking:
                p = settle(self._core, p)
            pending = self._collect(p)
            return replay(pending, self._run(p, session))
        return stream_sync(self._core, call, context)

    def _collect(
        self, p: Prepared | ToolResult | Checking
    ) -> deque[ToolProgress]:
        """Keep a call's progress reports for its stream."""
        if type(p) is not Prepared:
            return deque()
        return collect_progress(self._core, p)

    async def _astream_one(
        self, call: ToolCall, context: ExecutionContext | Session | None
    ) -> tuple[deque[ToolProgress], ToolResult]:
        p, session = self._prepare(call, context)
        if type(p) is Checking:
            p = await asettle(self._core, p)
        pending = self._collect(p)
        return pending, await self._arun_prepared(p, session)

    def astream(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> AsyncIterator[ToolChunk | ToolProgress | ToolResult]:
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
        check_call(call, "astream")
        if not streams(self._core, self.executor, call):
            return areplay(partial(self._astream_one, call, context))
        return stream_async(self._core, call, context)

    # -- approvals -----------------------------------------------------------

    def resume(
        self,
        request: ApprovalRequest,
        *,
        approved: bool,
        reason: str | None = None,
        context: ExecutionContext | Session | None = None,
    ) -> ToolResult:
        """Run (or decline) a call that waited for a person.

        *request* is a pending result's ``approval``, possibly rebuilt with
        :meth:`ApprovalRequest.from_dict` in another process after a
        restart. Only what was held runs: with a :class:`Session` as
        *context*, the session's own pending request (*request* must be
        the same in everything); without one, a request this dispatcher
        remembers holding, or one whose signature verifies (see
        ``approval_key``). Approved, the call runs now as the same
        invocation: its identity (user, session, agent, turn, lineage,
        call and invocation ids) is the held call's; its authority
        (metadata, typed values such as permissions, state, scope) is
        *context*'s, now, never the stored request's. Interceptors,
        timeouts and the session apply as for any call, and see it this
        once. Declined, nothing runs: the result is an error telling the
        model a person declined (with *reason*), with
        :class:`~toolctx.exceptions.ApprovalDenied` on ``exception``.
        With a session, the request is taken off its ``pending`` and the
        result recorded there. Claiming, running and recording are one
        step: interrupted before the tool's body started, the request is
        pending again; after, the interruption is recorded.

        Args:
            request: The :class:`ApprovalRequest` to resume.
            approved: The person's decision.
            reason: Why, for the model (declined calls; cut at 500
                characters).
            context: The authority to resume with, now: a template
                naming the held call's user (or none), or the session the
                call is pending in. None resumes with no metadata, typed
                values or scope.

        Raises:
            ApprovalError: Nothing ran, because the request differs from
                what was held (tool, arguments, context, ids), cannot be
                verified, has expired, was resumed already (the message
                says how that went), is not pending in *context*'s
                session, or its tool is not registered or has changed
                since; or *context* names another user or session.
            TypeError: *request*, *approved* or *context* has the wrong
                type.
            ToolctxError: As :meth:`dispatch` (an async tool inside a
                running event loop); the request is pending again.

        Example:
            >>> from toolctx import Registry, ToolCall
            >>> registry = Registry()
            >>> @registry.tool(needs_approval=True)
            ... def send(to: str) -> str:
            ...     return f"sent to {to}"
            >>> dispatcher = Dispatcher(registry)
            >>> held = dispatcher.dispatch(ToolCall("send", {"to": "ada"}))
            >>> held.approval is not None, held.output
            (True, None)
            >>> done = dispatcher.resume(held.approval, approved=True)
            >>> done.output, done.invocation_id == held.invocation_id
            ('sent to ada', True)

        .. versionadded:: 0.2.0
        """
        r, p = self._resumed(request, approved, reason, context)
        try:
            result = self._run(p, r.session)
        except BaseException as exc:
            r.interrupted(exc)
            raise
        r.ended(result)
        return result

    async def aresume(
        self,
        request: ApprovalRequest,
        *,
        approved: bool,
        reason: str | None = None,
        context: ExecutionContext | Session | None = None,
    ) -> ToolResult:
        """:meth:`resume` from async code (the call runs as ``adispatch``).

        Cancelled before the tool's body started, the request is pending
        again (in the session too) and can be resumed later; cancelled
        while the body ran, the interruption is recorded (in the session
        too) and a later resume is refused, saying the call may have had
        effects.

        .. versionadded:: 0.2.0
        """
        r, p = self._resumed(request, approved, reason, context)
        try:
            result = await self._arun_prepared(p, r.session)
        except BaseException as exc:
            r.interrupted(exc)
            raise
        r.ended(result)
        return result

    def _resumed(
        self,
        request: ApprovalRequest,
        approved: bool,
        reason: str | None,
        context: ExecutionContext | Session | None,
    ) -> tuple[Resumption, Prepared | ToolResult | Checking]:
        """Check and claim *request*; the claim, and what to run.

        Everything that can refuse the request does so before the claim
        (nothing changes); once claimed, a failure before the body
        releases the claim.
        """
        start = perf_counter_ns()
        entry = (
            self.registry.entry(request.call.name)
            if isinstance(cast("object", request), ApprovalRequest)
            else None
        )
        request = check_request(request, entry, approved)
        if reason is not None and not isinstance(cast("object", reason), str):
            msg = f"resume() reason= must be a string, got {reason!r:.40}."
            raise TypeError(msg)
        template = resumed_template(request, context)
        session = context if isinstance(context, Session) else None
        claim = self._approvals.claim(request, session, approved=approved)
        r = Resumption(self._approvals, claim)
        request = r.request
        try:
            if not approved:
                declined = denied_result(request, reason)
                self._core.chain.tell_approval(
                    request.call, template, declined
                )
                return r, declined
            p = self._core.prepare(
                request.call, template, None, start, request.invocation_id
            )
            if type(p) is Prepared:
                if self._executor is None:
                    p.entry = r.watch(p.entry)
                else:  # it may start in another process: say so
                    r.started = True
        except BaseException:
            r.release()
            raise
        return r, p

    # -- progress ------------------------------------------------------------

    def on_progress(
        self, listener: Callable[[ToolProgress], object]
    ) -> Callable[[], None]:
        """Send every call's progress reports to *listener*; return the undo.

        *listener* receives each :class:`ToolProgress` that a tool run by
        this dispatcher reports with :func:`toolctx.report_progress`, at
        once and in the thread that reported it (a worker thread for a
        sync tool under :meth:`adispatch`: hop to your event loop with
        ``loop.call_soon_threadsafe`` if you need to). Tell calls apart by
        ``invocation_id`` or ``call_id``. A listener that raises is logged
        on the ``toolctx`` logger and the call goes on. Calls run by an
        *executor* in another process report no progress here.

        Example:
            >>> from toolctx import Registry, ToolCall, report_progress
            >>> registry = Registry()
            >>> @registry.tool
            ... def work() -> str:
            ...     report_progress(1, 2, "halfway")
            ...     return "done"
            >>> dispatcher = Dispatcher(registry)
            >>> stop = dispatcher.on_progress(lambda p: print(p.message))
            >>> dispatcher.dispatch(ToolCall("work")).output
            halfway
            'done'
            >>> stop()

        .. versionadded:: 0.2.0
        """
        if not callable(cast("object", listener)):
            msg = (
                "on_progress() takes a function of one ToolProgress, got "
                f"{type(listener).__name__}."
            )
            raise TypeError(msg)
        return self._core.listen(listener)


def _remote(executor: Executor | None) -> RemoteExecutor | None:
    """Where a dispatcher with *executor* sends its calls (None: here)."""
    if executor is None:
        return None
    from toolctx._dispatch.executor import RemoteExecutor

    return RemoteExecutor(executor)


def _approvals(key: object, lifetime: object) -> Approvals:
    """The dispatcher's approvals, its arguments checked."""
    if key is not None:
        if not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES:
            msg = (
                f"approval_key must be at least {MIN_KEY_BYTES} bytes, e.g. "
                "secrets.token_bytes(32)."
            )
            raise ValueError(msg)
        if lifetime is None:
            msg = (
                "approval_key needs approval_lifetime= (seconds a request "
                "stays resumable): the dispatcher remembers a signed request "
                "it resumed until it expires, and so never runs it twice."
            )
            raise ValueError(msg)
    if lifetime is not None and (
        type(lifetime) not in {int, float}
        or not 0 < cast("float", lifetime) < float("inf")
    ):
        msg = (
            "approval_lifetime must be a positive number of seconds, got "
            f"{lifetime!r:.40}."
        )
        raise ValueError(msg)
    return Approvals(
        key, None if lifetime is None else float(cast("float", lifetime))
    )


def _recorded(session: Session, result: ToolResult) -> ToolResult:
    """*result*, once recorded in *session*."""
    session.record(result)
    return result


def _not_a_call(call: object) -> TypeError:
    return TypeError(
        f"dispatch() takes a ToolCall, got {type(call).__name__}. Build one "
        "with ToolCall(name, arguments, id), or parse provider payloads "
        "with toolctx.providers.<provider>.parse_calls()."
    )
