"""toolctx.mcp.server and _meta propagation, against the official MCP SDK.

In-process tests connect the SDK's ClientSession to the server through the
SDK's memory streams; end-to-end tests start ``python -m toolctx serve``
over stdio in a subprocess, and serve streamable HTTP on a free local port.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import sys

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests import mcp_app
from typing_extensions import Self

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolDefinition,
    ToolDenied,
    use_context,
)
from toolctx.mcp.meta import context_from_meta, context_meta
from toolctx.providers._render import plain


mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402 - after the skip: a dependency of mcp
import anyio.lowlevel  # noqa: E402
import mcp_types as types  # noqa: E402

from anyio.streams.buffered import BufferedByteReceiveStream  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.shared.memory import create_client_server_memory_streams  # noqa: E402

from toolctx.mcp import (  # noqa: E402
    McpRequestInfo,
    McpUnavailableError,
    create_server,
    run_http,
    serve,
)


ROOT = Path(__file__).resolve().parent.parent
TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
CLIENT = types.Implementation(name="pytest-client", version="1.2.3")
SERVE = [sys.executable, "-m", "toolctx", "serve", "tests.mcp_app:registry"]
HEX32 = frozenset("0123456789abcdef")
SECRET = mcp_app.SECRET


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run *fn* on a fresh event loop, failing after 30 seconds."""

    async def bounded() -> Any:
        with anyio.fail_after(30):
            return await fn()

    return anyio.run(bounded)


class Tap:
    """A server's write stream that also records every message it sends."""

    def __init__(self, stream: Any, sent: list[str]) -> None:
        self._stream = stream
        self._sent = sent

    async def send(self, item: Any) -> None:
        """Record *item* as JSON, then send it on."""
        self._sent.append(item.message.model_dump_json(by_alias=True))
        await self._stream.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stream.aclose()


@asynccontextmanager
async def connect(
    server: Any, *, modern: bool = False, sent: list[str] | None = None
) -> AsyncIterator[Any]:
    """A ClientSession connected to *server* through memory streams.

    With *sent*, every message the server sends is appended to it as JSON.
    """
    async with create_client_server_memory_streams() as (client, served):
        async with anyio.create_task_group() as group:
            group.start_soon(
                server.run,
                served[0],
                served[1] if sent is None else Tap(served[1], sent),
                server.create_initialization_options(),
            )
            try:
                async with ClientSession(
                    client[0], client[1], client_info=CLIENT
                ) as session:
                    if modern:
                        await session.discover()
                    else:
                        await session.initialize()
                    yield session
            finally:
                group.cancel_scope.cancel()


def call(server: Any, name: str, arguments: Any = None, **kw: Any) -> Any:
    """One tools/call through a fresh in-process connection."""
    modern = kw.pop("modern", False)

    async def go() -> Any:
        async with connect(server, modern=modern) as session:
            return await session.call_tool(name, arguments or {}, **kw)

    return run(go)


def text_of(result: Any) -> str:
    """The text of a CallToolResult's single text block."""
    [block] = result.content
    return str(block.text)


def wire(result: Any) -> dict[str, Any]:
    """A result as the JSON the client received."""
    return dict(
        result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )


# -- _meta propagation -------------------------------------------------------


class TestContextMeta:
    """context_meta(): the ids an outgoing MCP call carries in _meta."""

    def test_renders_ids_turn_agent_and_trace(self):
        """The context's ids, turn, agent and W3C trace context are rendered under namespaced keys."""
        ctx = ExecutionContext(
            invocation_id="inv-1",
            session_id="chat-7",
            turn=3,
            agent_id="planner",
            metadata={
                "traceparent": TP,
                "tracestate": "v=1",
                "baggage": "k=v",
            },
        )

        assert context_meta(ctx) == {
            "io.toolctx/invocation_id": "inv-1",
            "io.toolctx/session_id": "chat-7",
            "io.toolctx/turn": 3,
            "io.toolctx/agent_id": "planner",
            "traceparent": TP,
            "tracestate": "v=1",
            "baggage": "k=v",
        }

    def test_user_only_on_request(self):
        """The user id is sent only with include_user=True."""
        ctx = ExecutionContext(invocation_id="inv-1", user_id="ada")

        assert "io.toolctx/user_id" not in context_meta(ctx)
        assert (
            context_meta(ctx, include_user=True)["io.toolctx/user_id"] == "ada"
        )

    def test_never_scope_values_state_or_other_metadata(self):
        """Scope, typed values, state and metadata outside the allow-list never cross."""
        key = ContextKey("mcp-test-tenant", str)
        ctx = ExecutionContext(
            invocation_id="inv-1",
            user_id="ada",
            metadata={"api_key": "sk-secret", "traceparent": TP},
            state={"cart": ["secret-item"]},
            scope=object(),
        ).with_value(key, "secret-tenant")

        meta = context_meta(ctx, include_user=True)

        assert set(meta) == {
            "io.toolctx/invocation_id",
            "io.toolctx/turn",
            "io.toolctx/user_id",
            "traceparent",
        }
        assert "secret" not in json.dumps(meta)

    def test_invalid_trace_metadata_is_not_sent(self):
        """A malformed traceparent in metadata is left out rather than propagated."""
        ctx = ExecutionContext(metadata={"traceparent": "not-a-trace"})

        assert "traceparent" not in context_meta(ctx)

    def test_defaults_to_the_running_call(self):
        """Without an argument it describes the running call's context."""
        registry = Registry()

        @registry.tool
        def probe() -> dict[str, Any]:
            """Return the outgoing _meta."""
            return context_meta()

        result = Dispatcher(registry).dispatch(
            ToolCall("probe", "{}", "c1"), ExecutionContext(session_id="s1")
        )

        assert (
            result.output["io.toolctx/invocation_id"] == result.invocation_id
        )
        assert result.output["io.toolctx/session_id"] == "s1"

    def test_bound_context_without_a_call(self):
        """A context bound with use_context is described too."""
        ctx = ExecutionContext(invocation_id="bound-1")
        with use_context(ctx):
            meta = context_meta()

        assert meta["io.toolctx/invocation_id"] == "bound-1"

    def test_nothing_outside_a_call(self):
        """Outside any context there is nothing to propagate."""
        assert context_meta() == {}

    def test_rejects_other_types(self):
        """Passing something other than a context is a TypeError naming the type."""
        with pytest.raises(TypeError, match="dict"):
            context_meta({"invocation_id": "x"})  # type: ignore[arg-type]


