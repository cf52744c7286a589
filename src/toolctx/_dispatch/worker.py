"""The worker function: run one :class:`~toolctx.remote.RemoteCall` here.

:func:`run_remote` is what a process pool or a Dask worker runs for a
dispatcher with an ``executor``. It imports the tool by reference,
rebuilds the context (the runtime ``scope`` never crosses a process: a
*scope loader* rebuilds it from the serialized identity), binds it
exactly like the dispatcher does (it is a dispatch shell: the body runs
in :func:`toolctx._dispatch.run.run_sync`), runs the tool and returns a
:class:`~toolctx.remote.RemoteOutcome`, which the parent turns into the
:class:`~toolctx.ToolResult`.
"""

from __future__ import annotations

import inspect
import pickle

from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from time import perf_counter_ns
from typing import Any

import attrs

from toolctx._context.codec import value_to_json
from toolctx._context.execution import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
)
from toolctx._dispatch.core import (
    Core,
    Failure,
    decode_arguments,
    prepared,
    propagates,
    structure,
    tool_failure,
)
from toolctx._dispatch.run import (
    loop_running,
    run_sync,
    run_to_end,
    with_timeout,
)
from toolctx._records import ToolCall
from toolctx._text import exception_text
from toolctx._types.decode import DEFAULT_LIMITS
from toolctx.exceptions import ContextDataError, ScopeError
from toolctx.remote.payloads import RemoteCall, RemoteOutcome
from toolctx.remote.references import (
    resolve_reference,
    tool_entry,
    worker_name,
)


def run_remote(call: RemoteCall) -> RemoteOutcome:
    """Run one :class:`~toolctx.remote.RemoteCall` here: the worker function.

    Imports the tool, rebuilds the context (the scope through
    ``call.scope_loader``, else None), validates the arguments with the
    tool's own rules, binds the context as a dispatched call with the
    parent's ids (so ``publish`` and ``set_state`` work), runs the tool
    like :meth:`Dispatcher.dispatch` does (an ``async`` tool in its own
    event loop, within ``call.timeout``; a generator tool to the end), and
    unbinds the context whatever happens.

    Tool-level failures come back as an error outcome; this function does
    not raise for them. Whatever the tool raises is one, ``SystemExit``,
    ``StopIteration`` and a ``CancelledError`` of its own included (no
    caller can cancel a call here); only ``KeyboardInterrupt`` and the
    like propagate. A call the worker cannot set up (the tool or the scope
    loader does not import, the context data is corrupt, the scope loader
    fails) is an error outcome too, whose ``error`` is a generic message
    whatever ``call.include_exception_messages`` says: the details name
    modules, processes and what the host's loader said, which are for the
    host only, on ``exception``.

    .. versionadded:: 0.1.0
    """
    start = perf_counter_ns()
    recorder = CallRecorder()
    call_id = call.context.get("tool_call_id")
    request = ToolCall(
        call.tool_name,
        call.arguments,
        call_id if isinstance(call_id, str) else None,
    )
    try:
        entry = tool_entry(call.tool_ref, call.tool_name)
        ctx = _restore(call, recorder)
    except BaseException as exc:
        if propagates(exc, awaited=False):
            raise
        return _failed(_setup_failure(request, exc), recorder, start)
    detail = call.include_exception_messages
    core = Core(
        {request.name: entry}.get,
        lambda: [request.name],
        (),
        DEFAULT_LIMITS,
        detail=detail,
        log=False,  # the dispatcher that sent the call logs its failure
    )
    try:
        decoded = decode_arguments(request, entry, DEFAULT_LIMITS)
        structurer = entry.structurer
        args = (
            decoded
            if structurer is None
            else structure(request, structurer, decoded)
        )
        for name in entry.context_parameters:
            args[name] = ctx
    except Failure as failure:
        return _failed(failure, recorder, start)
    p = prepared(request, ctx, entry, args, decoded, 0, start)
    result = run_sync(core, p, partial(_run_async, call=call))
    if result.is_error:
        raised = result.exception
        hinted = (
            None if raised is None else _with_scope_hint(raised, call, ctx)
        )
        return _failed(
            Failure(result.error or "", raised)
            if hinted is None or hinted is raised
            else tool_failure(request, hinted, detail=detail),
            recorder,
            start,
        )
    try:
        metadata = _json_entries(recorder.metadata, "published value")
        changes = _json_entries(recorder.state_changes, "state change")
    except ContextDataError as exc:
        return _failed(
            tool_failure(request, exc, detail=detail), recorder, start
        )
    return RemoteOutcome(
        output=result.output,
        metadata=metadata,
        state_changes=changes,
        worker=worker_name(),
        duration_ns=perf_counter_ns() - start,
    )


