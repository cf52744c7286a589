r"""Text that is not valid Unicode never leaves toolctx unencodable.

``os.listdir()`` of a folder holding a file name that is not valid UTF-8
gives ``'r\udce9sum\udce9.txt'``: a ``str`` with lone surrogates, which
no JSON text in UTF-8 can carry. In a tool's *output* such text is
refused like NaN: the call becomes an error result naming the problem,
where it sits and how to fix it. In text toolctx writes itself (error
messages quoting an exception or a model-chosen name, progress messages,
call ids and names echoed into provider and MCP messages) each lone
surrogate is written as the escape ``\udce9``, as the audit sinks do.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
import logging
import multiprocessing
import os
import sys

from collections.abc import Callable, Iterator
from typing import Any

import pydantic_core
import pytest

from tests import surrogate_tools
from tests.surrogate_tools import NAME

from toolctx import (
    Dispatcher,
    ExecutionContext,
    ToolCall,
    ToolChunk,
    ToolProgress,
    ToolResult,
)
from toolctx.content import File, Text
from toolctx.providers import anthropic, gemini, mcp, openai


ESCAPED = "r\\udce9sum\\udce9.txt"
""":data:`NAME` as toolctx writes it: each lone surrogate escaped."""

OUTPUTS = {
    "name": "",
    "listing": " (at files[1])",
    "sizes": "",
    "preview": " (at [1].text)",
    "walk": "",
}
"""Tools whose output holds :data:`NAME`, and where the error says it is."""


def encodable(data: object) -> bool:
    """Whether *data* encodes as JSON text in UTF-8, by json and pydantic.

    Bytes (Gemini's blobs, which its SDK sends as base64) as base64.
    """
    json.dumps(data, ensure_ascii=False, default=_base64).encode()
    pydantic_core.to_json(data, bytes_mode="base64")
    return True


def _base64(value: object) -> str:
    assert isinstance(value, bytes)
    return base64.b64encode(value).decode()


def texts(data: object) -> Iterator[str]:
    """Every string in *data*, keys included."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from texts(key)
            yield from texts(value)
    elif isinstance(data, (list, tuple)):
        for item in data:
            yield from texts(item)


def refused(result: ToolResult, where: str = "", output: Any = None) -> None:
    """Assert *result* is the error result for output holding NAME.

    *output* is what the result still holds: a stream's chunks so far.
    """
    assert result.is_error
    assert result.output == output
    assert result.error is not None
    assert "holds a lone surrogate (U+DCE9 at index 1)" in result.error
    assert "JSON text cannot carry" in result.error
    assert "surrogateescape" in result.error
    assert result.error.endswith(where)
    assert encodable(result.error)


@pytest.fixture(name="dispatcher")
def _dispatcher() -> Dispatcher:
    return Dispatcher(surrogate_tools.registry)


class TestOutputIsRefused:
    """Output holding a lone surrogate is an error result on every path."""

    @pytest.mark.parametrize(("tool", "where"), OUTPUTS.items())
    def test_dispatch(self, dispatcher: Dispatcher, tool: str, where: str):
        """Dispatcher.dispatch refuses the name as a string, a nested value, a key, a Text part or a chunk."""
        refused(dispatcher.dispatch(ToolCall(tool, "{}")), where)

    @pytest.mark.parametrize(("tool", "where"), OUTPUTS.items())
    def test_adispatch(self, dispatcher: Dispatcher, tool: str, where: str):
        """Dispatcher.adispatch refuses it the same way."""
        call = ToolCall(tool, "{}")
        refused(asyncio.run(dispatcher.adispatch(call)), where)

    def test_dispatch_all(self, dispatcher: Dispatcher):
        """dispatch_all refuses each such output; the other calls succeed."""
        calls = [ToolCall(tool, "{}") for tool in OUTPUTS]
        calls.append(ToolCall("echo", '{"text": "fine"}'))
        *bad, good = dispatcher.dispatch_all(calls)
        for result, where in zip(bad, OUTPUTS.values(), strict=True):
            refused(result, where)
        assert good.output == "fine"

    def test_adispatch_all(self, dispatcher: Dispatcher):
        """adispatch_all refuses each such output; the other calls succeed."""
        calls = [ToolCall(tool, "{}") for tool in OUTPUTS]
        calls.append(ToolCall("echo", '{"text": "fine"}'))
        *bad, good = asyncio.run(dispatcher.adispatch_all(calls))
        for result, where in zip(bad, OUTPUTS.values(), strict=True):
            refused(result, where)
        assert good.output == "fine"

    def test_stream(self, dispatcher: Dispatcher):
        """Dispatcher.stream yields the good chunk, never the bad one, then the error."""
        *items, result = dispatcher.stream(ToolCall("walk", "{}"))
        assert [i.data for i in items if isinstance(i, ToolChunk)] == [
            "notes.txt"
        ]
        assert isinstance(result, ToolResult)
        refused(result, output=["notes.txt"])

    def test_astream(self, dispatcher: Dispatcher):
        """Dispatcher.astream does the same as stream."""

        async def go() -> list[Any]:
            return [
                i async for i in dispatcher.astream(ToolCall("walk", "{}"))
            ]

        *items, result = asyncio.run(go())
        assert [i.data for i in items if isinstance(i, ToolChunk)] == [
            "notes.txt"
        ]
        refused(result, output=["notes.txt"])

    def test_a_name_in_a_file_part_is_refused(self):
        """A File part's name is output text too."""
        from toolctx import Registry, tool

        @tool
        def attach() -> File:
            """Attach the file."""
            return File(b"data", "text/plain", name=NAME)

        result = Dispatcher(Registry([attach])).dispatch(
            ToolCall("attach", "{}")
        )
        refused(result, " (at name)")

    def test_a_pydantic_model_is_refused(self):
        """A pydantic model's dumped data is checked like any output."""
        pydantic = pytest.importorskip("pydantic")
        from toolctx import Registry, tool

        class Entry(pydantic.BaseModel):
            path: str

        def entry():
            """Describe the file."""
            return Entry(path=NAME)

        entry.__annotations__ = {"return": Entry}  # a local class
        result = Dispatcher(Registry([tool(entry)])).dispatch(
            ToolCall("entry", "{}")
        )
        refused(result, " (at path)")

    def test_valid_text_still_passes(self, dispatcher: Dispatcher):
        """Non-ASCII text that is valid Unicode is output as it is."""
        result = dispatcher.dispatch(ToolCall("echo", '{"text": "résumé ✓"}'))
        assert result.output == "résumé ✓"


@pytest.fixture(name="pool", scope="module")
def _pool() -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """One spawned worker process that imports the tools by reference."""
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class TestProcessPool:
    """The worker process refuses such output; the error comes back."""

    @pytest.mark.parametrize("tool", ["name", "listing", "sizes", "preview"])
    def test_dispatch(self, pool: Any, tool: str):
        """Dispatcher.dispatch with a process-pool executor gets the error result."""
        dispatcher = Dispatcher(surrogate_tools.registry, executor=pool)
        refused(dispatcher.dispatch(ToolCall(tool, "{}")), OUTPUTS[tool])

    def test_adispatch_and_exception_text(self, pool: Any):
        """Dispatcher.adispatch_all too; an exception quoting the name comes back escaped."""
        dispatcher = Dispatcher(surrogate_tools.registry, executor=pool)

        async def go() -> list[ToolResult]:
            return await dispatcher.adispatch_all(
                [ToolCall("listing", "{}"), ToolCall("opening", "{}")]
            )

        listing, opening = asyncio.run(go())
        refused(listing, " (at files[1])")
        assert opening.error is not None
        assert ESCAPED in opening.error
        assert encodable(opening.error)


class TestTextToolctxWrites:
    """Error and progress messages and echoed ids are escaped, not refused."""

    def test_an_exception_message_is_escaped(self, dispatcher: Dispatcher):
        """An exception quoting the name is an error message with it escaped."""
        for result in (
            dispatcher.dispatch(ToolCall("opening", "{}")),
            asyncio.run(dispatcher.adispatch(ToolCall("opening", "{}"))),
        ):
            assert result.error == (
                f"Tool 'opening' failed: FileNotFoundError: No such file: "
                f"{ESCAPED}"
            )

    def test_a_progress_message_is_escaped(self, dispatcher: Dispatcher):
        """report_progress writes the name escaped, to listeners and streams."""
        seen: list[ToolProgress] = []
        stop = dispatcher.on_progress(seen.append)
        try:
            dispatcher.dispatch(ToolCall("scanning", "{}"))
        finally:
            stop()
        streamed = [
            i
            for i in dispatcher.stream(ToolCall("scanning", "{}"))
            if isinstance(i, ToolProgress)
        ]
        assert [p.message for p in (*seen, *streamed)] == [
            f"scanning {ESCAPED}"
        ] * 2

    def test_an_unknown_tool_name_is_escaped(self, dispatcher: Dispatcher):
        """A model-chosen tool name is quoted escaped in the error message."""
        result = dispatcher.dispatch(ToolCall(NAME, "{}", id="c1"))
        assert result.is_error
        assert result.error is not None
        assert result.error.startswith(f"Unknown tool '{ESCAPED}'.")

    def test_a_denial_reason_is_escaped(self):
        """An interceptor's denial quoting the name is escaped."""
        from toolctx import ToolDenied

        class Deny:
            def before(self, call: ToolCall, ctx: ExecutionContext) -> Any:
                raise ToolDenied(f"{NAME} is private")

            def after(self, call: ToolCall, ctx: Any, result: Any) -> Any:
                return result

        dispatcher = Dispatcher(
            surrogate_tools.registry, interceptors=[Deny()]
        )
        result = dispatcher.dispatch(ToolCall("echo", '{"text": "x"}'))
        assert result.error == (
            f"Call to tool 'echo' was denied: {ESCAPED} is private"
        )

    def test_a_declined_approval_reason_is_escaped(self):
        """A person's reason for declining, quoting the name, is escaped."""
        from toolctx import Registry, tool

        @tool(needs_approval=True)
        def delete(path: str) -> str:
            """Delete a file."""
            return path

        dispatcher = Dispatcher(Registry([delete]))

        def held() -> Any:
            call = ToolCall("delete", '{"path": "x"}', id="c1")
            result = dispatcher.dispatch(call)
            assert result.approval is not None
            return result.approval

        reason = f"keep {NAME}"
        for result in (
            dispatcher.resume(held(), approved=False, reason=reason),
            asyncio.run(
                dispatcher.aresume(held(), approved=False, reason=reason)
            ),
        ):
            assert result.error is not None
            assert f"Reason: keep {ESCAPED}" in result.error
            assert encodable(openai.result_message(result))


RENDERERS: dict[str, Callable[[ToolResult], object]] = {
    "openai.result_message": openai.result_message,
    "openai.responses_result_item": openai.responses_result_item,
    "anthropic.result_block": anthropic.result_block,
    "anthropic.result_message": anthropic.result_message,
    "gemini.result_part": gemini.result_part,
    "gemini.result_message": gemini.result_message,
    "mcp.result_message": mcp.result_message,
}
"""Every provider's function that renders one result."""

HAND_MADE = {
    "string": NAME,
    "data": {NAME: [NAME]},
    "parts": (Text(NAME), File(b"x", "application/pdf", name=NAME)),
}
"""Outputs a host or an interceptor might put in a ToolResult by hand."""


class TestRenderedMessages:
    """Every provider's result message encodes, whatever the result holds."""

    @pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS)
    def test_model_chosen_name_and_id(
        self, dispatcher: Dispatcher, render: Callable[[ToolResult], object]
    ):
        """A call id and a tool name with lone surrogates render escaped."""
        result = dispatcher.dispatch(ToolCall(NAME, "{}", id=f"id-{NAME}"))
        message = render(result)
        assert encodable(message)
        written = list(texts(message))
        assert any(f"Unknown tool '{ESCAPED}'" in text for text in written)
        if render is not mcp.result_message:  # MCP results carry no id
            assert f"id-{ESCAPED}" in written

    @pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS)
    @pytest.mark.parametrize("output", HAND_MADE.values(), ids=HAND_MADE)
    def test_hand_made_output(
        self, render: Callable[[ToolResult], object], output: object
    ):
        """Output a ToolResult was given by hand renders escaped."""
        result = ToolResult(name=NAME, call_id=NAME, output=output)
        assert encodable(render(result))

    @pytest.mark.parametrize("render", RENDERERS.values(), ids=RENDERERS)
    def test_hand_made_error(self, render: Callable[[ToolResult], object]):
        """An error message given by hand renders escaped."""
        result = ToolResult(name=NAME, call_id="c1", is_error=True, error=NAME)
        assert encodable(render(result))


