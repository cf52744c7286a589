"""Dispatcher: binding, error results, interceptors, sessions, concurrency."""

from __future__ import annotations

import asyncio
import json
import threading

from collections.abc import Mapping
from typing import Any

import pytest

from hypothesis import given
from hypothesis import strategies as st

from doubles import PassThrough
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolctxError,
    ToolDefinition,
    ToolDenied,
    ToolResult,
    current_context,
    execution_context,
    publish,
    set_state,
    tool,
)


@pytest.fixture(name="registry")
def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @registry.tool
    def whoami() -> dict[str, Any]:
        """Describe the calling context."""
        ctx = execution_context()
        return {
            "user": ctx.user_id,
            "session": ctx.session_id,
            "turn": ctx.turn,
            "invocation": ctx.invocation_id,
            "parent": ctx.parent_invocation_id,
            "tool": ctx.tool_name,
            "call_id": ctx.tool_call_id,
            "thread": threading.get_ident(),
        }

    @registry.tool
    def boom(message: str) -> None:
        """Always fail."""
        raise ValueError(message)

    @registry.tool
    async def slow_echo(text: str, delay: float = 0.0) -> str:
        """Echo after a delay."""
        await asyncio.sleep(delay)
        assert execution_context().tool_name == "slow_echo"
        return text

    return registry


@pytest.fixture(name="dispatcher")
def _dispatcher(registry: Registry) -> Dispatcher:
    return Dispatcher(registry)


class LegacyTool:
    """A pre-existing tool class with a plain execute(args)."""

    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name="legacy",
            description="An old tool.",
            parameters={"type": "object", "properties": {"x": {}}},
        )

    def execute(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"args": dict(args), "user": execution_context().user_id}


