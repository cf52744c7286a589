"""OpenTelemetryInterceptor: one span per tool call, linked to the trace."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest


pytest.importorskip("opentelemetry.sdk")

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Interceptor,
    Registry,
    Session,
    ToolCall,
    ToolDenied,
    ToolResult,
    execution_context,
)
from toolctx.otel import (
    TRACEPARENT,
    TRACESTATE,
    OpenTelemetryInterceptor,
    inject_traceparent,
)


TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
REMOTE_SPAN_ID = 0xB7AD6B7169203331
REMOTE_TRACEPARENT = f"00-{TRACE_ID:032x}-{REMOTE_SPAN_ID:016x}-01"
BOUND = 10  # seconds a concurrency test may wait before it fails


class Deny:
    """An interceptor that refuses every call."""

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        raise ToolDenied("not today")

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        return result


class Rig:
    """A registry of probing tools, a traced dispatcher and its exporter."""

    def __init__(
        self,
        provider: TracerProvider,
        exporter: InMemorySpanExporter,
        *,
        after: tuple[Interceptor, ...] = (),
        **options: Any,
    ) -> None:
        self.exporter = exporter
        self.tracer = provider.get_tracer("tests")
        self.registry = Registry()
        self.interceptor = OpenTelemetryInterceptor(
            tracer_provider=provider, registry=self.registry, **options
        )
        self.dispatcher = Dispatcher(
            self.registry, interceptors=[self.interceptor, *after]
        )
        self.threads: list[int] = []
        self.results: list[ToolResult] = []
        self.started = 0
        self.event: asyncio.Event | None = None
        self.barrier = threading.Barrier(3, timeout=BOUND)
        self._register()

    def inside(self) -> Any:
        """Start the span a tool makes itself, tagged with its invocation."""
        return self.tracer.start_as_current_span(
            "inside",
            attributes={"invocation": execution_context().invocation_id},
        )

    def _register(self) -> None:
        registry, dispatcher = self.registry, self.dispatcher

        @registry.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        @registry.tool
        def echo(value: Any) -> Any:
            """Return the value."""
            return value

        @registry.tool
        def fail() -> None:
            """Raise."""
            msg = "boom"
            raise ValueError(msg)

        @registry.tool
        def probe() -> str:
            """Start a span of its own."""
            with self.inside():
                self.threads.append(threading.get_ident())
            return "ok"

        @registry.tool
        async def aprobe() -> str:
            """Start a span of its own, asynchronously."""
            await asyncio.sleep(0)
            with self.inside():
                await asyncio.sleep(0)
            return "ok"

        @registry.tool
        def outer() -> Any:
            """Dispatch a nested call."""
            return dispatcher.dispatch(ToolCall("probe")).output

        @registry.tool
        async def aouter() -> Any:
            """Dispatch a nested call, asynchronously."""
            return (await dispatcher.adispatch(ToolCall("aprobe"))).output

        @registry.tool
        def outer_in_thread() -> Any:
            """Dispatch a nested call from a thread that has no trace."""
            ctx = execution_context()
            thread = threading.Thread(
                target=lambda: self.results.append(
                    dispatcher.dispatch(ToolCall("probe"), ctx)
                )
            )
            thread.start()
            thread.join(BOUND)
            return "ok"

        @registry.tool
        def metadata() -> dict[str, Any]:
            """Return the context's metadata."""
            return dict(execution_context().metadata)

        @registry.tool
        def chunks() -> Iterator[int]:
            """Yield two chunks, each inside a span of its own."""
            for i in range(2):
                with self.inside():
                    yield i

        @registry.tool
        async def achunks() -> AsyncIterator[int]:
            """Yield two chunks asynchronously."""
            for i in range(2):
                with self.inside():
                    await asyncio.sleep(0)
                yield i

        @registry.tool
        async def meet() -> str:
            """Wait until three calls run at once, then start a span."""
            assert self.event is not None
            self.started += 1
            if self.started == 3:
                self.event.set()
            await asyncio.wait_for(self.event.wait(), BOUND)
            with self.inside():
                await asyncio.sleep(0)
            return "ok"

        @registry.tool
        def meet_in_thread() -> str:
            """Wait in a worker thread until three calls run at once."""
            self.barrier.wait()
            with self.inside():
                self.threads.append(threading.get_ident())
            return "ok"

        @registry.tool
        async def cancel_me() -> None:
            """Wait until the caller is cancelled."""
            await asyncio.Event().wait()

    # -- reading the exporter ---------------------------------------------

    def spans(self, name: str) -> list[ReadableSpan]:
        """Return the finished spans called *name*, in end order."""
        return [
            s for s in self.exporter.get_finished_spans() if s.name == name
        ]

    def tool_spans(self) -> list[ReadableSpan]:
        """Return the finished tool spans, in end order."""
        return [
            s
            for s in self.exporter.get_finished_spans()
            if s.name.startswith("execute_tool ")
        ]

    def tool_span(self) -> ReadableSpan:
        """Return the only finished tool span."""
        (span,) = self.tool_spans()
        return span

    def tool_span_of(self, invocation_id: str) -> ReadableSpan:
        """Return the tool span of one invocation."""
        (span,) = (
            s
            for s in self.tool_spans()
            if attrs_of(s)["toolctx.invocation_id"] == invocation_id
        )
        return span