class TestContextFromMeta:
    """context_from_meta(): validated ids from an incoming _meta."""

    def test_round_trip(self):
        """What context_meta writes, context_from_meta reads back."""
        ctx = ExecutionContext(
            invocation_id="inv-1",
            session_id="chat-7",
            turn=2,
            user_id="ada",
            agent_id="a1",
            metadata={"traceparent": TP},
        )

        assert context_from_meta(context_meta(ctx, include_user=True)) == {
            "invocation_id": "inv-1",
            "session_id": "chat-7",
            "turn": 2,
            "user_id": "ada",
            "agent_id": "a1",
            "traceparent": TP,
        }

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("io.toolctx/invocation_id", 42),
            ("io.toolctx/invocation_id", ""),
            ("io.toolctx/session_id", "x" * 257),
            ("io.toolctx/session_id", "line\nbreak"),
            ("io.toolctx/user_id", ["ada"]),
            ("io.toolctx/agent_id", None),
            ("io.toolctx/turn", True),
            ("io.toolctx/turn", -1),
            ("io.toolctx/turn", 1.0),
            ("io.toolctx/turn", "3"),
            ("io.toolctx/turn", 2**53),
            (
                "traceparent",
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            ),
            (
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            ),
            (
                "traceparent",
                "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
            ("traceparent", TP.upper()),
            ("traceparent", TP + "-extra"),
            ("tracestate", "x" * 513),
            ("baggage", 7),
        ],
    )
    def test_ignores_junk(self, key, value):
        """A value of the wrong type, size or shape is dropped, never an error."""
        meta = (
            {key: value, "io.toolctx/invocation_id": "ok"}
            if key != ("io.toolctx/invocation_id")
            else {key: value}
        )

        found = context_from_meta(meta)

        assert set(found) <= {"invocation_id"}

    @pytest.mark.parametrize("meta", [None, "text", 3, ["a"], b"{}"])
    def test_non_mapping_is_empty(self, meta):
        """A _meta that is not an object yields nothing."""
        assert context_from_meta(meta) == {}

    def test_other_keys_are_ignored(self):
        """Keys outside the toolctx namespace and trace context are not read."""
        meta = {
            "progressToken": 3,
            "io.other/invocation_id": "x",
            "session_id": "s",
        }

        assert context_from_meta(meta) == {}


# -- the server, in process ----------------------------------------------------


class TestCreateServer:
    """create_server(): arguments and identity."""

    def test_rejects_other_targets(self):
        """Only a Registry or a Dispatcher can be served."""
        with pytest.raises(
            TypeError, match="Registry or Dispatcher, got dict"
        ):
            create_server({"add": mcp_app.add})  # type: ignore[arg-type]

    def test_rejects_a_non_callable_factory(self):
        """A context_factory that cannot be called is refused at creation."""
        with pytest.raises(TypeError, match="context_factory"):
            create_server(mcp_app.registry, context_factory="nope")  # type: ignore[arg-type]

    def test_missing_sdk_says_what_to_install(self, monkeypatch):
        """Without the mcp package the error names the extra to install."""
        monkeypatch.setitem(sys.modules, "mcp.server.lowlevel", None)

        with pytest.raises(McpUnavailableError, match=r"toolctx\[mcp\]"):
            create_server(mcp_app.registry)

    def test_serve_rejects_unknown_transports(self):
        """An unknown transport is refused before anything is built."""
        with pytest.raises(ValueError, match="'stdio' or 'streamable-http'"):
            serve(mcp_app.registry, transport="pigeon")  # type: ignore[arg-type]

    def test_reports_name_version_and_instructions(self):
        """The server identifies itself as configured during initialize."""
        server = create_server(
            mcp_app.registry,
            name="thermo",
            version="2.0",
            instructions="Be brief.",
        )

        async def go() -> Any:
            async with connect(server) as session:
                return session.initialize_result

        result = run(go)

        assert (result.server_info.name, result.server_info.version) == (
            "thermo",
            "2.0",
        )
        assert result.instructions == "Be brief."
        assert result.capabilities.tools is not None


class TestListTools:
    """tools/list: the registry's tools, verbatim."""

    def test_order_and_schemas_are_ours(self):
        """tools/list gives the registry's tools in order, schemas equal key for key."""
        server = create_server(mcp_app.registry)

        async def go() -> Any:
            async with connect(server) as session:
                return await session.list_tools()

        listed = run(go).tools
        definitions = mcp_app.registry.definitions()

        assert [t.name for t in listed] == [d.name for d in definitions]
        for tool, definition in zip(listed, definitions, strict=True):
            assert tool.description == definition.description
            assert json.dumps(tool.input_schema) == json.dumps(
                plain(definition.parameters)
            )

    def test_tools_registered_later_are_listed(self):
        """The list is read from the registry at each request."""
        registry = Registry()
        server = create_server(registry)

        @registry.tool
        def late() -> str:
            """Registered after the server was built."""
            return "here"

        async def go() -> Any:
            async with connect(server) as session:
                return await session.list_tools()

        assert [t.name for t in run(go).tools] == ["late"]

    def test_a_tool_definition_is_read_at_registration_only(self):
        """tools/list serves the definitions read at registration: a plain tool's definition() failing later cannot break or leak into the listing."""
        registry = Registry()
        registry.register(Moody())
        sent: list[str] = []

        async def go() -> Any:
            async with connect(create_server(registry), sent=sent) as session:
                return await session.list_tools()

        [listed] = run(go).tools

        assert listed.name == "moody"
        assert json.dumps(listed.input_schema) == json.dumps(
            plain(registry.definitions()[0].parameters)
        )
        assert SECRET not in "".join(sent)


