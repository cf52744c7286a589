"""Streaming tools: chunks with the tool's own context on every resume."""

from __future__ import annotations

import asyncio
import threading

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import closing

import pytest

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolChunk,
    ToolResult,
    current_context,
    execution_context,
    publish,
    set_state,
    use_context,
)
from toolctx.interceptors import AuditLog, MemoryAuditSink


@pytest.fixture(name="registry")
def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def count(n: int) -> Iterator[dict[str, object]]:
        """Yield n chunks, each reporting the context it saw."""
        for i in range(n):
            ctx = execution_context()
            yield {"i": i, "user": ctx.user_id, "inv": ctx.invocation_id}
        set_state("counted", n)

    @registry.tool
    async def acount(n: int) -> AsyncIterator[dict[str, object]]:
        """Yield n chunks asynchronously, awaiting between them."""
        for i in range(n):
            await asyncio.sleep(0)
            ctx = execution_context()
            yield {"i": i, "user": ctx.user_id, "inv": ctx.invocation_id}
        set_state("counted", n)

    @registry.tool
    def explode(after: int) -> Iterator[int]:
        """Yield some chunks, then fail."""
        yield from range(after)
        raise RuntimeError("stream broke")

    @registry.tool
    def plain() -> str:
        """Not a stream."""
        return "done"

    return registry


def _split(
    items: list[ToolChunk | ToolResult],
) -> tuple[list[ToolChunk], ToolResult]:
    *chunks, result = items
    assert all(isinstance(c, ToolChunk) for c in chunks)
    assert isinstance(result, ToolResult)
    return chunks, result  # type: ignore[return-value]


class TestSyncStream:
    """Dispatcher.stream()."""

    def test_chunks_then_result(self, registry: Registry) -> None:
        """Chunks come first, in order, then a result listing them all."""
        items = list(
            Dispatcher(registry).stream(
                ToolCall("count", '{"n": 3}', "c1"),
                ExecutionContext(user_id="ada"),
            )
        )
        chunks, result = _split(items)
        assert [c.index for c in chunks] == [0, 1, 2]
        assert all(c.data["user"] == "ada" for c in chunks)
        assert {c.data["inv"] for c in chunks} == {result.invocation_id}
        assert result.output == [c.data for c in chunks]
        assert result.call_id == "c1"
        assert result.state_changes == {"counted": 3}

    def test_consumer_context_untouched_between_chunks(
        self, registry: Registry
    ) -> None:
        """Between chunks the consumer sees its own context, not the tool's."""
        outer = ExecutionContext(user_id="consumer")
        seen = []
        with use_context(outer):
            for _item in Dispatcher(registry).stream(
                ToolCall("count", '{"n": 3}'), ExecutionContext(user_id="t")
            ):
                seen.append(current_context())
        assert all(s is outer for s in seen)

    def test_dispatch_collects_a_stream(self, registry: Registry) -> None:
        """dispatch() of a generator tool returns every chunk as output."""
        result = Dispatcher(registry).dispatch(ToolCall("count", '{"n": 2}'))
        assert [c["i"] for c in result.output] == [0, 1]

    def test_failure_mid_stream(self, registry: Registry) -> None:
        """A tool failing mid-stream ends with an error result."""
        items = list(
            Dispatcher(registry).stream(ToolCall("explode", '{"after": 2}'))
        )
        chunks, result = _split(items)
        assert [c.data for c in chunks] == [0, 1]
        assert result.is_error
        assert "stream broke" in (result.error or "")

    def test_early_close_records_cancelled(self, registry: Registry) -> None:
        """Breaking out early closes the tool and records a cancelled call."""
        session = Session("s")
        stream = Dispatcher(registry).stream(
            ToolCall("count", '{"n": 10}'), session
        )
        for item in stream:
            assert isinstance(item, ToolChunk)
            break
        stream.close()  # type: ignore[attr-defined]
        assert current_context() is None
        assert len(session.results) == 1
        cancelled = session.results[0]
        assert cancelled.is_error
        assert "closed before it finished" in (cancelled.error or "")
        assert session.state == {}

    def test_async_generator_from_sync_stream(
        self, registry: Registry
    ) -> None:
        """stream() also drives an async generator tool outside a loop."""
        items = list(
            Dispatcher(registry).stream(ToolCall("acount", '{"n": 2}'))
        )
        chunks, result = _split(items)
        assert len(chunks) == 2
        assert not result.is_error

    def test_non_stream_tool(self, registry: Registry) -> None:
        """A plain tool streams just its result."""
        items = list(Dispatcher(registry).stream(ToolCall("plain")))
        assert len(items) == 1
        assert isinstance(items[0], ToolResult)
        assert items[0].output == "done"

    def test_every_stream_can_be_closed(self, registry: Registry) -> None:
        """stream() of any tool can be closed: contextlib.closing works."""
        for name in ("plain", "count", "missing"):
            call = ToolCall(name, '{"n": 1}' if name == "count" else None)
            with closing(Dispatcher(registry).stream(call)) as stream:
                items = list(stream)
            assert isinstance(items[-1], ToolResult)
            assert items[-1].is_error == (name == "missing")

    def test_invalid_arguments(self, registry: Registry) -> None:
        """Bad arguments give one error result and no chunks, as dispatch.

        The tool never ran: the result's output is None, not an empty list.
        """
        dispatcher = Dispatcher(registry)
        call = ToolCall("count", '{"n": "x"}')
        items = list(dispatcher.stream(call))
        assert len(items) == 1
        assert isinstance(items[0], ToolResult)
        assert items[0].is_error
        expected = dispatcher.dispatch(call)
        assert (items[0].output, items[0].error) == (None, expected.error)


class TestAsyncStream:
    """Dispatcher.astream()."""

    def test_async_chunks(self, registry: Registry) -> None:
        """An async generator tool streams with its own context."""

        async def main() -> list[ToolChunk | ToolResult]:
            return [
                item
                async for item in Dispatcher(registry).astream(
                    ToolCall("acount", '{"n": 3}'),
                    ExecutionContext(user_id="ada"),
                )
            ]

        chunks, result = _split(asyncio.run(main()))
        assert [c.data["user"] for c in chunks] == ["ada"] * 3
        assert result.state_changes == {"counted": 3}

    def test_sync_generator_runs_in_threads(self, registry: Registry) -> None:
        """A sync generator's steps run off the loop and see the context."""

        @registry.tool
        def threads() -> Iterator[int]:
            """Report the thread of each step."""
            for _ in range(2):
                assert execution_context().tool_name == "threads"
                yield threading.get_ident()

        async def main() -> tuple[list[ToolChunk | ToolResult], int]:
            items = [
                i
                async for i in Dispatcher(registry).astream(
                    ToolCall("threads")
                )
            ]
            return items, threading.get_ident()

        items, loop_thread = asyncio.run(main())
        chunks, result = _split(items)
        assert not result.is_error
        assert all(c.data != loop_thread for c in chunks)

    def test_consumer_in_other_tasks(self, registry: Registry) -> None:
        """Resumed from tasks with other contexts bound, the tool sees its own."""

        async def main() -> list[ToolChunk | ToolResult]:
            stream = Dispatcher(registry).astream(
                ToolCall("acount", '{"n": 4}'),
                ExecutionContext(user_id="tool"),
            )
            items: list[ToolChunk | ToolResult] = []

            async def pull(name: str) -> None:
                with use_context(ExecutionContext(user_id=name)):
                    items.append(await stream.__anext__())
                    assert execution_context().user_id == name

            for n in range(5):
                await asyncio.create_task(pull(f"consumer-{n}"))
            return items

        chunks, result = _split(asyncio.run(main()))
        assert [c.data["user"] for c in chunks] == ["tool"] * 4
        assert not result.is_error

    def test_aclose_records_cancelled(self, registry: Registry) -> None:
        """aclose() closes the tool's generator and records a cancelled call."""
        session = Session("s")
        closed: list[str | None] = []

        @registry.tool
        async def forever() -> AsyncIterator[int]:
            """Stream until closed."""
            try:
                i = 0
                while True:
                    await asyncio.sleep(0)
                    yield i
                    i += 1
            finally:
                closed.append(execution_context().tool_name)

        async def main() -> None:
            stream = Dispatcher(registry).astream(ToolCall("forever"), session)
            await stream.__anext__()
            await stream.__anext__()
            await stream.aclose()  # type: ignore[attr-defined]
            assert current_context() is None

        asyncio.run(main())
        assert closed == ["forever"]
        assert session.results[-1].is_error
        assert session.results[-1].output == [0, 1]

    def test_adispatch_collects_async_stream(self, registry: Registry) -> None:
        """adispatch() of an async generator tool returns all chunks."""
        result = asyncio.run(
            Dispatcher(registry).adispatch(ToolCall("acount", '{"n": 2}'))
        )
        assert [c["i"] for c in result.output] == [0, 1]


# -- failures, cleanup and cancellation on both stream paths (issue 9) ------


class _UnreadableError(Exception):
    """An exception whose message cannot be built."""

    def __str__(self) -> str:
        msg = "no message for you"
        raise ValueError(msg)


def _fail(kind: str) -> None:
    """Raise what a careless tool author's code might raise."""
    if kind == "system_exit":
        raise SystemExit(2)  # argparse does, on bad input
    if kind == "stop_iteration":
        next(iter(()))  # next() on an empty iterator
    if kind == "cancelled":
        raise asyncio.CancelledError
    if kind == "unreadable":
        raise _UnreadableError
    raise RuntimeError(kind)


async def _afail(kind: str) -> None:
    """:func:`_fail`, but a CancelledError comes from an awaited future."""
    if kind == "cancelled":
        # Someone else cancelled the future the tool awaits.
        future = asyncio.get_running_loop().create_future()
        future.cancel()
        await future
    _fail(kind)


@pytest.fixture(name="failing")
def _failing() -> Registry:
    registry = Registry()

    @registry.tool
    def fails(kind: str) -> Iterator[int]:
        """Yield one chunk, then raise as *kind* says."""
        yield 0
        _fail(kind)

    @registry.tool
    async def afails(kind: str) -> AsyncIterator[int]:
        """Yield one chunk, then raise as *kind* says."""
        yield 0
        await _afail(kind)

    @registry.tool
    def cleanup_fails(kind: str) -> Iterator[int]:
        """Yield until closed; the cleanup raises as *kind* says."""
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            _fail(kind)

    @registry.tool
    async def acleanup_fails(kind: str) -> AsyncIterator[int]:
        """Yield until closed; the cleanup awaits, then raises."""
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            await asyncio.sleep(0)
            await _afail(kind)

    @registry.tool
    def unserializable() -> Iterator[object]:
        """Yield a chunk that has no JSON form, then note the cleanup."""
        try:
            yield 0
            yield object()
        finally:
            publish("cleaned_up", execution_context().tool_name)

    return registry


def _audited(registry: Registry) -> tuple[Dispatcher, MemoryAuditSink]:
    sink = MemoryAuditSink()
    return Dispatcher(registry, interceptors=[AuditLog(sink)]), sink


def _stream_all(
    dispatcher: Dispatcher, call: ToolCall, session: Session
) -> list[ToolChunk | ToolResult]:
    return list(dispatcher.stream(call, session))


def _astream_all(
    dispatcher: Dispatcher, call: ToolCall, session: Session
) -> list[ToolChunk | ToolResult]:
    async def collect() -> list[ToolChunk | ToolResult]:
        return [item async for item in dispatcher.astream(call, session)]

    # Bounded: a stream that hangs fails the test instead of the run.
    return asyncio.run(asyncio.wait_for(collect(), 60))


_PATHS: dict[
    str,
    Callable[[Dispatcher, ToolCall, Session], list[ToolChunk | ToolResult]],
] = {"stream": _stream_all, "astream": _astream_all}


class TestToolFailuresMidStream:
    """What a streaming tool raises ends its stream with an error result."""

    @pytest.mark.parametrize("path", ["stream", "astream"])
    @pytest.mark.parametrize("tool", ["fails", "afails"])
    @pytest.mark.parametrize(
        ("kind", "expected"),
        [
            ("system_exit", "SystemExit: 2"),
            ("stop_iteration", "raised StopIteration"),
            ("cancelled", "CancelledError"),
            ("unreadable", "_UnreadableError (its message could not be read)"),
        ],
    )
    def test_error_result_like_dispatch(
        self,
        failing: Registry,
        path: str,
        tool: str,
        kind: str,
        expected: str,
    ) -> None:
        """Tool failures end the stream with the error result dispatch gives.

        A tool's SystemExit, a StopIteration inside it, a CancelledError it
        raised itself (its consumer was not cancelled) and an exception
        whose message cannot be read: each becomes the stream's final
        error result, promptly. The chunks so far are kept, the session and
        the audit log record the failure, and nothing escapes to the
        consumer or stays bound.
        """
        dispatcher, sink = _audited(failing)
        session = Session("s")
        call = ToolCall(tool, f'{{"kind": "{kind}"}}', "c1")
        chunks, result = _split(_PATHS[path](dispatcher, call, session))
        assert [c.data for c in chunks] == [0]
        assert result.is_error
        assert expected in (result.error or "")
        assert result.output == [0]
        assert session.results == [result]
        assert [(r.outcome, r.error) for r in sink.records] == [
            ("error", result.error)
        ]
        assert current_context() is None
        again = dispatcher.dispatch(ToolCall(tool, '{"kind": "other"}'))
        assert again.is_error  # the dispatcher keeps working
        assert dispatcher.dispatch(call).error == result.error

    def test_unserializable_chunk_closes_the_tool_first(
        self, failing: Registry
    ) -> None:
        """A chunk with no JSON form fails the stream, the tool closed first.

        The tool's generator is closed before the result is built: its
        cleanup runs with its context bound, and what it publishes there
        is on the result.
        """
        for path in ("stream", "astream"):
            session = Session("s")
            call = ToolCall("unserializable", None, "c1")
            chunks, result = _split(
                _PATHS[path](Dispatcher(failing), call, session)
            )
            assert [c.data for c in chunks] == [0]
            assert result.is_error
            assert "to JSON" in (result.error or "")
            assert result.metadata == {"cleaned_up": "unserializable"}
            assert session.results == [result]


class TestCleanupFailureOnEarlyClose:
    """A tool whose cleanup raises when the consumer stops early."""

    @pytest.mark.parametrize("tool", ["cleanup_fails", "acleanup_fails"])
    @pytest.mark.parametrize(
        ("kind", "expected"),
        [("broken", "RuntimeError: broken"), ("system_exit", "SystemExit")],
    )
    def test_close_records_the_failure(
        self, failing: Registry, tool: str, kind: str, expected: str
    ) -> None:
        """close() records the cleanup's failure instead of raising it.

        The consumer asked to stop; it is not handed the tool's exception.
        The call is recorded as the tool's failure, with the chunks so far,
        in the session and the audit log, as it would be had the stream run
        to its end.
        """
        dispatcher, sink = _audited(failing)
        session = Session("s")
        stream = dispatcher.stream(
            ToolCall(tool, f'{{"kind": "{kind}"}}', "c1"), session
        )
        assert isinstance(next(stream), ToolChunk)
        assert isinstance(next(stream), ToolChunk)
        stream.close()  # type: ignore[attr-defined]
        assert current_context() is None
        [result] = session.results
        assert result.is_error
        assert f"Tool {tool!r} failed: {expected}" in (result.error or "")
        assert result.output == [0, 1]
        assert session.state == {}
        assert [(r.outcome, r.error) for r in sink.records] == [
            ("error", result.error)
        ]

    @pytest.mark.parametrize("tool", ["cleanup_fails", "acleanup_fails"])
    @pytest.mark.parametrize(
        ("kind", "expected"),
        [
            ("broken", "RuntimeError: broken"),
            ("system_exit", "SystemExit"),
            ("cancelled", "CancelledError"),
        ],
    )
    def test_aclose_records_the_failure(
        self, failing: Registry, tool: str, kind: str, expected: str
    ) -> None:
        """aclose() records the cleanup's failure instead of raising it.

        The session and the audit log see the tool's failure, also for a
        sync generator (closed in its worker thread) and for a
        CancelledError the cleanup raised itself: the consumer was not
        cancelled.
        """
        dispatcher, sink = _audited(failing)
        session = Session("s")

        async def main() -> None:
            stream = dispatcher.astream(
                ToolCall(tool, f'{{"kind": "{kind}"}}', "c1"), session
            )
            assert isinstance(await stream.__anext__(), ToolChunk)
            assert isinstance(await stream.__anext__(), ToolChunk)
            await stream.aclose()  # type: ignore[attr-defined]
            assert current_context() is None

        asyncio.run(asyncio.wait_for(main(), 60))
        [result] = session.results
        assert result.is_error
        assert f"Tool {tool!r} failed: {expected}" in (result.error or "")
        assert result.output == [0, 1]
        assert [(r.outcome, r.error) for r in sink.records] == [
            ("error", result.error)
        ]


