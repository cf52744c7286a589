"""``Dispatcher``: run the model's tool calls, each in its own context."""

from __future__ import annotations

import asyncio
import json

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from contextvars import copy_context
from functools import partial
from time import perf_counter_ns
from typing import Any, cast, final

import attrs

from toolctx._arguments import unstructure_output
from toolctx._context import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
)
from toolctx._current import get_current, reset_current, set_current
from toolctx._frozen import freeze_mapping
from toolctx._ids import new_invocation_id
from toolctx._protocols import Interceptor
from toolctx._records import ToolCall, ToolResult
from toolctx._registry import Registry, ToolEntry
from toolctx._session import Session
from toolctx.exceptions import ToolArgumentsError, ToolctxError, ToolDenied


_EMPTY_TEMPLATE = ExecutionContext(invocation_id="")
_NO_CHANGES: Mapping[str, Any] = freeze_mapping({}, "ToolResult.state_changes")
_NO_METADATA: Mapping[str, Any] = freeze_mapping({}, "ToolResult.metadata")
_get_running_loop = asyncio.events._get_running_loop  # noqa: SLF001
_json_loads = json.loads


class _Failure(Exception):  # noqa: N818 - internal control flow
    """A tool-level failure that becomes an error result."""

    def __init__(
        self, message: str, exception: BaseException | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exception = exception


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
        "_interceptors",
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
        self._interceptors = tuple(interceptors)
        self.default_timeout = default_timeout
        self.include_exception_messages = include_exception_messages

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
        template, session = self._template(call, context)
        result = self._dispatch(call, template, start)
        if session is not None:
            session.record(result)
        return result

    def dispatch_all(
        self,
        calls: Iterable[ToolCall],
        context: ExecutionContext | Session | None = None,
    ) -> list[ToolResult]:
        """Run the calls of one turn one after another; results in input order.

        Each call gets its own invocation id and sees the results of the
        earlier ones in ``prior_results``. A failed call does not stop the
        others.

        .. versionadded:: 0.1.0
        """
        calls = list(calls)
        results: list[ToolResult] = []
        if isinstance(context, Session):
            return [self.dispatch(call, context) for call in calls]
        for call in calls:
            start = perf_counter_ns()
            template, _ = self._template(call, context)
            if results:
                template = attrs.evolve(
                    template,
                    prior_results=template.prior_results + tuple(results),
                )
            results.append(self._dispatch(call, template, start))
        return results

    def _dispatch(
        self, call: ToolCall, template: ExecutionContext, start: int
    ) -> ToolResult:
        ctx = self._call_context(call, template)
        ctx, ran, result = self._before(call, ctx, start)
        if result is None:
            try:
                entry = self._entry(call)
                if entry.execute_is_async:
                    self._check_no_loop(entry)
                output = self._run_sync(call, entry, ctx)
            except _Failure as failure:
                result = self._error(call, ctx, failure, start)
            else:
                result = self._ok(call, ctx, output, start)
        return self._after(call, ctx, ran, result)

    def _run_sync(
        self, call: ToolCall, entry: ToolEntry, ctx: ExecutionContext
    ) -> Any:
        run = self._prepare(call, entry, ctx)
        token = set_current(ctx)
        try:
            value = run()
            if entry.execute_is_async or isinstance(value, Awaitable):
                value = asyncio.run(_await(value))
            return unstructure_output(value)
        except _Failure:
            raise
        except Exception as exc:  # noqa: BLE001 - any tool failure is a result
            raise self._tool_failure(call, exc) from None
        finally:
            reset_current(token)

    def _check_no_loop(self, entry: ToolEntry) -> None:
        if _get_running_loop() is not None:
            msg = (
                f"Tool {entry.definition.name!r} is async and an event loop "
                "is running in this thread: use `await "
                "dispatcher.adispatch(call, context)` instead of dispatch()."
            )
            raise ToolctxError(msg)

    # -- async -------------------------------------------------------------

    async def adispatch(
        self,
        call: ToolCall,
        context: ExecutionContext | Session | None = None,
    ) -> ToolResult:
        """Run one tool call from async code; never raises for tool failures.

        Async tools run in the current task; sync tools run in a worker
        thread that sees the same context (unless declared
        ``@tool(inline=True)``), so the event loop is never blocked.
        Cancelling the awaiting task propagates ``CancelledError`` and
        leaves no context bound and no session state changed. A call that
        exceeds its timeout becomes an error result.

        .. versionadded:: 0.1.0
        """
        start = perf_counter_ns()
        template, session = self._template(call, context)
        result = await self._adispatch(call, template, start)
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
        applied in input order once all calls have finished.

        .. versionadded:: 0.1.0
        """
        calls = list(calls)
        session = context if isinstance(context, Session) else None
        start = perf_counter_ns()
        templates = [self._template(call, context)[0] for call in calls]
        results = await asyncio.gather(
            *(
                self._adispatch(call, template, start)
                for call, template in zip(calls, templates, strict=True)
            )
        )
        if session is not None:
            for result in results:
                session.record(result)
        return list(results)

    async def _adispatch(
        self, call: ToolCall, template: ExecutionContext, start: int
    ) -> ToolResult:
        ctx = self._call_context(call, template)
        ctx, ran, result = self._before(call, ctx, start)
        if result is None:
            try:
                entry = self._entry(call)
                output = await self._run_async(call, entry, ctx)
            except _Failure as failure:
                result = self._error(call, ctx, failure, start)
            else:
                result = self._ok(call, ctx, output, start)
        return self._after(call, ctx, ran, result)

    async def _run_async(
        self, call: ToolCall, entry: ToolEntry, ctx: ExecutionContext
    ) -> Any:
        run = self._prepare(call, entry, ctx)
        ft = entry.function_tool
        timeout = (
            ft.timeout if ft is not None and ft.timeout else None
        ) or self.default_timeout
        token = set_current(ctx)
        try:
            if entry.execute_is_async or (ft is not None and ft.inline):
                value = run()
            else:
                loop = asyncio.get_running_loop()
                value = loop.run_in_executor(None, copy_context().run, run)
            if isinstance(value, Awaitable):
                if timeout is None:
                    value = await value
                else:
                    value = await _with_timeout(value, timeout, call.name)
            return unstructure_output(value)
        except _Failure:
            raise
        except Exception as exc:  # noqa: BLE001 - any tool failure is a result
            raise self._tool_failure(call, exc) from None
        finally:
            reset_current(token)

    # -- shared steps ------------------------------------------------------

    def _template(
        self, call: ToolCall, context: ExecutionContext | Session | None
    ) -> tuple[ExecutionContext, Session | None]:
        if type(cast("object", call)) is not ToolCall:
            msg = f"dispatch() takes a ToolCall, got {type(call).__name__}."
            raise TypeError(msg)
        if context is None:
            bound = get_current()
            return (_EMPTY_TEMPLATE if bound is None else bound), None
        if type(context) is ExecutionContext:
            return context, None
        if isinstance(cast("object", context), Session):
            return context.context(), context
        msg = (
            "context must be an ExecutionContext, a Session or None, got "
            f"{type(context).__name__}."
        )
        raise TypeError(msg)

    def _call_context(
        self, call: ToolCall, template: ExecutionContext
    ) -> ExecutionContext:
        bound = get_current()
        parent: str | None
        if bound is not None and bound._recorder is not None:  # noqa: SLF001
            parent = bound.invocation_id
        else:
            parent = template.parent_invocation_id
        return derive_call_context(
            template,
            new_invocation_id(),
            call.name,
            call.id,
            parent,
            CallRecorder(),
        )

    def _before(
        self, call: ToolCall, ctx: ExecutionContext, start: int
    ) -> tuple[ExecutionContext, int, ToolResult | None]:
        ran = 0
        for interceptor in self._interceptors:
            try:
                new = interceptor.before(call, ctx)
            except ToolDenied as denied:
                failure = _Failure(
                    f"Call to tool {call.name!r} was denied: {denied.reason}",
                    denied,
                )
                return ctx, ran, self._error(call, ctx, failure, start)
            ran += 1
            if type(cast("object", new)) is not ExecutionContext:
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
            if new._recorder is not ctx._recorder:  # noqa: SLF001
                new = derive_call_context(
                    new,
                    new.invocation_id,
                    call.name,
                    call.id,
                    new.parent_invocation_id,
                    ctx._recorder,  # type: ignore[arg-type]  # noqa: SLF001
                )
            ctx = new
        return ctx, ran, None

    def _after(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        ran: int,
        result: ToolResult,
    ) -> ToolResult:
        for interceptor in reversed(self._interceptors[:ran]):
            result = interceptor.after(call, ctx, result)
            if type(cast("object", result)) is not ToolResult:
                msg = (
                    f"{type(interceptor).__name__}.after() must return a "
                    f"ToolResult, got {type(result).__name__}."
                )
                raise TypeError(msg)
        return result

    def _entry(self, call: ToolCall) -> ToolEntry:
        entry = self.registry.entry(call.name)
        if entry is None:
            names = list(self.registry)
            shown = ", ".join(names[:30])
            more = f" and {len(names) - 30} more" if len(names) > 30 else ""  # noqa: PLR2004
            raise _Failure(
                f"Unknown tool {call.name!r}. "
                + (
                    f"Available tools: {shown}{more}. Call one of them by "
                    "its exact name."
                    if names
                    else "No tools are available."
                )
            )
        return entry

    def _prepare(
        self, call: ToolCall, entry: ToolEntry, ctx: ExecutionContext
    ) -> Any:
        """Decode and validate the arguments; return a no-argument callable."""
        args = _decode_arguments(call, entry)
        ft = entry.function_tool
        if ft is None:
            return partial(entry.tool.execute, args)
        try:
            kwargs = ft.structure_arguments(args)
        except ToolArgumentsError as exc:
            raise _Failure(str(exc), exc) from None
        for name in ft.context_parameters:
            kwargs[name] = ctx
        return partial(ft.fn, **kwargs)

    def _tool_failure(self, call: ToolCall, exc: Exception) -> _Failure:
        if isinstance(exc, ToolArgumentsError):
            return _Failure(str(exc.with_tool_name(call.name)), exc)
        if isinstance(exc, ToolDenied):
            return _Failure(
                f"Call to tool {call.name!r} was denied: {exc.reason}", exc
            )
        if isinstance(exc, _ToolTimeout):
            return _Failure(str(exc), exc)
        if self.include_exception_messages:
            detail = (
                f"{type(exc).__name__}: {exc}"
                if str(exc)
                else (type(exc).__name__)
            )
            return _Failure(f"Tool {call.name!r} failed: {detail}", exc)
        return _Failure(f"Tool {call.name!r} failed.", exc)

    def _ok(
        self, call: ToolCall, ctx: ExecutionContext, output: Any, start: int
    ) -> ToolResult:
        rec = ctx._recorder  # noqa: SLF001
        assert rec is not None  # noqa: S101 - set by _call_context
        return ToolResult(
            name=call.name,
            call_id=call.id,
            invocation_id=ctx.invocation_id,
            output=output,
            metadata=_NO_METADATA
            if rec.metadata is None
            else freeze_mapping(
                rec.metadata, "ToolResult.metadata", deep=False
            ),
            state_changes=_NO_CHANGES
            if rec.state_changes is None
            else freeze_mapping(
                rec.state_changes, "ToolResult.state_changes", deep=False
            ),
            duration_ns=perf_counter_ns() - start,
        )

    def _error(
        self,
        call: ToolCall,
        ctx: ExecutionContext,
        failure: _Failure,
        start: int,
    ) -> ToolResult:
        rec = ctx._recorder  # noqa: SLF001
        return ToolResult(
            name=call.name,
            call_id=call.id,
            invocation_id=ctx.invocation_id,
            is_error=True,
            error=failure.message,
            exception=failure.exception,
            metadata=_NO_METADATA
            if rec is None or rec.metadata is None
            else freeze_mapping(
                rec.metadata, "ToolResult.metadata", deep=False
            ),
            duration_ns=perf_counter_ns() - start,
        )


class _ToolTimeout(ToolctxError, TimeoutError):  # noqa: N818
    """A call ran past its timeout (becomes an error result)."""


async def _await(value: Awaitable[Any]) -> Any:
    return await value


async def _with_timeout(
    value: Awaitable[Any], timeout: float, name: str
) -> Any:
    task = asyncio.ensure_future(value)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if task in done:
        return task.result()
    task.cancel()
    msg = (
        f"Tool {name!r} timed out after {timeout:g} seconds and was "
        "cancelled. Try again with a smaller request, or tell the user "
        "the tool is slow right now."
    )
    raise _ToolTimeout(msg)


def _decode_arguments(call: ToolCall, entry: ToolEntry) -> dict[str, Any]:
    raw = call.arguments
    if raw is None:
        return {}
    kind = type(raw)
    if kind is str or kind is bytes:
        if not raw.strip():  # type: ignore[union-attr]
            return {}
        try:
            data = _json_loads(raw)  # type: ignore[arg-type]
        except (ValueError, RecursionError) as exc:
            raise _Failure(
                f"The arguments for tool {call.name!r} are not valid JSON "
                f"({_short(exc)}). Send one JSON object"
                f"{_expected_keys(entry)}.",
                exc,
            ) from None
    elif isinstance(raw, Mapping):
        data = raw
    else:
        data = raw
    if type(data) is dict:
        return data
    if data is None:
        return {}
    if isinstance(data, Mapping):
        return dict(data)
    raise _Failure(
        f"The arguments for tool {call.name!r} must be a JSON object"
        f"{_expected_keys(entry)}, got {_json_kind(data)}."
    )


def _expected_keys(entry: ToolEntry) -> str:
    props = entry.definition.parameters.get("properties") or {}
    if not props:
        return " (this tool takes no arguments: send {})"
    return " with the keys " + ", ".join(props)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {type(value).__name__}"


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."  # noqa: PLR2004