class Moody:
    """A plain tool whose definition() works once, then fails with a secret."""

    def __init__(self) -> None:
        self.reads = 0

    def definition(self) -> ToolDefinition:
        """The definition, the first time only."""
        self.reads += 1
        if self.reads > 1:
            raise RuntimeError(SECRET)
        return ToolDefinition(
            name="moody",
            description="Works once.",
            parameters={
                "type": "object",
                "properties": {"x": {"type": "integer"}},
            },
        )

    def execute(self, args: Any) -> str:
        """Answer ok."""
        return "ok"


class TestCallTool:
    """tools/call: dispatched, rendered as CallToolResult."""

    def test_text_and_structured_content(self):
        """A dict output is sent as JSON text and as structuredContent."""
        result = call(create_server(mcp_app.registry), "whoami")

        assert result.is_error is False
        assert json.loads(text_of(result)) == result.structured_content
        assert result.structured_content["tool_name"] == "whoami"

    def test_scalar_output_is_wrapped_structured_content(self):
        """A non-object output of a tool with an output schema is text and structuredContent {"result": value}."""
        result = call(create_server(mcp_app.registry), "add", {"a": 2, "b": 3})

        assert text_of(result) == "5"
        assert result.structured_content == {"result": 5}

    def test_async_tool(self):
        """An async tool runs and sees the connection's session."""
        result = call(
            create_server(mcp_app.registry), "greet", {"name": "ada"}
        )

        assert text_of(result).startswith("hello ada from ")

    def test_invalid_arguments_name_the_argument(self):
        """Bad arguments are an isError result whose message names the argument."""
        result = call(
            create_server(mcp_app.registry), "add", {"a": 1, "b": "2"}
        )

        assert result.is_error is True
        assert "'add'" in text_of(result)
        assert "b" in text_of(result).split(":", 1)[1]

    def test_unknown_tool(self):
        """An unknown tool is an isError result listing the available tools."""
        result = call(create_server(mcp_app.registry), "nope")

        assert result.is_error is True
        assert "Unknown tool 'nope'" in text_of(result)
        assert "whoami" in text_of(result)

    def test_tool_failure(self):
        """A tool that raises becomes an isError result with its message."""
        result = call(create_server(mcp_app.registry), "explode")

        assert result.is_error is True
        assert "the reactor is offline" in text_of(result)

    def test_host_only_fields_never_sent(self):
        """Published metadata, exceptions and scope stay in the process."""

        class Secret:
            token = "hunter2"

        def factory(info: McpRequestInfo) -> ExecutionContext:
            return attrs.evolve(info.context, scope=Secret())

        server = create_server(mcp_app.registry, context_factory=factory)
        ok = call(server, "leaky")
        failed = call(server, "explode")

        assert text_of(ok) == "ok"
        assert "hunter2" not in json.dumps(wire(ok))
        assert "Traceback" not in json.dumps(wire(failed))

    def test_dispatcher_interceptors_run(self):
        """Serving a Dispatcher runs its interceptors on every call."""
        result = call(create_server(mcp_app.denying), "add", {"a": 1, "b": 2})

        assert result.is_error is True
        assert "nothing is allowed here" in text_of(result)


def _bank() -> tuple[Dispatcher, list[str]]:
    """A dispatcher whose transfers above 100 wait for a person, and the transfers that ran."""
    ran: list[str] = []
    registry = Registry()

    def over_limit(call: ToolCall, context: ExecutionContext) -> bool:
        return bool(call.arguments["amount"] > 100)

    @registry.tool(needs_approval=over_limit)
    def transfer(to: str, amount: int) -> str:
        """Move money."""
        ran.append(to)
        return f"sent {amount} to {to}"

    return Dispatcher(registry), ran


class TestHeldCalls:
    """tools/call of a tool declared needs_approval: MCP cannot wait for a person."""

    @pytest.mark.parametrize("modern", [False, True], ids=["2025", "2026"])
    def test_a_held_call_is_an_error_result_and_nothing_runs(self, modern):
        """A call the tool's check holds is an isError result saying it needs a person's approval and what the operator can do; the tool does not run."""
        dispatcher, ran = _bank()

        result = call(
            create_server(dispatcher),
            "transfer",
            {"to": "eve", "amount": 5000},
            modern=modern,
        )
        text = text_of(result)

        assert result.is_error is True
        assert result.structured_content is None
        assert text.startswith(
            "Tool 'transfer' needs a person's approval before it runs, and "
            "this MCP server cannot ask for it, so the call did not run"
        )
        assert "do not retry it" in text
        assert "Dispatcher.resume" in text
        assert "without needs_approval" in text
        assert ran == []

    def test_a_call_the_check_lets_through_runs(self):
        """A call of the same tool that the check does not hold runs as usual."""
        dispatcher, ran = _bank()

        result = call(
            create_server(dispatcher), "transfer", {"to": "bob", "amount": 5}
        )

        assert result.is_error is False
        assert text_of(result) == "sent 5 to bob"
        assert ran == ["bob"]

    def test_logged_as_a_warning_with_the_request_to_resume(self, caplog):
        """The refusal is a WARNING on "toolctx" whose record carries the ApprovalRequest; resuming it with the dispatcher runs the call out of band."""
        dispatcher, ran = _bank()

        with caplog.at_level(logging.WARNING, logger="toolctx"):
            result = call(
                create_server(dispatcher),
                "transfer",
                {"to": "eve", "amount": 5000},
            )
        [record] = [r for r in caplog.records if r.name == "toolctx"]
        request = record.approval

        assert record.levelno == logging.WARNING
        assert record.exc_info is None
        assert text_of(result) in record.getMessage()
        assert request.invocation_id in text_of(result)
        assert dict(request.call.arguments) == {"to": "eve", "amount": 5000}
        assert f"(call id {request.call.id}," in record.getMessage()
        done = dispatcher.resume(request, approved=True)
        assert done.output == "sent 5000 to eve"
        assert ran == ["eve"]