class TestMcpServer:
    """The MCP server answers, and keeps answering, on stdio and HTTP."""

    def test_stdio_session_survives(self, tmp_path: Any):
        """Over stdio, each call gets an answer and the session goes on."""
        pytest.importorskip("mcp")
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from tests.test_mcp_server import CLIENT, ROOT, run, text_of

        progress: list[str | None] = []

        async def on_progress(
            done: float, total: float | None, message: str | None
        ) -> None:
            progress.append(message)

        async def go() -> list[Any]:
            params = StdioServerParameters(
                command=sys.executable,
                args=[
                    "-m",
                    "toolctx",
                    "serve",
                    "tests.surrogate_tools:registry",
                ],
                cwd=str(ROOT),
                env=dict(os.environ),  # this checkout's toolctx
            )
            with (tmp_path / "stderr.txt").open("w") as errlog:
                async with stdio_client(params, errlog=errlog) as (r, w):
                    async with ClientSession(r, w, client_info=CLIENT) as s:
                        await s.initialize()
                        results = [
                            await s.call_tool(tool, {}) for tool in OUTPUTS
                        ]
                        results.append(await s.call_tool("opening", {}))
                        results.append(
                            await s.call_tool(
                                "scanning", {}, progress_callback=on_progress
                            )
                        )
                        results.append(
                            await s.call_tool("echo", {"text": "still here"})
                        )
            return results

        *bad, opening, scanning, echo = run(go)
        for result in bad:
            assert result.is_error
            assert "lone surrogate" in text_of(result)
        assert opening.is_error
        assert ESCAPED in text_of(opening)
        assert text_of(scanning) == "done"
        assert progress == [f"scanning {ESCAPED}"]
        assert text_of(echo) == "still here"

    def test_http_request_is_answered(self):
        """Over streamable HTTP, the call is answered and the next one too."""
        pytest.importorskip("mcp")
        from functools import partial

        import anyio

        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from tests.test_mcp_server import CLIENT, run, text_of

        from toolctx.mcp import create_server, run_http

        server = create_server(surrogate_tools.registry)

        async def go() -> list[Any]:
            async with anyio.create_task_group() as group:
                url = await group.start(partial(run_http, server, port=0))
                async with streamable_http_client(url) as (r, w):
                    async with ClientSession(r, w, client_info=CLIENT) as s:
                        await s.initialize()
                        results = [
                            await s.call_tool("listing", {}),
                            await s.call_tool("opening", {}),
                            await s.call_tool("echo", {"text": "next"}),
                        ]
                group.cancel_scope.cancel()
            return results

        listing, opening, echo = run(go)
        assert listing.is_error
        assert "lone surrogate" in text_of(listing)
        assert ESCAPED in text_of(opening)
        assert text_of(echo) == "next"

    def test_an_unsendable_answer_is_an_error_result(
        self, monkeypatch: pytest.MonkeyPatch, caplog: Any
    ):
        """Whatever a handler produces, an answer that cannot be sent becomes an isError result, logged, and the session goes on."""
        pytest.importorskip("mcp")
        from tests.test_mcp_server import connect, run, text_of

        from toolctx.mcp import create_server, handlers

        render = handlers.result_message

        def broken(result: ToolResult, registry: Any = None) -> Any:
            message = render(result, registry)
            if result.name == "echo" and result.output == "raw":
                message["content"][0]["text"] = NAME  # a renderer bug
            return message

        monkeypatch.setattr(handlers, "result_message", broken)
        server = create_server(surrogate_tools.registry)

        async def go() -> list[Any]:
            async with connect(server) as session:
                return [
                    await session.call_tool("echo", {"text": "raw"}),
                    await session.call_tool("echo", {"text": "fine"}),
                ]

        with caplog.at_level(logging.ERROR, "toolctx.mcp.server"):
            bad, good = run(go)
        assert bad.is_error
        assert "could not be sent" in text_of(bad)
        assert text_of(good) == "fine"
        [record] = [
            r for r in caplog.records if r.name == "toolctx.mcp.server"
        ]
        assert record.exc_info is not None


