"""Regression tests for the dispatcher defects of the reliability review.

Each test names the review item it guards (``#9.N``). Every promise is
checked on each dispatch path it applies to: ``dispatch`` (the fast path
without interceptors, the general path with one), ``adispatch`` (worker
thread, ``inline=True``, async tools), ``dispatch_all`` and
``adispatch_all``.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import threading

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from doubles import PassThrough
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolctxError,
    ToolResult,
    bind_context,
    publish,
    set_state,
    tool,
)
from toolctx._dispatch import dispatcher as dispatch_module
from toolctx.interceptors import AuditLog, MemoryAuditSink
from toolctx.providers import anthropic, openai


BOUND = 10.0  # seconds before a call that should return is called a hang


Runner = Callable[[Dispatcher, ToolCall, Any], ToolResult]


def _sync(d: Dispatcher, call: ToolCall, ctx: Any) -> ToolResult:
    return d.dispatch(call, ctx)


def _sync_all(d: Dispatcher, call: ToolCall, ctx: Any) -> ToolResult:
    (result,) = d.dispatch_all([call], ctx)
    return result


def _bounded(work: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(work, BOUND))


def _async(d: Dispatcher, call: ToolCall, ctx: Any) -> ToolResult:
    result: ToolResult = _bounded(d.adispatch(call, ctx))
    return result


def _async_all(d: Dispatcher, call: ToolCall, ctx: Any) -> ToolResult:
    (result,) = _bounded(d.adispatch_all([call], ctx))
    return result


RUNNERS = {
    "dispatch": _sync,
    "dispatch_all": _sync_all,
    "adispatch": _async,
    "adispatch_all": _async_all,
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(request: pytest.FixtureRequest) -> Runner:
    """Each public way to run one call."""
    return RUNNERS[request.param]


@pytest.fixture(params=["fast", "intercepted"], name="make")
def _make(request: pytest.FixtureRequest) -> Callable[[Registry], Dispatcher]:
    """A dispatcher without interceptors (fast path) and with one."""

    def make(registry: Registry) -> Dispatcher:
        if request.param == "fast":
            return Dispatcher(registry)
        return Dispatcher(registry, interceptors=[PassThrough()])

    return make


class Unprintable(Exception):  # noqa: N818 - a test double
    """An exception whose message cannot be built."""

    def __str__(self) -> str:
        msg = "no message for you"
        raise RuntimeError(msg)


def _raising_tools(exc_factory: Callable[[], BaseException]) -> Registry:
    """Tools of every kind that raise what *exc_factory* makes."""
    registry = Registry()

    @registry.tool
    def sync_tool() -> str:
        """Raise, in the worker thread under adispatch."""
        raise exc_factory()

    @registry.tool(inline=True)
    def inline_tool() -> str:
        """Raise, on the event loop under adispatch."""
        raise exc_factory()

    @registry.tool
    async def async_tool() -> str:
        """Raise from a coroutine."""
        await asyncio.sleep(0)
        raise exc_factory()

    class Plain:
        """A plain tool with ``execute(args)``."""

        definition = tool(lambda: None, name="plain_tool").definition

        def execute(self, args: dict[str, Any]) -> str:
            raise exc_factory()

    registry.register(Plain())
    return registry


KINDS = ["sync_tool", "inline_tool", "async_tool", "plain_tool"]


class TestToolExceptionsAreResults:
    """#9.1, #9.2, #9.4: whatever a tool raises is an error result."""

    @pytest.mark.parametrize("name", KINDS)
    def test_system_exit_is_an_error_result(
        self, run: Runner, make: Callable[[Registry], Dispatcher], name: str
    ) -> None:
        """A tool's ``SystemExit`` (argparse on bad input) is a failure."""
        dispatcher = make(_raising_tools(lambda: SystemExit(2)))
        result = run(dispatcher, ToolCall(name, "{}"), None)
        assert result.is_error
        assert result.error == f"Tool {name!r} failed: SystemExit: 2"
        assert isinstance(result.exception, SystemExit)

    @pytest.mark.parametrize("name", KINDS)
    def test_stop_iteration_is_an_error_result_promptly(
        self, run: Runner, make: Callable[[Registry], Dispatcher], name: str
    ) -> None:
        """``next()`` on an empty iterator fails the call, never hangs."""
        dispatcher = make(_raising_tools(lambda: next(iter(()))))
        result = run(dispatcher, ToolCall(name, "{}"), None)
        if name == "async_tool":  # a coroutine cannot raise it (PEP 479)
            assert result.error == (
                f"Tool {name!r} failed: RuntimeError: coroutine raised "
                "StopIteration"
            )
        else:
            assert result.error == f"Tool {name!r} failed: StopIteration"
        assert isinstance(result.exception, (StopIteration, RuntimeError))

    def test_stop_iteration_under_a_timeout_is_not_a_timeout(self) -> None:
        """With a timeout set, the failure is reported as what it is."""
        registry = _raising_tools(lambda: next(iter(())))
        dispatcher = Dispatcher(registry, default_timeout=5)
        result = _async(dispatcher, ToolCall("sync_tool", "{}"), None)
        assert result.error == "Tool 'sync_tool' failed: StopIteration"

    @pytest.mark.parametrize("name", KINDS)
    def test_unprintable_exception_is_an_error_result(
        self, run: Runner, make: Callable[[Registry], Dispatcher], name: str
    ) -> None:
        """An exception whose ``__str__`` raises still gives a message."""
        dispatcher = make(_raising_tools(Unprintable))
        result = run(dispatcher, ToolCall(name, "{}"), None)
        assert result.error == (
            f"Tool {name!r} failed: Unprintable (its message could not be "
            "read)"
        )
        assert isinstance(result.exception, Unprintable)

    def test_an_overlong_exception_message_is_cut(self) -> None:
        """The model never gets megabytes of exception text."""
        dispatcher = Dispatcher(
            _raising_tools(lambda: ValueError("x" * 10**6))
        )
        result = dispatcher.dispatch(ToolCall("sync_tool", "{}"))
        assert result.error is not None
        assert len(result.error) < 2100
        assert result.error.endswith("more characters)")

    def test_keyboard_interrupt_still_propagates(self) -> None:
        """Only tool failures become results: Ctrl-C stops the host."""
        dispatcher = Dispatcher(_raising_tools(KeyboardInterrupt))
        with pytest.raises(KeyboardInterrupt):
            dispatcher.dispatch(ToolCall("sync_tool", "{}"))

    def test_the_next_call_works(self) -> None:
        """After a tool's SystemExit the dispatcher serves the next call."""
        registry = _raising_tools(lambda: SystemExit(3))

        @registry.tool
        def ok() -> str:
            """Work."""
            return "fine"

        dispatcher = Dispatcher(registry)
        assert dispatcher.dispatch(ToolCall("sync_tool", "{}")).is_error
        assert dispatcher.dispatch(ToolCall("ok", "{}")).output == "fine"


