"""Lost-context diagnostics: the specific error, its cost when off, warnings."""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import os
import pkgutil
import subprocess
import sys
import threading
import warnings

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import toolctx

from toolctx import (
    Dispatcher,
    NoExecutionContextError,
    Registry,
    ToolCall,
    current_context,
    execution_context,
)
from toolctx import (
    diagnostics as _diagnostics,
)
from toolctx._context import current as _current
from toolctx._context.threads import bind_context
from toolctx.diagnostics import (
    ENV_VAR,
    LostContextWarning,
    disable_lost_context_diagnostics,
    enable_lost_context_diagnostics,
    lost_context_diagnostics_enabled,
)


TIMEOUT = 10.0
PLAIN = str(NoExecutionContextError())
HAS_WARNING_HOOK = (
    _diagnostics._HOOK in _current.current_context.__code__.co_names
)


def probe() -> str:
    """Return what execution_context() says here: the error or the tool."""
    try:
        ctx = execution_context()
    except NoExecutionContextError as exc:
        return str(exc)
    return f"bound to {ctx.tool_name}"


def in_bare_thread(fn: Callable[[], str]) -> str:
    """Run *fn* in a thread started without the context; return its value."""
    out: list[str] = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "the thread did not finish in time"
    return out[0]


@pytest.fixture(autouse=True)
def _diagnostics_off() -> Iterator[None]:
    """Start every test with diagnostics off, and restore the state after."""
    was_on, was_warn = lost_context_diagnostics_enabled(), _diagnostics._warn
    disable_lost_context_diagnostics()
    yield
    disable_lost_context_diagnostics()
    if was_on:
        enable_lost_context_diagnostics(warn=was_warn)


@pytest.fixture(name="debug")
def _debug() -> Iterator[None]:
    enable_lost_context_diagnostics()
    yield
    disable_lost_context_diagnostics()


@pytest.fixture(name="registry")
def _registry() -> Registry:
    registry = Registry()

    @registry.tool
    def fetch() -> str:
        """Probe execution_context() from a thread started without it."""
        return in_bare_thread(probe)

    @registry.tool
    def fetch_bound() -> str:
        """Probe from a thread whose target is bound with bind_context."""
        return in_bare_thread(bind_context(probe))

    @registry.tool
    def fetch_pooled() -> str:
        """Probe from a plain ThreadPoolExecutor."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(probe).result(TIMEOUT)

    @registry.tool
    def fetch_fresh() -> str:
        """Probe in a fresh contextvars context of this same thread."""
        return contextvars.Context().run(probe)

    @registry.tool
    async def fetch_async() -> str:
        """Probe from loop.run_in_executor, which does not copy the context."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, probe)

    @registry.tool
    def outer() -> str:
        """Dispatch fetch as a nested call and return its output."""
        result = Dispatcher(registry).dispatch(ToolCall("fetch", "{}"))
        return str(result.output)

    @registry.tool
    def running() -> list[str]:
        """List the calls the diagnostics track right now."""
        return [
            f"{r.tool_name} {r.invocation_id}"
            for r in _diagnostics._running_calls()
        ]

    @registry.tool
    def crash() -> None:
        """Fail."""
        raise RuntimeError

    @registry.tool
    def switch_off() -> str:
        """Turn the diagnostics off while this call runs."""
        disable_lost_context_diagnostics()
        return "off"

    return registry


@pytest.fixture(name="dispatcher")
def _dispatcher(registry: Registry) -> Dispatcher:
    return Dispatcher(registry)


def output(dispatcher: Dispatcher, name: str) -> tuple[Any, str]:
    """Dispatch tool *name*; return its output and invocation id."""
    result = dispatcher.dispatch(ToolCall(name, "{}"))
    assert not result.is_error, result.error
    return result.output, result.invocation_id