class TestCallContext:
    """The ExecutionContext a tools/call runs in."""

    def test_context_from_the_request(self):
        """The call sees a session, the request id, client info and the request _meta."""
        result = call(
            create_server(mcp_app.registry),
            "whoami",
            meta={"traceparent": TP, "progressToken": "tok-1"},
        )
        seen = result.structured_content

        assert set(seen["session_id"]) <= HEX32
        assert len(seen["session_id"]) == 32
        assert seen["tool_call_id"].isdigit()
        assert seen["metadata"]["mcp.client_info"] == {
            "name": "pytest-client",
            "version": "1.2.3",
        }
        assert seen["metadata"]["mcp.meta"]["traceparent"] == TP
        assert seen["metadata"]["mcp.meta"]["progressToken"] == "tok-1"
        assert seen["metadata"]["traceparent"] == TP
        assert seen["user_id"] is None
        assert seen["scope"] is None

    def test_one_session_per_connection(self):
        """Calls on one connection share a session id; another connection gets another."""
        server = create_server(mcp_app.registry)

        async def go() -> list[Any]:
            seen = []
            async with connect(server) as session:
                for _ in range(2):
                    result = await session.call_tool("whoami", {})
                    seen.append(result.structured_content)
            async with connect(server) as session:
                result = await session.call_tool("whoami", {})
                seen.append(result.structured_content)
            return seen

        first, second, other = run(go)

        assert (
            first["session_id"] == second["session_id"] != other["session_id"]
        )
        assert first["tool_call_id"] != second["tool_call_id"]
        assert first["invocation_id"] != second["invocation_id"]

    def test_modern_protocol_client_info(self):
        """On the 2026 protocol, client info comes from each request's envelope."""
        result = call(create_server(mcp_app.registry), "whoami", modern=True)
        seen = result.structured_content

        assert seen["metadata"]["mcp.client_info"]["name"] == "pytest-client"
        assert seen["metadata"]["mcp.protocol_version"] == "2026-07-28"
        assert seen["session_id"] is not None

    def test_caller_ids_link_but_do_not_claim_identity(self):
        """By default _meta ids link the parent but cannot set session, user, turn or agent."""
        meta = {
            "io.toolctx/invocation_id": "caller-inv",
            "io.toolctx/session_id": "claimed-session",
            "io.toolctx/user_id": "mallory",
            "io.toolctx/turn": 9,
            "io.toolctx/agent_id": "claimed-agent",
        }
        seen = call(
            create_server(mcp_app.registry), "whoami", meta=meta
        ).structured_content

        assert seen["parent_invocation_id"] == "caller-inv"
        assert seen["session_id"] != "claimed-session"
        assert seen["user_id"] is None
        assert seen["turn"] == 0
        assert seen["agent_id"] is None

    def test_trusted_meta_identity(self):
        """With trust_meta_identity the caller's session, user, turn and agent are used."""
        meta = {
            "io.toolctx/invocation_id": "caller-inv",
            "io.toolctx/session_id": "chat-7",
            "io.toolctx/user_id": "ada",
            "io.toolctx/turn": 4,
            "io.toolctx/agent_id": "planner",
        }
        server = create_server(mcp_app.registry, trust_meta_identity=True)
        seen = call(server, "whoami", meta=meta).structured_content

        assert (seen["session_id"], seen["user_id"], seen["turn"]) == (
            "chat-7",
            "ada",
            4,
        )
        assert seen["agent_id"] == "planner"
        assert seen["parent_invocation_id"] == "caller-inv"

    def test_junk_meta_is_ignored(self):
        """Malformed toolctx ids in _meta are dropped, and the call still runs."""
        meta = {"io.toolctx/invocation_id": {"x": 1}, "traceparent": "garbage"}
        seen = call(
            create_server(mcp_app.registry, trust_meta_identity=True),
            "whoami",
            meta=meta,
        ).structured_content

        assert seen["parent_invocation_id"] is None
        assert "traceparent" not in seen["metadata"]

    def test_outgoing_meta_continues_the_chain(self):
        """A tool's context_meta() links to its own MCP call and keeps the trace."""
        result = call(
            create_server(mcp_app.registry),
            "outgoing_meta",
            meta={"traceparent": TP},
        )
        meta = result.structured_content

        assert meta["traceparent"] == TP
        assert len(meta["io.toolctx/invocation_id"]) == 32
        assert meta["io.toolctx/session_id"]