class TestDispatch:
    """dispatch(): one call in its own bound context."""

    def test_result_fields(self, dispatcher: Dispatcher) -> None:
        """A successful call returns output, ids and a duration."""
        result = dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 2}', "c1"))
        assert result.output == 3
        assert not result.is_error
        assert result.error is None
        assert result.name == "add"
        assert result.call_id == "c1"
        assert len(result.invocation_id) == 32
        assert result.duration_ns > 0

    def test_context_fields_set_by_dispatcher(
        self, dispatcher: Dispatcher
    ) -> None:
        """The tool sees the template's fields plus per-call ids."""
        template = ExecutionContext(user_id="ada", session_id="s1", turn=3)
        result = dispatcher.dispatch(ToolCall("whoami", None, "c9"), template)
        out = result.output
        assert out["user"] == "ada"
        assert out["session"] == "s1"
        assert out["turn"] == 3
        assert out["tool"] == "whoami"
        assert out["call_id"] == "c9"
        assert out["invocation"] == result.invocation_id
        assert out["invocation"] != template.invocation_id
        assert out["parent"] is None
        assert current_context() is None

    def test_each_call_gets_a_fresh_invocation_id(
        self, dispatcher: Dispatcher
    ) -> None:
        """Two dispatches of one template never share an id."""
        template = ExecutionContext()
        ids = {
            dispatcher.dispatch(ToolCall("whoami"), template).invocation_id
            for _ in range(100)
        }
        assert len(ids) == 100

    @pytest.mark.parametrize("arguments", [None, "", "  ", b"", {}, "null"])
    def test_empty_arguments_mean_no_arguments(
        self, dispatcher: Dispatcher, arguments: Any
    ) -> None:
        """None, empty text, JSON null and {} all mean {}."""
        result = dispatcher.dispatch(ToolCall("whoami", arguments))
        assert not result.is_error, result.error

    def test_bytes_and_mapping_arguments(self, dispatcher: Dispatcher) -> None:
        """UTF-8 bytes and already-decoded mappings are accepted."""
        assert (
            dispatcher.dispatch(ToolCall("add", b'{"a":1,"b":2}')).output == 3
        )
        assert (
            dispatcher.dispatch(ToolCall("add", {"a": 2, "b": 2})).output == 4
        )

    def test_restores_context_after_tool_exception(
        self, dispatcher: Dispatcher
    ) -> None:
        """A raising tool becomes an error result and the context is restored."""
        outer = ExecutionContext(user_id="outer")
        with_outer = []
        from toolctx import use_context

        with use_context(outer):
            result = dispatcher.dispatch(ToolCall("boom", '{"message": "x"}'))
            with_outer.append(current_context())
        assert result.is_error
        assert result.error == "Tool 'boom' failed: ValueError: x"
        assert isinstance(result.exception, ValueError)
        assert with_outer == [outer]

    def test_hidden_exception_messages(self, registry: Registry) -> None:
        """With include_exception_messages=False the model sees no details."""
        dispatcher = Dispatcher(registry, include_exception_messages=False)
        result = dispatcher.dispatch(ToolCall("boom", '{"message": "s3cr3t"}'))
        assert result.error == "Tool 'boom' failed."
        assert "s3cr3t" not in (result.error or "")
        assert isinstance(result.exception, ValueError)

    def test_nested_dispatch_links_parent(self, registry: Registry) -> None:
        """A call dispatched inside another call records its parent."""
        dispatcher = Dispatcher(registry)

        @registry.tool
        def outer() -> dict[str, Any]:
            """Call whoami from inside a tool."""
            inner = dispatcher.dispatch(ToolCall("whoami"))
            return {
                "me": execution_context().invocation_id,
                "inner": inner.output,
            }

        template = ExecutionContext(user_id="ada", session_id="s")
        result = dispatcher.dispatch(ToolCall("outer"), template)
        out = result.output
        assert out["inner"]["parent"] == out["me"] == result.invocation_id
        assert out["inner"]["user"] == "ada"
        assert out["inner"]["session"] == "s"
        assert out["inner"]["invocation"] != out["me"]

    def test_child_context_keeps_the_chain(self, registry: Registry) -> None:
        """Calls dispatched with a child context link to the calling tool."""
        dispatcher = Dispatcher(registry)

        @registry.tool
        def delegate() -> Any:
            """Run a sub-agent's tool with a child context."""
            sub = execution_context().child(agent_id="researcher")
            return dispatcher.dispatch(ToolCall("whoami"), sub).output

        result = dispatcher.dispatch(ToolCall("delegate"))
        assert result.output["parent"] == result.invocation_id

    def test_async_tool_from_sync_dispatch(
        self, dispatcher: Dispatcher
    ) -> None:
        """dispatch() runs an async tool to completion when no loop runs."""
        result = dispatcher.dispatch(ToolCall("slow_echo", '{"text": "hi"}'))
        assert result.output == "hi"

    def test_async_tool_inside_running_loop_raises(
        self, dispatcher: Dispatcher
    ) -> None:
        """dispatch() of an async tool inside a loop points to adispatch."""

        async def main() -> None:
            with pytest.raises(ToolctxError, match="adispatch"):
                dispatcher.dispatch(ToolCall("slow_echo", '{"text": "hi"}'))
            assert current_context() is None

        asyncio.run(main())

    def test_legacy_tool(self, registry: Registry) -> None:
        """A class with a plain execute(args) works and may read the context."""
        registry.register(LegacyTool())
        dispatcher = Dispatcher(registry)
        result = dispatcher.dispatch(
            ToolCall("legacy", '{"x": [1, 2]}'), ExecutionContext(user_id="u")
        )
        assert result.output == {"args": {"x": [1, 2]}, "user": "u"}

    def test_injected_context_parameter(self) -> None:
        """A parameter annotated ExecutionContext is injected, not exposed."""

        @tool
        def greet(name: str, ctx: ExecutionContext) -> str:
            """Greet on behalf of the user."""
            return f"{ctx.user_id} greets {name}"

        assert "ctx" not in greet.definition().parameters["properties"]
        dispatcher = Dispatcher(Registry([greet]))
        template = ExecutionContext(user_id="ada")
        ok = dispatcher.dispatch(
            ToolCall("greet", '{"name": "bob"}'), template
        )
        assert ok.output == "ada greets bob"
        spoof = dispatcher.dispatch(
            ToolCall("greet", '{"name": "bob", "ctx": {"user_id": "root"}}'),
            template,
        )
        assert spoof.is_error
        assert "ctx" in (spoof.error or "")

    def test_host_errors_raise(self, dispatcher: Dispatcher) -> None:
        """Wrong types from the host raise TypeError instead of a result."""
        with pytest.raises(TypeError, match="ToolCall"):
            dispatcher.dispatch({"name": "add"})  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="context"):
            dispatcher.dispatch(ToolCall("add"), {"user_id": "x"})  # type: ignore[arg-type]