class TestLostContextMessage:
    """With diagnostics on, the error names the running call and the fix."""

    @pytest.mark.usefixtures("debug")
    def test_bare_thread_names_the_call_and_the_fix(
        self, dispatcher: Dispatcher
    ) -> None:
        """A bare thread started by a tool gets the tool, thread and fix."""
        message, invocation_id = output(dispatcher, "fetch")
        assert isinstance(message, str)
        assert message.startswith("No ExecutionContext is bound in thread ")
        assert "tool call 'fetch'" in message
        assert invocation_id in message
        assert "in thread 'MainThread'" in message
        assert "threading.Thread(target=toolctx.bind_context(fn))" in message
        assert "toolctx.ContextThreadPoolExecutor" in message

    def test_without_diagnostics_the_message_is_plain(
        self, dispatcher: Dispatcher
    ) -> None:
        """Off, the same mistake gives the usual message."""
        assert output(dispatcher, "fetch")[0] == PLAIN

    @pytest.mark.usefixtures("debug")
    def test_plain_executor_gets_the_message(
        self, dispatcher: Dispatcher
    ) -> None:
        """A task on a plain ThreadPoolExecutor gets the specific message."""
        message, invocation_id = output(dispatcher, "fetch_pooled")
        assert "tool call 'fetch_pooled'" in message
        assert invocation_id in message
        assert "ContextThreadPoolExecutor" in message

    @pytest.mark.usefixtures("debug")
    def test_run_in_executor_points_to_to_thread(
        self, dispatcher: Dispatcher
    ) -> None:
        """From async code the message names the task and asyncio.to_thread."""
        result = asyncio.run(dispatcher.adispatch(ToolCall("fetch_async")))
        message = result.output
        assert "tool call 'fetch_async'" in message
        assert result.invocation_id in message
        assert "of thread 'MainThread'" in message
        assert "asyncio.to_thread(fn)" in message

    @pytest.mark.usefixtures("debug")
    def test_fresh_context_in_the_same_thread(
        self, dispatcher: Dispatcher
    ) -> None:
        """Code run in a fresh context of the call's thread is told so."""
        message, invocation_id = output(dispatcher, "fetch_fresh")
        assert "tool call 'fetch_fresh'" in message
        assert invocation_id in message
        assert "this same thread" in message
        assert "toolctx.bind_context(fn)" in message

    @pytest.mark.usefixtures("debug")
    def test_task_created_outside_the_call(
        self, dispatcher: Dispatcher, registry: Registry
    ) -> None:
        """A task created before the call is named, with the running task."""

        async def main() -> str:
            go = asyncio.Event()

            async def bystander() -> str:
                await go.wait()
                return probe()

            task = asyncio.create_task(bystander(), name="bystander")

            @registry.tool
            async def trigger() -> str:
                """Let the bystander probe while this call runs."""
                go.set()
                return await task

            call = ToolCall("trigger")
            return (await dispatcher.adispatch(call)).output  # type: ignore[no-any-return]

        message = asyncio.run(main())
        assert "in task 'bystander' of thread 'MainThread'" in message
        assert "tool call 'trigger'" in message
        assert "of this same thread" in message
        assert "asyncio.create_task copies the context" in message

    @pytest.mark.usefixtures("debug")
    def test_nested_calls_name_the_latest(
        self, dispatcher: Dispatcher
    ) -> None:
        """With a nested call running, the innermost (latest) is named."""
        message, _ = output(dispatcher, "outer")
        assert "tool call 'fetch'" in message
        assert "2 calls are running" in message

    @pytest.mark.usefixtures("debug")
    def test_no_call_running_gives_the_plain_message(self) -> None:
        """Outside any call the usual message stays."""
        assert in_bare_thread(probe) == PLAIN
        assert probe() == PLAIN

    @pytest.mark.usefixtures("debug")
    def test_bound_threads_still_see_the_context(
        self, dispatcher: Dispatcher
    ) -> None:
        """Diagnostics change no behaviour: a bound thread sees the call."""
        assert output(dispatcher, "fetch_bound")[0] == "bound to fetch_bound"