class TestContextFactory:
    """The context_factory hook."""

    def test_receives_request_info_and_sets_the_template(self):
        """The factory sees the request and its returned context is the template."""
        seen: list[McpRequestInfo] = []

        def factory(info: McpRequestInfo) -> ExecutionContext:
            seen.append(info)
            return attrs.evolve(
                info.context, agent_id="from-factory", scope=info
            )

        server = create_server(mcp_app.registry, context_factory=factory)
        result = call(
            server, "whoami", meta={"io.toolctx/invocation_id": "p-1"}
        )
        [info] = seen

        assert info.tool_name == "whoami"
        assert info.request_id == result.structured_content["tool_call_id"]
        assert info.client_info == {
            "name": "pytest-client",
            "version": "1.2.3",
        }
        assert info.meta == {"io.toolctx/invocation_id": "p-1"}
        assert info.caller == {"invocation_id": "p-1"}
        assert info.context.parent_invocation_id == "p-1"
        assert info.session_id == result.structured_content["session_id"]
        assert result.structured_content["agent_id"] == "from-factory"
        assert result.structured_content["scope"] == "McpRequestInfo"

    def test_async_factory(self):
        """An async factory is awaited."""

        async def factory(info: McpRequestInfo) -> ExecutionContext:
            await anyio.lowlevel.checkpoint()
            return attrs.evolve(info.context, user_id="from-async")

        server = create_server(mcp_app.registry, context_factory=factory)
        result = call(server, "whoami")

        assert result.structured_content["user_id"] == "from-async"

    def test_factory_may_deny(self):
        """A factory raising ToolDenied refuses the call with an isError result."""

        def factory(info: McpRequestInfo) -> ExecutionContext:
            raise ToolDenied("sign in first")

        server = create_server(mcp_app.registry, context_factory=factory)
        result = call(server, "add", {"a": 1, "b": 2})

        assert result.is_error is True
        assert (
            text_of(result) == "Call to tool 'add' was denied: sign in first"
        )

    def test_factory_returning_the_wrong_type_is_a_server_error(self):
        """A factory that returns no context is a host bug: a protocol error, not a result."""
        server = create_server(
            mcp_app.registry, context_factory=lambda info: {}
        )

        async def go() -> Any:
            async with connect(server) as session:
                try:
                    await session.call_tool("add", {"a": 1, "b": 2})
                except MCPError as exc:
                    return exc
            return None

        assert isinstance(run(go), MCPError)


# -- failures around the tool ------------------------------------------------

ERROR_ID = re.compile(r"error id ([0-9a-f]{16})")


class Vault(dict):  # type: ignore[type-arg]
    """A tool output whose items cannot be read: rendering it fails."""

    def items(self):  # type: ignore[override]
        """Refuse, with a secret in the message."""
        msg = f"vault sealed: {SECRET}"
        raise RuntimeError(msg)


class SealAdd:
    """An interceptor whose after() gives add an output that cannot render."""

    def before(self, call, context):
        """Pass the context through."""
        return context

    def after(self, call, context, result):
        """Replace add's output with a Vault."""
        if call.name != "add":
            return result
        return attrs.evolve(result, output=Vault(answer=3))


def _factory_raising(exc: BaseException) -> Any:
    """A context_factory that raises *exc* for add and serves the rest."""

    def factory(info: McpRequestInfo) -> ExecutionContext:
        if info.tool_name == "add":
            raise exc
        return info.context

    return factory


def _async_factory_raising(exc: BaseException) -> Any:
    """An async context_factory that raises *exc* for add."""

    async def factory(info: McpRequestInfo) -> ExecutionContext:
        await anyio.lowlevel.checkpoint()
        if info.tool_name == "add":
            raise exc
        return info.context

    return factory


AROUND_THE_TOOL = {
    "an interceptor's before()": (
        lambda: create_server(mcp_app.broken),
        "add",
    ),
    "an interceptor's SystemExit": (
        lambda: create_server(mcp_app.broken),
        "greet",
    ),
    "the context_factory": (
        lambda: create_server(
            mcp_app.registry,
            context_factory=_factory_raising(
                RuntimeError(f"no session for {SECRET}")
            ),
        ),
        "add",
    ),
    "an async context_factory's SystemExit": (
        lambda: create_server(
            mcp_app.registry,
            context_factory=_async_factory_raising(SystemExit(SECRET)),
        ),
        "add",
    ),
    "rendering the result": (
        lambda: create_server(
            Dispatcher(
                mcp_app.registry,
                interceptors=[SealAdd()],
                include_exception_messages=False,
            )
        ),
        "add",
    ),
}
ARGUMENTS = {"add": {"a": 1, "b": 2}, "greet": {"name": "ada"}}


