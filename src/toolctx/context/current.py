"""The one ContextVar, and the accessors tools use while a call runs.

Here: the variable, its bind seam :data:`SEAM`, :func:`execution_context`,
:func:`current_context` and :class:`use_context`. What a running tool
reports onto its result (``publish``, ``set_state``, ``report_progress``)
is in ``toolctx.context._reports``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Final, cast, final

from toolctx.context.execution import ExecutionContext
from toolctx.exceptions import NoExecutionContextError, ToolctxError


_CURRENT: ContextVar[ExecutionContext | None] = ContextVar(
    "toolctx.execution_context", default=None
)
get_current = _CURRENT.get
set_current = _CURRENT.set
reset_current = _CURRENT.reset


@final
class BindSeam:
    """The one place where dispatched calls bind and unbind their context.

    The call shells (``toolctx.dispatch.run``, ``toolctx.dispatch.stream``
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