def seam_is_plain() -> bool:
    """Whether the bind seam binds with the ContextVar's own set/reset."""
    return (
        _current.SEAM.bind is _current.set_current
        and _current.SEAM.unbind is _current.reset_current
    )


class TestCost:
    """Off, the dispatcher's hot path has no diagnostics work at all."""

    def test_off_the_dispatcher_binds_with_the_plain_contextvar(
        self, dispatcher: Dispatcher
    ) -> None:
        """Off, the one bind seam is ContextVar.set/reset themselves."""
        assert seam_is_plain()
        assert not _current.SEAM.plugged
        assert output(dispatcher, "running")[0] == []

    def test_calls_are_bound_only_through_the_seam(self) -> None:
        """No toolctx module binds a call's context but through the seam.

        Diagnostics plug into one place; a module holding the
        ContextVar's own set/reset under a name of its own would bind
        calls the diagnostics never see.
        """
        binders = set()
        plain = {id(_current.set_current), id(_current.reset_current)}
        for info in pkgutil.walk_packages(toolctx.__path__, "toolctx."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional dependency is missing
                continue
            if any(id(value) in plain for value in vars(module).values()):
                binders.add(info.name)
        assert binders == {"toolctx._context.current"}

    def test_enabling_plugs_tracking_and_disabling_unplugs_it(
        self,
    ) -> None:
        """Enabling plugs tracking into the seam; disabling takes it out."""
        enable_lost_context_diagnostics()
        assert _current.SEAM.plugged
        assert not seam_is_plain()
        disable_lost_context_diagnostics()
        assert seam_is_plain()

    @pytest.mark.usefixtures("debug")
    def test_on_a_call_is_tracked_while_it_runs(
        self, dispatcher: Dispatcher
    ) -> None:
        """On, the running call is tracked, and untracked when it ends."""
        running, invocation_id = output(dispatcher, "running")
        assert running == [f"running {invocation_id}"]
        assert _diagnostics._running_calls() == []

    @pytest.mark.usefixtures("debug")
    def test_failed_and_async_calls_are_untracked(
        self, dispatcher: Dispatcher
    ) -> None:
        """A call that raises, or runs under adispatch, leaves no entry."""
        assert dispatcher.dispatch(ToolCall("crash")).is_error
        result = asyncio.run(dispatcher.adispatch(ToolCall("running")))
        assert result.output == [f"running {result.invocation_id}"]
        assert _diagnostics._running_calls() == []

    @pytest.mark.usefixtures("debug")
    def test_switching_off_during_a_call_is_safe(
        self, dispatcher: Dispatcher
    ) -> None:
        """Disabling while a call runs clears the tracking; the call ends."""
        assert output(dispatcher, "switch_off")[0] == "off"
        assert not lost_context_diagnostics_enabled()
        assert _diagnostics._running_calls() == []
        assert output(dispatcher, "fetch")[0] == PLAIN

    def test_enable_is_idempotent(self) -> None:
        """Enabling twice needs one disable; the flag tells the state."""
        assert not lost_context_diagnostics_enabled()
        enable_lost_context_diagnostics()
        enable_lost_context_diagnostics()
        assert lost_context_diagnostics_enabled()
        disable_lost_context_diagnostics()
        assert not lost_context_diagnostics_enabled()
        assert seam_is_plain()


class TestEnvironment:
    """TOOLCTX_DEBUG_LOST_CONTEXT turns the diagnostics on at import."""

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("1", "True False"),
            ("warn", "True True"),
            ("0", "False False"),
            ("", "False False"),
        ],
    )
    def test_environment_variable(self, value: str, expected: str) -> None:
        """1 turns them on, warn adds warnings, 0 or empty leaves them off."""
        code = (
            "import toolctx.diagnostics as d; "
            "print(d.lost_context_diagnostics_enabled(), d._warn)"
        )
        env = {**os.environ, ENV_VAR: value}
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert done.stdout.strip() == expected


@pytest.fixture(name="strict_warnings")
def _strict_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", LostContextWarning)
        yield


