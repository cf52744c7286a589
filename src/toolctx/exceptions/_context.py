"""The exceptions of the execution context, its keys and its data.

No context bound, a required value missing, a scope or a value of the
wrong type, two keys sharing a name, data that cannot be serialized;
and the opt-in warning for a context lost while a call runs.
"""

from __future__ import annotations

from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError


class NoExecutionContextError(ToolctxError, LookupError):
    """Raised by :func:`toolctx.execution_context` outside a tool call.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or (
                "No ExecutionContext is bound: execution_context() works "
                "only while a tool call runs. Dispatch the call with "
                "Dispatcher.dispatch()/adispatch(), or bind a context "
                "yourself with `with toolctx.use_context(ctx):` (tests, "
                "direct calls). Code that may run outside a call can use "
                "toolctx.current_context(), which returns None instead. If "
                "this runs in a thread the tool started itself, submit the "
                "work with toolctx.bind_context(fn) or a "
                "toolctx.ContextThreadPoolExecutor."
            )
        )

    def __str__(self) -> str:
        return str(self.args[0])


class MissingContextValueError(ToolctxError, LookupError):
    """A required typed value is not set on the context.

    Attributes:
        key: The name of the missing :class:`toolctx.ContextKey`.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"The context has no value for key {key!r} and the key has "
            f"no default. Set it on the template context with "
            f"ctx.with_value(KEY, value) before dispatching, or read it "
            f"with ctx.get(KEY) to get None instead of an error."
        )

    def __str__(self) -> str:
        return str(self.args[0])


class ScopeError(ToolctxError, TypeError):
    """The context's runtime scope is missing or of another type.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class ContextKeyConflictError(ToolctxError, TypeError):
    """Two :class:`toolctx.ContextKey` objects share a name, not a type.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class ContextValueTypeError(ToolctxError, TypeError):
    """A value does not match the type its :class:`~toolctx.ContextKey` holds.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class ContextDataError(ToolctxError, ValueError):
    """Context or result data cannot be serialized or read back.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class LostContextWarning(RuntimeWarning):
    """``current_context()`` found no context while a call runs elsewhere.

    Issued only with ``enable_lost_context_diagnostics(warn=True)`` (or
    ``TOOLCTX_DEBUG_LOST_CONTEXT=warn``). Code that legitimately runs
    outside calls (a log listener thread, a server's other requests) warns
    too while a call is running, which is why it is a separate opt-in.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE
