"""toolctx.adapters.openai_agents: toolctx tools in the Agents SDK's loop.

Every run below is the SDK's own ``Runner.run`` with the SDK's own
scripted model (``agents.testing.ScriptedModel``, a ``Model`` subclass
that returns real ``ModelResponse`` objects holding
``ResponseFunctionToolCall`` items and records every input it is given),
so what a test reads from ``model.calls`` is exactly what a real model
would have been sent.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import subprocess
import sys
import textwrap

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest


pytest.importorskip("agents")
pytest.importorskip("agents.testing")

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    Runner,
    RunResult,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
)
from agents.exceptions import UserError
from agents.models.openai_responses import Converter
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from agents.usage import Usage
from annotated_types import MinLen

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolDenied,
    ToolResult,
    execution_context,
    publish,
    set_state,
)
from toolctx.adapters.openai_agents import function_tools
from toolctx.content import Audio, File, Image, Text
from toolctx.providers.openai import responses_result_item


ROOT = Path(__file__).resolve().parents[1]
RUN_CONFIG = RunConfig(tracing_disabled=True)
SECRET = "sk-live-0123456789abcdef"
AUDIT = ContextKey("oa_audit_note", str)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))


@dataclasses.dataclass
class Database:
    """A runtime-only handle, as a host would put in the scope."""

    dsn: str


@dataclasses.dataclass
class App:
    """An application's own run context, as the SDK's docs suggest."""

    user: str


def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def whoami() -> str:
        """Say who is calling, from the call's context."""
        ctx = execution_context()
        return f"{ctx.user_id}|{ctx.session_id}|{ctx.tool_call_id}"

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first one.
            b: The second one.
        """
        return a + b

    return registry


@pytest.fixture(name="registry")
def _registry_fixture() -> Registry:
    return _registry()


def run(
    tools: Sequence[FunctionTool],
    steps: Sequence[object],
    *,
    context: object = None,
) -> tuple[RunResult, ScriptedModel]:
    """One ``Runner.run`` of an agent with *tools* and a scripted model."""
    model = ScriptedModel(steps)  # type: ignore[arg-type]
    agent = Agent(
        name="assistant",
        instructions="Use the tools.",
        model=model,
        tools=list(tools),
    )
    result = asyncio.run(
        Runner.run(agent, "go", context=context, run_config=RUN_CONFIG)
    )
    model.assert_complete()
    return result, model


def outputs(model: ScriptedModel) -> dict[str, Any]:
    """The function_call_output items of the model's last input, by id."""
    last = model.calls[-1].input
    assert isinstance(last, list)
    return {
        item["call_id"]: item["output"]
        for item in last
        if item.get("type") == "function_call_output"
    }


def everything_sent(model: ScriptedModel) -> str:
    """Every input, instruction and tool the model was given, as text."""
    sent = [
        {
            "system": call.system_instructions,
            "input": call.input,
            "tools": Converter.convert_tools(call.tools, []).tools,
        }
        for call in model.calls
    ]
    return json.dumps(sent, default=repr)


class TestContext:
    """The tool sees the context the host gave the SDK's run."""

    def test_the_run_context_is_the_template(self, registry: Registry) -> None:
        """An ExecutionContext passed to Runner.run reaches the tool."""
        tools = function_tools(Dispatcher(registry))
        result, model = run(
            tools,
            [
                [function_call("whoami", {}, call_id="call_1")],
                [assistant_message("done")],
            ],
            context=ExecutionContext(user_id="ada", session_id="chat-1"),
        )
        assert outputs(model) == {"call_1": "ada|chat-1|call_1"}
        assert result.final_output == "done"

    def test_each_call_gets_the_sdk_call_id(self, registry: Registry) -> None:
        """Parallel calls of one response each carry their own call id."""
        tools = function_tools(Dispatcher(registry))
        _, model = run(
            tools,
            [
                [
                    function_call("whoami", {}, call_id="call_a"),
                    function_call("whoami", {}, call_id="call_b"),
                ],
                [assistant_message("done")],
            ],
            context=ExecutionContext(user_id="ada"),
        )
        assert outputs(model) == {
            "call_a": "ada|None|call_a",
            "call_b": "ada|None|call_b",
        }

    def test_another_run_context_gives_an_empty_template(
        self, registry: Registry
    ) -> None:
        """A run context of the app's own type is not read as identity."""
        tools = function_tools(Dispatcher(registry))
        _, model = run(
            tools,
            [
                [function_call("whoami", {}, call_id="call_1")],
                [assistant_message("done")],
            ],
            context=App(user="mallory"),
        )
        assert outputs(model) == {"call_1": "None|None|call_1"}

    def test_a_sub_agent_inside_a_tool_records_its_parent(self) -> None:
        """An agent run inside a toolctx tool inherits that call's context."""
        inner = Registry()

        @inner.tool
        def lineage() -> str:
            """Say who is calling and from which call."""
            ctx = execution_context()
            return f"{ctx.user_id}|{ctx.parent_invocation_id}"

        outer = Registry()
        inner_tools = function_tools(Dispatcher(inner))

        @outer.tool
        async def delegate() -> object:
            """Hand the question to a sub-agent."""
            model = ScriptedModel(
                [
                    [function_call("lineage", {}, call_id="call_in")],
                    [assistant_message("sub done")],
                ]
            )
            agent = Agent(name="sub", model=model, tools=inner_tools)
            await Runner.run(agent, "go", run_config=RUN_CONFIG)
            return outputs(model)["call_in"]

        result = asyncio.run(
            Dispatcher(outer).adispatch(
                ToolCall("delegate", "{}", "call_out"),
                ExecutionContext(user_id="ada"),
            )
        )
        assert result.output == f"ada|{result.invocation_id}"

    def test_a_custom_context_callable_builds_the_template(
        self, registry: Registry
    ) -> None:
        """context= maps the app's own run context and the tool context."""
        seen: list[tuple[object, object]] = []

        def context(
            wrapper: RunContextWrapper[Any], tool_context: ToolContext[Any]
        ) -> ExecutionContext:
            seen.append((wrapper, tool_context))
            assert tool_context.agent is not None
            return ExecutionContext(
                user_id=wrapper.context.user,
                session_id=tool_context.agent.name,
            )

        tools = function_tools(Dispatcher(registry), context=context)
        _, model = run(
            tools,
            [
                [function_call("whoami", {}, call_id="call_1")],
                [assistant_message("done")],
            ],
            context=App(user="bob"),
        )
        assert outputs(model) == {"call_1": "bob|assistant|call_1"}
        [(wrapper, tool_context)] = seen
        assert isinstance(tool_context, ToolContext)
        assert wrapper is tool_context
        assert tool_context.tool_call_id == "call_1"

    def test_an_async_context_callable_is_awaited(
        self, registry: Registry
    ) -> None:
        """context= may be an async function (e.g. a user lookup)."""

        async def context(
            wrapper: RunContextWrapper[Any], tool_context: ToolContext[Any]
        ) -> Session:
            await asyncio.sleep(0)
            return Session("s-9", user_id=wrapper.context.user)

        tools = function_tools(Dispatcher(registry), context=context)
        _, model = run(
            tools,
            [
                [function_call("whoami", {}, call_id="call_1")],
                [assistant_message("done")],
            ],
            context=App(user="bob"),
        )
        assert outputs(model) == {"call_1": "bob|s-9|call_1"}

    def test_a_context_callable_returning_junk_fails_the_run(
        self, registry: Registry
    ) -> None:
        """A host bug in context= fails the run; it is not sent to the model."""
        tools = function_tools(
            Dispatcher(registry),
            context=lambda wrapper, tool_context: {"user_id": "ada"},  # type: ignore[arg-type,return-value]
        )
        with pytest.raises(UserError, match="Error running tool whoami") as e:
            run(tools, [[function_call("whoami", {}, call_id="call_1")]])
        assert isinstance(e.value.__cause__, TypeError)
        assert "must return an ExecutionContext" in str(e.value.__cause__)

    def test_a_non_dispatcher_is_refused(self, registry: Registry) -> None:
        """function_tools() takes a Dispatcher, and says so."""
        with pytest.raises(TypeError, match=r"takes a toolctx\.Dispatcher"):
            function_tools(registry)  # type: ignore[arg-type]

    def test_a_non_callable_context_is_refused(
        self, registry: Registry
    ) -> None:
        """context= must be callable, and the error says with what."""
        with pytest.raises(TypeError, match="context must be a callable"):
            function_tools(
                Dispatcher(registry),
                context=ExecutionContext(),  # type: ignore[arg-type]
            )