def catch_warning(fn: Callable[[], object]) -> str:
    """Call *fn*; return the LostContextWarning it raised, or 'silent'."""
    try:
        fn()
    except LostContextWarning as warning:
        return str(warning)
    return "silent"


@pytest.mark.usefixtures("strict_warnings")
class TestWarnings:
    """warn=True: current_context() warns where it finds a lost context."""

    def test_the_hook_warns_from_a_lost_thread(
        self, dispatcher: Dispatcher, registry: Registry
    ) -> None:
        """The function current_context() calls warns with the message."""
        enable_lost_context_diagnostics(warn=True)

        @registry.tool
        def lost() -> str:
            """Call the warning hook from a bare thread."""
            return in_bare_thread(
                lambda: catch_warning(_diagnostics._warn_missing_context)
            )

        message, invocation_id = output(dispatcher, "lost")
        assert message.startswith("current_context() returned None in ")
        assert f"tool call 'lost' (invocation {invocation_id})" in message

    @pytest.mark.skipif(
        not HAS_WARNING_HOOK,
        reason="needs the current_context() hook in toolctx._context.current",
    )
    @pytest.mark.parametrize(("warn", "expected"), [(True, 1), (False, 0)])
    def test_current_context_warns_only_with_warn(
        self,
        dispatcher: Dispatcher,
        registry: Registry,
        warn: bool,
        expected: int,
    ) -> None:
        """With warn=True a lost current_context() warns; without, silent."""
        enable_lost_context_diagnostics(warn=warn)

        @registry.tool
        def lost() -> str:
            """Read current_context() from a bare thread."""
            return in_bare_thread(lambda: catch_warning(current_context))

        message, invocation_id = output(dispatcher, "lost")
        assert message.count(invocation_id) == expected
        if expected:
            assert "tool call 'lost'" in message
            assert "bind_context" in message

    @pytest.mark.skipif(
        not HAS_WARNING_HOOK,
        reason="needs the current_context() hook in toolctx._context.current",
    )
    def test_current_context_is_silent_without_a_running_call(self) -> None:
        """With no call running, current_context() does not warn."""
        enable_lost_context_diagnostics(warn=True)
        assert catch_warning(current_context) == "silent"
        assert in_bare_thread(lambda: catch_warning(current_context)) == (
            "silent"
        )

    @pytest.mark.skipif(
        not HAS_WARNING_HOOK,
        reason="needs the current_context() hook in toolctx._context.current",
    )
    def test_disabling_removes_the_hook(
        self, dispatcher: Dispatcher, registry: Registry
    ) -> None:
        """After disable, current_context() never warns."""
        enable_lost_context_diagnostics(warn=True)
        disable_lost_context_diagnostics()
        enable_lost_context_diagnostics()  # diagnostics without warnings

        @registry.tool
        def lost() -> str:
            """Read current_context() from a bare thread."""
            return in_bare_thread(lambda: catch_warning(current_context))

        assert output(dispatcher, "lost")[0] == "silent"

    @pytest.mark.skipif(
        not HAS_WARNING_HOOK,
        reason="needs the current_context() hook in toolctx._context.current",
    )
    def test_a_handler_reading_the_context_does_not_recurse(
        self, dispatcher: Dispatcher, registry: Registry
    ) -> None:
        """A warning handler that calls current_context() warns no twice."""
        enable_lost_context_diagnostics(warn=True)
        shown: list[str] = []

        def show(message: Warning | str, *_: object, **__: object) -> None:
            current_context()  # as a logging filter would
            shown.append(str(message))

        @registry.tool
        def lost() -> str:
            """Read current_context() from a bare thread."""
            return in_bare_thread(lambda: str(current_context()))

        with warnings.catch_warnings():
            warnings.simplefilter("always", LostContextWarning)
            warnings.showwarning = show
            assert output(dispatcher, "lost")[0] == "None"
        assert len(shown) == 1
        assert "tool call 'lost'" in shown[0]