class TestErrorResults:
    """Tool-level failures become results a model can act on."""

    def test_unknown_tool(self, dispatcher: Dispatcher) -> None:
        """An unknown name lists the available tools."""
        result = dispatcher.dispatch(ToolCall("ad", "{}"))
        assert result.is_error
        assert result.error is not None
        assert "Unknown tool 'ad'" in result.error
        assert "add, whoami, boom, slow_echo" in result.error

    def test_invalid_json(self, dispatcher: Dispatcher) -> None:
        """Malformed JSON says so and names the expected keys."""
        result = dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": '))
        assert result.is_error
        assert "not valid JSON" in (result.error or "")
        assert "with the keys a, b" in (result.error or "")

    @pytest.mark.parametrize(
        ("arguments", "kind"),
        [("[1, 2]", "an array"), ("3", "a number"), ('"x"', "a string")],
    )
    def test_non_object_json(
        self, dispatcher: Dispatcher, arguments: str, kind: str
    ) -> None:
        """JSON that is not an object is refused with what it was."""
        result = dispatcher.dispatch(ToolCall("add", arguments))
        assert result.is_error
        assert f"must be a JSON object with the keys a, b, got {kind}" in (
            result.error or ""
        )

    def test_invalid_arguments_list_every_problem(
        self, dispatcher: Dispatcher
    ) -> None:
        """Every wrong argument is named so one retry can fix them all."""
        result = dispatcher.dispatch(ToolCall("add", '{"a": "1", "c": 2}'))
        assert result.is_error
        error = result.error or ""
        assert error.startswith("Invalid arguments for tool 'add'")
        assert "a:" in error
        assert "b:" in error
        assert "c:" in error

    def test_next_call_works_after_errors(
        self, dispatcher: Dispatcher
    ) -> None:
        """After every kind of failure the dispatcher keeps working."""
        for call in [
            ToolCall("nope"),
            ToolCall("add", "{"),
            ToolCall("add", "[]"),
            ToolCall("add", '{"a": true, "b": 1}'),
            ToolCall("boom", '{"message": "x"}'),
        ]:
            assert dispatcher.dispatch(call).is_error
            assert current_context() is None
        assert (
            dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 1}')).output
            == 2
        )


class Recorder:
    """An interceptor that records its hooks and adds metadata."""

    def __init__(self, name: str, log: list[str], deny: bool = False) -> None:
        self.name = name
        self.log = log
        self.deny = deny

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        self.log.append(f"before {self.name}")
        if self.deny:
            raise ToolDenied(f"{self.name} says no")
        return context.with_metadata({self.name: True})

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        self.log.append(f"after {self.name}")
        return result