class TestSessions:
    """A Session as the run's context gets its state changes applied."""

    def test_state_changes_are_applied_between_calls(self) -> None:
        """Each call sees the state the earlier calls of the run set."""
        registry = Registry()

        @registry.tool
        def bump() -> int:
            """Count one more, in the session's state."""
            count = execution_context().state["count"]
            assert isinstance(count, int)
            set_state("count", count + 1)
            return count + 1

        session = Session("chat-1", user_id="ada", state={"count": 0})
        tools = function_tools(Dispatcher(registry))
        _, model = run(
            tools,
            [
                [function_call("bump", {}, call_id="call_1")],
                [function_call("bump", {}, call_id="call_2")],
                [assistant_message("done")],
            ],
            context=session,
        )
        assert session.state["count"] == 2
        assert outputs(model) == {"call_1": "1", "call_2": "2"}
        assert [r.call_id for r in session.results] == ["call_1", "call_2"]


class TestWhatTheModelSees:
    """Results reach the model as toolctx words them, and nothing more."""

    @pytest.mark.parametrize(
        ("arguments", "expected"),
        [
            ('{"a": "one", "b": 2}', "a: expected an integer"),
            ('{"a": 1}', "b"),
            ('{"a": 1, "b": 2, "c": 3}', "c"),
            ("{not json", "JSON"),
        ],
    )
    def test_invalid_arguments_reach_the_model_verbatim(
        self, registry: Registry, arguments: str, expected: str
    ) -> None:
        """The next model turn holds toolctx's own error message."""
        dispatcher = Dispatcher(registry)
        wording = dispatcher.dispatch(ToolCall("add", arguments)).error
        assert wording is not None
        assert expected in wording
        tools = function_tools(dispatcher)
        result, model = run(
            tools,
            [
                [function_call("add", arguments, call_id="call_1")],
                [function_call("add", {"a": 1, "b": 2}, call_id="call_2")],
                [assistant_message("3")],
            ],
        )
        assert outputs(model) == {"call_1": wording, "call_2": "3"}
        assert result.final_output == "3"

    def test_a_raising_tool_and_a_denial_are_worded_by_toolctx(self) -> None:
        """Tool exceptions and interceptor denials come back as text."""
        registry = Registry()

        @registry.tool
        def explode() -> str:
            """Fail."""
            msg = "the disk is full"
            raise OSError(msg)

        @registry.tool
        def forbidden() -> str:
            """Never runs."""
            return "ran"

        class DenyForbidden:
            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                if call.name == "forbidden":
                    msg = "ada may not call forbidden; ask an admin."
                    raise ToolDenied(msg)
                return context

            def after(
                self,
                call: ToolCall,
                context: ExecutionContext,
                result: ToolResult,
            ) -> ToolResult:
                return result

        dispatcher = Dispatcher(registry, interceptors=[DenyForbidden()])
        expected = {
            name: dispatcher.dispatch(ToolCall(name, "{}")).error
            for name in ("explode", "forbidden")
        }
        _, model = run(
            function_tools(dispatcher),
            [
                [
                    function_call("explode", {}, call_id="call_1"),
                    function_call("forbidden", {}, call_id="call_2"),
                ],
                [assistant_message("sorry")],
            ],
        )
        assert outputs(model) == {
            "call_1": expected["explode"],
            "call_2": expected["forbidden"],
        }
        assert "the disk is full" in outputs(model)["call_1"]

    def test_json_output_is_compact_json(self) -> None:
        """Non-string output is the compact JSON every provider sends."""
        registry = Registry()

        @registry.tool
        def weather(city: str) -> dict[str, object]:
            """Get the weather."""
            return {"city": city, "temp": 21}

        _, model = run(
            function_tools(Dispatcher(registry)),
            [
                [function_call("weather", {"city": "Zürich"}, call_id="c1")],
                [assistant_message("21")],
            ],
        )
        assert outputs(model) == {"c1": '{"city":"Zürich","temp":21}'}

    def test_content_parts_are_the_sdks_own_image_and_file_outputs(
        self,
    ) -> None:
        """Images and files reach the model as input_image / input_file."""
        registry = Registry()

        @registry.tool
        def report() -> list[Text | Image | Audio | File]:
            """Make the sales report."""
            return [
                "Sales are up.",
                Image(PNG, "image/png"),
                File(b"%PDF-1.7 ...", "application/pdf", name="q3.pdf"),
                Image(b"<svg/>", "image/svg+xml"),
                Audio(b"RIFF....", "audio/wav"),
            ]

        dispatcher = Dispatcher(registry)
        [tool] = function_tools(dispatcher)
        ctx = ToolContext(None, Usage(), "report", "call_1", "{}")
        returned = asyncio.run(tool.on_invoke_tool(ctx, "{}"))
        assert [type(o) for o in returned] == [
            ToolOutputText,
            ToolOutputImage,
            ToolOutputFileContent,
            ToolOutputText,
            ToolOutputText,
        ]
        _, model = run(
            [tool],
            [
                [function_call("report", {}, call_id="call_1")],
                [assistant_message("done")],
            ],
        )
        sent = outputs(model)["call_1"]
        expected = responses_result_item(
            dispatcher.dispatch(ToolCall("report", "{}", "call_1"))
        )["output"]
        assert sent == expected
        assert [part["type"] for part in sent] == [
            "input_text",
            "input_image",
            "input_file",
            "input_text",
            "input_text",
        ]
        assert sent[1]["image_url"] == (
            "data:image/png;base64," + base64.b64encode(PNG).decode()
        )
        assert sent[2]["filename"] == "q3.pdf"
        assert "audio/wav" in sent[4]["text"]

    def test_scope_and_host_only_data_never_reach_the_model(self) -> None:
        """Scope, metadata, state changes and exceptions stay host-side."""
        registry = Registry()

        @registry.tool
        def lookup(name: str) -> str:
            """Look a name up in the database."""
            ctx = execution_context()
            db = ctx.scope_as(Database)
            publish(AUDIT, f"looked up with {db.dsn}")
            set_state("last_dsn", db.dsn)
            return f"found {name}"

        @registry.tool
        def leaky(name: str) -> str:
            """Fail with the secret in the exception."""
            db = execution_context().scope_as(Database)
            raise RuntimeError(db.dsn)

        results: list[ToolResult] = []

        class Record:
            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                return context

            def after(
                self,
                call: ToolCall,
                context: ExecutionContext,
                result: ToolResult,
            ) -> ToolResult:
                results.append(result)
                return result

        dispatcher = Dispatcher(
            registry,
            interceptors=[Record()],
            include_exception_messages=False,
        )
        session = Session(
            "chat-1",
            user_id="ada",
            scope=Database(f"postgres://app:{SECRET}@db/prod"),
        )
        _, model = run(
            function_tools(dispatcher),
            [
                [function_call("lookup", {"name": "x"}, call_id="call_1")],
                [
                    function_call("lookup", {"name": 1}, call_id="call_2"),
                    function_call("leaky", {"name": "y"}, call_id="call_3"),
                ],
                [assistant_message("done")],
            ],
            context=session,
        )
        # The host got everything...
        by_id = {r.call_id: r for r in results}
        assert SECRET in str(by_id["call_1"].metadata[AUDIT.name])
        assert SECRET in str(by_id["call_3"].exception)
        assert SECRET in str(session.state["last_dsn"])
        # ...and the model, in any of its turns, none of it.
        assert len(model.calls) == 3
        sent = everything_sent(model)
        assert SECRET not in sent
        assert "postgres://" not in sent
        assert "looked up with" not in sent
        assert outputs(model)["call_3"] == by_id["call_3"].error


