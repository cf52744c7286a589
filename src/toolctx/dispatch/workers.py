"""A dedicated, bounded worker-thread pool for sync bodies under asyncio.

:func:`submit` runs a sync *body* in a pool thread and returns an
``asyncio`` future of the loop it was called from, settled with the
body's *outcome*: ``(True, value)`` or ``(False, exc)``, exactly what
:func:`toolctx._calls.in_thread` returns (``_calls.thread_result``
turns it back into the value or the raised exception). The handoff is
a bare future: no ``concurrent.futures.Future``, no ``wrap_future``
chain, one ``loop.call_soon_threadsafe`` per call. It replaces
``loop.run_in_executor(None, copy_context().run, in_thread, body)``::

    outcome = await _workers.submit(body)
    value = _calls.thread_result(outcome)

Promises:

- **Context.** The caller's context is copied when :func:`submit` is
  called (bind the call's :class:`~toolctx.ExecutionContext` first) and
  the body runs in that copy: it sees every context variable the caller
  had bound, and what it binds stays in the copy (nothing leaks back to
  the caller, to the next body or to the worker thread).
- **Outcomes only.** Whatever the body raises, ``BaseException``
  included (``StopIteration``, ``CancelledError``, ``SystemExit``,
  ``KeyboardInterrupt``), comes back as ``(False, exc)``: the future
  never carries an exception, so a body's ``CancelledError`` cannot
  pass for the caller's own and nothing reaches the event loop.
- **Cancellation.** Cancelling the future (or the task awaiting it)
  does not stop the body: a thread cannot be interrupted, so it runs to
  the end and its outcome is dropped. A cancelled or otherwise done
  future is never settled (no ``InvalidStateError`` in the loop).
- **Closed loop.** If the loop is closed before the body ends (an
  ``asyncio.run`` that finished or was interrupted meanwhile), the
  outcome is dropped silently and the worker carries on.
- **Bounded.** Threads start lazily, one when no worker is idle, up to
  ``max_workers`` (default ``min(32, cpu count + 4)``, as for
  ``ThreadPoolExecutor``). Beyond that, work waits in first-in,
  first-out order for the next free worker. A body that blocks holds
  one worker; the others keep serving. Idle workers are reused newest
  first, so the surplus of a burst stays idle and exits after
  ``idle_timeout`` seconds (default 60) even under a steady trickle.
- **Exit and fork.** Workers are daemon threads named
  ``toolctx-worker-N``: the interpreter exits promptly, even while a
  body blocks (it is abandoned, as a daemon thread is). In a child made
  by ``os.fork()`` every pool starts empty (the parent's threads do not
  exist there); work that was queued at the fork is not run in the
  child.
- **Threads.** :func:`submit` may be called from any number of event
  loops in any number of threads at once; each outcome goes back to the
  loop that submitted it.

:func:`submit` uses the process-wide :data:`pool`; tests and benchmarks
may make a :class:`WorkerPool` of their own, and its ``max_workers``
and ``idle_timeout`` attributes may be changed at any time (the new
values apply from the next thread start or idle wait).

Example:
    >>> import asyncio
    >>> from toolctx import _workers
    >>> async def main() -> tuple[bool, object]:
    ...     return await _workers.submit(lambda: 6 * 7)
    >>> asyncio.run(main())
    (True, 42)
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
import threading
import weakref

from collections import deque
from collections.abc import Callable
from typing import final

from toolctx.dispatch.steps import in_thread


__all__ = ["WorkerPool", "default_max_workers", "pool", "submit"]

Outcome = tuple[bool, object]
"""``(True, value)`` or ``(False, exc)``: what a body returned or raised."""

_Item = tuple[
    asyncio.AbstractEventLoop,
    asyncio.Future[Outcome],
    contextvars.Context,
    Callable[[], object],
]

DEFAULT_IDLE_TIMEOUT = 60.0
"""Seconds an idle worker waits for work before its thread exits."""

_get_running_loop = asyncio.get_running_loop
_copy_context = contextvars.copy_context
_numbers = itertools.count(1)  # worker thread names, across all pools
_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


def default_max_workers() -> int:
    """``min(32, cpu count + 4)``, ``ThreadPoolExecutor``'s default.

    The cpu count is the one this process may use where Python tells it
    (``os.process_cpu_count``, CPython 3.13+).
    """
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return min(32, (count or 1) + 4)


@final
class _Worker:
    """One worker's mailbox: a lock released to hand it an item."""

    __slots__ = ("item", "wake")

    def __init__(self) -> None:
        self.item: _Item | None = None
        self.wake = threading.Lock()
        self.wake.acquire()