def _restore(call: RemoteCall, recorder: CallRecorder) -> ExecutionContext:
    base = ExecutionContext.from_dict(call.context)
    if call.scope_loader is not None:
        base = attrs.evolve(base, scope=_load_scope(call.scope_loader, base))
    return derive_call_context(
        base,
        base.invocation_id,
        call.tool_name,
        base.tool_call_id,
        base.parent_invocation_id,
        recorder,
    )


def _load_scope(ref: str, ctx: ExecutionContext) -> object:
    """Call the scope loader *ref*; its failures become a ScopeError.

    The messages are for the host (``ToolResult.exception``): they say
    which loader failed where and quote its error, bounded.
    """
    loader = resolve_reference(ref, what="scope loader")
    if not callable(loader):
        msg = f"The scope loader {ref!r} is not callable."
        raise ScopeError(msg)
    try:
        scope = loader(ctx)
    except BaseException as exc:
        if propagates(exc, awaited=False):
            raise
        msg = (
            f"The scope loader {ref!r} failed in process {worker_name()}: "
            f"{exception_text(exc)}"
        )
        raise ScopeError(msg) from exc
    if inspect.isawaitable(scope):
        if inspect.iscoroutine(scope):
            scope.close()
        msg = (
            f"The scope loader {ref!r} must be a plain function returning "
            "the scope, not a coroutine function."
        )
        raise ScopeError(msg)
    return scope


def _run_async(value: Awaitable[Any], call: RemoteCall) -> Any:
    main = (
        value
        if call.timeout is None
        else with_timeout(value, call.timeout, call.tool_name)
    )
    if not loop_running():
        return run_to_end(main)
    # A loop runs in this thread (an async host calling in-process), and
    # asyncio.run() cannot nest: finish in a helper thread that sees the
    # bound context.
    with ThreadPoolExecutor(1, thread_name_prefix="toolctx-remote") as pool:
        return pool.submit(copy_context().run, run_to_end, main).result()


def _with_scope_hint(
    exc: BaseException, call: RemoteCall, ctx: ExecutionContext
) -> BaseException:
    """Say why the scope is missing when it was never rebuilt."""
    if (
        not isinstance(exc, ScopeError)
        or call.scope_loader is not None
        or ctx.scope is not None
    ):
        return exc
    hinted = ScopeError(
        f"{exc} The scope never crosses to a worker process: give the "
        "dispatcher (or the RemoteCall) a scope_loader, the import "
        "reference 'package.module:function' of a function that takes the "
        "ExecutionContext and returns the scope, and the worker rebuilds it "
        "there."
    )
    hinted.__cause__ = exc
    return hinted


def _setup_failure(request: ToolCall, exc: BaseException) -> Failure:
    """The failure for a call the worker could not set up; *exc* kept.

    The tool never ran, and nothing in the arguments caused it: the model
    reads that, and what to do. Why (a module that does not import, the
    host's scope loader failing, the worker's ``hostname:pid``) is for the
    host, on ``ToolResult.exception``.
    """
    return Failure(
        f"Tool {request.name!r} could not run: the host could not set up "
        "the call. The arguments are not the cause, so do not retry with "
        "other ones; tell the user the tool is unavailable right now.",
        exc,
    )


def _failed(
    failure: Failure, recorder: CallRecorder, start: int
) -> RemoteOutcome:
    try:
        metadata = _json_entries(recorder.metadata, "published value")
    except ContextDataError:
        metadata = {}
    exc = failure.exception
    return RemoteOutcome(
        error=failure.message,
        exception_type=None if exc is None else _type_name(exc),
        exception=None if exc is None else _portable(exc),
        metadata=metadata,
        worker=worker_name(),
        duration_ns=perf_counter_ns() - start,
    )


def _json_entries(
    entries: dict[str, object] | None, what: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in (entries or {}).items():
        try:
            out[name] = value_to_json(name, value)
        except ContextDataError as exc:
            msg = (
                f"Cannot send the {what} {name!r} back from the worker: "
                f"{str(exc).rstrip('.')}. Only values with a JSON form "
                "cross processes."
            )
            raise ContextDataError(msg) from None
    return out


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _portable(exc: BaseException) -> BaseException | None:
    """Return *exc* if a pickled copy comes back equal, else None."""
    try:
        copy = pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes
        same = type(copy) is type(exc) and str(copy) == str(exc)
    except Exception:  # noqa: BLE001 - unpicklable or unprintable: send none
        return None
    return exc if same else None