class TestCancellation:
    """#9.3: only the caller's own cancellation propagates."""

    @staticmethod
    def _registry() -> Registry:
        registry = Registry()

        @registry.tool
        async def waits_on_cancelled() -> str:
            """Await a future that someone else cancels."""
            future = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(future.cancel)
            await future
            return "unreachable"

        @registry.tool
        def sync_cancelled() -> str:
            """Raise CancelledError from a sync tool."""
            raise asyncio.CancelledError

        @registry.tool
        def note(value: str) -> str:
            """Record a state change."""
            set_state("note", value)
            return value

        @registry.tool
        async def slow() -> str:
            """Take long enough to be cancelled by the caller."""
            await asyncio.sleep(30)
            return "late"

        return registry

    @pytest.mark.parametrize("name", ["waits_on_cancelled", "sync_cancelled"])
    @pytest.mark.parametrize("intercepted", [False, True])
    def test_a_tools_own_cancelled_error_is_an_error_result(
        self, name: str, intercepted: bool
    ) -> None:
        """The caller was not cancelled, so the call simply failed."""
        dispatcher = Dispatcher(
            self._registry(),
            interceptors=[PassThrough()] if intercepted else [],
        )
        result = _async(dispatcher, ToolCall(name, "{}"), None)
        assert result.is_error
        assert result.error == f"Tool {name!r} failed: CancelledError"

    def test_adispatch_all_keeps_the_other_calls(self) -> None:
        """One tool's CancelledError loses no other result or change."""
        dispatcher = Dispatcher(self._registry())
        session = Session("s")
        calls = [
            ToolCall("note", '{"value": "a"}', "1"),
            ToolCall("waits_on_cancelled", "{}", "2"),
            ToolCall("note", '{"value": "b"}', "3"),
        ]
        results = _bounded(dispatcher.adispatch_all(calls, session))
        assert [r.is_error for r in results] == [False, True, False]
        assert session.state["note"] == "b"
        assert len(session.results) == 3

    def test_the_callers_cancellation_still_propagates(self) -> None:
        """Cancelling the awaiting task cancels the call."""
        audit = MemoryAuditSink()
        dispatcher = Dispatcher(
            self._registry(), interceptors=[AuditLog(audit)]
        )

        async def main() -> None:
            task = asyncio.ensure_future(
                dispatcher.adispatch(ToolCall("slow", "{}"))
            )
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        _bounded(main())
        assert [r.error for r in audit.records] == [
            "The call to tool 'slow' was cancelled."
        ]


