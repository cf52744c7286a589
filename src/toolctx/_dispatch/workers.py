"""A dedicated, bounded worker-thread pool for sync bodies under asyncio.

:func:`submit` runs a sync *body* in a pool thread and returns an
``asyncio`` future of the loop it was called from, settled with the
body's *outcome*: ``(True, value)`` or ``(False, exc)``, exactly what
:func:`toolctx._dispatch.workers.in_thread` returns (``run.thread_result``
turns it back into the value or the raised exception). The handoff is
a bare future: no ``concurrent.futures.Future``, no ``wrap_future``
chain, one ``loop.call_soon_threadsafe`` per call. It replaces
``loop.run_in_executor(None, copy_context().run, in_thread, body)``::

    outcome = await workers.submit(body)
    value = run.thread_result(outcome)

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
- **Cancellation.** As with ``run_in_executor``: a body whose future is
  cancelled (directly, or by cancelling the task awaiting it, or by a
  timeout around it) while it waits for a free worker never runs. Once
  started, it is not stopped (a thread cannot be interrupted): it runs
  to the end and its outcome is dropped. A cancelled or otherwise done
  future is never settled (no ``InvalidStateError`` in the loop).
- **Closed loop.** If the loop is closed before the body ends (an
  ``asyncio.run`` that finished or was interrupted meanwhile), the
  outcome is dropped silently and the worker carries on.
- **Bounded.** Threads start lazily, one when no worker is idle, up to
  ``max_workers`` (default ``min(32, cpu count + 4)``, as for
  ``ThreadPoolExecutor``). Beyond that, work waits in first-in,
  first-out order for the next free worker. A body that blocks holds
  one worker; the others keep serving (if ``max_workers`` bodies block
  for good, later work waits for good, as with ``ThreadPoolExecutor``).
- **Nested.** A body that submits in turn (from an event loop of its
  own in the worker thread) never waits for a free worker: its own
  worker is held while it waits, so at ``max_workers`` it starts one
  more thread, as a fresh loop's default executor would have. No nested
  call can deadlock the pool.
- **Reuse and idle.** A worker is free again before its caller sees the
  outcome, so a caller that awaits one call at a time keeps using one
  thread. Idle workers are reused newest first, so the surplus of a
  burst stays idle and is ended after ``idle_timeout`` seconds (default
  60), even under a steady trickle of calls, by the pool's reaper
  thread (``toolctx-reaper-N``, one while the pool has any worker).
  Workers wait for work without a timeout: no call pays for arming a
  timer. An idle worker keeps nothing of the work it ran alive.
- **Exit and fork.** Workers are daemon threads named
  ``toolctx-worker-N``: the interpreter exits promptly, even while a
  body blocks (it is abandoned, as a daemon thread is). In a child made
  by ``os.fork()`` every pool starts empty (the parent's threads do not
  exist there, and a lock one of them held is replaced); work that was
  queued at the fork is not run in the child.
- **Threads.** :func:`submit` may be called from any number of event
  loops in any number of threads at once; each outcome goes back to the
  loop that submitted it.

:func:`submit` is the process-wide :data:`pool`'s ``submit``; tests and
benchmarks may make a :class:`WorkerPool` of their own. A pool's
``max_workers`` and ``idle_timeout`` attributes may be changed at any
time: ``max_workers`` applies from the next :meth:`WorkerPool.submit`
(running threads are not ended early), ``idle_timeout`` from the
reaper's next check.

Used by :func:`toolctx._dispatch.run.run_async` for sync and
sync-generator tools, and by the streaming shells for each step of a sync
generator, with the call's context bound when they submit.

Example:
    >>> import asyncio
    >>> from toolctx._dispatch import workers
    >>> async def main() -> tuple[bool, object]:
    ...     return await workers.submit(lambda: 6 * 7)
    >>> asyncio.run(main())
    (True, 42)
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
import threading
import time
import weakref

from collections import deque
from collections.abc import Callable
from typing import Any, final


__all__ = ["WorkerPool", "default_max_workers", "pool", "submit"]

Outcome = tuple[bool, object]
"""``(True, value)`` or ``(False, exc)``: what a body returned or raised."""


def in_thread(body: Any) -> tuple[bool, Any]:
    """Run *body* in a worker thread; ``(True, value)`` or ``(False, exc)``.

    Whatever the body raises comes back as a value: a future cannot carry
    ``StopIteration`` (the awaiting task would hang), and a
    ``CancelledError`` raised there must not pass for the awaiting task's
    own cancellation. :func:`thread_result` re-raises it in the caller.
    """
    try:
        return True, body()
    except BaseException as exc:  # noqa: BLE001 - re-raised by thread_result
        return False, exc


_Item = tuple[
    asyncio.AbstractEventLoop,
    asyncio.Future[Outcome],
    contextvars.Context,
    Callable[[], object],
]

DEFAULT_IDLE_TIMEOUT = 60.0
"""Seconds a worker may stay idle before the reaper ends its thread."""

_get_running_loop = asyncio.get_running_loop
_copy_context = contextvars.copy_context
_monotonic = time.monotonic
_numbers = itertools.count(1)  # worker thread names, across all pools
_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()
_local = threading.local()  # .worker: this thread is some pool's worker


def default_max_workers() -> int:
    """``min(32, cpu count + 4)``, ``ThreadPoolExecutor``'s default.

    The cpu count is the one this process may use where Python tells it
    (``os.process_cpu_count``, CPython 3.13+).
    """
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return min(32, (count or 1) + 4)


@final
class _Worker:
    """One worker thread's mailbox.

    ``wake`` is released once per hand-over, under the pool's lock: with
    ``item`` set for the thread to run it, or left ``None`` for the
    thread to exit. The thread waits on it without a timeout (arming a
    timer on every wait would slow every call down); the pool's reaper
    thread ends workers that have been idle too long.
    """

    __slots__ = ("idle_since", "item", "wake")

    def __init__(self, item: _Item) -> None:
        self.item: _Item | None = item
        self.wake = threading.Lock()  # unlocked: the first item is here
        self.idle_since = 0.0


@final
class WorkerPool:
    """A bounded pool of daemon threads that settle asyncio futures.

    See the module docstring for what it promises. Besides its workers,
    the pool runs one timer thread (``toolctx-reaper-N``) while it has
    any worker, to end idle ones.

    Args:
        max_workers: The most threads the pool runs bodies in at once (at
            least 1); ``None`` for :func:`default_max_workers`.
        idle_timeout: Seconds a worker may stay idle before its thread is
            ended (more than 0).

    Raises:
        ValueError: *max_workers* is below 1 or *idle_timeout* not above 0.
    """

    __slots__ = (
        "__weakref__",
        "_backlog",
        "_count",
        "_idle",
        "_lock",
        "_reaping",
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
        # Idle workers, the longest idle first. The most recently idle one
        # is reused first, so that the others stay idle and are ended.
        self._idle: deque[_Worker] = deque()
        self._backlog: deque[_Item] = deque()  # waiting for a free worker
        self._count = 0  # worker threads started and not ended
        self._reaping = False  # a reaper thread runs (or is starting)

    @property
    def threads(self) -> int:
        """How many worker threads the pool has right now."""
        return self._count

    def submit(self, body: Callable[[], object]) -> asyncio.Future[Outcome]:
        """Run ``body()`` in a worker thread; a future of its outcome.

        Call it from the event loop's thread, with the context the body
        must see bound: the context is copied now.

        Returns:
            A future of the running loop, settled (unless it is cancelled
            first) with ``(True, value)`` or ``(False, exc)``. It never
            holds an exception.

        Raises:
            RuntimeError: No event loop is running in this thread, or the
                pool has no thread and cannot start one (the interpreter
                is shutting down, or the system refuses a new thread).
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
            if self._count >= self.max_workers and not _in_worker():
                self._backlog.append(item)
                return future
            self._count += 1
            reaper = not self._reaping
            self._reaping = True
            number = next(_numbers)
        self._start(item, number, reaper=reaper)
        return future

    def _start(self, item: _Item, number: int, *, reaper: bool) -> None:
        """Start a worker thread whose first item is *item*; a reaper too."""
        try:
            _daemon(f"toolctx-worker-{number}", self._work, _Worker(item))
        except RuntimeError:  # no new thread: hand the item on if we can
            with self._lock:
                self._count -= 1
                if reaper:
                    self._reaping = False
                if self._idle:  # one became free meanwhile
                    worker = self._idle.pop()
                    worker.item = item
                    worker.wake.release()
                    return
                if self._count:  # the next free one takes it
                    self._backlog.append(item)
                    return
            raise
        if reaper:
            try:
                _daemon(f"toolctx-reaper-{number}", self._reap)
            except RuntimeError:  # the next thread start tries again
                with self._lock:
                    self._reaping = False

    def _work(self, worker: _Worker) -> None:
        """A worker thread: run what it is handed until it is ended."""
        _local.worker = True
        while self._run(worker, _take(worker)):
            pass

    def _run(self, worker: _Worker, item: _Item | None) -> bool:
        """Run *item*, be free for the next one, then settle its future.

        Free first: a caller that awaits the outcome and submits again
        finds this worker idle instead of starting another thread.

        Returns:
            ``False`` when the worker is handed no item: it is ended.
        """
        if item is None:
            return False
        loop, future, context, body = item
        # Cancelled while it waited for a free worker: it never starts, as
        # with run_in_executor. Cancelled from now on, it runs to the end.
        if future.cancelled():
            self._free(worker)
            return True
        outcome = context.run(in_thread, body)
        self._free(worker)
        try:  # noqa: SIM105 - suppress() would cost a context manager per call
            loop.call_soon_threadsafe(_settle, future, outcome)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for the outcome
        return True

    def _free(self, worker: _Worker) -> None:
        """Hand *worker* the next queued item, or make it idle."""
        with self._lock:
            if self._backlog:
                worker.item = self._backlog.popleft()
                worker.wake.release()
            else:
                worker.idle_since = _monotonic()
                self._idle.append(worker)

    def _reap(self) -> None:
        """The timer thread: end workers idle for ``idle_timeout``.

        It ends itself once the pool has no worker left.
        """
        delay: float | None = self.idle_timeout
        while delay is not None:
            time.sleep(delay)
            with self._lock:
                delay = self._prune(_monotonic())
                if delay is None:
                    self._reaping = False

    def _prune(self, now: float) -> float | None:
        """End the workers idle too long (lock held); seconds to the next.

        ``None`` when the pool has no worker left.
        """
        timeout = self.idle_timeout
        idle = self._idle
        while idle and now - idle[0].idle_since >= timeout:
            worker = idle.popleft()
            self._count -= 1
            worker.wake.release()  # with no item: its thread ends
        if not self._count:
            return None
        return idle[0].idle_since + timeout - now if idle else timeout


def _daemon(name: str, target: Callable[..., None], *args: object) -> None:
    """Start a daemon thread *name* running ``target(*args)``."""
    threading.Thread(target=target, args=args, name=name, daemon=True).start()


def _in_worker() -> bool:
    """Whether this thread is a pool's worker (a body submits, nested)."""
    return getattr(_local, "worker", False) is True


def _take(worker: _Worker) -> _Item | None:
    """Wait until *worker* is handed an item (or ``None``); take it."""
    worker.wake.acquire()
    item, worker.item = worker.item, None
    return item


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