class TestInterceptors:
    """before in order, after in reverse, denial as an error result."""

    def test_order_and_metadata(self, registry: Registry) -> None:
        """Before runs in order, after in reverse; metadata reaches the tool."""
        log: list[str] = []

        @registry.tool
        def meta() -> list[str]:
            """Return the metadata keys."""
            return sorted(execution_context().metadata)

        dispatcher = Dispatcher(
            registry, interceptors=[Recorder("a", log), Recorder("b", log)]
        )
        result = dispatcher.dispatch(ToolCall("meta"))
        assert result.output == ["a", "b"]
        assert log == ["before a", "before b", "after b", "after a"]

    def test_denial(self, registry: Registry) -> None:
        """A denial stops the call; only interceptors that ran see after."""
        log: list[str] = []
        ran: list[bool] = []

        @registry.tool
        def guarded() -> None:
            """Must not run."""
            ran.append(True)

        dispatcher = Dispatcher(
            registry,
            interceptors=[
                Recorder("a", log),
                Recorder("b", log, deny=True),
                Recorder("c", log),
            ],
        )
        result = dispatcher.dispatch(ToolCall("guarded"))
        assert result.is_error
        assert result.error == "Call to tool 'guarded' was denied: b says no"
        assert isinstance(result.exception, ToolDenied)
        assert ran == []
        assert log == ["before a", "before b", "after a"]

    def test_rejects_non_interceptors(self, registry: Registry) -> None:
        """An object without before/after is refused at construction."""
        with pytest.raises(TypeError, match="before"):
            Dispatcher(registry, interceptors=[object()])  # type: ignore[list-item]


class TestPublishAndState:
    """publish() and set_state() travel back on the result."""

    def test_publish_and_state_changes(self, registry: Registry) -> None:
        """Published metadata and state changes land on the result."""

        @registry.tool
        def shop(item: str) -> str:
            """Add an item to the cart."""
            cart = list(execution_context().state.get("cart", ()))  # type: ignore[call-overload]
            publish("sku", f"sku-{item}")
            set_state("cart", [*cart, item])
            return "ok"

        dispatcher = Dispatcher(registry)
        session = Session("s1", user_id="ada")
        first = dispatcher.dispatch(
            ToolCall("shop", '{"item": "tea"}'), session
        )
        assert first.metadata == {"sku": "sku-tea"}
        assert first.state_changes == {"cart": ["tea"]}
        dispatcher.dispatch(ToolCall("shop", '{"item": "jam"}'), session)
        assert list(session.state["cart"]) == ["tea", "jam"]  # type: ignore[call-overload]
        assert [r.output for r in session.results] == ["ok", "ok"]

    def test_failed_call_changes_no_state(self, registry: Registry) -> None:
        """A call that fails after set_state applies nothing."""

        @registry.tool
        def half() -> None:
            """Change state, then fail."""
            set_state("x", 1)
            raise RuntimeError("late failure")

        session = Session("s")
        result = Dispatcher(registry).dispatch(ToolCall("half"), session)
        assert result.is_error
        assert session.state == {}

    def test_session_context(self, dispatcher: Dispatcher) -> None:
        """A session supplies session id, user, turn and prior results."""
        session = Session("s9", user_id="ada")
        session.next_turn()
        first = dispatcher.dispatch(
            ToolCall("add", '{"a": 1, "b": 1}'), session
        )
        second = dispatcher.dispatch(ToolCall("whoami"), session)
        assert second.output["session"] == "s9"
        assert second.output["user"] == "ada"
        assert second.output["turn"] == 1
        assert session.results == [first, second]
        session.next_turn()
        assert session.results == []