class TestLatePublish:
    """#9.5: a thread that outlives its call cannot race the result."""

    def test_results_are_consistent_and_late_writes_refused(self) -> None:
        """No ``dictionary changed size`` out of dispatch; writes refused."""
        # Switch threads as often as possible, so that the writer runs
        # while the result is being built.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        registry = Registry()
        refused: list[BaseException] = []
        threads: list[threading.Thread] = []

        @registry.tool
        def leaky() -> str:
            """Start a thread that keeps publishing after the call."""
            busy = threading.Event()

            def spam() -> None:
                index = 0
                try:
                    while True:
                        publish(f"k{index}", index)
                        index += 1
                        if index == 2000:
                            busy.set()
                except ToolctxError as exc:
                    refused.append(exc)
                    busy.set()

            thread = threading.Thread(target=bind_context(spam))
            threads.append(thread)
            thread.start()
            busy.wait()
            return "done"

        dispatcher = Dispatcher(registry)
        try:
            for _ in range(100):
                result = dispatcher.dispatch(ToolCall("leaky", "{}"))
                snapshot = dict(result.metadata)
                assert result.output == "done"
                assert len(snapshot) >= 2000  # published in time: kept
                assert dict(result.metadata) == snapshot
        finally:
            sys.setswitchinterval(interval)
            for thread in threads:
                thread.join(BOUND)
        assert len(refused) == 100
        assert all("after tool call 'leaky'" in str(e) for e in refused)


