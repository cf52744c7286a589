"""Streaming tools: chunks with the tool's own context on every resume."""

from __future__ import annotations

import asyncio
import threading

from collections.abc import AsyncIterator, Iterator

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
    set_state,
    use_context,
)


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

    def test_invalid_arguments(self, registry: Registry) -> None:
        """Bad arguments give one error result and no chunks."""
        items = list(
            Dispatcher(registry).stream(ToolCall("count", '{"n": "x"}'))
        )
        assert len(items) == 1
        assert isinstance(items[0], ToolResult)
        assert items[0].is_error


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