class TestConsumerCancelled:
    """Cancelling the task that iterates astream()."""

    def test_during_a_worker_thread_step(self, registry: Registry) -> None:
        """Cancelled during a worker-thread step: CancelledError, cleaned up.

        The consumer gets CancelledError once the step running in the
        thread returns (a thread cannot be interrupted). By then the
        generator has been closed with its context bound and a cancelled
        call recorded in the session and the audit log, holding only the
        chunks the consumer got.
        """
        started = threading.Event()
        release = threading.Event()
        closed: list[str | None] = []
        seen: list[tuple[list[str | None], int]] = []

        @registry.tool
        def slow() -> Iterator[int]:
            """Block in the second step until released."""
            try:
                yield 0
                started.set()
                release.wait(60)
                yield 1
                yield 2
            finally:
                closed.append(execution_context().tool_name)

        dispatcher, sink = _audited(registry)
        session = Session("s")

        async def main() -> None:
            stream = dispatcher.astream(ToolCall("slow", None, "c1"), session)

            async def consume() -> list[ToolChunk | ToolResult]:
                try:
                    return [item async for item in stream]
                except asyncio.CancelledError:
                    seen.append((list(closed), len(session.results)))
                    raise

            task = asyncio.create_task(consume())
            try:
                assert await asyncio.to_thread(started.wait, 60)
                task.cancel()
                for _ in range(20):
                    await asyncio.sleep(0)
                assert not task.done()  # waits for the step in the thread
            finally:
                release.set()
            done, _ = await asyncio.wait({task}, timeout=60)
            assert task in done
            assert task.cancelled()
            assert current_context() is None

        asyncio.run(main())
        # Closed and recorded before the consumer saw its cancellation.
        assert seen == [(["slow"], 1)]
        [result] = session.results
        assert result.is_error
        assert "closed before it finished" in (result.error or "")
        assert result.output == [0]
        assert session.state == {}
        assert [(r.outcome, r.error) for r in sink.records] == [
            ("error", result.error)
        ]

    def test_during_an_async_step(self, registry: Registry) -> None:
        """Cancelled during an async step: the tool is cancelled, cleaned up.

        The tool gets the cancellation; its cleanup runs (and may await)
        with its context bound, and a cancelled call is recorded in the
        session and the audit log, all before the consumer sees its
        CancelledError.
        """
        closed: list[str | None] = []
        seen: list[tuple[list[str | None], int]] = []
        started: list[asyncio.Event] = []

        @registry.tool
        async def waits() -> AsyncIterator[int]:
            """Wait forever in the second step."""
            try:
                yield 0
                started[0].set()
                await asyncio.Event().wait()
                yield 1
            finally:
                await asyncio.sleep(0)
                closed.append(execution_context().tool_name)

        dispatcher, sink = _audited(registry)
        session = Session("s")

        async def main() -> None:
            started.append(asyncio.Event())
            stream = dispatcher.astream(ToolCall("waits", None, "c1"), session)

            async def consume() -> list[ToolChunk | ToolResult]:
                try:
                    return [item async for item in stream]
                except asyncio.CancelledError:
                    seen.append((list(closed), len(session.results)))
                    raise

            task = asyncio.create_task(consume())
            await asyncio.wait_for(started[0].wait(), 60)
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=60)
            assert task in done
            assert task.cancelled()
            assert current_context() is None

        asyncio.run(main())
        # Cleaned up and recorded before the consumer saw its cancellation.
        assert seen == [(["waits"], 1)]
        [result] = session.results
        assert result.is_error
        assert "closed before it finished" in (result.error or "")
        assert result.output == [0]
        assert [(r.outcome, r.error) for r in sink.records] == [
            ("error", result.error)
        ]


class TestPropagatingExceptions:
    """What is not a tool failure still propagates, and is still recorded."""

    def test_keyboard_interrupt_propagates_and_is_recorded(
        self, registry: Registry
    ) -> None:
        """A KeyboardInterrupt out of a step reaches the consumer.

        The tool's generator is closed, and the interceptors' ``after`` and
        the session still see the call end, as a cancelled error result.
        """
        closed: list[str | None] = []

        @registry.tool
        def interrupted() -> Iterator[int]:
            """Yield one chunk, then get interrupted."""
            yield 0
            raise KeyboardInterrupt

        @registry.tool
        def interrupted_in_cleanup() -> Iterator[int]:
            """Yield until closed; the cleanup gets interrupted."""
            try:
                yield 0
                yield 1
            finally:
                closed.append(execution_context().tool_name)
                raise KeyboardInterrupt

        dispatcher, sink = _audited(registry)
        session = Session("s")
        stream = dispatcher.stream(ToolCall("interrupted"), session)
        assert isinstance(next(stream), ToolChunk)
        with pytest.raises(KeyboardInterrupt):
            next(stream)
        stream = dispatcher.stream(ToolCall("interrupted_in_cleanup"), session)
        assert isinstance(next(stream), ToolChunk)
        with pytest.raises(KeyboardInterrupt):
            stream.close()  # type: ignore[attr-defined]
        assert closed == ["interrupted_in_cleanup"]
        assert current_context() is None
        assert [r.output for r in session.results] == [[0], [0]]
        assert all(
            "closed before it finished" in (r.error or "")
            for r in session.results
        )
        assert [r.outcome for r in sink.records] == ["error", "error"]