class TestSpans:
    """OpenTelemetry spans carry the model's text escaped, so it exports."""

    def test_name_id_and_arguments_are_escaped(self):
        """A span's name and attributes from the model's call encode as UTF-8."""
        pytest.importorskip("opentelemetry.sdk")
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        from toolctx.otel import OpenTelemetryInterceptor

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        interceptor = OpenTelemetryInterceptor(
            tracer_provider=provider, record_arguments=True
        )
        dispatcher = Dispatcher(
            surrogate_tools.registry, interceptors=[interceptor]
        )
        try:
            dispatcher.dispatch(ToolCall(NAME, {"path": NAME}, id=NAME))
        finally:
            provider.shutdown()
        [span] = exporter.get_finished_spans()
        assert span.name == f"execute_tool {ESCAPED}"
        assert span.attributes is not None
        assert span.attributes["gen_ai.tool.call.id"] == ESCAPED
        assert encodable(
            [span.name, span.status.description, dict(span.attributes)]
        )


class TestLogRecords:
    """ContextLogFilter writes the model's ids escaped."""

    def test_call_id_and_tool_name_are_escaped(self):
        """A record logged inside a call gets the call id and name escaped."""
        from toolctx import Registry, tool
        from toolctx.interceptors import ContextLogFilter

        records: list[logging.LogRecord] = []
        log_filter = ContextLogFilter(fields=("tool_call_id", "tool_name"))

        @tool
        def noisy() -> str:
            """Log a line."""
            record = logging.makeLogRecord({"msg": "working"})
            log_filter.filter(record)
            records.append(record)
            return "ok"

        Dispatcher(Registry([noisy])).dispatch(ToolCall("noisy", "{}", NAME))
        [record] = records
        assert record.toolctx_tool_call_id == ESCAPED
        assert record.toolctx_tool_name == "noisy"