class Recorder:
    """An interceptor that notes each before/after it sees."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        self.log.append(f"{self.name}.before")
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        self.log.append(f"{self.name}.after:{result.is_error}")
        return result


class Broken(Recorder):
    """An interceptor whose ``before`` or ``after`` raises."""

    def __init__(self, log: list[str], name: str, where: str) -> None:
        super().__init__(log, name)
        self.where = where

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        super().before(call, context)
        if self.where == "before":
            msg = "before broke"
            raise RuntimeError(msg)
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        super().after(call, context, result)
        if self.where == "after":
            msg = "after broke"
            raise RuntimeError(msg)
        return result


def _adder() -> Registry:
    registry = Registry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return registry


RUN_BY_NAME: dict[str, Callable[[Dispatcher, ToolCall], object]] = {
    "dispatch": lambda d, call: d.dispatch(call),
    "adispatch": lambda d, call: _async(d, call, None),
    "stream": lambda d, call: list(d.stream(call)),
}


class TestInterceptorsAlwaysUnwind:
    """#9.8: every interceptor whose ``before`` ran gets its ``after``."""

    @pytest.mark.parametrize("runner", ["dispatch", "adispatch", "stream"])
    def test_a_later_before_raising_still_runs_earlier_afters(
        self, runner: str
    ) -> None:
        """The audit record is written, then the host sees the error."""
        log: list[str] = []
        dispatcher = Dispatcher(
            _adder(),
            interceptors=[
                Recorder(log, "first"),
                Broken(log, "second", "before"),
                Recorder(log, "third"),
            ],
        )
        with pytest.raises(RuntimeError, match="before broke"):
            RUN_BY_NAME[runner](dispatcher, ToolCall("add", '{"a":1,"b":2}'))
        assert log == ["first.before", "second.before", "first.after:True"]

    def test_a_before_returning_the_wrong_type_still_unwinds(self) -> None:
        """A host bug in ``before`` is a TypeError after the unwinding."""
        log: list[str] = []

        class Wrong(Recorder):
            def before(self, call: ToolCall, context: ExecutionContext) -> Any:
                return "not a context"

        dispatcher = Dispatcher(
            _adder(), interceptors=[Recorder(log, "first"), Wrong(log, "w")]
        )
        with pytest.raises(TypeError, match="must return an ExecutionContext"):
            dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 2}'))
        assert log == ["first.before", "w.after:True", "first.after:True"]

    @pytest.mark.parametrize("runner", ["dispatch", "adispatch"])
    def test_an_after_raising_does_not_skip_the_others(
        self, runner: str
    ) -> None:
        """The other afters run; then the first exception propagates."""
        log: list[str] = []
        dispatcher = Dispatcher(
            _adder(),
            interceptors=[
                Recorder(log, "first"),
                Broken(log, "second", "after"),
                Recorder(log, "third"),
            ],
        )
        with pytest.raises(RuntimeError, match="after broke"):
            RUN_BY_NAME[runner](dispatcher, ToolCall("add", '{"a":1,"b":2}'))
        assert log[-3:] == [
            "third.after:False",
            "second.after:False",
            "first.after:False",
        ]

    def test_the_opentelemetry_span_ends_and_is_not_left_current(
        self,
    ) -> None:
        """A failing later ``before`` cannot leak the tool span."""
        pytest.importorskip("opentelemetry.sdk")
        from opentelemetry import context as otel_context
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        from toolctx.otel import OpenTelemetryInterceptor

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        dispatcher = Dispatcher(
            _adder(),
            interceptors=[
                OpenTelemetryInterceptor(tracer_provider=provider),
                Broken([], "broken", "before"),
            ],
        )
        before = otel_context.get_current()
        with pytest.raises(RuntimeError):
            dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 2}'))
        assert otel_context.get_current() is before
        (span,) = exporter.get_finished_spans()
        assert span.end_time is not None
        provider.shutdown()


def _numbers() -> Registry:
    registry = Registry()

    @registry.tool
    def square(x: int) -> int:
        """Square an integer."""
        return x * x

    @registry.tool
    def ratio(a: float, b: float) -> list[float]:
        """Divide, the way numpy would (NaN for 0/0)."""
        return [a / b if b else math.nan]

    @registry.tool
    def infinite() -> dict[str, float]:
        """Return an infinity nested in a mapping."""
        return {"value": math.inf}

    return registry


class TestNumbers:
    """#9.9: numbers JSON cannot carry never get in or out."""

    BIG = "7" * 5000

    @pytest.mark.parametrize(
        "arguments",
        [f'{{"x": {BIG}}}', f'{{"x":{BIG}}}', {"x": 7 * 10**5000}],
        ids=["text", "compact", "decoded"],
    )
    def test_a_5000_digit_int_is_refused_on_the_way_in(
        self,
        run: Runner,
        make: Callable[[Registry], Dispatcher],
        arguments: Any,
    ) -> None:
        """The model is told to send the number as a string."""
        result = run(make(_numbers()), ToolCall("square", arguments), None)
        assert result.is_error
        assert result.error is not None
        assert "more than 4300 digits; send it as a string" in result.error

    def test_an_output_too_long_to_write_is_an_error_result(
        self, run: Runner, make: Callable[[Registry], Dispatcher]
    ) -> None:
        """4,000 digits in, 8,000 out: an error result naming the limit."""
        call = ToolCall("square", {"x": int("9" * 4000)}, "c1")
        result = run(make(_numbers()), call, None)
        assert result.is_error
        assert result.error is not None
        assert "too large (the limit is 4300 digits)" in result.error
        # ... which every renderer and store can carry.
        json.dumps(openai.result_message(result))
        json.dumps(anthropic.result_block(result))

    @pytest.mark.parametrize(
        ("name", "arguments"),
        [("ratio", '{"a": 0, "b": 0}'), ("infinite", "{}")],
    )
    def test_nan_and_infinity_outputs_are_error_results(
        self,
        run: Runner,
        make: Callable[[Registry], Dispatcher],
        name: str,
        arguments: str,
    ) -> None:
        """JSON has no NaN: the result says so instead of writing NaN."""
        call = ToolCall(name, arguments, "c1")
        result = run(make(_numbers()), call, None)
        assert result.is_error
        assert result.error is not None
        assert "has no JSON form (JSON has no NaN or infinities)" in (
            result.error
        )
        json.dumps(openai.result_message(result), allow_nan=False)

    def test_a_4000_digit_int_is_still_accepted(self) -> None:
        """Big numbers within the limit work both ways."""
        dispatcher = Dispatcher(_numbers())
        x = int("3" * 2000)
        result = dispatcher.dispatch(ToolCall("square", json.dumps({"x": x})))
        assert result.output == x * x


