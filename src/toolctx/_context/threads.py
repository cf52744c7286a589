"""Carry the running call's context into threads and thread pools.

asyncio copies the context for you (``create_task``, ``gather``,
``asyncio.to_thread``); ``threading.Thread``, ``ThreadPoolExecutor.submit``
and ``loop.run_in_executor`` do not. The helpers here close that gap:
:func:`bind_context` for a single callable, :class:`ContextThreadPoolExecutor`
and :class:`ContextExecutor` for pools.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import functools
import inspect

from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar, cast, final


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

_PROCESS_HINT = (
    "A contextvars context (and the ExecutionContext's runtime scope) "
    "cannot cross a process or interpreter boundary. Run the call in the "
    "worker with the Dispatcher's process executor, or send the context "
    "as data: ctx.to_dict() here and ExecutionContext.from_dict(data) "
    "in the worker, bound there with toolctx.use_context()."
)


def bind_context(fn: Callable[P, R]) -> Callable[P, R]:
    """Return *fn* bound to a copy of the current context.

    The copy is taken now, when ``bind_context`` is called; every call of
    the returned function runs *fn* in its own fresh copy of it. So the
    result can be handed to ``threading.Thread(target=...)``, a plain
    executor or any callback API, and *fn* sees the
    :class:`ExecutionContext` (and every other context variable) of the
    code that bound it. Concurrent calls from several threads are safe,
    and whatever *fn* binds stays inside that one call: nothing leaks
    back to the caller, to the binding code or to other calls.

    Args:
        fn: A synchronous callable. Coroutine functions are refused:
            asyncio tasks already copy the context, and a coroutine
            created here would run later in another context anyway.

    Returns:
        A callable with *fn*'s signature (``functools.wraps`` keeps its
        name, docstring and ``__wrapped__``).

    Raises:
        TypeError: *fn* is not callable, or is a coroutine function.

    Example:
        >>> import threading
        >>> from toolctx import ExecutionContext, execution_context
        >>> from toolctx import use_context
        >>> seen = []
        >>> def work() -> None:
        ...     seen.append(execution_context().user_id)
        >>> with use_context(ExecutionContext(user_id="ada")):
        ...     thread = threading.Thread(target=bind_context(work))
        ...     thread.start()
        >>> thread.join()
        >>> seen
        ['ada']

    .. versionadded:: 0.1.0
    """
    if not callable(cast("object", fn)):
        msg = f"bind_context() takes a callable, got {type(fn).__name__}."
        raise TypeError(msg)
    if inspect.iscoroutinefunction(fn):
        msg = (
            f"bind_context() takes a sync function, got coroutine function "
            f"{getattr(fn, '__qualname__', fn)!r}. asyncio tasks copy the "
            "context already: `await fn()`, asyncio.create_task(fn()) and "
            "asyncio.gather() all see the running call's context."
        )
        raise TypeError(msg)
    captured = contextvars.copy_context()

    @functools.wraps(fn)
    def bound(*args: P.args, **kwargs: P.kwargs) -> R:
        # A Context can be entered by one thread at a time: each call gets
        # its own copy (cheap: the underlying mapping is shared).
        return captured.copy().run(fn, *args, **kwargs)

    return bound


def _run(
    ctx: contextvars.Context,
    fn: Callable[..., T],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> T:
    return ctx.run(fn, *args, **kwargs)


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose tasks see the submitter's context.

    Each :meth:`submit` (and so each item of :meth:`map`) takes a copy of
    the submitting code's context at submit time and runs the task in it:
    the task sees the running call's :class:`ExecutionContext`, and
    whatever the task binds is gone when it ends, so it can never leak
    into the next task run by the same worker thread. Everything else
    (constructor arguments, ``shutdown``, use as a context manager) is
    ``ThreadPoolExecutor``'s.

    Set it as an event loop's default executor to make
    ``loop.run_in_executor(None, fn)`` carry the context too.

    Example:
        >>> from toolctx import ExecutionContext, execution_context
        >>> from toolctx import use_context
        >>> def who() -> str | None:
        ...     return execution_context().user_id
        >>> with ContextThreadPoolExecutor(max_workers=2) as pool:
        ...     with use_context(ExecutionContext(user_id="ada")):
        ...         future = pool.submit(who)
        ...     future.result()
        'ada'

    .. versionadded:: 0.1.0
    """

    def submit(
        self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)`` in a copy of the current context.

        Returns:
            The task's :class:`~concurrent.futures.Future`.

        .. versionadded:: 0.1.0
        """
        return super().submit(
            _run, contextvars.copy_context(), fn, args, kwargs
        )


@final
class ContextExecutor(Executor):
    """Wrap a thread-based executor so its tasks see the submitter's context.

    Like :class:`ContextThreadPoolExecutor`, for an executor you already
    have (a library's pool, a custom thread executor). :meth:`submit`
    and ``map`` (which submits through it) run each task in a copy of the
    context taken at submit time; :meth:`shutdown` and ``with`` shut the
    wrapped executor down.

    Args:
        executor: Any ``concurrent.futures.Executor`` that runs tasks in
            threads of this process.

    Raises:
        TypeError: *executor* is not an ``Executor``, or runs tasks in
            other processes or interpreters (``ProcessPoolExecutor``,
            ``InterpreterPoolExecutor``), where a context cannot go.

    Example:
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> from toolctx import ExecutionContext, execution_context
        >>> from toolctx import use_context
        >>> def who(greeting: str) -> str:
        ...     return f"{greeting}, {execution_context().user_id}"
        >>> with ContextExecutor(ThreadPoolExecutor(1)) as pool:
        ...     with use_context(ExecutionContext(user_id="ada")):
        ...         results = pool.map(who, ["hi", "bye"])
        ...     list(results)
        ['hi, ada', 'bye, ada']

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_executor",)

    def __init__(self, executor: Executor) -> None:
        if not isinstance(cast("object", executor), Executor):
            msg = (
                "ContextExecutor() takes a concurrent.futures.Executor, got "
                f"{type(executor).__name__}."
            )
            raise TypeError(msg)
        if isinstance(executor, _cross_process_executors()):
            msg = (
                f"ContextExecutor() cannot wrap a "
                f"{type(executor).__name__}: it runs tasks outside this "
                f"process's threads. {_PROCESS_HINT}"
            )
            raise TypeError(msg)
        self._executor = executor

    @property
    def executor(self) -> Executor:
        """The wrapped executor.

        .. versionadded:: 0.1.0
        """
        return self._executor

    def submit(
        self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)`` in a copy of the current context.

        Returns:
            The wrapped executor's :class:`~concurrent.futures.Future`.

        .. versionadded:: 0.1.0
        """
        return self._executor.submit(
            _run, contextvars.copy_context(), fn, args, kwargs
        )

    def shutdown(
        self, wait: bool = True, *, cancel_futures: bool = False
    ) -> None:
        """Shut the wrapped executor down.

        .. versionadded:: 0.1.0
        """
        self._executor.shutdown(wait=wait, cancel_futures=cancel_futures)

    def __repr__(self) -> str:
        return f"<toolctx.ContextExecutor({self._executor!r})>"


def _cross_process_executors() -> tuple[type[Executor], ...]:
    kinds: list[type[Executor]] = [concurrent.futures.ProcessPoolExecutor]
    interpreters = getattr(concurrent.futures, "InterpreterPoolExecutor", None)
    if isinstance(interpreters, type):  # Python 3.14+
        kinds.append(cast("type[Executor]", interpreters))
    return tuple(kinds)
