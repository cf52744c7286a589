"""toolctx.adapters.langchain: toolctx tools inside LangChain and LangGraph.

Every run-loop test drives the framework's own loop (a LangGraph
``StateGraph`` with ``ToolNode``, or ``langchain.agents.create_agent``)
with langchain-core's own fake chat model, extended only by what it
lacks: ``bind_tools`` and a record of every message it was sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys

from collections.abc import Sequence
from typing import Any

import pytest


pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
)
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.utils import convert_to_openai_messages
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    execution_context,
    publish,
    set_state,
)
from toolctx.adapters import langchain as adapter
from toolctx.content import Audio, File, Image, Text


SECRET = "sk-live-0123456789"
TRACE = ContextKey("trace", str)


class Secrets:
    """A runtime-only scope holding a credential (never for the model)."""

    token = SECRET

    def __repr__(self) -> str:
        return f"Secrets({SECRET})"


class ScriptedModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model, with tools and a record.

    ``responses`` are answered in order; ``received`` keeps every message
    list the model was sent and ``bound`` the tools it was given.
    """

    received: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        """Record the tools as a provider would receive them."""
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=self.bound, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        self.received.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def calling(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """A model turn that asks for one tool call."""
    return AIMessage(
        "", tool_calls=[{"name": name, "args": args, "id": call_id}]
    )


def scripted(*turns: AIMessage) -> ScriptedModel:
    """A model that plays *turns*, then says it is done."""
    return ScriptedModel(responses=[*turns, AIMessage("done")])


def graph(
    model: ScriptedModel,
    lc_tools: list[BaseTool],
    context_schema: type[Any] | None = None,
) -> Any:
    """The classic LangGraph agent: a model node and a ToolNode in a loop."""
    bound = model.bind_tools(lc_tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=context_schema)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(lc_tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The ToolMessages among *messages*."""
    return [m for m in messages if isinstance(m, ToolMessage)]


def ask(text: str) -> dict[str, list[BaseMessage]]:
    """The input of one agent run."""
    return {"messages": [HumanMessage(text)]}


@pytest.fixture(name="registry")
def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first one.
            b: The second one.
        """
        return a + b

    @registry.tool
    def whoami() -> dict[str, object]:
        """Say who is calling, and in which call."""
        ctx = execution_context()
        return {"user": ctx.user_id, "call": ctx.tool_call_id}

    @registry.tool
    async def awhoami() -> str:
        """Say who is calling, asynchronously."""
        return f"user {execution_context().user_id}"

    @registry.tool
    def traced(text: str) -> str:
        """Publish a trace id for the host, and use the scope."""
        scope = execution_context().scope_as(Secrets)
        publish(TRACE, f"trace-{len(scope.token)}")
        return text.upper()

    @registry.tool
    def chart() -> list[Text | Image | File | Audio]:
        """Draw the chart, attach the report and a voice note."""
        return [
            "Sales by month",
            Image(b"\x89PNG", "image/png"),
            File(b"%PDF-1.7", "application/pdf", name="report.pdf"),
            Audio(b"RIFF", "audio/wav"),
        ]

    @registry.tool
    def remember(note: str) -> str:
        """Keep a note in the session."""
        set_state("note", note)
        return "noted"

    return registry


@pytest.fixture(name="dispatcher")
def _dispatcher(registry: Registry) -> Dispatcher:
    return Dispatcher(registry)


@pytest.fixture(name="lc_tools")
def _lc_tools(dispatcher: Dispatcher) -> list[BaseTool]:
    return adapter.tools(dispatcher)


def by_name(lc_tools: list[BaseTool], name: str) -> BaseTool:
    """The tool called *name*."""
    return next(t for t in lc_tools if t.name == name)


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> Any:
    """A LangChain tool call, as the model's AIMessage carries it."""
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}


class TestToolList:
    """The tool list mirrors the registry."""

    def test_one_tool_per_registry_tool_in_order(
        self, registry: Registry, lc_tools: list[BaseTool]
    ) -> None:
        """The list has the registry's tools, in order, as BaseTools."""
        assert [t.name for t in lc_tools] == list(registry)
        assert all(isinstance(t, BaseTool) for t in lc_tools)

    def test_same_description_and_schema(
        self, registry: Registry, lc_tools: list[BaseTool]
    ) -> None:
        """Each tool carries toolctx's description and JSON Schema dict."""
        for lc_tool, definition in zip(
            lc_tools, registry.definitions(), strict=True
        ):
            assert lc_tool.description == definition.description
            assert lc_tool.args_schema == definition.parameters
            assert isinstance(lc_tool.args_schema, dict)

    def test_the_model_is_offered_the_same_schema(
        self, registry: Registry, lc_tools: list[BaseTool]
    ) -> None:
        """bind_tools hands the provider toolctx's names and schemas."""
        model = scripted()
        model.bind_tools(lc_tools)
        offered = [t["function"] for t in model.bound]
        assert [
            (f["name"], f["description"], f["parameters"]) for f in offered
        ] == [
            (d.name, d.description, d.parameters)
            for d in registry.definitions()
        ]

    def test_schema_is_a_copy(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """Changing a tool's schema dict leaves the registry's untouched."""
        lc_tool = adapter.tools(dispatcher)[0]
        assert isinstance(lc_tool.args_schema, dict)
        lc_tool.args_schema["properties"].clear()
        assert registry.definitions()[0].parameters["properties"]

    def test_a_snapshot_of_the_registry(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """A tool registered later appears on the next call of tools()."""
        before = adapter.tools(dispatcher)

        @registry.tool
        def later() -> str:
            """Registered after the first list."""
            return "late"

        assert "later" not in [t.name for t in before]
        assert adapter.tools(dispatcher)[-1].name == "later"

    def test_rejects_what_is_not_a_dispatcher(
        self, registry: Registry
    ) -> None:
        """Passing a Registry instead of a Dispatcher says what to pass."""
        with pytest.raises(TypeError, match=r"takes a toolctx\.Dispatcher"):
            adapter.tools(registry)  # type: ignore[arg-type]

    def test_rejects_a_context_that_is_not_callable(
        self, dispatcher: Dispatcher
    ) -> None:
        """A context= that cannot be called is refused up front."""
        template = ExecutionContext(user_id="ada")
        with pytest.raises(TypeError, match="context must be a callable"):
            adapter.tools(dispatcher, context=template)  # type: ignore[arg-type]


class TestInvoke:
    """Invoking a tool directly, with a tool call or plain arguments."""

    def test_a_tool_call_returns_a_tool_message(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Invoked with a tool call, the tool answers with its ToolMessage."""
        message = by_name(lc_tools, "add").invoke(
            call("add", {"a": 2, "b": 3}, "call_7")
        )
        assert isinstance(message, ToolMessage)
        assert message.tool_call_id == "call_7"
        assert message.name == "add"
        assert message.status == "success"
        assert message.content == "5"
        assert message.artifact is None

    def test_json_output_is_compact_json(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Non-string output reaches the model as toolctx's compact JSON."""
        message = by_name(lc_tools, "whoami").invoke(call("whoami", {}, "c9"))
        assert message.content == '{"user":null,"call":"c9"}'

    def test_plain_arguments_return_the_content(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Invoked without a tool call, the tool returns the content alone."""
        assert by_name(lc_tools, "add").invoke({"a": 2, "b": 3}) == "5"

    def test_invalid_arguments_are_an_error_message(
        self, dispatcher: Dispatcher, lc_tools: list[BaseTool]
    ) -> None:
        """A bad argument is a status="error" message worded by toolctx."""
        args = {"a": "2", "b": 3, "c": 1}
        message = by_name(lc_tools, "add").invoke(call("add", args))
        expected = dispatcher.dispatch(ToolCall("add", args, "c1")).error
        assert message.status == "error"
        assert message.content == expected
        assert "a" in message.content
        assert "c" in message.content

    def test_published_metadata_is_the_artifact(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """publish()ed values become the ToolMessage's artifact dict."""
        template = ExecutionContext(scope=Secrets())
        message = by_name(lc_tools, "traced").invoke(
            call("traced", {"text": "hi"}),
            config={"configurable": {adapter.CONFIG_KEY: template}},
        )
        assert message.content == "HI"
        assert message.artifact == {"trace": f"trace-{len(SECRET)}"}

    def test_arguments_named_like_langchain_keywords(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """Arguments called config, run_manager or runtime reach the tool.

        LangChain adds ``config`` and ``run_manager`` keywords to a tool's
        ``_run``; the adapter keeps the model's arguments apart from them.
        """

        @registry.tool
        def configure(config: str, run_manager: str, runtime: int) -> str:
            """Configure a job."""
            return f"{config}/{run_manager}/{runtime}"

        lc_tool = by_name(adapter.tools(dispatcher), "configure")
        args = {"config": "fast", "run_manager": "ada", "runtime": 3}
        assert lc_tool.invoke(call("configure", args)).content == "fast/ada/3"
        model = scripted(calling("configure", args, "call_1"))
        out = graph(model, [lc_tool]).invoke(ask("configure"))
        assert tool_messages(out["messages"])[0].content == "fast/ada/3"

    def test_a_string_input_is_json_text(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """A str input is the model's JSON text, parsed by toolctx."""
        assert by_name(lc_tools, "add").invoke('{"a": 1, "b": 1}') == "2"

    def test_ainvoke_runs_async_tools(self, lc_tools: list[BaseTool]) -> None:
        """With ainvoke, async tools run on the loop through adispatch."""
        template = ExecutionContext(user_id="ada")
        message = asyncio.run(
            by_name(lc_tools, "awhoami").ainvoke(
                call("awhoami", {}),
                config={"configurable": {adapter.CONFIG_KEY: template}},
            )
        )
        assert message.content == "user ada"

    def test_a_wrong_template_in_the_config_raises(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Something else under toolctx_context is a host bug, not a guess."""
        config: RunnableConfig = {
            "configurable": {adapter.CONFIG_KEY: {"user_id": "ada"}}
        }
        with pytest.raises(TypeError, match="must be a toolctx"):
            by_name(lc_tools, "whoami").invoke(call("whoami", {}), config)

    def test_inside_a_toolctx_call_the_context_is_inherited(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """A LangChain tool run inside a toolctx tool is a nested call."""
        seen: list[ExecutionContext] = []

        @registry.tool
        def inner() -> str:
            """Record the nested call's context."""
            seen.append(execution_context())
            return "ok"

        lc_inner = by_name(adapter.tools(dispatcher), "inner")

        @registry.tool
        def outer() -> str:
            """Run the LangChain tool, like a sub-agent would."""
            return str(lc_inner.invoke(call("inner", {}, "c2")).content)

        result = dispatcher.dispatch(
            ToolCall("outer", {}, "c1"), ExecutionContext(user_id="ada")
        )
        assert result.output == "ok"
        assert seen[0].user_id == "ada"
        assert seen[0].parent_invocation_id == result.invocation_id


class TestToolNode:
    """Inside LangGraph's ToolNode, in a StateGraph agent loop."""

    def test_the_user_comes_from_the_graph_context(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """graph.invoke(context=ExecutionContext) is what the tool reads."""
        model = scripted(calling("whoami", {}, "call_1"))
        app = graph(model, lc_tools, context_schema=ExecutionContext)
        out = app.invoke(
            ask("who am I?"), context=ExecutionContext(user_id="ada")
        )
        [message] = tool_messages(out["messages"])
        assert json.loads(str(message.content)) == {
            "user": "ada",
            "call": "call_1",
        }
        assert out["messages"][-1].content == "done"

    def test_the_user_comes_from_the_configurable(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """config["configurable"]["toolctx_context"] works in a graph too."""
        model = scripted(calling("whoami", {}, "call_1"))
        app = graph(model, lc_tools)
        template = ExecutionContext(user_id="bob")
        out = app.invoke(
            ask("who am I?"),
            config={"configurable": {adapter.CONFIG_KEY: template}},
        )
        [message] = tool_messages(out["messages"])
        assert json.loads(str(message.content))["user"] == "bob"

    def test_async_run_of_an_async_tool(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """graph.ainvoke runs an async toolctx tool with the run's user."""
        model = scripted(calling("awhoami", {}, "call_1"))
        app = graph(model, lc_tools, context_schema=ExecutionContext)
        out = asyncio.run(
            app.ainvoke(ask("who?"), context=ExecutionContext(user_id="ada"))
        )
        [message] = tool_messages(out["messages"])
        assert message.content == "user ada"

    def test_an_invalid_argument_reaches_the_model(
        self, dispatcher: Dispatcher, lc_tools: list[BaseTool]
    ) -> None:
        """The next model call reads toolctx's own error message."""
        args = {"a": "two", "b": 3}
        model = scripted(calling("add", args, "call_1"))
        graph(model, lc_tools).invoke(ask("add two and three"))
        expected = dispatcher.dispatch(ToolCall("add", args, "call_1")).error
        [message] = tool_messages(model.received[1])
        assert message.status == "error"
        assert message.tool_call_id == "call_1"
        assert message.content == expected

    def test_the_run_goes_on_after_an_error(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """After an error result the model retries and the retry works."""
        model = scripted(
            calling("add", {"a": "2", "b": 3}, "call_1"),
            calling("add", {"a": 2, "b": 3}, "call_2"),
        )
        out = graph(model, lc_tools).invoke(ask("add"))
        first, second = tool_messages(out["messages"])
        assert (first.status, second.status) == ("error", "success")
        assert second.content == "5"

    def test_scope_and_host_data_never_reach_the_model(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """No message the model got carries the scope or host-only data."""
        model = scripted(
            calling("traced", {"text": "hi"}, "call_1"),
            calling("traced", {"text": 5}, "call_2"),
            calling("whoami", {}, "call_3"),
        )
        template = ExecutionContext(user_id="ada", scope=Secrets())
        graph(model, lc_tools, ExecutionContext).invoke(
            ask("go"), context=template
        )
        assert len(model.received) == 4
        for messages in model.received:
            for message in messages:
                assert SECRET not in repr(message)
                assert "Secrets" not in repr(message)
            wire = json.dumps(convert_to_openai_messages(messages))
            assert "trace-" not in wire
        last = tool_messages(model.received[-1])
        assert last[0].artifact == {"trace": f"trace-{len(SECRET)}"}
        assert last[1].status == "error"

    def test_a_session_gets_its_state_changes(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """A Session as the template gets each call's set_state changes."""
        session = Session("chat-1", user_id="ada")
        model = scripted(calling("remember", {"note": "milk"}, "call_1"))
        graph(model, lc_tools, Session).invoke(
            ask("remember"), context=session
        )
        assert session.state["note"] == "milk"


BLOCKS = [
    {"type": "text", "text": "Sales by month"},
    {"type": "image", "base64": "iVBORw==", "mime_type": "image/png"},
    {
        "type": "file",
        "base64": "JVBERi0xLjc=",
        "mime_type": "application/pdf",
        "extras": {"filename": "report.pdf"},
    },
    {
        "type": "text",
        "text": "[audio audio/wav, 4 bytes: LangChain tool messages carry "
        "no audio; send it in a user message, see toolctx docs 'Content']",
    },
]


class TestContent:
    """Content parts become LangChain content blocks."""

    def test_parts_become_standard_content_blocks(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Text, image and file parts are LangChain's own blocks."""
        message = by_name(lc_tools, "chart").invoke(call("chart", {}))
        assert message.status == "success"
        assert message.content == BLOCKS
        assert message.content_blocks == BLOCKS

    def test_provider_translation_keeps_data_and_file_name(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """LangChain's OpenAI translation carries the bytes and file name."""
        message = by_name(lc_tools, "chart").invoke(call("chart", {}))
        [wire] = convert_to_openai_messages([message])
        text, image, pdf, _ = wire["content"]
        assert text == {"type": "text", "text": "Sales by month"}
        assert image["image_url"]["url"] == "data:image/png;base64,iVBORw=="
        assert pdf["file"]["filename"] == "report.pdf"
        assert pdf["file"]["file_data"] == (
            "data:application/pdf;base64,JVBERi0xLjc="
        )

    def test_the_model_receives_the_blocks(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """In a ToolNode run, the next model call gets the blocks as such.

        ToolNode turns content with a block type LangChain does not allow
        in tool messages (audio) into JSON text, data and all: the audio
        part is a short notice instead, so the blocks survive.
        """
        model = scripted(calling("chart", {}, "call_1"))
        graph(model, lc_tools).invoke(ask("chart it"))
        [message] = tool_messages(model.received[1])
        assert message.content == BLOCKS

    def test_plain_arguments_return_the_blocks(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """Without a tool call, the content is the list of blocks."""
        assert by_name(lc_tools, "chart").invoke({}) == BLOCKS


@dataclasses.dataclass
class AppContext:
    """What an application already passes to its LangGraph runs."""

    user_id: str
    tenant: str


class TestCustomContext:
    """The context= callable and graph_context()."""

    def test_a_callable_maps_the_apps_own_context(
        self, dispatcher: Dispatcher
    ) -> None:
        """context= builds the template from the app's context and config."""
        configs: list[RunnableConfig] = []

        def from_app(config: RunnableConfig) -> ExecutionContext:
            configs.append(config)
            app = adapter.graph_context(config)
            assert isinstance(app, AppContext)
            return ExecutionContext(
                user_id=app.user_id,
                session_id=config["configurable"]["thread_id"],
                metadata={"tenant": app.tenant},
            )

        lc_tools = adapter.tools(dispatcher, context=from_app)
        model = scripted(calling("whoami", {}, "call_1"))
        out = graph(model, lc_tools, AppContext).invoke(
            ask("who?"),
            config={"configurable": {"thread_id": "t-1"}},
            context=AppContext("ada", "acme"),
        )
        [message] = tool_messages(out["messages"])
        assert json.loads(str(message.content))["user"] == "ada"
        assert len(configs) == 1

    def test_a_graph_context_of_another_type_is_ignored(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """The default maps only toolctx types: an app's own runs empty."""
        model = scripted(calling("whoami", {}, "call_1"))
        out = graph(model, lc_tools, AppContext).invoke(
            ask("who?"), context=AppContext("ada", "acme")
        )
        [message] = tool_messages(out["messages"])
        assert json.loads(str(message.content))["user"] is None

    def test_graph_context_outside_a_graph_is_none(self) -> None:
        """Outside a LangGraph run there is no graph context."""
        assert adapter.graph_context({}) is None
        assert adapter.graph_context({"configurable": {"x": 1}}) is None


class TestCreateAgent:
    """Inside langchain.agents.create_agent."""

    def test_the_agent_runs_the_tool_for_the_user(
        self, lc_tools: list[BaseTool]
    ) -> None:
        """create_agent's loop: context=ExecutionContext reaches the tool."""
        model = scripted(calling("whoami", {}, "call_1"))
        agent = create_agent(model, lc_tools, context_schema=ExecutionContext)
        out = agent.invoke(
            ask("who am I?"), context=ExecutionContext(user_id="ada")
        )
        [message] = tool_messages(out["messages"])
        assert json.loads(str(message.content))["user"] == "ada"
        assert [t["function"]["name"] for t in model.bound] == [
            t.name for t in lc_tools
        ]

    def test_async_agent_and_an_error_the_model_reads(
        self, dispatcher: Dispatcher, lc_tools: list[BaseTool]
    ) -> None:
        """ainvoke: the model's next turn reads toolctx's error verbatim."""
        model = scripted(
            calling("add", {"a": 1}, "call_1"),
            calling("awhoami", {}, "call_2"),
        )
        agent = create_agent(model, lc_tools, context_schema=ExecutionContext)
        out = asyncio.run(
            agent.ainvoke(ask("go"), context=ExecutionContext(user_id="ada"))
        )
        expected = dispatcher.dispatch(ToolCall("add", {"a": 1})).error
        error, answer = tool_messages(out["messages"])
        assert tool_messages(model.received[1]) == [error]
        assert (error.status, error.content) == ("error", expected)
        assert answer.content == "user ada"


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run *code* in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class TestImports:
    """The framework is optional and imported lazily."""

    def test_import_toolctx_does_not_import_langchain(self) -> None:
        """Importing toolctx (and toolctx.adapters) loads no LangChain."""
        done = run_python(
            "import sys, toolctx, toolctx.adapters\n"
            "print(sorted(m for m in sys.modules if m.startswith("
            "('langchain', 'langgraph'))))"
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[]"

    @pytest.mark.parametrize(
        "blocked", ["langchain_core", "langchain_core.tools"]
    )
    def test_a_missing_framework_says_what_to_install(
        self, blocked: str
    ) -> None:
        """Without langchain-core the import names the extra to install."""
        done = run_python(
            "import sys\n"
            f"sys.modules[{blocked!r}] = None\n"
            "try:\n"
            "    import toolctx.adapters.langchain\n"
            "except ImportError as exc:\n"
            "    print(exc)\n"
        )
        assert done.returncode == 0, done.stderr
        assert "pip install 'toolctx[langchain]'" in done.stdout