def attrs_of(span: ReadableSpan) -> dict[str, Any]:
    """Return a span's attributes as a plain dict."""
    return dict(span.attributes or {})


def parent_of(span: ReadableSpan) -> int | None:
    """Return the span id of a span's parent, None for a root span."""
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    """Return a finished span's id."""
    assert span.context is not None
    return int(span.context.span_id)


def trace_id(span: ReadableSpan) -> int:
    """Return a finished span's trace id."""
    assert span.context is not None
    return int(span.context.trace_id)


def traceparent_of(span_context: trace.SpanContext) -> str:
    """Return the W3C traceparent header of a span context."""
    return (
        f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}-"
        f"{int(span_context.trace_flags):02x}"
    )


def assert_parented(rig: Rig) -> None:
    """Assert each 'inside' span's parent is the tool span of its call."""
    insides = rig.spans("inside")
    assert insides
    for inside in insides:
        tool = rig.tool_span_of(attrs_of(inside)["invocation"])
        assert parent_of(inside) == span_id(tool)
        assert trace_id(inside) == trace_id(tool)


@pytest.fixture(name="exporter")
def _exporter() -> InMemorySpanExporter:
    """Return an empty in-memory exporter."""
    return InMemorySpanExporter()


@pytest.fixture(name="provider")
def _provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    """Return a tracer provider (not the global one) feeding *exporter*."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture(name="rig")
def _rig(provider: TracerProvider, exporter: InMemorySpanExporter) -> Rig:
    """Return a rig with the interceptor's default options."""
    return Rig(provider, exporter)


@pytest.fixture(name="tracer")
def _tracer(rig: Rig) -> trace.Tracer:
    """Return the rig's tracer, for spans the test itself starts."""
    return rig.tracer


@pytest.fixture(autouse=True)
def _otel_context_restored() -> Iterator[None]:
    """Fail any test that leaves the OpenTelemetry context changed."""
    before = otel_context.get_current()
    yield
    assert otel_context.get_current() is before


