"""Progress over HTTP with JSON-body answers, as docs/mcp.md says (#19).

``run_http(..., json_response=True)`` (``toolctx serve --json-response``)
answers each request with one JSON body: there is no stream for
notifications, so a call's progress reports are dropped and the call
returns as usual; with the default SSE streams they arrive.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from toolctx import Registry, report_progress


pytest.importorskip("mcp")

import anyio
import httpx2

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from toolctx.mcp import create_server, run_http


def _steps() -> Registry:
    registry = Registry()

    @registry.tool
    def steps(n: int) -> int:
        """Count to *n*, reporting each step."""
        for i in range(1, n + 1):
            report_progress(i, n, f"step {i}")
        return n

    return registry


def _call_with_progress(*, json_response: bool) -> tuple[Any, list[float]]:
    """Call ``steps`` over HTTP; the result and the progress received."""
    seen: list[float] = []

    async def progress(
        value: float, _total: float | None, _message: str | None
    ) -> None:
        seen.append(value)

    async def go() -> Any:
        server = create_server(_steps())
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                url = await group.start(
                    partial(
                        run_http, server, port=0, json_response=json_response
                    )
                )
                async with (
                    httpx2.AsyncClient() as http,
                    streamable_http_client(url, http_client=http) as (r, w),
                    ClientSession(r, w) as session,
                ):
                    await session.initialize()
                    result = await session.call_tool(
                        "steps", {"n": 3}, progress_callback=progress
                    )
                group.cancel_scope.cancel()
        return result

    return anyio.run(go), seen


class TestProgressOverHttp:
    """Whether progress reaches an HTTP client depends on the answer form."""

    def test_sse_streams_carry_progress(self) -> None:
        """With the default SSE streams every report arrives."""
        result, seen = _call_with_progress(json_response=False)
        assert result.structured_content == {"result": 3}
        assert seen == [1, 2, 3]

    def test_json_bodies_carry_none(self) -> None:
        """With JSON bodies no report arrives, and the call succeeds."""
        result, seen = _call_with_progress(json_response=True)
        assert result.is_error is False
        assert result.structured_content == {"result": 3}
        assert seen == []
