"""toolctx.adapters.pydantic_ai: toolctx tools in Pydantic AI's run loop.

Every test runs a real ``Agent`` with Pydantic AI's own scripted models
(``FunctionModel``, ``TestModel``): the messages the scripted model
receives are what a real model would be sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import warnings

from collections.abc import Iterator, Sequence
from typing import Any

import pytest


pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, BinaryContent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolAnnotations,
    ToolCall,
    current_context,
    execution_context,
    publish,
    set_state,
)
from toolctx.adapters.pydantic_ai import toolset
from toolctx.content import File, Image, Text


SECRET = "sk-live-do-not-leak"


class Scripted:
    """A FunctionModel script: one list of tool calls per model turn.

    Records what the model receives on each turn; answers ``"done"`` once
    the script is used up.
    """

    def __init__(self, *turns: Sequence[ToolCallPart]) -> None:
        self.turns = list(turns)
        self.received: list[list[ModelMessage]] = []
        self.infos: list[AgentInfo] = []

    def __call__(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> ModelResponse:
        self.received.append(list(messages))
        self.infos.append(info)
        if self.turns:
            return ModelResponse(parts=list(self.turns.pop(0)))
        return ModelResponse(parts=[TextPart("done")])

    def returns(self) -> list[ToolReturnPart]:
        """The tool returns the model received, in order."""
        last = self.received[-1]
        return [
            part
            for message in last
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]


def call(name: str, args: str | dict[str, Any], call_id: str) -> ToolCallPart:
    """A tool call as a model writes it."""
    return ToolCallPart(tool_name=name, args=args, tool_call_id=call_id)


def model_visible(script: Scripted) -> str:
    """Everything a provider would send the model, as one text."""
    texts: list[str] = []
    for info in script.infos:
        texts.extend(
            json.dumps(
                {
                    "name": d.name,
                    "description": d.description,
                    "parameters": d.parameters_json_schema,
                }
            )
            for d in info.function_tools
        )
    for message in script.received[-1]:
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                texts.append(part.model_response_str())
                texts.append(json.dumps(part.model_response_object()))
            elif isinstance(part, ToolCallPart):
                texts.append(part.args_as_json_str())
            else:
                texts.append(str(getattr(part, "content", "")))
    return "\n".join(texts)


@pytest.fixture(autouse=True)
def _close_the_run_sync_loop() -> Iterator[None]:
    """Close the event loop Agent.run_sync leaves set on the thread.

    Pydantic AI's run_sync creates a loop, sets it as the thread's and
    never closes it; the next asyncio.run() unsets it, and collecting it
    warns (an error here). Each test closes it, so none leaks into the
    next test.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # 3.14: no current loop
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture(name="registry")
def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def whoami() -> str:
        """Say who is calling, and in which call."""
        ctx = execution_context()
        return f"{ctx.user_id} {ctx.tool_call_id}"

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first one.
            b: The second one.
        """
        return a + b

    @registry.tool
    async def awhoami() -> str:
        """Say who is calling, from an async tool."""
        await asyncio.sleep(0)
        return execution_context().user_id or "nobody"

    return registry


@pytest.fixture(name="dispatcher")
def _dispatcher(registry: Registry) -> Dispatcher:
    return Dispatcher(registry)


class TestContext:
    """The call's ExecutionContext comes from the run's RunContext."""

    def test_tool_reads_the_user_id_from_deps(
        self, dispatcher: Dispatcher
    ) -> None:
        """ExecutionContext deps: the tool reads the user id and call id."""
        script = Scripted([call("whoami", "{}", "call-1")])
        agent = Agent(
            FunctionModel(script),
            deps_type=ExecutionContext,
            toolsets=[toolset(dispatcher)],
        )
        result = agent.run_sync(
            "who am I?", deps=ExecutionContext(user_id="ada")
        )
        assert result.output == "done"
        (ret,) = script.returns()
        assert ret.content == "ada call-1"
        assert ret.tool_call_id == "call-1"
        assert ret.outcome == "success"

    def test_sync_and_async_tools_both_see_the_context(
        self, dispatcher: Dispatcher
    ) -> None:
        """A sync tool (worker thread) and an async one see the context."""
        script = Scripted(
            [call("whoami", "{}", "c-sync"), call("awhoami", "{}", "c-async")]
        )
        agent = Agent(
            FunctionModel(script),
            deps_type=ExecutionContext,
            toolsets=[toolset(dispatcher)],
        )
        agent.run_sync("hi", deps=ExecutionContext(user_id="ada"))
        contents = {r.tool_call_id: r.content for r in script.returns()}
        assert contents == {"c-sync": "ada c-sync", "c-async": "ada"}

    def test_async_run(self, dispatcher: Dispatcher) -> None:
        """agent.run dispatches in the caller's loop, leaving nothing bound."""
        script = Scripted([call("awhoami", "{}", "c1")])
        agent = Agent(
            FunctionModel(script),
            deps_type=ExecutionContext,
            toolsets=[toolset(dispatcher)],
        )

        async def main() -> None:
            await agent.run("hi", deps=ExecutionContext(user_id="bob"))
            assert current_context() is None

        asyncio.run(main())
        (ret,) = script.returns()
        assert ret.content == "bob"

    def test_session_deps_get_the_state_changes(self) -> None:
        """Session deps: tools read its user and state; set_state lands."""
        registry = Registry()

        @registry.tool
        def bump() -> str:
            """Count one more visit."""
            ctx = execution_context()
            n = int(str(ctx.state["count"])) + 1
            set_state("count", n)
            return f"{ctx.user_id} {n}"

        session = Session("chat-1", user_id="ada", state={"count": 4})
        script = Scripted(
            [call("bump", "{}", "c1")], [call("bump", "{}", "c2")]
        )
        agent = Agent(
            FunctionModel(script),
            deps_type=Session,
            toolsets=[toolset(Dispatcher(registry))],
        )
        agent.run_sync("bump twice", deps=session)
        assert session.state["count"] == 6
        assert [r.output for r in session.results] == ["ada 5", "ada 6"]

    def test_other_deps_give_an_empty_context(
        self, dispatcher: Dispatcher
    ) -> None:
        """Other deps: an empty template, still with the model's call id."""

        @dataclasses.dataclass
        class Deps:
            user: str

        script = Scripted([call("whoami", "{}", "c9")])
        agent = Agent(
            FunctionModel(script),
            deps_type=Deps,
            toolsets=[toolset(dispatcher)],
        )
        agent.run_sync("hi", deps=Deps("ada"))
        (ret,) = script.returns()
        assert ret.content == "None c9"

    def test_a_sub_agent_inside_a_tool_keeps_the_callers_context(
        self,
    ) -> None:
        """A sub-agent run in a tool inherits its context and lineage.

        The sub-agent's deps are not a context, so its tools get the calling
        tool's context, with the calling invocation as their parent.
        """
        inner_registry = Registry()

        @inner_registry.tool
        def lookup() -> str:
            """Say who asked, and from which call."""
            ctx = execution_context()
            return f"{ctx.user_id} {ctx.parent_invocation_id}"

        inner_script = Scripted([call("lookup", "{}", "inner-1")])
        inner = Agent(
            FunctionModel(inner_script),
            toolsets=[toolset(Dispatcher(inner_registry))],
        )
        outer_registry = Registry()

        @outer_registry.tool
        async def delegate() -> str:
            """Ask a sub-agent."""
            await inner.run("look it up")
            return execution_context().invocation_id

        outer_script = Scripted([call("delegate", "{}", "outer-1")])
        outer = Agent(
            FunctionModel(outer_script),
            deps_type=ExecutionContext,
            toolsets=[toolset(Dispatcher(outer_registry))],
        )
        outer.run_sync("delegate", deps=ExecutionContext(user_id="ada"))
        (outer_return,) = outer_script.returns()
        (inner_return,) = inner_script.returns()
        assert inner_return.content == f"ada {outer_return.content}"

    def test_custom_context_function(self, dispatcher: Dispatcher) -> None:
        """context(run_context) builds the template; the call id stays."""

        @dataclasses.dataclass
        class Deps:
            user: str

        seen: list[RunContext[Deps]] = []

        def context(run_context: RunContext[Deps]) -> ExecutionContext:
            seen.append(run_context)
            return ExecutionContext(user_id=run_context.deps.user)

        script = Scripted([call("whoami", "{}", "c7")])
        agent = Agent(
            FunctionModel(script),
            deps_type=Deps,
            toolsets=[toolset(dispatcher, context=context)],
        )
        agent.run_sync("hi", deps=Deps("grace"))
        (ret,) = script.returns()
        assert ret.content == "grace c7"
        assert [rc.tool_call_id for rc in seen] == ["c7"]

    def test_async_context_function(self, dispatcher: Dispatcher) -> None:
        """An async context function is awaited: it may load a session."""
        session = Session("chat-9", user_id="lin")

        async def context(run_context: RunContext[str]) -> Session:
            await asyncio.sleep(0)
            assert run_context.deps == "chat-9"
            return session

        script = Scripted([call("whoami", "{}", "c3")])
        agent = Agent(
            FunctionModel(script),
            deps_type=str,
            toolsets=[toolset(dispatcher, context=context)],
        )
        agent.run_sync("hi", deps="chat-9")
        (ret,) = script.returns()
        assert ret.content == "lin c3"
        assert [r.call_id for r in session.results] == ["c3"]

    def test_context_function_returning_another_type_is_a_clear_error(
        self, dispatcher: Dispatcher
    ) -> None:
        """A context function returning another type fails with a TypeError."""
        script = Scripted([call("whoami", "{}", "c1")])
        agent = Agent(
            FunctionModel(script),
            toolsets=[toolset(dispatcher, context=_returns_a_dict)],
        )
        with pytest.raises(TypeError, match=r"ExecutionContext, a Session"):
            agent.run_sync("hi")

    def test_bad_arguments_to_toolset_are_refused(
        self, dispatcher: Dispatcher
    ) -> None:
        """toolset() refuses a non-Dispatcher and a non-callable context."""
        with pytest.raises(TypeError, match=r"toolctx\.Dispatcher"):
            toolset(Registry())  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="function of the RunContext"):
            toolset(dispatcher, context="deps")  # type: ignore[call-overload]