class TestDispatchAllIsLinear:
    """#9.10: each result is frozen for ``prior_results`` exactly once."""

    def test_frozen_once_per_result(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """200 calls freeze 200 results, not 20,000."""
        registry = Registry()

        @registry.tool
        def rows() -> list[dict[str, int]]:
            """Return a table."""
            return [{"i": i} for i in range(200)]

        seen: list[int] = []
        real = dispatch_module.frozen_view

        def counting(result: ToolResult) -> ToolResult:
            seen.append(1)
            return real(result)

        monkeypatch.setattr(dispatch_module, "frozen_view", counting)
        template = ExecutionContext(session_id="s")
        calls = [ToolCall("rows", "{}", str(i)) for i in range(200)]
        results = Dispatcher(registry).dispatch_all(calls, template)
        assert len(seen) == 200
        assert all(not r.is_error for r in results)

    def test_each_call_sees_the_earlier_results(self) -> None:
        """The prior results are still complete and in order."""
        registry = Registry()

        @registry.tool
        def count() -> int:
            """How many calls came before in this turn."""
            from toolctx import execution_context

            return len(execution_context().prior_results)

        calls = [ToolCall("count", "{}", str(i)) for i in range(5)]
        template = ExecutionContext(session_id="s")
        results = Dispatcher(registry).dispatch_all(calls, template)
        assert [r.output for r in results] == [0, 1, 2, 3, 4]


def _transfer() -> Registry:
    registry = Registry()

    @registry.tool
    def transfer(to: str, amount: int) -> str:
        """Send money."""
        return f"sent {amount} to {to}"

    return registry


class TestDuplicateKeys:
    """#9.11: a key sent twice is refused on every path, however spaced."""

    @pytest.mark.parametrize(
        "text",
        [
            '{"to":"bob","amount":1,"amount" :5000}',
            '{"to":"bob","amount":1,"amount"\n:5000}',
            '{"to":"bob","amount":1,"amount"\t :5000}',
            '{"to":"bob", "amount": 1, "amount": 5000}',
            '{"amount" :1,"to":"bob","amount":5000}',
        ],
    )
    def test_refused(
        self, run: Runner, make: Callable[[Registry], Dispatcher], text: str
    ) -> None:
        """The tool never runs with the second value."""
        result = run(make(_transfer()), ToolCall("transfer", text), None)
        assert result.is_error
        assert result.error is not None
        assert "duplicate key 'amount'; send each key once" in result.error

    def test_colons_inside_values_are_fine(self) -> None:
        """Text with colons in strings still runs (on the general path)."""
        dispatcher = Dispatcher(_transfer())
        text = '{"to":"urn:bob:1","amount":5}'
        result = dispatcher.dispatch(ToolCall("transfer", text))
        assert result.output == "sent 5 to urn:bob:1"


class TestBoundedMessages:
    """#9.12: hostile arguments cannot produce a huge error message."""

    def test_90000_unknown_keys(self) -> None:
        """~1 MB of unknown keys: a short message that says what to do."""
        registry = Registry()
        params = ", ".join(f"p{i}: int = 0" for i in range(40))
        namespace: dict[str, Any] = {}
        exec(  # noqa: S102 - a 40-parameter tool, built for the test
            f"def wide({params}) -> int:\n    '''Wide.'''\n    return 1",
            namespace,
        )
        registry.tool(namespace["wide"])
        text = json.dumps(
            {f"k{i}": 1 for i in range(90_000)}, separators=(",", ":")
        )
        assert len(text) < 1_000_000
        result = Dispatcher(registry).dispatch(ToolCall("wide", text))
        assert result.error is not None
        assert len(result.error) < 10_000
        assert "k0: unexpected argument (allowed: p0, p1" in result.error
        assert (
            "89990 more unexpected arguments: send only the arguments listed"
            in result.error
        )

    def test_many_wrong_values_are_counted_not_listed(self) -> None:
        """A list of 50,000 wrong items reports 20 and counts the rest."""
        registry = Registry()

        @registry.tool
        def total(values: list[int]) -> int:
            """Sum integers."""
            return sum(values)

        text = json.dumps({"values": ["x"] * 50_000})
        result = Dispatcher(registry).dispatch(ToolCall("total", text))
        assert result.error is not None
        assert len(result.error) < 10_000
        assert "values[0]: expected an integer" in result.error
        assert "and 49980 more problems: fix these first" in result.error

    def test_a_long_key_name_is_cut(self) -> None:
        """One 500,000-character key cannot fill the message."""
        text = json.dumps({"to": "bob", "amount": 1, "k" * 500_000: 1})
        result = Dispatcher(_transfer()).dispatch(ToolCall("transfer", text))
        assert result.error is not None
        assert len(result.error) < 1_000


@pytest.fixture(autouse=True)
def _no_thread_left() -> Iterator[None]:
    """No test leaves a worker of its own running."""
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        if not thread.daemon and thread.name.startswith("Thread-"):
            thread.join(BOUND)


class TestRenderersRefuseWhatJSONCannotCarry:
    """#9.9: a hand-built result with NaN never renders as ``NaN`` text."""

    @pytest.mark.parametrize("output", [[math.nan], {"v": math.inf}])
    def test_a_clear_error_instead_of_nan(self, output: object) -> None:
        """The host learns the result is not JSON data."""
        result = ToolResult(name="t", call_id="c1", output=output)
        with pytest.raises(TypeError, match="is not JSON data"):
            openai.result_message(result)
        with pytest.raises(TypeError, match="is not JSON data"):
            anthropic.result_block(result)


class TestWholeNameChecks:
    """#9.18: every name check matches the whole text, newline included."""

    def test_an_import_reference_with_a_trailing_newline_is_refused(
        self,
    ) -> None:
        """An import reference followed by a newline is refused."""
        from concurrent.futures import ThreadPoolExecutor

        with (
            ThreadPoolExecutor(1) as pool,
            pytest.raises(
                ValueError, match="scope_loader must be an import reference"
            ),
        ):
            Dispatcher(Registry(), executor=pool, scope_loader="os:sep\n")


class TestModelChosenTextIsBounded:
    """#9.12: text the model or a tool controls cannot flood a message."""

    def test_an_unknown_tool_name_is_cut(self) -> None:
        """A 100,000-character tool name is not repeated in full."""
        result = Dispatcher(_adder()).dispatch(ToolCall("x" * 100_000, "{}"))
        assert result.error is not None
        assert result.error.startswith("Unknown tool 'xxx")
        assert len(result.error) < 400

    def test_a_denial_reason_is_cut(self) -> None:
        """A megabyte of denial reason becomes 2,000 characters."""
        from toolctx import ToolDenied

        class Deny(PassThrough):
            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                raise ToolDenied("no" * 500_000)

        dispatcher = Dispatcher(_adder(), interceptors=[Deny()])
        result = dispatcher.dispatch(ToolCall("add", '{"a": 1, "b": 2}'))
        assert result.error is not None
        assert result.error.startswith("Call to tool 'add' was denied: nono")
        assert len(result.error) < 2100


class TestInterceptorContexts:
    """An interceptor cannot change the call's own fields."""

    def test_tool_name_and_call_id_stay_the_dispatchers(self) -> None:
        """``attrs.evolve`` in ``before`` cannot rename the running call."""
        import attrs

        from toolctx import execution_context

        registry = Registry()

        @registry.tool
        def who() -> list[str | None]:
            """Name the running call."""
            ctx = execution_context()
            return [ctx.tool_name, ctx.tool_call_id]

        class Rename(PassThrough):
            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                return attrs.evolve(
                    context, tool_name="other", tool_call_id="forged"
                )

        dispatcher = Dispatcher(registry, interceptors=[Rename()])
        result = dispatcher.dispatch(ToolCall("who", "{}", "c1"))
        assert result.output == ["who", "c1"]
