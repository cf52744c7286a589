"""What a running tool reports onto its call's result, through the recorder.

:func:`publish` (host-only result metadata), :func:`set_state` (session
state changes, applied after the call succeeds) and
:func:`report_progress` (progress for listeners and streams) read the
call bound in :mod:`toolctx.context.current` and write to its
:class:`~toolctx.context.execution.CallRecorder`; each refuses a context
no dispatcher is running, or a call that has already finished.
"""

from __future__ import annotations

import math

from typing import Any, Final, cast

from toolctx._frozen import depth_problem
from toolctx._records import ToolProgress
from toolctx._text import escaped
from toolctx.context.current import get_current
from toolctx.context.execution import (
    RECORD_LOCK,
    ExecutionContext,
    recorder_of,
)
from toolctx.context.keys import ContextKey
from toolctx.exceptions import (
    ContextDataError,
    NoExecutionContextError,
    ToolctxError,
)


def _running_call(what: str) -> ExecutionContext:
    ctx = get_current()
    recorder = None if ctx is None else recorder_of(ctx)
    if ctx is None or recorder is None:
        msg = (
            f"{what}() works only inside a tool call run by a Dispatcher: "
            "its value travels back on the ToolResult. "
            + (
                "A context is bound (use_context), but no dispatched call "
                "is running."
                if ctx is not None
                else "No context is bound."
            )
        )
        raise ToolctxError(msg)
    if recorder.closed:
        raise _finished(what, ctx)
    return ctx


def _finished(what: str, ctx: ExecutionContext) -> ToolctxError:
    return ToolctxError(
        f"{what}() was called after tool call {ctx.tool_name!r} "
        f"(invocation {ctx.invocation_id}) finished, so its result is "
        "already built. Join threads the tool starts before the tool "
        "returns."
    )


def publish(key: ContextKey[Any] | str, value: object) -> None:
    """Attach host-only result metadata to the running call's result.

    The value lands in ``ToolResult.metadata[name]`` for the host and its
    interceptors; provider renderings never include it. With a
    :class:`ContextKey`, the value is checked against the key's type.

    Raises:
        ToolctxError: Not inside a dispatched call.
        ContextValueTypeError: *value* does not match the key's type.
        ContextDataError: *value* nests deeper than 200 levels of
            mappings and sequences.

    .. versionadded:: 0.1.0
    """
    _record("publish", "metadata", key, value)


def set_state(key: ContextKey[Any] | str, value: object) -> None:
    """Record a session state change from inside a tool.

    The change lands in ``ToolResult.state_changes`` and is applied to the
    :class:`Session` (if the call has one) after the call succeeds, in call
    order. The running call's ``state`` snapshot does not change.

    Raises:
        ToolctxError: Not inside a dispatched call.
        ContextValueTypeError: *value* does not match the key's type.
        ContextDataError: *value* nests deeper than 200 levels of
            mappings and sequences (a session stores at most that).

    .. versionadded:: 0.1.0
    """
    _record("set_state", "state_changes", key, value)


def _record(
    what: str, slot: str, key: ContextKey[Any] | str, value: object
) -> None:
    """Store *value* under *key* in the running call's recorder *slot*."""
    ctx = _running_call(what)
    recorder = recorder_of(ctx)
    assert recorder is not None  # noqa: S101 - checked by _running_call
    name = _key_name(key, value)
    # Later calls see it deep-frozen (state snapshots, prior results) and
    # stores write it: refuse now what neither could take.
    problem = depth_problem(value, f"The {what}({name!r}) value")
    if problem is not None:
        raise ContextDataError(problem + " Flatten the data.")
    with RECORD_LOCK:  # see CallRecorder: the result may be built now
        if recorder.closed:
            raise _finished(what, ctx)
        entries: dict[str, object] | None = getattr(recorder, slot)
        if entries is None:
            entries = {}
            setattr(recorder, slot, entries)
        entries[name] = value


def _key_name(key: ContextKey[Any] | str, value: object) -> str:
    if isinstance(key, str):
        if not key:
            msg = "The key name must be a non-empty string."
            raise ValueError(msg)
        return key
    key.check(value)
    return key.name


MAX_PROGRESS_MESSAGE: Final = 1000
"""Longest progress message kept; longer ones are cut."""


def report_progress(
    progress: float, total: float | None = None, message: str | None = None
) -> None:
    r"""Report how far the running tool call is.

    Inside a running call (sync, async, or a thread started with
    :func:`toolctx.bind_context`), each report becomes a
    :class:`~toolctx.ToolProgress`: ``stream()``/``astream()`` yield it in
    order with the chunks, listeners added with
    :meth:`Dispatcher.on_progress <toolctx.Dispatcher.on_progress>` receive
    it at once, in the reporting thread, and the MCP server sends it as
    ``notifications/progress`` when the client asked for progress. With no
    listener a report costs next to nothing.

    Args:
        progress: How far the call is, e.g. items done (a finite number).
        total: What ``progress`` reaches at the end, if known.
        message: A short status for people (cut at 1,000 characters; a
            lone surrogate, such as an undecodable file name holds, is
            written as the escape ``\udce9``).

    Raises:
        NoExecutionContextError: No dispatched call is running here.
        ToolctxError: The call has already finished (join the threads a
            tool starts before it returns).
        TypeError: *progress* or *total* is not a finite number, or
            *message* is not a string.

    Example:
        >>> from toolctx import Dispatcher, Registry, ToolCall, ToolProgress
        >>> registry = Registry()
        >>> @registry.tool
        ... def index(files: int) -> int:
        ...     '''Index the files.'''
        ...     for done in range(1, files + 1):
        ...         report_progress(done, files, f"file {done}")
        ...     return files
        >>> dispatcher = Dispatcher(registry)
        >>> seen: list[ToolProgress] = []
        >>> stop = dispatcher.on_progress(seen.append)
        >>> dispatcher.dispatch(ToolCall("index", {"files": 2})).output
        2
        >>> [(p.progress, p.total, p.message) for p in seen]
        [(1, 2, 'file 1'), (2, 2, 'file 2')]

    .. versionadded:: 0.2.0
    """
    ctx = get_current()
    recorder = None if ctx is None else recorder_of(ctx)
    if ctx is None or recorder is None:
        raise NoExecutionContextError(
            "report_progress() works only while a dispatched tool call "
            "runs (in the tool, or in a thread started with "
            "toolctx.bind_context). "
            + (
                "A context is bound (use_context), but no call is running."
                if ctx is not None
                else "No context is bound."
            )
        )
    _check_number("progress", progress)
    if total is not None:
        _check_number("total", total)
    if message is not None:
        if not isinstance(cast("object", message), str):
            msg = (
                "report_progress() message must be a string, got "
                f"{type(message).__name__}."
            )
            raise TypeError(msg)
        message = escaped(message[:MAX_PROGRESS_MESSAGE])
    if recorder.closed:
        raise _finished("report_progress", ctx)
    sink = recorder.progress
    if sink is not None:
        sink(
            ToolProgress(
                name=ctx.tool_name or "",
                call_id=ctx.tool_call_id,
                invocation_id=ctx.invocation_id,
                progress=progress,
                total=total,
                message=message,
            )
        )


def _check_number(name: str, value: object) -> None:
    try:
        finite = (
            type(value) is not bool
            and isinstance(value, (int, float))
            and math.isfinite(value)
        )
    except OverflowError:  # an int too large for a float
        finite = False
    if not finite:
        msg = (
            f"report_progress() {name} must be a finite number, got "
            f"{value!r:.40}."
        )
        raise TypeError(msg)
