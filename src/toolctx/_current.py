"""The one ContextVar, and the accessors tools use while a call runs."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, cast, final

from toolctx._context import ExecutionContext
from toolctx._keys import ContextKey
from toolctx.exceptions import NoExecutionContextError, ToolctxError


_CURRENT: ContextVar[ExecutionContext | None] = ContextVar(
    "toolctx.execution_context", default=None
)
get_current = _CURRENT.get
set_current = _CURRENT.set
reset_current = _CURRENT.reset


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
    from toolctx._diagnostics import lost_context_hint

    return NoExecutionContextError(lost_context_hint())


def current_context() -> ExecutionContext | None:
    """Return the context of the running tool call, or None; never raises.

    .. versionadded:: 0.1.0
    """
    ctx = get_current()
    if ctx is None and _missing_context_hook is not None:
        _missing_context_hook()
    return ctx


# Set by toolctx._diagnostics while lost-context warnings are on; called
# when current_context() is about to return None.
_missing_context_hook: Callable[[], None] | None = None


@final
class use_context:  # noqa: N801 - reads as a function at the call site
    """Bind *ctx* for a ``with`` block and restore the previous one on exit.

    For tests and direct calls of tools outside a dispatcher. The previous
    context comes back on exit, exceptions included. Usable as a sync or
    async context manager; not reentrant (use a new one per block).

    Example:
        >>> from toolctx import ExecutionContext, current_context
        >>> with use_context(ExecutionContext(user_id="ada")) as ctx:
        ...     current_context() is ctx
        True
        >>> current_context() is None
        True

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_ctx", "_token")

    def __init__(self, ctx: ExecutionContext) -> None:
        if not isinstance(cast("object", ctx), ExecutionContext):
            msg = (
                "use_context() takes an ExecutionContext, got "
                f"{type(ctx).__name__}."
            )
            raise TypeError(msg)
        self._ctx = ctx
        self._token: Token[ExecutionContext | None] | None = None

    def __enter__(self) -> ExecutionContext:
        if self._token is not None:
            msg = "This use_context() is already active; make a new one."
            raise ToolctxError(msg)
        self._token = set_current(self._ctx)
        return self._ctx

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        token, self._token = self._token, None
        if token is not None:
            reset_current(token)

    async def __aenter__(self) -> ExecutionContext:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


def _running_call(what: str) -> ExecutionContext:
    ctx = get_current()
    recorder = None if ctx is None else ctx._recorder  # noqa: SLF001
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
        msg = (
            f"{what}() was called after tool call {ctx.tool_name!r} "
            f"(invocation {ctx.invocation_id}) finished, so its result is "
            "already built. Join threads the tool starts before the tool "
            "returns."
        )
        raise ToolctxError(msg)
    return ctx


def publish(key: ContextKey[Any] | str, value: object) -> None:
    """Attach host-only result metadata to the running call's result.

    The value lands in ``ToolResult.metadata[name]`` for the host and its
    interceptors; provider renderings never include it. With a
    :class:`ContextKey`, the value is checked against the key's type.

    Raises:
        ToolctxError: Not inside a dispatched call.
        ContextValueTypeError: *value* does not match the key's type.

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

    .. versionadded:: 0.1.0
    """
    _record("set_state", "state_changes", key, value)


def _record(
    what: str, slot: str, key: ContextKey[Any] | str, value: object
) -> None:
    """Store *value* under *key* in the running call's recorder *slot*."""
    recorder = _running_call(what)._recorder  # noqa: SLF001
    assert recorder is not None  # noqa: S101 - checked by _running_call
    name = _key_name(key, value)
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
