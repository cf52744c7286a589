"""Progress: a running tool reports how far it is; hosts and streams see it.

``report_progress`` works inside any dispatched call (sync, async, a sync
tool in a worker thread, a thread started with ``bind_context``); each
report is a ``ToolProgress`` naming its call. Listeners added with
``Dispatcher.on_progress`` get them at once; ``stream()``/``astream()``
yield them in order with the chunks. A report outside a call, after the
call ended, or with a value that is not a finite number is refused.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolctx import (
    Dispatcher,
    ExecutionContext,
    NoExecutionContextError,
    Registry,
    ToolCall,
    ToolChunk,
    ToolctxError,
    ToolProgress,
    ToolResult,
    bind_context,
    report_progress,
    use_context,
)


def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def index(files: int) -> int:
        """Index the files, one report each."""
        for done in range(1, files + 1):
            report_progress(done, files, f"file {done}")
        return files

    @registry.tool
    async def aindex(files: int) -> int:
        """The same from async code."""
        for done in range(1, files + 1):
            await asyncio.sleep(0)
            report_progress(done, files)
        return files

    @registry.tool
    def threaded() -> str:
        """Report from a thread started with bind_context."""
        worker = threading.Thread(
            target=bind_context(report_progress), args=(5,)
        )
        worker.start()
        worker.join()
        return "ok"

    @registry.tool
    def counting(n: int) -> Iterator[int]:
        """Stream n chunks, reporting before each."""
        for i in range(n):
            report_progress(i, n)
            yield i

    @registry.tool
    async def acounting(n: int) -> AsyncIterator[int]:
        """The same as an async generator."""
        for i in range(n):
            report_progress(i, n)
            yield i

    return registry


def _listened(
    registry: Registry | None = None,
) -> tuple[Dispatcher, list[ToolProgress]]:
    dispatcher = Dispatcher(registry or _registry())
    seen: list[ToolProgress] = []
    dispatcher.on_progress(seen.append)
    return dispatcher, seen


class TestListeners:
    """Listeners receive every report, naming its call."""

    def test_sync_tool(self) -> None:
        """Reports arrive in order with the call's ids."""
        d, seen = _listened()
        result = d.dispatch(ToolCall("index", {"files": 3}, id="c1"))
        assert [(p.progress, p.total, p.message) for p in seen] == [
            (1, 3, "file 1"),
            (2, 3, "file 2"),
            (3, 3, "file 3"),
        ]
        assert {(p.name, p.call_id, p.invocation_id) for p in seen} == {
            ("index", "c1", result.invocation_id)
        }

    @pytest.mark.parametrize("name", ["index", "aindex"])
    def test_under_adispatch(self, name: str) -> None:
        """Async tools, and sync tools in a worker thread, report too."""
        d, seen = _listened()
        asyncio.run(d.adispatch(ToolCall(name, {"files": 2})))
        assert [p.progress for p in seen] == [1, 2]

    def test_from_a_thread_started_with_bind_context(self) -> None:
        """A thread carrying the call's context reports for the call."""
        d, seen = _listened()
        result = d.dispatch(ToolCall("threaded"))
        assert [(p.progress, p.invocation_id) for p in seen] == [
            (5, result.invocation_id)
        ]

    def test_concurrent_calls_keep_their_reports_apart(self) -> None:
        """Each of many concurrent calls' reports carry its own ids, in order."""
        d, seen = _listened()

        async def main() -> list[ToolResult]:
            return await d.adispatch_all(
                [
                    ToolCall("aindex", {"files": 5}, id=str(i))
                    for i in range(50)
                ]
                + [
                    ToolCall("index", {"files": 5}, id=f"s{i}")
                    for i in range(10)
                ]
            )

        results = asyncio.run(main())
        for result in results:
            mine = [
                p.progress
                for p in seen
                if p.invocation_id == result.invocation_id
            ]
            assert mine == [1, 2, 3, 4, 5]
            assert {
                p.call_id
                for p in seen
                if p.invocation_id == result.invocation_id
            } == {result.call_id}

    def test_a_nested_call_reports_to_its_own_dispatcher(self) -> None:
        """An inner dispatch's reports name the inner invocation."""
        inner, inner_seen = _listened()
        registry = Registry()

        @registry.tool
        def outer() -> int:
            """Report, then dispatch an inner call."""
            report_progress(0.5)
            return inner.dispatch(ToolCall("index", {"files": 1})).output  # type: ignore[no-any-return]

        d, outer_seen = _listened(registry)
        result = d.dispatch(ToolCall("outer"))
        assert [p.name for p in outer_seen] == ["outer"]
        assert [p.name for p in inner_seen] == ["index"]
        assert outer_seen[0].invocation_id == result.invocation_id

    def test_a_listener_that_raises_is_logged_and_the_call_goes_on(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The call succeeds, the other listeners still hear, the log says why."""
        d, seen = _listened()

        def broken(_: ToolProgress) -> None:
            raise RuntimeError("listener bug")

        d.on_progress(broken)
        with caplog.at_level(logging.ERROR, logger="toolctx"):
            result = d.dispatch(ToolCall("index", {"files": 2}))
        assert result.output == 2
        assert len(seen) == 2
        assert "progress listener" in caplog.text
        assert "listener bug" in caplog.text

    def test_unsubscribing_stops_the_reports(self) -> None:
        """The function on_progress returns removes the listener."""
        d = Dispatcher(_registry())
        seen: list[ToolProgress] = []
        stop = d.on_progress(seen.append)
        d.dispatch(ToolCall("index", {"files": 1}))
        stop()
        stop()  # twice is harmless
        d.dispatch(ToolCall("index", {"files": 1}))
        assert len(seen) == 1

    def test_on_progress_takes_a_function(self) -> None:
        """A non-callable is a clear TypeError."""
        with pytest.raises(
            TypeError, match="takes a function of one ToolProgress"
        ):
            Dispatcher(_registry()).on_progress("print")  # type: ignore[arg-type]


class TestStreams:
    """stream()/astream() yield the reports in order with the chunks."""

    def test_a_streaming_tool(self) -> None:
        """Each report comes before the chunk that followed it."""
        d, seen = _listened()
        items = list(d.stream(ToolCall("counting", {"n": 2})))
        kinds = [
            (
                type(i).__name__,
                getattr(i, "progress", getattr(i, "index", None)),
            )
            for i in items
        ]
        assert kinds == [
            ("ToolProgress", 0),
            ("ToolChunk", 0),
            ("ToolProgress", 1),
            ("ToolChunk", 1),
            ("ToolResult", None),
        ]
        assert len(seen) == 2  # listeners hear them too

    @pytest.mark.parametrize("name", ["counting", "acounting"])
    def test_astream(self, name: str) -> None:
        """Sync generators (in a worker thread) and async ones alike."""
        d = Dispatcher(_registry())

        async def main() -> list[Any]:
            return [item async for item in d.astream(ToolCall(name, {"n": 2}))]

        items = asyncio.run(main())
        assert [type(i) for i in items] == [
            ToolProgress,
            ToolChunk,
            ToolProgress,
            ToolChunk,
            ToolResult,
        ]

    def test_a_tool_that_does_not_stream(self) -> None:
        """Its reports, then its result."""
        d = Dispatcher(_registry())
        items = list(d.stream(ToolCall("index", {"files": 2})))
        assert [type(i) for i in items] == [
            ToolProgress,
            ToolProgress,
            ToolResult,
        ]

        async def main() -> list[Any]:
            return [
                i async for i in d.astream(ToolCall("aindex", {"files": 2}))
            ]

        assert [type(i) for i in asyncio.run(main())] == [
            ToolProgress,
            ToolProgress,
            ToolResult,
        ]

    def test_closing_a_stream_early_drops_nothing_it_yielded(self) -> None:
        """Closing after a report still records the call as cancelled."""
        d = Dispatcher(_registry())
        stream = d.stream(ToolCall("counting", {"n": 5}))
        first = next(stream)
        assert isinstance(first, ToolProgress)
        stream.close()  # type: ignore[attr-defined]


class TestRefused:
    """Reports that cannot be delivered or make no sense are refused."""

    def test_outside_a_call(self) -> None:
        """No call: NoExecutionContextError, also under use_context."""
        with pytest.raises(
            NoExecutionContextError, match="No context is bound"
        ):
            report_progress(1)
        with (
            use_context(ExecutionContext()),
            pytest.raises(NoExecutionContextError, match="no call is running"),
        ):
            report_progress(1)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ((True,), "progress must be a finite number"),
            ((float("nan"),), "progress must be a finite number"),
            (("1",), "progress must be a finite number"),
            ((10**400,), "progress must be a finite number"),
            ((1, float("inf")), "total must be a finite number"),
            ((1, None, 3), "message must be a string"),
        ],
    )
    def test_bad_values(self, args: tuple[Any, ...], message: str) -> None:
        """A bad value fails the call with a clear message."""
        registry = Registry()

        @registry.tool
        def bad() -> None:
            """Report something wrong."""
            report_progress(*args)

        result = Dispatcher(registry).dispatch(ToolCall("bad"))
        assert result.is_error
        assert message in (result.error or "")

    def test_a_long_message_is_cut(self) -> None:
        """Messages are bounded: 1,000 characters."""
        registry = Registry()

        @registry.tool
        def chatty() -> None:
            """Report a huge message."""
            report_progress(1, message="x" * 50_000)

        d, seen = _listened(registry)
        d.dispatch(ToolCall("chatty"))
        assert len(seen[0].message or "") == 1000

    def test_after_the_call_ended(self) -> None:
        """A thread reporting late gets a clear error; nothing is sent."""
        registry = Registry()
        late: list[BaseException] = []
        release = threading.Event()

        def later() -> None:
            release.wait(10)
            try:
                report_progress(1)
            except ToolctxError as exc:
                late.append(exc)

        @registry.tool
        def leaves_a_thread() -> None:
            """Start a thread and return without joining it."""
            threading.Thread(target=bind_context(later)).start()

        d, seen = _listened(registry)
        d.dispatch(ToolCall("leaves_a_thread"))
        release.set()
        for _ in range(100):
            if late:
                break
            threading.Event().wait(0.05)
        assert late
        assert "finished" in str(late[0])
        assert seen == []
