"""Opt-in diagnostics for contexts lost on the way to another thread.

A tool that starts ``threading.Thread(target=fn)`` or submits to a plain
``ThreadPoolExecutor`` runs *fn* without the call's context, and
``execution_context()`` in *fn* raises. The plain error cannot know why.
With diagnostics on, the dispatcher keeps a process-wide list of the
calls running right now, and the error names the call that is running
elsewhere and the one-line fix.

Diagnostics cost nothing while off: they plug tracking versions of bind
and unbind into the one bind seam of dispatched calls
(:data:`toolctx._context.current.SEAM`) when enabled and unplug them when
disabled, so the dispatcher binds with the ContextVar's own ``set`` and
``reset`` whenever they are off.

Turn them on with :func:`enable_lost_context_diagnostics` or by setting
the environment variable ``TOOLCTX_DEBUG_LOST_CONTEXT`` to ``1`` (or
``warn``, to also warn from :func:`toolctx.current_context`) before
toolctx is imported.
"""

from __future__ import annotations

import asyncio
import os
import threading
import warnings

from contextvars import Token
from typing import NamedTuple

from toolctx._context import current as _current
from toolctx._context.execution import ExecutionContext
from toolctx.exceptions import LostContextWarning


ENV_VAR = "TOOLCTX_DEBUG_LOST_CONTEXT"
_FALSE = frozenset({"", "0", "false", "no", "off"})
# The name of the hook current_context() calls when it returns None.
_HOOK = "_missing_context_hook"


class _Running(NamedTuple):
    """One dispatched call whose context is bound right now."""

    token: Token[ExecutionContext | None]
    tool_name: str | None
    invocation_id: str
    thread_ident: int | None
    thread_name: str
    task_name: str | None


_lock = threading.Lock()
_running: dict[int, _Running] = {}
_enabled = False
_warn = False
_in_warning = threading.local()


def enable_lost_context_diagnostics(*, warn: bool = False) -> None:
    """Explain lost contexts: name the call running elsewhere and the fix.

    While on, :func:`toolctx.execution_context` called where no context
    is bound, while a dispatched call runs in another thread (or another
    task of this thread), raises a :class:`NoExecutionContextError` that
    names that call, its thread, and the one-line fix
    (:func:`toolctx.bind_context`, :class:`toolctx.ContextThreadPoolExecutor`).
    Without a running call the error is the usual one. Calling it again
    only updates *warn*.

    Each dispatch then pays for a lock and a dict update, so use it while
    debugging, in tests, or in staging; off (the default) it costs
    nothing.

    Args:
        warn: Also issue a :class:`LostContextWarning` when
            :func:`toolctx.current_context` returns None in that
            situation. Off by default: code that legitimately runs
            outside calls (log handlers, other threads of a server) reads
            ``current_context()`` too and would warn as well.

    Example:
        >>> enable_lost_context_diagnostics()
        >>> lost_context_diagnostics_enabled()
        True
        >>> disable_lost_context_diagnostics()

    .. versionadded:: 0.1.0
    """
    global _enabled, _warn  # noqa: PLW0603 - the process-wide switch
    with _lock:
        if not _enabled:
            _current.SEAM.plug(_tracking_bind, _tracking_unbind)
            _enabled = True
        _warn = bool(warn)
        _current.install_diagnostic_hooks(
            on_missing=_warn_missing_context if _warn else None,
            hint=lost_context_hint,
        )


def disable_lost_context_diagnostics() -> None:
    """Turn lost-context diagnostics off; a no-op when they are off.

    The dispatcher goes back to binding contexts with no tracking at all.

    .. versionadded:: 0.1.0
    """
    global _enabled, _warn  # noqa: PLW0603 - the process-wide switch
    with _lock:
        _current.install_diagnostic_hooks(on_missing=None, hint=None)
        if _enabled:
            _current.SEAM.unplug()
        _enabled = _warn = False
        _running.clear()