@final
class WorkerPool:
    """A bounded pool of daemon threads that settle asyncio futures.

    See the module docstring for what it promises.

    Args:
        max_workers: The most threads the pool runs at once (at least 1);
            ``None`` for :func:`default_max_workers`.
        idle_timeout: Seconds an idle thread waits for work before it
            exits (more than 0).

    Raises:
        ValueError: *max_workers* is below 1 or *idle_timeout* not above 0.
    """

    __slots__ = (
        "__weakref__",
        "_backlog",
        "_count",
        "_idle",
        "_lock",
        "idle_timeout",
        "max_workers",
    )

    def __init__(
        self,
        max_workers: int | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        if max_workers is None:
            max_workers = default_max_workers()
        if max_workers < 1:
            msg = f"max_workers must be at least 1, got {max_workers}."
            raise ValueError(msg)
        if not idle_timeout > 0:
            msg = f"idle_timeout must be above 0 seconds, got {idle_timeout}."
            raise ValueError(msg)
        self.max_workers = max_workers
        self.idle_timeout = idle_timeout
        self._reset()
        _pools.add(self)

    def _reset(self) -> None:
        """Forget every thread and queued item (a new or forked pool)."""
        self._lock = threading.Lock()
        # Idle workers, the most recently idle last: reused first, so the
        # others stay idle long enough to exit.
        self._idle: list[_Worker] = []
        self._backlog: deque[_Item] = deque()
        self._count = 0  # threads started and not exited

    @property
    def threads(self) -> int:
        """How many worker threads the pool has right now."""
        return self._count

    def submit(self, body: Callable[[], object]) -> asyncio.Future[Outcome]:
        """Run ``body()`` in a worker thread; a future of its outcome.

        Call it from the event loop's thread, with the context the body
        must see bound: the context is copied now.

        Returns:
            A future of the running loop, settled (unless cancelled
            first) with ``(True, value)`` or ``(False, exc)``. It never
            holds an exception.

        Raises:
            RuntimeError: No event loop is running in this thread, or the
                pool has no thread and none can be started (the
                interpreter is shutting down, or the system refuses a
                new thread).
        """
        loop = _get_running_loop()
        future: asyncio.Future[Outcome] = loop.create_future()
        item: _Item = (loop, future, _copy_context(), body)
        with self._lock:
            if self._idle:
                worker = self._idle.pop()
                worker.item = item
                worker.wake.release()
                return future
            if self._count >= self.max_workers:
                self._backlog.append(item)
                return future
            self._count += 1
            name = f"toolctx-worker-{next(_numbers)}"
        self._start(item, name)
        return future

    def _start(self, item: _Item, name: str) -> None:
        """Start a worker thread whose first item is *item*."""
        thread = threading.Thread(
            target=self._work, args=(item,), name=name, daemon=True
        )
        try:
            thread.start()
        except BaseException:
            with self._lock:
                self._count -= 1
                if self._idle:
                    worker = self._idle.pop()
                    worker.item = item
                    worker.wake.release()
                    return
                if self._count:
                    self._backlog.append(item)
                    return
            raise

    def _work(self, item: _Item | None) -> None:
        """A worker thread: run items until idle for ``idle_timeout``."""
        worker = _Worker()
        while item is not None:
            _run(item)
            item = None  # nothing of it stays alive while the worker waits
            item = self._next(worker)

    def _next(self, worker: _Worker) -> _Item | None:
        """The next item for *worker*; ``None`` once it has left the pool."""
        with self._lock:
            if self._backlog:
                return self._backlog.popleft()
            self._idle.append(worker)
        if not worker.wake.acquire(timeout=self.idle_timeout):
            with self._lock:
                if worker.item is None:  # still idle: leave
                    self._idle.remove(worker)
                    self._count -= 1
                    return None
            # Handed an item as the wait ran out: its release is due.
            worker.wake.acquire()
        item, worker.item = worker.item, None
        return item


def _run(item: _Item) -> None:
    """Run one item's body in its context; send the outcome to its loop."""
    loop, future, context, body = item
    outcome = context.run(in_thread, body)
    try:  # noqa: SIM105 - suppress() would cost a context manager per call
        loop.call_soon_threadsafe(_settle, future, outcome)
    except RuntimeError:
        pass  # the loop is closed: nobody waits for the outcome


def _settle(future: asyncio.Future[Outcome], outcome: Outcome) -> None:
    """In the loop: settle *future* unless its caller gave up on it."""
    if not future.done():
        future.set_result(outcome)


def _after_fork_in_child() -> None:
    for each in _pools:
        each._reset()  # noqa: SLF001 - the module's own class


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)

pool = WorkerPool()
"""The process-wide pool :func:`submit` uses."""

submit = pool.submit
