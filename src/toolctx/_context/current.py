"""The one ContextVar, and the accessors tools use while a call runs.

Here: the variable, its bind seam :data:`SEAM`, :func:`execution_context`,
:func:`current_context` and :class:`use_context`; and what a running tool
reports onto its result through the recorder. :func:`publish` (host-only
result metadata), :func:`set_state` (session state changes, applied after
the call succeeds) and :func:`report_progress` (progress for listeners and
streams) read the call bound here and write to its
:class:`~toolctx._context.execution.CallRecorder`; each refuses a context no
dispatcher is running, or a call that has already finished.
"""

from __future__ import annotations

import math

from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, Final, cast, final

from toolctx._context.execution import (
    RECORD_LOCK,
    ExecutionContext,
    recorder_of,
)
from toolctx._context.keys import ContextKey
from toolctx._frozen import depth_problem
from toolctx._records import ToolProgress
from toolctx._text import escaped
from toolctx.exceptions import (
    ContextDataError,
    NoExecutionContextError,
    ToolctxError,
)


_CURRENT: ContextVar[ExecutionContext | None] = ContextVar(
    "toolctx.execution_context", default=None
)
get_current = _CURRENT.get
set_current = _CURRENT.set
reset_current = _CURRENT.reset


@final
class BindSeam:
    """The one place where dispatched calls bind and unbind their context.

    The call shells (``toolctx._dispatch.run``, ``toolctx._dispatch.stream``
    and the remote worker) bind a call's context with ``SEAM.bind(ctx)``
    and unbind it with ``SEAM.unbind(token)``, and nothing else binds a
    dispatched call. Lost-context diagnostics plug tracking versions in
    with :meth:`plug` and take them out with :meth:`unplug`. Unplugged,
    the two attributes are the ContextVar's own ``set`` and ``reset``, so
    the seam costs one attribute load per bind.
    """

    __slots__ = ("bind", "unbind")

    def __init__(self) -> None:
        self.bind: Callable[
            [ExecutionContext | None], Token[ExecutionContext | None]
        ] = set_current
        self.unbind: Callable[[Token[ExecutionContext | None]], None] = (
            reset_current
        )

    def plug(
        self,
        bind: Callable[
            [ExecutionContext | None], Token[ExecutionContext | None]
        ],
        unbind: Callable[[Token[ExecutionContext | None]], None],
    ) -> None:
        """Bind and unbind calls' contexts through *bind* and *unbind*."""
        self.bind = bind
        self.unbind = unbind

    def unplug(self) -> None:
        """Go back to the ContextVar's own ``set`` and ``reset``."""
        self.bind = set_current
        self.unbind = reset_current

    @property
    def plugged(self) -> bool:
        """Whether hooks are plugged in."""
        return self.bind is not set_current


SEAM: Final = BindSeam()
"""The bind seam of every dispatched call (see :class:`BindSeam`)."""
# The innermost open use_context() block; each block links to the one it
# opened inside, so an exit can tell whether it is the innermost one.
_OPEN_BLOCK: ContextVar[use_context | None] = ContextVar(
    "toolctx.use_context", default=None
)


def execution_context() -> ExecutionContext:
    """Return the context of the running tool call.

    Raises:
        NoExecutionContextError: No call is running in this context. The
            message says how to get one.

    Example:
        >>> from toolctx import ExecutionContext, use_context
        >>> with use_context(ExecutionContext(user_id="ada")):
        ...     execution_context().user_id
        'ada'

    .. versionadded:: 0.1.0
    """
    ctx = get_current()
    if ctx is None:
        raise _no_context()
    return ctx


def _no_context() -> NoExecutionContextError:
    hint = _lost_context_hint
    return NoExecutionContextError(None if hint is None else hint())


def current_context() -> ExecutionContext | None:
    """Return the context of the running tool call, or None; never raises.

    .. versionadded:: 0.1.0
    """
    ctx = get_current()
    if ctx is None and _missing_context_hook is not None:
        _missing_context_hook()
    return ctx