class TestToolList:
    """The tool list: order, names, descriptions, schemas, strict mode."""

    def test_one_tool_per_registry_tool_in_order(self) -> None:
        """Names, descriptions and schemas are the registry's, in order."""
        registry = Registry()

        @registry.tool
        def zeta(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        @registry.tool
        def alpha(name: str, punctuation: str = "!") -> str:
            """Greet someone."""
            return name + punctuation

        @registry.tool
        def mid(counts: dict[str, int]) -> int:
            """Sum the counts."""
            return sum(counts.values())

        @registry.tool
        def short(code: Annotated[str, MinLen(3)]) -> str:
            """Check a code."""
            return code

        @registry.tool
        def nothing() -> str:
            """Take no arguments."""
            return ""

        tools = function_tools(Dispatcher(registry))
        definitions = registry.definitions()
        assert [t.name for t in tools] == list(registry)
        assert [t.name for t in tools] == [
            "zeta",
            "alpha",
            "mid",
            "short",
            "nothing",
        ]
        for t, d in zip(tools, definitions, strict=True):
            assert isinstance(t, FunctionTool)
            assert t.description == d.description
            assert t.params_json_schema == d.parameters
        assert {t.name: t.strict_json_schema for t in tools} == {
            "zeta": True,
            "alpha": False,  # strict mode would make punctuation required
            "mid": False,  # strict mode cannot list dict[str, int] keys
            "short": False,  # strict mode would drop minLength
            "nothing": False,  # strict mode would add "required": []
        }

    def test_what_the_sdk_sends_is_the_registry_schema(
        self, registry: Registry
    ) -> None:
        """The Responses API tool params carry the schemas unchanged."""
        tools = function_tools(Dispatcher(registry))
        _, model = run(tools, [[assistant_message("hi")]])
        [call] = model.calls
        sent = Converter.convert_tools(call.tools, []).tools
        assert [
            (p["name"], p["description"], p["parameters"]) for p in sent
        ] == [
            (d.name, d.description, d.parameters)
            for d in registry.definitions()
        ]

    def test_the_schema_is_a_copy(self, registry: Registry) -> None:
        """Changing a FunctionTool's schema leaves the registry's alone."""
        before = json.dumps(registry.definitions()[1].parameters)
        tools = function_tools(Dispatcher(registry))
        tools[1].params_json_schema["properties"].clear()
        assert json.dumps(registry.definitions()[1].parameters) == before

    def test_the_list_is_a_snapshot(self, registry: Registry) -> None:
        """A tool registered later appears in the next list, not this one."""
        dispatcher = Dispatcher(registry)
        before = function_tools(dispatcher)

        @registry.tool
        def later() -> str:
            """Registered after the first list."""
            return "later"

        assert [t.name for t in before] == ["whoami", "add"]
        assert [t.name for t in function_tools(dispatcher)] == [
            "whoami",
            "add",
            "later",
        ]

    def test_on_invoke_tool_can_be_called_directly(
        self, registry: Registry
    ) -> None:
        """The SDK's invocation entry point works outside a run too."""
        [_, add] = function_tools(Dispatcher(registry))
        ctx = ToolContext(
            ExecutionContext(user_id="ada"),
            Usage(),
            "add",
            "call_1",
            '{"a": 1, "b": 2}',
        )
        assert asyncio.run(add.on_invoke_tool(ctx, '{"a": 1, "b": 2}')) == "3"


class TestImport:
    """The SDK is imported by the adapter only, and missing it is clear."""

    @staticmethod
    def _python(code: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=env,
            cwd=ROOT,
        )

    def test_import_toolctx_does_not_import_the_sdk(self) -> None:
        """Importing toolctx (and toolctx.adapters) leaves agents unloaded."""
        done = self._python(
            """
            import sys
            import toolctx, toolctx.adapters, toolctx.providers.openai
            print("agents" in sys.modules)
            """
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "False"

    def test_a_missing_sdk_names_the_extra_to_install(self) -> None:
        """Without the SDK the ImportError says what to pip install."""
        done = self._python(
            """
            import sys
            sys.modules["agents"] = None  # as if it were not installed
            import toolctx
            try:
                import toolctx.adapters.openai_agents
            except ImportError as exc:
                print(type(exc).__name__, exc.name)
                print(exc)
            else:
                print("imported")
            """
        )
        assert done.returncode == 0, done.stderr
        first, message = done.stdout.strip().split("\n", 1)
        assert first == "ImportError agents"
        assert "pip install 'toolctx[openai-agents]'" in message
        assert "OpenAI Agents SDK" in message