class TestDispatchAll:
    """The calls of one turn."""

    def test_sync_in_order_with_prior_results(
        self, registry: Registry
    ) -> None:
        """dispatch_all returns results in order; later calls see earlier ones."""

        @registry.tool
        def count_prior() -> int:
            """Count earlier results of this turn."""
            return len(execution_context().prior_results)

        dispatcher = Dispatcher(registry)
        results = dispatcher.dispatch_all(
            [
                ToolCall("count_prior"),
                ToolCall("nope"),
                ToolCall("count_prior"),
            ]
        )
        assert [r.output for r in results] == [0, None, 2]
        assert results[1].is_error

    def test_async_concurrent_input_order(
        self, dispatcher: Dispatcher
    ) -> None:
        """adispatch_all runs concurrently and keeps input order."""
        calls = [
            ToolCall(
                "slow_echo", json.dumps({"text": str(i), "delay": d}), f"c{i}"
            )
            for i, d in enumerate([0.05, 0.0, 0.02])
        ]
        calls.insert(1, ToolCall("boom", '{"message": "bad"}'))

        async def main() -> list[ToolResult]:
            return await dispatcher.adispatch_all(calls)

        results = asyncio.run(main())
        assert [r.call_id for r in results] == [c.id for c in calls]
        assert [r.output for r in results] == ["0", None, "1", "2"]
        assert len({r.invocation_id for r in results}) == 4

    def test_async_session_changes_in_input_order(
        self, registry: Registry
    ) -> None:
        """State changes of concurrent calls apply in input order."""

        @registry.tool
        async def write(value: int, delay: float) -> None:
            """Set state after a delay."""
            await asyncio.sleep(delay)
            set_state("last", value)

        session = Session("s")
        calls = [
            ToolCall("write", json.dumps({"value": v, "delay": d}))
            for v, d in [(1, 0.03), (2, 0.0), (3, 0.01)]
        ]
        asyncio.run(Dispatcher(registry).adispatch_all(calls, session))
        assert session.state == {"last": 3}