class TestModule:
    """The module is optional and the interceptor is an interceptor."""

    def test_import_toolctx_does_not_import_opentelemetry(self) -> None:
        """``import toolctx`` loads no OpenTelemetry module."""
        code = (
            "import sys, toolctx\n"
            "loaded = [m for m in sys.modules if m == 'opentelemetry'\n"
            "          or m.startswith('opentelemetry.')]\n"
            "assert not loaded, loaded\n"
            "assert 'toolctx.otel' not in sys.modules\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    def test_is_an_interceptor(self) -> None:
        """It satisfies the Interceptor protocol the dispatcher checks."""
        assert isinstance(OpenTelemetryInterceptor(), Interceptor)

    def test_repr_shows_the_recording_options(self) -> None:
        """The repr names the options that decide what is recorded."""
        interceptor = OpenTelemetryInterceptor(record_output=True)
        assert repr(interceptor) == (
            "<toolctx.otel.OpenTelemetryInterceptor(record_arguments=False, "
            "record_output=True, record_user_id=True)>"
        )

    def test_tracer_and_provider_together_are_refused(
        self, provider: TracerProvider
    ) -> None:
        """Passing both a tracer and a tracer provider is an error."""
        with pytest.raises(ValueError, match="not both"):
            OpenTelemetryInterceptor(
                tracer=provider.get_tracer("x"), tracer_provider=provider
            )

    def test_given_tracer_is_used(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """Spans come from the tracer passed in."""
        tracer = provider.get_tracer("my.scope")
        dispatcher = Dispatcher(
            Rig(provider, exporter).registry,
            interceptors=[OpenTelemetryInterceptor(tracer=tracer)],
        )
        dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        (span,) = exporter.get_finished_spans()
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "my.scope"

    def test_provider_gives_the_toolctx_scope(self, rig: Rig) -> None:
        """With a tracer provider, spans carry the 'toolctx' scope."""
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        scope = rig.tool_span().instrumentation_scope
        assert scope is not None
        assert scope.name == "toolctx"

    def test_without_an_sdk_calls_still_work(self) -> None:
        """With no provider configured, calls run and nothing breaks."""
        registry = Registry()

        @registry.tool
        def current() -> bool:
            """Say whether a span is recording."""
            return trace.get_current_span().is_recording()

        dispatcher = Dispatcher(
            registry, interceptors=[OpenTelemetryInterceptor()]
        )
        result = dispatcher.dispatch(ToolCall("current"))
        assert not result.is_error
        assert result.output is False


class TestSpan:
    """Name, kind and attributes follow the GenAI conventions."""

    def test_name_kind_and_attributes(self, rig: Rig) -> None:
        """A call gets one INTERNAL 'execute_tool {name}' span."""
        ctx = ExecutionContext(
            session_id="s1", user_id="u1", agent_id="a1", turn=3
        )
        result = rig.dispatcher.dispatch(
            ToolCall("add", '{"a": 1, "b": 2}', id="call_1"), ctx
        )
        span = rig.tool_span()
        assert span.name == "execute_tool add"
        assert span.kind is SpanKind.INTERNAL
        assert span.status.status_code is StatusCode.UNSET
        assert attrs_of(span) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "add",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": "Add two integers.",
            "toolctx.invocation_id": result.invocation_id,
            "toolctx.session_id": "s1",
            "toolctx.user_id": "u1",
            "toolctx.agent_id": "a1",
            "toolctx.turn": 3,
        }

    def test_unset_ids_are_left_out(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """Without a call id, ids or a registry, those attributes are absent."""
        rig = Rig(provider, exporter)
        dispatcher = Dispatcher(
            rig.registry,
            interceptors=[OpenTelemetryInterceptor(tracer_provider=provider)],
        )
        result = dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        assert attrs_of(rig.tool_span()) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "add",
            "gen_ai.tool.type": "function",
            "toolctx.invocation_id": result.invocation_id,
            "toolctx.turn": 0,
        }

    def test_user_id_can_be_left_out(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """record_user_id=False keeps the user id off the span."""
        rig = Rig(provider, exporter, record_user_id=False)
        rig.dispatcher.dispatch(
            ToolCall("add", {"a": 1, "b": 2}),
            ExecutionContext(user_id="ada@example.com", session_id="s"),
        )
        attributes = attrs_of(rig.tool_span())
        assert "toolctx.user_id" not in attributes
        assert attributes["toolctx.session_id"] == "s"

    def test_session_gives_session_and_turn(self, rig: Rig) -> None:
        """A call dispatched with a Session records its id and turn."""
        session = Session("conv-9", user_id="u")
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}), session)
        attributes = attrs_of(rig.tool_span())
        assert attributes["toolctx.session_id"] == "conv-9"
        assert attributes["toolctx.user_id"] == "u"
        assert attributes["toolctx.turn"] == session.turn

    def test_arguments_and_output_are_off_by_default(self, rig: Rig) -> None:
        """Neither arguments nor output are recorded unless asked for."""
        rig.dispatcher.dispatch(ToolCall("echo", {"value": "secret"}))
        attributes = attrs_of(rig.tool_span())
        assert "gen_ai.tool.call.arguments" not in attributes
        assert "gen_ai.tool.call.result" not in attributes

    @pytest.mark.parametrize(
        ("arguments", "recorded"),
        [
            ('{"value": "é"}', '{"value": "é"}'),
            ('{"value": "é"}'.encode(), '{"value": "é"}'),
            ({"value": "é"}, '{"value": "é"}'),
            (None, "{}"),
        ],
    )
    def test_arguments_are_recorded_as_json_text(
        self,
        provider: TracerProvider,
        exporter: InMemorySpanExporter,
        arguments: Any,
        recorded: str,
    ) -> None:
        """record_arguments=True records the model's arguments as JSON."""
        rig = Rig(provider, exporter, record_arguments=True)
        rig.dispatcher.dispatch(ToolCall("echo", arguments))
        attributes = attrs_of(rig.tool_span())
        assert attributes["gen_ai.tool.call.arguments"] == recorded

    @pytest.mark.parametrize(
        ("value", "recorded"),
        [
            (3, "3"),
            ("plain text", "plain text"),
            ({"k": ["é", None]}, '{"k": ["é", null]}'),
        ],
    )
    def test_output_is_recorded_as_json_text(
        self,
        provider: TracerProvider,
        exporter: InMemorySpanExporter,
        value: Any,
        recorded: str,
    ) -> None:
        """record_output=True records the output (a string as itself)."""
        rig = Rig(provider, exporter, record_output=True)
        rig.dispatcher.dispatch(ToolCall("echo", {"value": value}))
        attributes = attrs_of(rig.tool_span())
        assert attributes["gen_ai.tool.call.result"] == recorded

    def test_failed_call_records_no_output(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """An error result has no gen_ai.tool.call.result."""
        rig = Rig(provider, exporter, record_output=True)
        rig.dispatcher.dispatch(ToolCall("fail"))
        assert "gen_ai.tool.call.result" not in attrs_of(rig.tool_span())

    def test_span_attributes_hook_adds_attributes(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """The span_attributes hook's attributes land on the span."""

        def tenant(
            call: ToolCall, context: ExecutionContext
        ) -> dict[str, Any]:
            return {"app.tenant": str(context.metadata["tenant"])}

        rig = Rig(provider, exporter, span_attributes=tenant)
        rig.dispatcher.dispatch(
            ToolCall("add", {"a": 1, "b": 2}),
            ExecutionContext(metadata={"tenant": "acme"}),
        )
        assert attrs_of(rig.tool_span())["app.tenant"] == "acme"

    def test_each_call_of_a_turn_gets_its_own_span(self, rig: Rig) -> None:
        """dispatch_all gives one span per call, in order, as siblings."""
        results = rig.dispatcher.dispatch_all(
            [ToolCall("add", {"a": 1, "b": 2}, id=f"c{i}") for i in range(3)]
        )
        spans = rig.tool_spans()
        assert [attrs_of(s)["gen_ai.tool.call.id"] for s in spans] == [
            "c0",
            "c1",
            "c2",
        ]
        assert [attrs_of(s)["toolctx.invocation_id"] for s in spans] == [
            r.invocation_id for r in results
        ]
        assert {parent_of(s) for s in spans} == {None}
        assert len({trace_id(s) for s in spans}) == 3


class TestErrors:
    """A failed call marks its span as an error."""

    def test_tool_exception(self, rig: Rig) -> None:
        """A raising tool gives ERROR, the model's message and the event."""
        result = rig.dispatcher.dispatch(ToolCall("fail"))
        span = rig.tool_span()
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == result.error
        assert attrs_of(span)["error.type"] == "ValueError"
        (event,) = span.events
        assert event.name == "exception"
        event_attributes = dict(event.attributes or {})
        assert event_attributes["exception.type"] == "ValueError"
        assert event_attributes["exception.message"] == "boom"

    def test_invalid_arguments(self, rig: Rig) -> None:
        """Bad arguments are an error typed ToolArgumentsError."""
        result = rig.dispatcher.dispatch(ToolCall("add", {"a": "1"}))
        span = rig.tool_span()
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == result.error
        assert attrs_of(span)["error.type"] == "ToolArgumentsError"

    def test_unknown_tool(self, rig: Rig) -> None:
        """An unknown tool is a 'tool_error' with no exception event."""
        result = rig.dispatcher.dispatch(ToolCall("nope"))
        span = rig.tool_span()
        assert span.name == "execute_tool nope"
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == result.error
        assert attrs_of(span)["error.type"] == "tool_error"
        assert "gen_ai.tool.description" not in attrs_of(span)
        assert not span.events

    def test_denied_by_a_later_interceptor(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """A denial after this interceptor still ends its span, as an error."""
        rig = Rig(provider, exporter, after=(Deny(),))
        with rig.tracer.start_as_current_span("agent") as agent:
            result = rig.dispatcher.dispatch(ToolCall("probe"))
            assert trace.get_current_span() is agent
        span = rig.tool_span()
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == result.error
        assert "not today" in (span.status.description or "")
        assert attrs_of(span)["error.type"] == "ToolDenied"
        assert not rig.spans("inside")

    def test_denied_by_an_earlier_interceptor(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """A call refused before this interceptor runs has no span."""
        rig = Rig(provider, exporter)
        dispatcher = Dispatcher(
            rig.registry, interceptors=[Deny(), rig.interceptor]
        )
        assert dispatcher.dispatch(ToolCall("probe")).is_error
        assert not exporter.get_finished_spans()


class TestLinkage:
    """The tool span joins the active trace and is current in the tool."""

    def test_child_of_the_current_span(self, rig: Rig) -> None:
        """The tool span's parent is the span current at dispatch."""
        with rig.tracer.start_as_current_span("agent") as agent:
            rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        span = rig.tool_span()
        assert parent_of(span) == agent.get_span_context().span_id
        assert trace_id(span) == agent.get_span_context().trace_id

    def test_root_span_without_a_current_span(self, rig: Rig) -> None:
        """With no current span the tool span starts a trace."""
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        assert parent_of(rig.tool_span()) is None

    def test_tool_spans_are_children_of_the_tool_span(self, rig: Rig) -> None:
        """A span the tool starts has the tool span as its parent."""
        rig.dispatcher.dispatch(ToolCall("probe"))
        assert_parented(rig)

    def test_async_tool_under_adispatch(self, rig: Rig) -> None:
        """An async tool's spans are children of its tool span."""
        result = asyncio.run(rig.dispatcher.adispatch(ToolCall("aprobe")))
        assert result.output == "ok"
        assert_parented(rig)

    def test_async_tool_under_sync_dispatch(self, rig: Rig) -> None:
        """An async tool run to completion by dispatch() sees its span."""
        assert rig.dispatcher.dispatch(ToolCall("aprobe")).output == "ok"
        assert_parented(rig)

    def test_sync_tool_in_a_worker_thread(self, rig: Rig) -> None:
        """A sync tool under adispatch runs in a thread, under its span."""

        async def main() -> int:
            await rig.dispatcher.adispatch(ToolCall("probe"))
            return threading.get_ident()

        loop_thread = asyncio.run(main())
        assert rig.threads
        assert rig.threads != [loop_thread]
        assert_parented(rig)

    def test_nested_dispatch_nests_spans(self, rig: Rig) -> None:
        """A call dispatched inside a tool is a child of that tool's span."""
        outer = rig.dispatcher.dispatch(ToolCall("outer"))
        outer_span = rig.tool_span_of(outer.invocation_id)
        (inner_span,) = rig.spans("execute_tool probe")
        assert parent_of(inner_span) == span_id(outer_span)
        assert (
            attrs_of(inner_span)["toolctx.parent_invocation_id"]
            == outer.invocation_id
        )
        assert "toolctx.parent_invocation_id" not in attrs_of(outer_span)
        assert_parented(rig)

    def test_nested_adispatch_nests_spans(self, rig: Rig) -> None:
        """Nested async calls nest their spans too."""
        outer = asyncio.run(rig.dispatcher.adispatch(ToolCall("aouter")))
        outer_span = rig.tool_span_of(outer.invocation_id)
        (inner_span,) = rig.spans("execute_tool aprobe")
        assert parent_of(inner_span) == span_id(outer_span)
        assert_parented(rig)

    def test_concurrent_calls_are_siblings(self, rig: Rig) -> None:
        """adispatch_all's overlapping calls each nest under the right span."""

        async def main() -> list[ToolResult]:
            rig.event = asyncio.Event()
            with rig.tracer.start_as_current_span("turn"):
                results = await rig.dispatcher.adispatch_all(
                    [ToolCall("meet", id=f"c{i}") for i in range(3)]
                )
                assert trace.get_current_span().is_recording()
            return results

        results = asyncio.run(main())
        assert [r.output for r in results] == ["ok"] * 3
        (turn,) = rig.spans("turn")
        tools = rig.tool_spans()
        assert len(tools) == 3
        assert {parent_of(s) for s in tools} == {span_id(turn)}
        assert len(rig.spans("inside")) == 3
        assert_parented(rig)

    def test_concurrent_sync_calls_in_threads(self, rig: Rig) -> None:
        """Sync calls overlapping in worker threads do not mix spans."""

        async def main() -> list[ToolResult]:
            with rig.tracer.start_as_current_span("turn"):
                return await rig.dispatcher.adispatch_all(
                    [ToolCall("meet_in_thread") for _ in range(3)]
                )

        results = asyncio.run(main())
        assert [r.output for r in results] == ["ok"] * 3
        assert len(set(rig.threads)) == 3
        (turn,) = rig.spans("turn")
        assert {parent_of(s) for s in rig.tool_spans()} == {span_id(turn)}
        assert_parented(rig)

    def test_threads_of_a_tool_continue_through_metadata(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """With propagate_traceparent, a call from a bare thread nests."""
        rig = Rig(provider, exporter, propagate_traceparent=True)
        outer = rig.dispatcher.dispatch(ToolCall("outer_in_thread"))
        (inner,) = rig.results
        assert not inner.is_error
        outer_span = rig.tool_span_of(outer.invocation_id)
        inner_span = rig.tool_span_of(inner.invocation_id)
        assert parent_of(inner_span) == span_id(outer_span)
        assert_parented(rig)


class TestRestore:
    """The OpenTelemetry context after a call is the one before it."""

    @pytest.mark.parametrize(
        "call",
        [
            ToolCall("add", {"a": 1, "b": 2}),
            ToolCall("fail"),
            ToolCall("add", "not json"),
            ToolCall("nope"),
            ToolCall("outer"),
        ],
        ids=["ok", "raises", "bad-json", "unknown", "nested"],
    )
    def test_restored_after_dispatch(self, rig: Rig, call: ToolCall) -> None:
        """Whatever the outcome, the current span is the one before."""
        with rig.tracer.start_as_current_span("agent") as agent:
            before = otel_context.get_current()
            rig.dispatcher.dispatch(call)
            assert otel_context.get_current() is before
            assert trace.get_current_span() is agent
        assert rig.tool_spans()
        assert all(s.end_time is not None for s in rig.tool_spans())

    def test_restored_after_denial(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """A denial by a later interceptor restores the context."""
        rig = Rig(provider, exporter, after=(Deny(),))
        before = otel_context.get_current()
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}))
        assert otel_context.get_current() is before

    def test_restored_after_adispatch(self, rig: Rig) -> None:
        """An adispatch restores the awaiting task's context."""

        async def main() -> None:
            with rig.tracer.start_as_current_span("agent"):
                before = otel_context.get_current()
                for name in ("aprobe", "probe", "fail", "nope"):
                    await rig.dispatcher.adispatch(ToolCall(name))
                    assert otel_context.get_current() is before

        asyncio.run(main())
        assert len(rig.tool_spans()) == 4

    def test_no_span_left_open(self, rig: Rig) -> None:
        """After the calls end the interceptor holds no open span."""

        async def main() -> None:
            rig.event = asyncio.Event()
            await rig.dispatcher.adispatch_all(
                [ToolCall("meet") for _ in range(3)]
            )

        asyncio.run(main())
        rig.dispatcher.dispatch_all([ToolCall("fail"), ToolCall("outer")])
        assert not rig.interceptor._open

    def test_listed_twice_nests_two_spans(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """The same interceptor listed twice opens and ends two spans."""
        rig = Rig(provider, exporter)
        dispatcher = Dispatcher(
            rig.registry, interceptors=[rig.interceptor, rig.interceptor]
        )
        dispatcher.dispatch(ToolCall("probe"))
        inner, outer = rig.tool_spans()
        assert parent_of(inner) == span_id(outer)
        (inside,) = rig.spans("inside")
        assert parent_of(inside) == span_id(inner)
        assert not rig.interceptor._open

    def test_restored_after_cancellation(self, rig: Rig) -> None:
        """A cancelled adispatch ends the span and restores the context."""

        async def main() -> bool:
            before = otel_context.get_current()
            task = asyncio.ensure_future(
                rig.dispatcher.adispatch(ToolCall("cancel_me"))
            )
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return otel_context.get_current() is before

        assert asyncio.run(main())
        assert rig.tool_span().end_time is not None


class TestStreaming:
    """Streamed calls are one span that covers every chunk."""

    def test_stream(self, rig: Rig) -> None:
        """Chunks of a generator tool are produced under its span."""
        before = otel_context.get_current()
        items = list(rig.dispatcher.stream(ToolCall("chunks")))
        assert otel_context.get_current() is before
        assert isinstance(items[-1], ToolResult)
        assert items[-1].output == [0, 1]
        assert len(rig.spans("inside")) == 2
        assert_parented(rig)

    def test_stream_closed_early(self, rig: Rig) -> None:
        """Closing a stream early ends its span as an error and restores."""
        before = otel_context.get_current()
        stream = rig.dispatcher.stream(ToolCall("chunks"))
        next(stream)
        stream.close()  # type: ignore[attr-defined]
        assert otel_context.get_current() is before
        span = rig.tool_span()
        assert span.status.status_code is StatusCode.ERROR
        assert attrs_of(span)["error.type"] == "tool_error"

    def test_astream(self, rig: Rig) -> None:
        """Async generator chunks are produced under the span too."""

        async def main() -> list[Any]:
            before = otel_context.get_current()
            items = [
                item
                async for item in rig.dispatcher.astream(ToolCall("achunks"))
            ]
            assert otel_context.get_current() is before
            return items

        items = asyncio.run(main())
        assert items[-1].output == [0, 1]
        assert len(rig.spans("inside")) == 2
        assert_parented(rig)


class TestTraceparent:
    """W3C trace context carried in the context's metadata."""

    def test_continues_a_remote_trace(self, rig: Rig) -> None:
        """With no active span, metadata['traceparent'] is the parent."""
        ctx = ExecutionContext(metadata={TRACEPARENT: REMOTE_TRACEPARENT})
        rig.dispatcher.dispatch(ToolCall("probe"), ctx)
        span = rig.tool_span()
        assert trace_id(span) == TRACE_ID
        assert parent_of(span) == REMOTE_SPAN_ID
        assert span.parent is not None
        assert span.parent.is_remote
        assert_parented(rig)

    def test_tracestate_is_kept(self, rig: Rig) -> None:
        """The remote tracestate is carried into the span's context."""
        ctx = ExecutionContext(
            metadata={TRACEPARENT: REMOTE_TRACEPARENT, TRACESTATE: "k=v"}
        )
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}), ctx)
        span_context = rig.tool_span().context
        assert span_context is not None
        assert span_context.trace_state.get("k") == "v"

    def test_active_span_wins(self, rig: Rig) -> None:
        """A span active at dispatch wins over the metadata's traceparent."""
        ctx = ExecutionContext(metadata={TRACEPARENT: REMOTE_TRACEPARENT})
        with rig.tracer.start_as_current_span("agent") as agent:
            rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}), ctx)
        span = rig.tool_span()
        assert parent_of(span) == agent.get_span_context().span_id
        assert trace_id(span) != TRACE_ID

    @pytest.mark.parametrize(
        "value", ["garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01", 42]
    )
    def test_invalid_traceparent_starts_a_new_trace(
        self, rig: Rig, value: object
    ) -> None:
        """A malformed or non-string traceparent is ignored."""
        ctx = ExecutionContext(metadata={TRACEPARENT: value})
        result = rig.dispatcher.dispatch(
            ToolCall("add", {"a": 1, "b": 2}), ctx
        )
        assert not result.is_error
        assert parent_of(rig.tool_span()) is None

    def test_continuing_can_be_turned_off(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """continue_traceparent=False ignores the metadata."""
        rig = Rig(provider, exporter, continue_traceparent=False)
        ctx = ExecutionContext(metadata={TRACEPARENT: REMOTE_TRACEPARENT})
        rig.dispatcher.dispatch(ToolCall("add", {"a": 1, "b": 2}), ctx)
        assert parent_of(rig.tool_span()) is None

    def test_inject_in_an_active_span(self, tracer: trace.Tracer) -> None:
        """inject_traceparent adds the current span's traceparent."""
        ctx = ExecutionContext(metadata={"keep": 1})
        with tracer.start_as_current_span("agent") as agent:
            injected = inject_traceparent(ctx)
        assert injected.metadata == {
            "keep": 1,
            TRACEPARENT: traceparent_of(agent.get_span_context()),
        }
        assert ctx.metadata == {"keep": 1}

    def test_inject_from_a_given_context(self, tracer: trace.Tracer) -> None:
        """inject_traceparent can read an explicit OpenTelemetry context."""
        span = tracer.start_span("elsewhere")
        try:
            injected = inject_traceparent(
                ExecutionContext(), otel=trace.set_span_in_context(span)
            )
        finally:
            span.end()
        assert f"{span.get_span_context().span_id:016x}" in str(
            injected.metadata[TRACEPARENT]
        )

    def test_inject_without_a_span_changes_nothing(self) -> None:
        """With no valid current span the context comes back as is."""
        ctx = ExecutionContext()
        assert inject_traceparent(ctx) is ctx

    def test_round_trip_through_a_remote_host(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """A context serialized with its traceparent continues the trace."""
        client = Rig(provider, exporter)
        with client.tracer.start_as_current_span("agent") as agent:
            wire = inject_traceparent(ExecutionContext(user_id="u")).to_dict()
        server = Rig(provider, exporter)
        server.dispatcher.dispatch(
            ToolCall("probe"), ExecutionContext.from_dict(wire)
        )
        span = server.tool_span()
        assert parent_of(span) == agent.get_span_context().span_id
        assert trace_id(span) == agent.get_span_context().trace_id

    def test_propagate_gives_the_tool_its_span(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """propagate_traceparent puts the tool span's traceparent in scope."""
        rig = Rig(provider, exporter, propagate_traceparent=True)
        result = rig.dispatcher.dispatch(ToolCall("metadata"))
        span_context = rig.tool_span().context
        assert span_context is not None
        assert result.output == {TRACEPARENT: traceparent_of(span_context)}

    def test_inject_replaces_stale_headers(self, tracer: trace.Tracer) -> None:
        """Injecting drops a tracestate that belonged to an older span."""
        ctx = ExecutionContext(
            metadata={TRACEPARENT: REMOTE_TRACEPARENT, TRACESTATE: "old=1"}
        )
        with tracer.start_as_current_span("agent") as agent:
            injected = inject_traceparent(ctx)
        assert injected.metadata == {
            TRACEPARENT: traceparent_of(agent.get_span_context())
        }

    def test_propagate_replaces_the_inbound_traceparent(
        self, provider: TracerProvider, exporter: InMemorySpanExporter
    ) -> None:
        """The tool sees its own span's traceparent, not its parent's."""
        rig = Rig(provider, exporter, propagate_traceparent=True)
        ctx = ExecutionContext(
            metadata={TRACEPARENT: REMOTE_TRACEPARENT, TRACESTATE: "k=v"}
        )
        result = rig.dispatcher.dispatch(ToolCall("metadata"), ctx)
        span_context = rig.tool_span().context
        assert span_context is not None
        assert span_context.trace_id == TRACE_ID
        assert result.output == {
            TRACEPARENT: traceparent_of(span_context),
            TRACESTATE: "k=v",
        }

    def test_no_propagation_by_default(self, rig: Rig) -> None:
        """By default the tool's metadata is left alone."""
        assert rig.dispatcher.dispatch(ToolCall("metadata")).output == {}