# Set by toolctx.diagnostics while lost-context warnings are on; called
# when current_context() is about to return None.
_missing_context_hook: Callable[[], None] | None = None
# Set by toolctx.diagnostics while it is on: the specific message for
# execution_context() when no context is bound, or None for the plain one.
_lost_context_hint: Callable[[], str | None] | None = None


def install_diagnostic_hooks(
    *,
    on_missing: Callable[[], None] | None,
    hint: Callable[[], str | None] | None,
) -> None:
    """Where lost-context diagnostics plug into the accessors (internal).

    *on_missing* runs when :func:`current_context` is about to return
    None; *hint* gives :func:`execution_context`'s error its message.
    None for either removes it.
    """
    global _missing_context_hook, _lost_context_hint  # noqa: PLW0603
    _missing_context_hook = on_missing
    _lost_context_hint = hint


@final
class use_context:  # noqa: N801 - reads as a function at the call site
    """Bind *ctx* for a ``with`` block and restore the previous one on exit.

    For tests and direct calls of tools outside a dispatcher. The previous
    context comes back on exit, exceptions included. Usable as a sync or
    async context manager; not reentrant (use a new one per block).

    Blocks must exit innermost first. An outer block that exits while a
    block opened inside it is still open raises :class:`ToolctxError`
    after restoring the context bound before the outer block; the inner
    blocks then restore nothing when they exit.

    Example:
        >>> from toolctx import ExecutionContext, current_context
        >>> with use_context(ExecutionContext(user_id="ada")) as ctx:
        ...     current_context() is ctx
        True
        >>> current_context() is None
        True

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_block_token", "_ctx", "_outer", "_token")

    def __init__(self, ctx: ExecutionContext) -> None:
        if not isinstance(cast("object", ctx), ExecutionContext):
            msg = (
                "use_context() takes an ExecutionContext, got "
                f"{type(ctx).__name__}."
            )
            raise TypeError(msg)
        self._ctx = ctx
        self._token: Token[ExecutionContext | None] | None = None
        self._block_token: Token[use_context | None] | None = None
        self._outer: use_context | None = None

    def __enter__(self) -> ExecutionContext:
        if self._token is not None:
            msg = "This use_context() is already active; make a new one."
            raise ToolctxError(msg)
        self._outer = _OPEN_BLOCK.get()
        self._block_token = _OPEN_BLOCK.set(self)
        self._token = set_current(self._ctx)
        return self._ctx

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        token, block_token = self._token, self._block_token
        if token is None or block_token is None:
            return  # never entered, or undone by an outer block's exit
        inner: list[use_context] = []
        block = _OPEN_BLOCK.get()
        while block is not self:
            if block is None:
                raise ToolctxError(_FOREIGN_EXIT)
            inner.append(block)
            block = block._outer  # noqa: SLF001 - same class
        try:
            _OPEN_BLOCK.reset(block_token)
        except ValueError:  # entered in another contextvars.Context
            raise ToolctxError(_FOREIGN_EXIT) from None
        reset_current(token)
        self._close()
        if inner:
            for block in inner:
                block._close()  # noqa: SLF001 - same class
            raise ToolctxError(_out_of_order(self._ctx, len(inner)))

    def _close(self) -> None:
        self._token = self._block_token = self._outer = None

    async def __aenter__(self) -> ExecutionContext:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


_FOREIGN_EXIT = (
    "This use_context() block is being exited in a thread or asyncio task "
    "other than the one that entered it, where it is not open. Exit it "
    "where it was entered; nothing was changed."
)


def _out_of_order(ctx: ExecutionContext, inner: int) -> str:
    blocks = "block" if inner == 1 else "blocks"
    return (
        f"use_context() blocks exited out of order: the block that bound "
        f"invocation {ctx.invocation_id} exited while {inner} use_context() "
        f"{blocks} opened inside it {'was' if inner == 1 else 'were'} still "
        "open. Exit the innermost block first (nest the with statements; "
        "exit ExitStack entries in reverse order). The context bound before "
        f"this block is restored, and the inner {blocks} will restore "
        "nothing when exited."
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
