"""What the MCP server sends unasked: tools/list_changed and progress.

Each test connects the official SDK's client (in process over memory
streams, over stdio to ``python -m toolctx serve``, or over streamable
HTTP) and waits, bounded, for what it must receive.
"""

from __future__ import annotations

import sys
import threading

from functools import partial
from typing import Any

import pytest

from tests import mcp_app

from toolctx import Registry, report_progress


pytest.importorskip("mcp")

import anyio
import mcp_types as types

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.subscriptions import listen
from mcp.shared.memory import create_client_server_memory_streams
from tests.test_mcp_server import CLIENT, ROOT, connect, run

from toolctx.mcp import create_server, run_http


WAIT = 20
"""Seconds to wait for a notification that must come (never reached)."""


class Inbox:
    """A client message handler that keeps what the server sent unasked."""

    def __init__(self) -> None:
        self.changed = 0
        self.errors: list[Exception] = []
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        """Count list_changed notifications; keep transport errors."""
        if isinstance(message, Exception):
            self.errors.append(message)
        elif isinstance(message, types.ToolListChangedNotification):
            self.changed += 1
            self._event.set()

    async def wait_changed(self) -> None:
        """Wait (bounded) for the next list_changed notification."""
        with anyio.fail_after(WAIT):
            await self._event.wait()
        self._event = anyio.Event()


def grow_registry() -> Registry:
    """A registry with one tool, for tests that change it."""
    registry = Registry()

    @registry.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    return registry


def add_tool(registry: Registry, name: str) -> None:
    """Register a tool called *name*."""

    def extra() -> str:
        """Added later."""
        return name

    extra.__name__ = name
    registry.register(extra)


class TestListChanged:
    """notifications/tools/list_changed after the registry changes."""

    def test_capability_says_list_changed(self):
        """Initialize answers with tools.listChanged true."""

        async def go() -> Any:
            server = create_server(grow_registry())
            async with create_client_server_memory_streams() as (c, s):
                async with anyio.create_task_group() as group:
                    group.start_soon(
                        server.run, *s, server.create_initialization_options()
                    )
                    async with ClientSession(*c) as session:
                        init = await session.initialize()
                    group.cancel_scope.cancel()
            return init

        init = run(go)

        assert init.capabilities.tools is not None
        assert init.capabilities.tools.list_changed is True

    def test_a_change_on_the_loop_reaches_the_client(self):
        """A tool registered while a client is connected is announced, and tools/list then shows it."""
        registry = grow_registry()
        inbox = Inbox()

        async def go() -> list[str]:
            server = create_server(registry)
            async with connect_with(server, inbox) as session:
                add_tool(registry, "late")
                await inbox.wait_changed()
                tools = await session.list_tools()
            return [t.name for t in tools.tools]

        assert run(go) == ["ping", "late"]
        assert inbox.changed == 1

    def test_a_change_from_another_thread_reaches_the_client(self):
        """A change made in another thread (unregister) is announced too."""
        registry = grow_registry()
        inbox = Inbox()

        async def go() -> list[str]:
            server = create_server(registry)
            async with connect_with(server, inbox) as session:
                worker = threading.Thread(
                    target=registry.unregister, args=("ping",)
                )
                worker.start()
                await inbox.wait_changed()
                worker.join()
                tools = await session.list_tools()
            return [t.name for t in tools.tools]

        assert run(go) == []

    def test_every_connected_client_is_told(self):
        """Two connections to one server each receive the notification."""
        registry = grow_registry()
        first, second = Inbox(), Inbox()

        async def go() -> None:
            server = create_server(registry)
            async with (
                connect_with(server, first),
                connect_with(server, second),
            ):
                add_tool(registry, "late")
                await first.wait_changed()
                await second.wait_changed()

        run(go)

    def test_a_closed_connection_is_forgotten(self):
        """After a client disconnects, a change is not sent to it (its server forgets it)."""
        registry = grow_registry()
        server = create_server(registry)

        async def go() -> None:
            async with connect_with(server, Inbox()):
                pass

        run(go)
        add_tool(registry, "late")  # no loop, no connection: nothing to do

        targets = server.middleware[-1].__self__.list_changed._loops
        assert all(not t.connections for t in targets.values())

    def test_the_2026_protocol_listen_stream(self):
        """On the 2026 protocol, a subscriptions/listen stream for tool changes receives the event."""
        registry = grow_registry()

        async def go() -> Any:
            server = create_server(registry)
            async with connect(server, modern=True) as session:
                async with listen(session, tools_list_changed=True) as sub:
                    add_tool(registry, "late")
                    with anyio.fail_after(WAIT):
                        return await sub.__anext__()

        event = run(go)

        assert type(event).__name__ == "ToolsListChanged"

    def test_over_stdio(self):
        """Python -m toolctx serve announces a tool that a call registered, to the official stdio client."""
        inbox = Inbox()

        async def go() -> list[str]:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "toolctx", "serve", "tests.mcp_app:lively"],
                cwd=str(ROOT),
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(
                    read, write, client_info=CLIENT, message_handler=inbox
                ) as session:
                    init = await session.initialize()
                    assert init.capabilities.tools is not None
                    assert init.capabilities.tools.list_changed is True
                    await session.call_tool("grow", {"name": "sprout"})
                    await inbox.wait_changed()
                    tools = await session.list_tools()
            return [t.name for t in tools.tools]

        assert run(go)[-1] == "sprout"
        assert inbox.errors == []

    def test_over_streamable_http(self):
        """Over streamable HTTP the notification reaches the client on its session's stream."""
        registry = grow_registry()
        inbox = Inbox()

        async def go() -> None:
            import httpx2

            from mcp.client.streamable_http import streamable_http_client

            server = create_server(registry)
            async with anyio.create_task_group() as group:
                url = await group.start(partial(run_http, server, port=0))
                async with (
                    httpx2.AsyncClient() as http,
                    streamable_http_client(url, http_client=http) as (r, w),
                    ClientSession(r, w, message_handler=inbox) as session,
                ):
                    await session.initialize()
                    # The server's stream for notifications opens after
                    # initialization; retry until it has carried one.
                    with anyio.fail_after(WAIT):
                        for n in range(1000):
                            add_tool(registry, f"late{n}")
                            with anyio.move_on_after(0.5):
                                await inbox.wait_changed()
                                break
                group.cancel_scope.cancel()

        run(go)

        assert inbox.changed >= 1


