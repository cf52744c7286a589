"""ContextLogFilter: the running call's ids on every log record."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid

from collections.abc import Iterator
from typing import Any

import pytest

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    execution_context,
    use_context,
)
from toolctx.interceptors.logging import CONTEXT_LOG_FIELDS, ContextLogFilter


SECRET = "hunter2-scope-secret"


class Scope:
    """A scope object holding a secret."""

    token = SECRET

    def __repr__(self) -> str:
        return f"Scope(token={SECRET!r})"


class ListHandler(logging.Handler):
    """Collect records and their formatted text."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))


@pytest.fixture(name="handler")
def _handler() -> Iterator[ListHandler]:
    handler = ListHandler()
    handler.addFilter(ContextLogFilter())
    handler.setFormatter(
        logging.Formatter(
            "%(message)s inv=%(toolctx_invocation_id)s "
            "user=%(toolctx_user_id)s"
        )
    )
    yield handler
    handler.close()


@pytest.fixture(name="logger")
def _logger(handler: ListHandler) -> Iterator[logging.Logger]:
    """A private parent logger; tools log to a child of it."""
    logger = logging.getLogger(f"test_logging.{uuid.uuid4().hex}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(handler)
    yield logger
    logger.removeHandler(handler)


def ids(record: logging.LogRecord, prefix: str = "toolctx_") -> dict[str, Any]:
    """Return the context attributes the filter set on *record*."""
    return {f: getattr(record, prefix + f) for f in CONTEXT_LOG_FIELDS}


@pytest.fixture(name="registry")
def _registry(logger: logging.Logger) -> Registry:
    registry = Registry()
    child = logger.getChild("tools")

    @registry.tool
    def sync_log(n: int = 0) -> dict[str, Any]:
        """Log from a sync tool and report where it ran."""
        child.info("sync %d", n)
        return {
            "thread": threading.get_ident(),
            "invocation": execution_context().invocation_id,
        }

    @registry.tool
    async def async_log(n: int = 0) -> str:
        """Log from an async tool across awaits."""
        await asyncio.sleep(0)
        child.info("async %d", n)
        await asyncio.sleep(0)
        return execution_context().invocation_id

    return registry


class TestContextLogFilter:
    """The filter adds the context's ids, and only them."""

    def test_none_outside_a_call(
        self, logger: logging.Logger, handler: ListHandler
    ) -> None:
        """Outside any call every attribute is None."""
        logger.info("idle")
        (record,) = handler.records
        assert ids(record) == dict.fromkeys(CONTEXT_LOG_FIELDS)
        assert handler.lines == ["idle inv=None user=None"]

    def test_ids_inside_a_dispatched_tool(
        self, registry: Registry, handler: ListHandler
    ) -> None:
        """A sync tool's log record carries every id of its call."""
        template = ExecutionContext(
            session_id="s1",
            user_id="ada",
            agent_id="planner",
            turn=3,
        )
        result = Dispatcher(registry).dispatch(
            ToolCall("sync_log", None, "call-1"), template
        )
        (record,) = handler.records
        assert ids(record) == {
            "invocation_id": result.invocation_id,
            "parent_invocation_id": None,
            "tool_name": "sync_log",
            "tool_call_id": "call-1",
            "session_id": "s1",
            "user_id": "ada",
            "agent_id": "planner",
            "turn": 3,
        }
        assert handler.lines == [f"sync 0 inv={result.invocation_id} user=ada"]

    def test_nested_call_has_the_parent_id(
        self,
        registry: Registry,
        logger: logging.Logger,
        handler: ListHandler,
    ) -> None:
        """A nested call's records name the outer call as parent."""
        dispatcher = Dispatcher(registry)

        @registry.tool
        def outer() -> str:
            """Log, then call sync_log."""
            logger.info("outer")
            return dispatcher.dispatch(ToolCall("sync_log")).output[  # type: ignore[no-any-return]
                "invocation"
            ]

        result = dispatcher.dispatch(ToolCall("outer"))
        outer_record, inner_record = handler.records
        assert outer_record.toolctx_invocation_id == result.invocation_id  # type: ignore[attr-defined]
        assert outer_record.toolctx_parent_invocation_id is None  # type: ignore[attr-defined]
        assert inner_record.toolctx_invocation_id == result.output  # type: ignore[attr-defined]
        assert inner_record.toolctx_parent_invocation_id == (  # type: ignore[attr-defined]
            result.invocation_id
        )
        assert inner_record.toolctx_tool_name == "sync_log"  # type: ignore[attr-defined]

    def test_sync_tool_in_a_worker_thread(
        self, registry: Registry, handler: ListHandler
    ) -> None:
        """Under adispatch a sync tool logs from a worker thread, with ids."""
        dispatcher = Dispatcher(registry)

        async def main() -> tuple[ToolResult, int]:
            result = await dispatcher.adispatch(
                ToolCall("sync_log", None, "c7"),
                ExecutionContext(user_id="ada"),
            )
            return result, threading.get_ident()

        result, loop_thread = asyncio.run(asyncio.wait_for(main(), 30))
        (record,) = handler.records
        assert result.output["thread"] != loop_thread
        assert record.thread == result.output["thread"]
        assert record.toolctx_invocation_id == result.invocation_id  # type: ignore[attr-defined]
        assert record.toolctx_tool_call_id == "c7"  # type: ignore[attr-defined]
        assert record.toolctx_user_id == "ada"  # type: ignore[attr-defined]

    def test_concurrent_calls_get_their_own_ids(
        self, registry: Registry, handler: ListHandler
    ) -> None:
        """Concurrent adispatch calls, sync and async, log their own ids."""
        dispatcher = Dispatcher(registry)
        calls = [
            ToolCall(name, {"n": n}, f"{name}-{n}")
            for n in range(40)
            for name in ("sync_log", "async_log")
        ]

        async def main() -> list[ToolResult]:
            return await asyncio.gather(
                *(
                    dispatcher.adispatch(
                        call, ExecutionContext(user_id=f"user-{call.id}")
                    )
                    for call in calls
                )
            )

        results = asyncio.run(asyncio.wait_for(main(), 60))
        assert all(not r.is_error for r in results)
        by_call = {
            r.toolctx_tool_call_id: r  # type: ignore[attr-defined]
            for r in handler.records
        }
        assert len(by_call) == len(calls) == len(handler.records)
        for call, result in zip(calls, results, strict=True):
            record = by_call[call.id]
            assert record.toolctx_invocation_id == result.invocation_id  # type: ignore[attr-defined]
            assert record.toolctx_user_id == f"user-{call.id}"  # type: ignore[attr-defined]
            n = call.id.rsplit("-", 1)[1] if call.id else "?"
            assert record.getMessage().endswith(f" {n}")
        assert len({r.invocation_id for r in results}) == len(calls)

    def test_use_context_block(
        self, logger: logging.Logger, handler: ListHandler
    ) -> None:
        """A context bound with use_context is seen too."""
        ctx = ExecutionContext(user_id="ada", tool_name="direct")
        with use_context(ctx):
            logger.warning("inside")
        logger.warning("outside")
        inside, outside = handler.records
        assert inside.toolctx_invocation_id == ctx.invocation_id  # type: ignore[attr-defined]
        assert inside.toolctx_tool_name == "direct"  # type: ignore[attr-defined]
        assert outside.toolctx_invocation_id is None  # type: ignore[attr-defined]

    def test_never_adds_scope_metadata_or_state(
        self, registry: Registry, handler: ListHandler
    ) -> None:
        """Scope, metadata and state never reach the log record."""
        template = ExecutionContext(
            user_id="ada",
            scope=Scope(),
            metadata={"api_key": SECRET},
            state={"token": SECRET},
        )
        Dispatcher(registry).dispatch(ToolCall("sync_log"), template)
        (record,) = handler.records
        assert record.toolctx_user_id == "ada"  # type: ignore[attr-defined]
        assert SECRET not in repr(vars(record))
        assert SECRET not in "".join(handler.lines)
        added = {k for k in vars(record) if k.startswith("toolctx_")}
        assert added == {f"toolctx_{f}" for f in CONTEXT_LOG_FIELDS}

    def test_prefix_and_fields(self) -> None:
        """The prefix and the chosen fields decide which attributes appear."""
        log_filter = ContextLogFilter("ctx_", fields=["user_id", "turn"])
        record = logging.makeLogRecord({"msg": "m"})
        with use_context(ExecutionContext(user_id="ada", turn=2)):
            assert log_filter.filter(record) is True
        assert (record.ctx_user_id, record.ctx_turn) == ("ada", 2)  # type: ignore[attr-defined]
        assert not hasattr(record, "ctx_invocation_id")
        assert not hasattr(record, "toolctx_user_id")
        outside = logging.makeLogRecord({"msg": "m"})
        assert log_filter.filter(outside) is True
        assert (outside.ctx_user_id, outside.ctx_turn) == (None, None)  # type: ignore[attr-defined]
        assert log_filter.fields == ("user_id", "turn")

    def test_single_field_as_a_string(self) -> None:
        """fields='user_id' means that one field, not its letters."""
        log_filter = ContextLogFilter(fields="user_id")
        assert log_filter.fields == ("user_id",)

    def test_unknown_fields_are_refused(self) -> None:
        """Fields outside CONTEXT_LOG_FIELDS, like scope, are refused."""
        with pytest.raises(ValueError, match="cannot add 'scope', 'metadata'"):
            ContextLogFilter(fields=["user_id", "scope", "metadata"])
        with pytest.raises(TypeError, match="prefix must be a str"):
            ContextLogFilter(3)  # type: ignore[arg-type]

    def test_repr(self) -> None:
        """The repr shows the prefix and fields."""
        assert repr(ContextLogFilter("p_", fields=["turn"])) == (
            "<toolctx.interceptors.ContextLogFilter(prefix='p_', fields=('turn',))>"
        )