class TestErrors:
    """Error results reach the model in toolctx's words; the run goes on."""

    @pytest.mark.parametrize(
        "args",
        [
            '{"a": "1", "b": 2}',
            '{"a": 1, "a": 2, "b": 2}',
            '{"a": 1, "b"',
            "[1, 2]",
            {"a": 1, "b": 2, "c": 3},
            {"a": 1.5, "b": 2},
        ],
        ids=[
            "string-for-int",
            "duplicate",
            "cut-off",
            "array",
            "extra",
            "float",
        ],
    )
    def test_invalid_arguments_reach_the_model_as_toolctx_words(
        self, dispatcher: Dispatcher, args: str | dict[str, Any]
    ) -> None:
        """Invalid arguments reach the model as the dispatcher's exact words.

        Text or decoded, they come back as a failed tool return holding the
        dispatcher's message, not a pydantic validation error.
        """
        expected = dispatcher.dispatch(ToolCall("add", args)).error
        assert expected
        script = Scripted([call("add", args, "c1")])
        agent = Agent(FunctionModel(script), toolsets=[toolset(dispatcher)])
        agent.run_sync("add")
        (ret,) = script.returns()
        assert ret.outcome == "failed"
        assert ret.content == expected
        assert ret.model_response_str(wrap_if_error=False) == expected

    def test_a_raising_tool_reaches_the_model_as_toolctx_words(self) -> None:
        """A raising tool gives toolctx's message; the next call works."""
        registry = Registry()

        @registry.tool
        def divide(a: int, b: int) -> float:
            """Divide a by b."""
            return a / b

        dispatcher = Dispatcher(registry)
        expected = dispatcher.dispatch(
            ToolCall("divide", '{"a": 1, "b": 0}')
        ).error
        script = Scripted(
            [call("divide", '{"a": 1, "b": 0}', "c1")],
            [call("divide", '{"a": 1, "b": 4}', "c2")],
        )
        agent = Agent(FunctionModel(script), toolsets=[toolset(dispatcher)])
        agent.run_sync("divide")
        first = [
            p
            for m in script.received[1]
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        assert [(p.outcome, p.content) for p in first] == [
            ("failed", expected)
        ]
        assert script.returns()[-1].content == "0.25"

    def test_errors_do_not_use_up_max_retries(
        self, dispatcher: Dispatcher
    ) -> None:
        """More errors than max_retries do not end the run."""
        script = Scripted(
            *([call("add", '{"a": "x"}', f"c{i}")] for i in range(4))
        )
        agent = Agent(
            FunctionModel(script), toolsets=[toolset(dispatcher)], retries=1
        )
        assert agent.run_sync("add").output == "done"
        assert len(script.received) == 5


class TestNothingLeaks:
    """Scope and host-only data never reach the model."""

    def test_scope_and_published_metadata_never_reach_the_model(
        self,
    ) -> None:
        """The scope and published metadata reach nothing the model is sent.

        The metadata lands in the tool return's host-only ``metadata``.
        """
        registry = Registry()

        @registry.tool
        def fetch(item: str) -> dict[str, str]:
            """Fetch an item with the caller's credentials."""
            token = execution_context().scope
            publish("audit", f"fetched with {token}")
            return {"item": item}

        @registry.tool
        def fail() -> str:
            """Fail, holding the credentials."""
            token = execution_context().scope
            raise PermissionError(f"denied (token {len(str(token))} chars)")

        script = Scripted(
            [call("fetch", '{"item": "x"}', "c1"), call("fail", "{}", "c2")]
        )
        agent = Agent(
            FunctionModel(script),
            deps_type=ExecutionContext,
            toolsets=[toolset(Dispatcher(registry))],
        )
        agent.run_sync(
            "go", deps=ExecutionContext(user_id="ada", scope=SECRET)
        )
        fetched, failed = script.returns()
        assert fetched.content == '{"item":"x"}'
        assert fetched.metadata == {"audit": f"fetched with {SECRET}"}
        assert failed.outcome == "failed"
        assert SECRET not in model_visible(script)


class TestTools:
    """The toolset lists the registry's tools as they are."""

    def test_order_names_descriptions_and_schemas(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """One tool per registered tool, in order, with the same schema."""
        script = Scripted()
        agent = Agent(FunctionModel(script), toolsets=[toolset(dispatcher)])
        agent.run_sync("hi")
        offered = script.infos[0].function_tools
        assert [
            (d.name, d.description, d.parameters_json_schema) for d in offered
        ] == [
            (d.name, d.description, json.loads(json.dumps(d.parameters)))
            for d in registry.definitions()
        ]

    def test_title_annotations_and_output_schema(self) -> None:
        """Title, annotations: host metadata; output_schema: return_schema."""
        registry = Registry()

        @registry.tool(
            title="Look up", annotations=ToolAnnotations(read_only=True)
        )
        def look(key: str) -> int:
            """Look a key up."""
            return len(key)

        tools = asyncio.run(
            toolset(Dispatcher(registry)).get_tools(_run_context())
        )
        definition = tools["look"].tool_def
        assert definition.metadata == {
            "title": "Look up",
            "annotations": {"read_only": True},
        }
        assert definition.return_schema == {"type": "integer"}

    def test_return_schema_is_sent_only_when_asked(self) -> None:
        """The output schema reaches the model only when asked for."""
        registry = Registry()

        @registry.tool
        def count(key: str) -> int:
            """Count a key."""
            return len(key)

        offered: list[str | None] = []
        for ts in (
            toolset(Dispatcher(registry)),
            toolset(Dispatcher(registry)).include_return_schemas(),
        ):
            script = Scripted()
            Agent(FunctionModel(script), toolsets=[ts]).run_sync("hi")
            (definition,) = script.infos[0].function_tools
            offered.append(definition.description)
        # FunctionModel has no native return schemas: Pydantic AI writes the
        # schema into the description.
        plain, asked = offered
        assert plain == "Count a key."
        assert asked is not None
        assert asked.startswith("Count a key.")
        assert '"type": "integer"' in asked

    def test_registry_changes_show_up_in_the_next_run(
        self, registry: Registry, dispatcher: Dispatcher
    ) -> None:
        """Registry changes after toolset() show up in the next run."""
        ts = toolset(dispatcher)

        @registry.tool
        def late() -> str:
            """Arrive late."""
            return "here"

        registry.unregister("add")
        script = Scripted([call("late", "{}", "c1")])
        Agent(FunctionModel(script), toolsets=[ts]).run_sync("hi")
        names = [d.name for d in script.infos[0].function_tools]
        assert names == ["whoami", "awhoami", "late"]
        assert script.returns()[0].content == "here"

    def test_testmodel_calls_every_tool(self, dispatcher: Dispatcher) -> None:
        """TestModel calls every tool with schema-made arguments."""
        agent = Agent(
            TestModel(),
            deps_type=ExecutionContext,
            toolsets=[toolset(dispatcher)],
        )
        result = agent.run_sync("hi", deps=ExecutionContext(user_id="ada"))
        assert json.loads(result.output) == {
            "whoami": "ada pyd_ai_tool_call_id__whoami",
            "add": "0",
            "awhoami": "ada",
        }

    def test_prefixed_toolset(self, dispatcher: Dispatcher) -> None:
        """A prefixed toolset offers prefixed names and runs the right tool."""
        script = Scripted([call("m_add", '{"a": 2, "b": 3}', "c1")])
        agent = Agent(
            FunctionModel(script),
            toolsets=[toolset(dispatcher).prefixed("m")],
        )
        agent.run_sync("hi")
        assert [d.name for d in script.infos[0].function_tools] == [
            "m_whoami",
            "m_add",
            "m_awhoami",
        ]
        assert script.returns()[0].content == "5"

    def test_validator_decodes_and_never_refuses(
        self, dispatcher: Dispatcher
    ) -> None:
        """The args validator decodes strictly and never refuses anything."""
        tools = asyncio.run(toolset(dispatcher).get_tools(_run_context()))
        validator = tools["add"].args_validator
        assert validator.validate_json('{"a": 1, "b": 2}') == {"a": 1, "b": 2}
        assert validator.validate_json(b'{"a": 1}') == {"a": 1}
        assert validator.validate_python({"a": "1"}) == {"a": "1"}
        assert validator.validate_json('{"a": 1, "a": 2}') == {}
        assert validator.validate_json("[1]") == {}
        assert validator.validate_python({1: 2}) == {}


class TestContent:
    """Content parts reach the model as Pydantic AI content."""

    def test_parts_become_text_and_binary_content(self) -> None:
        """Text parts become text; images and files become BinaryContent."""
        registry = Registry()
        png = b"\x89PNG\r\n\x1a\n"

        @registry.tool
        def chart() -> list[Text | Image | File]:
            """Draw the chart."""
            return [
                Text("Sales"),
                Image(png, "image/png"),
                File(b"a,b\n", "text/csv", name="sales.csv"),
            ]

        script = Scripted([call("chart", "{}", "c1")])
        Agent(
            FunctionModel(script), toolsets=[toolset(Dispatcher(registry))]
        ).run_sync("chart")
        (ret,) = script.returns()
        text, image, file = ret.content
        assert text == "Sales"
        assert isinstance(image, BinaryContent)
        assert (image.data, image.media_type) == (png, "image/png")
        assert isinstance(file, BinaryContent)
        assert (file.data, file.media_type, file.identifier) == (
            b"a,b\n",
            "text/csv",
            "sales.csv",
        )


def _returns_a_dict(_run_context: RunContext[Any]) -> Any:
    return {"user": 1}


def _run_context() -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


def test_missing_pydantic_ai_is_a_clear_import_error() -> None:
    """Without Pydantic AI the import fails naming the extra to install."""
    code = (
        "import sys\n"
        "sys.modules['pydantic_ai'] = None\n"
        "import toolctx, toolctx.adapters\n"
        "try:\n"
        "    import toolctx.adapters.pydantic_ai\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "pip install 'toolctx[pydantic-ai]'" in out.stdout
    assert "imported" not in out.stdout