class TestFailuresAroundTheTool:
    """What is raised around the tool reaches the host's log, never the client."""

    @pytest.mark.parametrize(
        ("make_server", "tool"),
        list(AROUND_THE_TOOL.values()),
        ids=list(AROUND_THE_TOOL),
    )
    def test_client_gets_a_generic_error_and_the_log_the_traceback(
        self, caplog, make_server, tool
    ):
        """The client gets an internal error with an error id and nothing of the exception; the log gets the traceback under that id; the server keeps serving."""
        sent: list[str] = []

        async def go() -> tuple[MCPError, Any]:
            async with connect(make_server(), sent=sent) as session:
                with pytest.raises(MCPError) as failed:
                    await session.call_tool(tool, ARGUMENTS[tool])
                after = await session.call_tool("whoami", {})
            return failed.value, after

        with caplog.at_level(logging.ERROR, logger="toolctx.mcp.server"):
            error, after = run(go)
        [record] = [
            r for r in caplog.records if r.name == "toolctx.mcp.server"
        ]
        [error_id] = ERROR_ID.findall(error.error.message)

        assert SECRET not in "".join(sent)
        assert error.error.code == -32603
        assert error.error.message.startswith(
            "Internal error: the server failed to answer this tools/call "
            "request"
        )
        assert error_id in record.getMessage()
        assert repr(tool) in record.getMessage()
        assert record.exc_info is not None
        assert SECRET in caplog.text
        assert "Traceback" in caplog.text
        assert after.is_error is False
        assert after.structured_content["tool_name"] == "whoami"

    def test_tool_failures_stay_results(self, caplog):
        """A tool's own exception is still an isError result for the model, and nothing is logged as a server failure."""
        with caplog.at_level(logging.ERROR, logger="toolctx.mcp.server"):
            result = call(create_server(mcp_app.registry), "explode")

        assert result.is_error is True
        assert text_of(result) == (
            "Tool 'explode' failed: RuntimeError: the reactor is offline"
        )
        assert not [
            r for r in caplog.records if r.name == "toolctx.mcp.server"
        ]

    def test_a_cancelled_call_is_cancelled_not_an_error(self, caplog):
        """A call the client cancels is cancelled in the tool, is not logged as a server failure, and the connection keeps serving."""
        started = anyio.Event()
        cancelled = anyio.Event()
        registry = Registry()

        @registry.tool
        async def wait_forever() -> None:
            """Wait until cancelled."""
            started.set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                cancelled.set()
                raise

        @registry.tool
        def ping() -> str:
            """Answer pong."""
            return "pong"

        async def go() -> Any:
            async with connect(create_server(registry)) as session:
                async with anyio.create_task_group() as group:
                    group.start_soon(session.call_tool, "wait_forever", {})
                    await started.wait()
                    group.cancel_scope.cancel()
                with anyio.fail_after(10):
                    await cancelled.wait()
                return await session.call_tool("ping", {})

        with caplog.at_level(logging.ERROR, logger="toolctx.mcp.server"):
            after = run(go)

        assert cancelled.is_set()
        assert text_of(after) == "pong"
        assert not [
            r for r in caplog.records if r.name == "toolctx.mcp.server"
        ]


# -- end to end: stdio subprocess ---------------------------------------------


def _stdio_conversation() -> dict[str, Any]:
    """List and call tools of `python -m toolctx serve` with the SDK client."""

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(
            command=SERVE[0], args=SERVE[1:], cwd=str(ROOT)
        )
        out: dict[str, Any] = {}
        async with stdio_client(params) as (read, write):
            async with ClientSession(
                read, write, client_info=CLIENT
            ) as session:
                await session.initialize()
                out["tools"] = (await session.list_tools()).tools
                out["whoami"] = await session.call_tool(
                    "whoami", {}, meta={"traceparent": TP}
                )
                out["whoami2"] = await session.call_tool("whoami", {})
                out["bad"] = await session.call_tool(
                    "add", {"a": "one", "b": 2}
                )
                out["unknown"] = await session.call_tool("nope", {})
                out["exits"] = await session.call_tool(
                    "parse_flags", {"flags": ["--count", "many"]}
                )
                out["ok"] = await session.call_tool("add", {"a": 2, "b": 40})
        return out

    return run(go)  # type: ignore[no-any-return]


@pytest.fixture(scope="module", name="stdio")
def _stdio() -> dict[str, Any]:
    return _stdio_conversation()


class TestStdioEndToEnd:
    """The SDK's stdio client against python -m toolctx serve."""

    def test_lists_tools_in_order_with_our_schemas(self, stdio):
        """The subprocess lists the registry's tools, in order, schemas unchanged."""
        definitions = mcp_app.registry.definitions()

        assert [t.name for t in stdio["tools"]] == [
            d.name for d in definitions
        ]
        assert [json.dumps(t.input_schema) for t in stdio["tools"]] == [
            json.dumps(plain(d.parameters)) for d in definitions
        ]

    def test_call_sees_its_context(self, stdio):
        """A call sees the connection's session, its request id, client info and _meta."""
        first = stdio["whoami"].structured_content
        second = stdio["whoami2"].structured_content

        assert len(first["session_id"]) == 32
        assert first["session_id"] == second["session_id"]
        assert first["tool_call_id"].isdigit()
        assert int(second["tool_call_id"]) > int(first["tool_call_id"])
        assert first["metadata"]["mcp.client_info"] == {
            "name": "pytest-client",
            "version": "1.2.3",
        }
        assert first["metadata"]["traceparent"] == TP
        assert "traceparent" not in second["metadata"]

    def test_bad_arguments(self, stdio):
        """Bad arguments come back with isError and a message naming the argument."""
        assert stdio["bad"].is_error is True
        assert "'add'" in text_of(stdio["bad"])
        assert "a" in text_of(stdio["bad"]).split(":", 1)[1]

    def test_unknown_tool(self, stdio):
        """An unknown tool comes back with isError naming it."""
        assert stdio["unknown"].is_error is True
        assert "'nope'" in text_of(stdio["unknown"])

    def test_success(self, stdio):
        """A good call returns its output as text."""
        assert stdio["ok"].is_error is False
        assert text_of(stdio["ok"]) == "42"

    def test_a_tool_that_exits_is_a_tool_failure(self, stdio):
        """A tool raising SystemExit (argparse on bad input) is an isError result, and the server answers the next call."""
        assert stdio["exits"].is_error is True
        assert (
            text_of(stdio["exits"])
            == "Tool 'parse_flags' failed: SystemExit: 2"
        )
        assert text_of(stdio["ok"]) == "42"