class TestAsyncDispatch:
    """adispatch(): async tools in the task, sync tools in a worker thread."""

    def test_sync_tool_runs_off_the_loop(self, dispatcher: Dispatcher) -> None:
        """A sync tool runs in another thread and still sees its context."""

        async def main() -> dict[str, Any]:
            result = await dispatcher.adispatch(
                ToolCall("whoami"), ExecutionContext(user_id="ada")
            )
            return {"out": result.output, "loop_thread": threading.get_ident()}

        got = asyncio.run(main())
        assert got["out"]["user"] == "ada"
        assert got["out"]["thread"] != got["loop_thread"]

    def test_inline_sync_tool_runs_on_the_loop(self) -> None:
        """@tool(inline=True) keeps a cheap sync tool on the loop thread."""

        @tool(inline=True)
        def where() -> int:
            """Return the thread id."""
            return threading.get_ident()

        dispatcher = Dispatcher(Registry([where]))

        async def main() -> tuple[int, int]:
            result = await dispatcher.adispatch(ToolCall("where"))
            return result.output, threading.get_ident()

        tool_thread, loop_thread = asyncio.run(main())
        assert tool_thread == loop_thread

    def test_thousand_concurrent_calls_see_their_own_ids(
        self, registry: Registry
    ) -> None:
        """1,000 concurrent adispatch calls read their own ids after awaits."""

        @registry.tool
        async def check(n: int) -> bool:
            """Read the context across several awaits."""
            ctx = execution_context()
            for _ in range(5):
                await asyncio.sleep(0)
                now = execution_context()
                if now is not ctx or now.tool_call_id != f"call-{n}":
                    return False
            return ctx.user_id == f"user-{n}"

        dispatcher = Dispatcher(registry)

        async def main() -> list[ToolResult]:
            return await asyncio.gather(
                *(
                    dispatcher.adispatch(
                        ToolCall("check", {"n": n}, f"call-{n}"),
                        ExecutionContext(user_id=f"user-{n}"),
                    )
                    for n in range(1000)
                )
            )

        results = asyncio.run(main())
        assert all(r.output is True for r in results)
        assert len({r.invocation_id for r in results}) == 1000

    def test_threads_dispatching(self, dispatcher: Dispatcher) -> None:
        """8 threads x 1,000 dispatches each see only their own context."""
        errors: list[str] = []

        def worker(n: int) -> None:
            for i in range(1000):
                template = ExecutionContext(user_id=f"{n}-{i}")
                result = dispatcher.dispatch(
                    ToolCall("whoami", None, str(i)), template
                )
                out = result.output
                if out["user"] != f"{n}-{i}" or out["call_id"] != str(i):
                    errors.append(f"{n}-{i}")
            if current_context() is not None:
                errors.append(f"thread {n} leaked")

        threads = [
            threading.Thread(target=worker, args=(n,)) for n in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []

    def test_cancellation_propagates_and_restores(
        self, dispatcher: Dispatcher
    ) -> None:
        """Cancelling adispatch raises CancelledError and leaves nothing bound."""
        session = Session("s")

        async def main() -> None:
            task = asyncio.create_task(
                dispatcher.adispatch(
                    ToolCall("slow_echo", '{"text": "x", "delay": 10}'),
                    session,
                )
            )
            await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert current_context() is None

        asyncio.run(main())
        assert session.results == []

    def test_timeout_becomes_error_result(self, registry: Registry) -> None:
        """A call past its timeout is an error result saying so."""

        @registry.tool(timeout=0.05)
        async def hang() -> None:
            """Never finish."""
            await asyncio.sleep(10)

        result = asyncio.run(Dispatcher(registry).adispatch(ToolCall("hang")))
        assert result.is_error
        assert "timed out after 0.05 seconds" in (result.error or "")

    def test_dispatcher_default_timeout(self, registry: Registry) -> None:
        """The dispatcher's default applies to tools without their own."""
        dispatcher = Dispatcher(registry, default_timeout=0.05)
        result = asyncio.run(
            dispatcher.adispatch(
                ToolCall("slow_echo", '{"text": "x", "delay": 5}')
            )
        )
        assert result.is_error
        assert "timed out" in (result.error or "")


class TestFastPathAgreement:
    """The inlined fast path and the general path give the same results."""

    @given(
        st.one_of(
            st.text(max_size=40),
            st.dictionaries(
                st.sampled_from(["a", "b", "c", "a "]),
                st.one_of(
                    st.integers(),
                    st.floats(),
                    st.booleans(),
                    st.none(),
                    st.text(max_size=5),
                    st.lists(st.integers(), max_size=2),
                ),
                max_size=4,
            ).map(json.dumps),
            st.sampled_from(
                [
                    '{"a": 1, "a": 2}',
                    '{"a": 1, "b": NaN}',
                    '{"a": 1e999, "b": 2}',
                    '{"a" : 1, "b": 2}',
                    '{"a": 1, "b": 2} ',
                    ' {"a": 1, "b": 2}',
                    '{"a": 1, "b": "\\u00e9"}',
                    '{"a":1,"b":2}',
                    '{"a": 1.0, "b": 2}',
                    '{"a": true, "b": 2}',
                ]
            ),
        )
    )
    def test_same_outcome(self, text: str) -> None:
        """Every argument text yields the same output or error either way."""
        fast = Dispatcher(FAST_REGISTRY)
        general = Dispatcher(FAST_REGISTRY, interceptors=[PassThrough()])
        a = fast.dispatch(ToolCall("add", text, "c"))
        b = general.dispatch(ToolCall("add", text, "c"))
        assert (a.is_error, a.error, a.output) == (
            b.is_error,
            b.error,
            b.output,
        )
        assert current_context() is None

        async def both() -> tuple[ToolResult, ToolResult]:
            return (
                await fast.adispatch(ToolCall("aadd", text, "c")),
                await general.adispatch(ToolCall("aadd", text, "c")),
            )

        c, d = asyncio.run(both())
        assert (c.is_error, c.output) == (d.is_error, d.output)
        assert (c.error or "").replace("aadd", "add") == (
            d.error or ""
        ).replace("aadd", "add")
        assert (c.is_error, c.output) == (a.is_error, a.output)


FAST_REGISTRY = Registry()


@FAST_REGISTRY.tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@FAST_REGISTRY.tool
async def aadd(a: int, b: int = 0) -> int:
    """Add two integers, asynchronously."""
    return a + b