def lost_context_diagnostics_enabled() -> bool:
    """Return whether lost-context diagnostics are on.

    .. versionadded:: 0.1.0
    """
    return _enabled


def lost_context_hint() -> str | None:
    """Return a specific NoExecutionContextError message, or None.

    Called by ``execution_context()`` when no context is bound. None (the
    plain message) unless diagnostics are on and a dispatched call is
    running somewhere in this process.
    """
    if not _enabled:
        return None
    return _explain("No ExecutionContext is bound")


# -- tracking (only installed while diagnostics are on) --------------------


def _tracking_bind(
    ctx: ExecutionContext | None,
) -> Token[ExecutionContext | None]:
    token = _current.set_current(ctx)
    if ctx is not None:
        thread = threading.current_thread()
        running = _Running(
            token,
            ctx.tool_name,
            ctx.invocation_id,
            thread.ident,
            thread.name,
            _task_name(),
        )
        with _lock:
            _running[id(token)] = running
    return token


def _tracking_unbind(token: Token[ExecutionContext | None]) -> None:
    try:
        _current.reset_current(token)
    finally:
        with _lock:
            _running.pop(id(token), None)


def _running_calls() -> list[_Running]:
    with _lock:
        return list(_running.values())


def _task_name() -> str | None:
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop running in this thread
        return None
    return None if task is None else task.get_name()


# -- messages --------------------------------------------------------------


def _explain(subject: str) -> str | None:
    running = _running_calls()
    if not running:
        return None
    me = threading.current_thread()
    here = _where(me.name, _task_name())
    same = [r for r in running if r.thread_ident == me.ident]
    if same:
        call = same[-1]
        there = (
            "this same thread"
            if call.task_name is None
            else f"task {call.task_name!r} of this same thread"
        )
        return (
            f"{subject} {here}, but tool call {_call(call)} is running in "
            f"{there}: this code runs in another contextvars context, "
            "probably an asyncio task or a callback created outside the "
            "call, or one run in a fresh contextvars.Context(). Create the "
            "task from inside the tool (asyncio.create_task copies the "
            "context), or wrap the callback with toolctx.bind_context(fn)."
            + _footer(len(running))
        )
    call = running[-1]
    return (
        f"{subject} {here}, but tool call {_call(call)} is running "
        f"{_where(call.thread_name, call.task_name)}: this thread was "
        "probably started by the tool without copying the context. Start "
        "it with "
        "threading.Thread(target=toolctx.bind_context(fn)) or submit "
        "through toolctx.ContextThreadPoolExecutor (from async code, "
        "asyncio.to_thread(fn) instead of loop.run_in_executor(None, fn))."
        + _footer(len(running))
    )


def _where(thread_name: str, task_name: str | None) -> str:
    if task_name is None:
        return f"in thread {thread_name!r}"
    return f"in task {task_name!r} of thread {thread_name!r}"


def _call(call: _Running) -> str:
    return f"{call.tool_name!r} (invocation {call.invocation_id})"


def _footer(count: int) -> str:
    others = (
        f" {count} calls are running; the latest is named."
        if count > 1
        else ""
    )
    return (
        f"{others} [toolctx lost-context diagnostics are on: "
        "disable_lost_context_diagnostics() turns them off]"
    )


def _warn_missing_context() -> None:
    """Warn that current_context() returns None while a call runs."""
    if getattr(_in_warning, "active", False):
        return  # a warning handler that logs reads current_context() too
    _in_warning.active = True
    try:
        text = _explain("current_context() returned None")
        if text is not None:
            # _warn_missing_context <- current_context <- its caller
            warnings.warn(text, LostContextWarning, stacklevel=3)
    finally:
        _in_warning.active = False


def _from_environment() -> None:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value not in _FALSE:
        enable_lost_context_diagnostics(warn=value == "warn")


_from_environment()