class TestProgress:
    """notifications/progress for calls whose request has a progressToken."""

    @pytest.mark.parametrize("tool_name", ["steps", "async_steps"])
    def test_every_report_arrives_in_order_before_the_result(self, tool_name):
        """Each report_progress of a sync (worker thread) or async tool reaches the progress callback, in order, before call_tool returns."""
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(
            value: float, total: float | None, message: str | None
        ) -> None:
            seen.append((value, total, message))

        async def go() -> tuple[Any, list[Any]]:
            async with connect(create_server(mcp_app.lively)) as session:
                result = await session.call_tool(
                    tool_name, {"n": 5}, progress_callback=progress
                )
                return result, list(seen)

        result, at_return = run(go)

        assert result.structured_content == {"result": 5}
        assert [value for value, _, _ in at_return] == [1, 2, 3, 4, 5]
        if tool_name == "steps":
            assert at_return[0] == (1, 5, "step 1")
        else:
            assert at_return[:2] == [(1, None, None), (2, None, "s2")]

    def test_no_token_no_notifications(self):
        """Without a progressToken the server sends no progress notifications."""
        sent: list[str] = []

        async def go() -> None:
            server = create_server(mcp_app.lively)
            async with connect(server, sent=sent) as session:
                await session.call_tool("steps", {"n": 3})

        run(go)

        assert not [m for m in sent if "notifications/progress" in m]

    def test_progress_of_concurrent_calls_stays_with_its_call(self):
        """Two calls in flight at once each get only their own reports."""
        registry = Registry()
        both = anyio.Event()
        arrived = []

        @registry.tool
        async def tagged(tag: str) -> str:
            """Report the tag, wait for the other call, report again."""
            report_progress(1, message=tag)
            arrived.append(tag)
            if len(arrived) == 2:
                both.set()
            with anyio.fail_after(WAIT):
                await both.wait()
            report_progress(2, message=tag)
            return tag

        seen: dict[str, list[str | None]] = {"a": [], "b": []}

        def collector(tag: str) -> Any:
            async def progress(
                value: float, total: float | None, message: str | None
            ) -> None:
                seen[tag].append(message)

            return progress

        async def go() -> None:
            async with connect(create_server(registry)) as session:
                async with anyio.create_task_group() as group:
                    for tag in ("a", "b"):
                        group.start_soon(
                            partial(
                                session.call_tool,
                                "tagged",
                                {"tag": tag},
                                progress_callback=collector(tag),
                            )
                        )

        run(go)

        assert seen == {"a": ["a", "a"], "b": ["b", "b"]}


def connect_with(server: Any, inbox: Inbox) -> Any:
    """An in-process ClientSession to *server* whose messages go to *inbox*."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def session() -> Any:
        async with create_client_server_memory_streams() as (client, served):
            async with anyio.create_task_group() as group:
                group.start_soon(
                    server.run,
                    *served,
                    server.create_initialization_options(),
                )
                try:
                    async with ClientSession(
                        *client, client_info=CLIENT, message_handler=inbox
                    ) as client_session:
                        await client_session.initialize()
                        yield client_session
                finally:
                    group.cancel_scope.cancel()

    return session()