async def _raw_stdio(
    target: str,
    requests: list[dict[str, Any]],
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Send raw JSON-RPC lines to `python -m toolctx serve TARGET`.

    Waits for the answer to each request that has an id, then closes stdin.
    Returns the answers by id, every byte the server wrote to stdout and
    to stderr, and its exit code. *env* replaces the server's environment.
    """
    argv = [sys.executable, "-m", "toolctx", "serve", target]
    async with await anyio.open_process(argv, cwd=str(ROOT), env=env) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        reader = BufferedByteReceiveStream(proc.stdout)
        stdout: list[bytes] = []
        answers: dict[Any, dict[str, Any]] = {}
        for request in requests:
            line = json.dumps({"jsonrpc": "2.0", **request}) + "\n"
            await proc.stdin.send(line.encode())
            while "id" in request and request["id"] not in answers:
                raw = await reader.receive_until(b"\n", 1 << 22)
                stdout.append(raw + b"\n")
                message = json.loads(raw)
                answers[message.get("id")] = message
        await proc.stdin.aclose()
        stdout.append(bytes(reader.buffer))
        stdout.extend([chunk async for chunk in proc.stdout])
        stderr = b"".join([chunk async for chunk in proc.stderr])
        code = await proc.wait()
    return {
        "answers": answers,
        "stdout": b"".join(stdout).decode(),
        "stderr": stderr.decode(),
        "returncode": code,
    }


INITIALIZE = [
    {
        "id": "init-1",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0.1"},
        },
    },
    {"method": "notifications/initialized"},
]


class TestStdioWire:
    """Raw JSON-RPC lines against python -m toolctx serve."""

    def test_raw_json_rpc(self):
        """On the wire, the call id is the JSON-RPC id and schemas keep our key order."""
        out = run(
            lambda: _raw_stdio(
                "tests.mcp_app:registry",
                [
                    *INITIALIZE,
                    {"id": "list-1", "method": "tools/list"},
                    {
                        "id": 41,
                        "method": "tools/call",
                        "params": {"name": "whoami", "arguments": {}},
                    },
                    {
                        "id": "call-abc",
                        "method": "tools/call",
                        "params": {"name": "whoami"},
                    },
                ],
            )
        )
        answers = out["answers"]
        tools = answers["list-1"]["result"]["tools"]
        by_int = json.loads(answers[41]["result"]["content"][0]["text"])
        by_str = json.loads(
            answers["call-abc"]["result"]["content"][0]["text"]
        )

        assert [json.dumps(t["inputSchema"]) for t in tools] == [
            json.dumps(plain(d.parameters))
            for d in mcp_app.registry.definitions()
        ]
        assert by_int["tool_call_id"] == "41"
        assert by_str["tool_call_id"] == "call-abc"
        assert by_int["metadata"]["mcp.client_info"] == {
            "name": "raw",
            "version": "0.1",
        }
        assert out["returncode"] == 0

    def test_host_errors_never_reach_the_wire(self):
        """An interceptor's exception and SystemExit carrying a secret: stdout has only generic errors, stderr the tracebacks, and the server keeps serving."""

        def tools_call(request_id: int, name: str) -> dict[str, Any]:
            return {
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": ARGUMENTS[name]},
            }

        out = run(
            lambda: _raw_stdio(
                "tests.mcp_app:broken",
                [
                    *INITIALIZE,
                    tools_call(1, "add"),
                    tools_call(2, "greet"),
                    {
                        "id": 3,
                        "method": "tools/call",
                        "params": {"name": "whoami", "arguments": {}},
                    },
                ],
            )
        )
        answers = out["answers"]

        assert SECRET not in out["stdout"]
        assert [answers[i]["error"]["code"] for i in (1, 2)] == [
            -32603,
            -32603,
        ]
        for i in (1, 2):
            [error_id] = ERROR_ID.findall(answers[i]["error"]["message"])
            assert error_id in out["stderr"]
        assert out["stderr"].count(SECRET) >= 2
        assert "Traceback" in out["stderr"]
        assert "whoami" in answers[3]["result"]["content"][0]["text"]
        assert out["returncode"] == 0


# -- end to end: streamable HTTP ----------------------------------------------


class StaticVerifier:
    """Accepts the bearer token "good" as user ada of client app-1."""

    async def verify_token(self, token: str) -> Any:
        """Return an AccessToken for "good", else None."""
        from mcp.server.auth.provider import AccessToken

        if token != "good":
            return None
        return AccessToken(
            token=token, client_id="app-1", scopes=["tools"], subject="ada"
        )


async def _http_calls(
    server: Any,
    *,
    headers: dict[str, str] | None = None,
    modern: bool = False,
    **app_options: Any,
) -> dict[str, Any]:
    """Serve over HTTP on a free port, call whoami twice, shut down.

    *headers* are sent with every HTTP request; *modern* speaks the 2026
    protocol (no initialize handshake).
    """
    import httpx2

    from mcp.client.streamable_http import streamable_http_client

    session_ids: list[str] = []

    async def on_response(response: Any) -> None:
        value = response.headers.get("mcp-session-id")
        if value:
            session_ids.append(value)

    out: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        url = await group.start(
            partial(run_http, server, port=0, **app_options)
        )
        out["url"] = url
        async with httpx2.AsyncClient(
            headers=headers or {}, event_hooks={"response": [on_response]}
        ) as http:
            async with streamable_http_client(url, http_client=http) as (
                read,
                write,
            ):
                async with ClientSession(
                    read, write, client_info=CLIENT
                ) as session:
                    if modern:
                        await session.discover()
                    else:
                        await session.initialize()
                    meta = {"io.toolctx/user_id": "mallory", "traceparent": TP}
                    first = await session.call_tool("whoami", {}, meta=meta)
                    second = await session.call_tool("whoami", {})
        group.cancel_scope.cancel()
    out["calls"] = [first.structured_content, second.structured_content]
    out["session_ids"] = session_ids
    return out


def _port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


class TestStreamableHttp:
    """run_http(): streamable HTTP on a free local port."""

    def test_session_and_shutdown(self):
        """Calls see the mcp-session-id of their HTTP session; cancelling stops the server."""
        out = run(lambda: _http_calls(create_server(mcp_app.registry)))
        first, second = out["calls"]

        assert out["url"].startswith("http://127.0.0.1:")
        assert (
            first["session_id"]
            == second["session_id"]
            == out["session_ids"][0]
        )
        assert first["tool_call_id"] != second["tool_call_id"]
        assert first["metadata"]["traceparent"] == TP
        assert first["metadata"]["mcp.client_info"]["name"] == "pytest-client"
        assert first["user_id"] is None
        with (
            pytest.raises(OSError),
            socket.create_connection(
                ("127.0.0.1", _port_of(out["url"])), timeout=2
            ),
        ):
            pass

    def test_authenticated_user(self):
        """With bearer auth the user comes from the token and a claimed user loses, even when trusted."""
        from mcp.server.auth.settings import AuthSettings

        server = create_server(mcp_app.registry, trust_meta_identity=True)
        auth = AuthSettings(
            issuer_url="https://auth.example.com",  # type: ignore[arg-type]
            resource_server_url=None,
            required_scopes=["tools"],
        )
        out = run(
            lambda: _http_calls(
                server,
                headers={"Authorization": "Bearer good"},
                auth=auth,
                token_verifier=StaticVerifier(),
            )
        )
        first, _ = out["calls"]

        assert first["user_id"] == "ada"
        assert first["scope"] == "AccessToken"
        assert first["metadata"]["mcp.auth"] == {
            "client_id": "app-1",
            "subject": "ada",
            "scopes": ["tools"],
        }

    def test_cli_serves_http_until_interrupted(self):
        """The CLI serves streamable HTTP at the URL it announces and stops on SIGINT."""
        import signal

        from mcp.client.streamable_http import streamable_http_client

        async def go() -> tuple[str, Any, int]:
            argv = [*SERVE, "--transport", "streamable-http", "--port", "0"]
            async with await anyio.open_process(argv, cwd=str(ROOT)) as proc:
                assert proc.stderr is not None
                reader = BufferedByteReceiveStream(proc.stderr)
                line = (await reader.receive_until(b"\n", 4096)).decode()
                url = line.rsplit(" ", 1)[1]
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(
                        read, write, client_info=CLIENT
                    ) as session:
                        await session.initialize()
                        result = await session.call_tool(
                            "add", {"a": 1, "b": 2}
                        )
                proc.send_signal(signal.SIGINT)
                return line, result, await proc.wait()

        line, result, code = run(go)

        assert line.startswith(
            "toolctx: serving 8 tools over MCP at http://127.0.0.1:"
        )
        assert text_of(result) == "3"
        assert code == 130

    def test_stateless_http_has_no_session(self):
        """On stateless HTTP there is no transport session to report."""
        out = run(
            lambda: _http_calls(
                create_server(mcp_app.registry), stateless=True
            )
        )
        first, second = out["calls"]

        assert out["session_ids"] == []
        assert first["session_id"] is None
        assert second["session_id"] is None
        assert first["metadata"]["traceparent"] == TP

    def test_stateless_http_ignores_a_session_header_the_client_chose(self):
        """On stateless HTTP a client sending its own mcp-session-id header does not choose the call's session: it stays None."""
        out = run(
            lambda: _http_calls(
                create_server(mcp_app.registry),
                headers={"mcp-session-id": "chosen-by-the-client"},
                stateless=True,
            )
        )
        first, second = out["calls"]

        assert first["session_id"] is None
        assert second["session_id"] is None

    def test_the_2026_protocol_has_no_http_session(self):
        """On the 2026 protocol over HTTP (no sessions) a client-chosen mcp-session-id header is ignored too."""
        out = run(
            lambda: _http_calls(
                create_server(mcp_app.registry),
                headers={"mcp-session-id": "chosen-by-the-client"},
                modern=True,
            )
        )
        first, second = out["calls"]

        assert first["metadata"]["mcp.protocol_version"] == "2026-07-28"
        assert first["session_id"] is None
        assert second["session_id"] is None

    @pytest.mark.parametrize(
        "argv",
        [
            [*SERVE, "--transport", "streamable-http", "--port", "0"],
            [
                sys.executable,
                "-m",
                "tests.mcp_http_server",
                "tests.mcp_app:registry",
                "--stateless",
            ],
        ],
        ids=["stateful", "stateless"],
    )
    def test_a_tool_that_exits_does_not_stop_the_server(self, argv):
        """Over HTTP, a tool raising SystemExit is an isError result and the server process keeps answering, on the same and on new connections."""
        from mcp.client.streamable_http import streamable_http_client

        async def connection(url: str, *calls: tuple[str, Any]) -> list[Any]:
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(
                    read, write, client_info=CLIENT
                ) as session:
                    await session.initialize()
                    return [
                        await session.call_tool(name, arguments)
                        for name, arguments in calls
                    ]

        async def go() -> tuple[list[Any], list[Any], Any]:
            async with await anyio.open_process(argv, cwd=str(ROOT)) as proc:
                assert proc.stderr is not None
                reader = BufferedByteReceiveStream(proc.stderr)
                line = (await reader.receive_until(b"\n", 4096)).decode()
                url = line.rsplit(" ", 1)[1]
                try:
                    first = await connection(
                        url,
                        ("parse_flags", {"flags": ["--count", "many"]}),
                        ("add", {"a": 1, "b": 2}),
                    )
                    second = await connection(url, ("add", {"a": 2, "b": 2}))
                    running = proc.returncode
                finally:
                    proc.terminate()
            return first, second, running

        (exits, same), [new], running = run(go)

        assert exits.is_error is True
        assert text_of(exits) == "Tool 'parse_flags' failed: SystemExit: 2"
        assert text_of(same) == "3"
        assert text_of(new) == "4"
        assert running is None
