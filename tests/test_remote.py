"""Tool calls in other processes: references, payloads, the worker side."""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import json
import multiprocessing
import os
import pickle
import socket
import sys

from collections.abc import Iterator
from typing import Any

import attrs
import pytest

import remote_tools as rt

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    ScopeError,
    Session,
    ToolArgumentsError,
    ToolCall,
    ToolctxError,
    current_context,
    tool,
    use_context,
)
from toolctx.exceptions import ContextDataError
from toolctx.remote import (
    RemoteCall,
    RemoteOutcome,
    ToolReferenceError,
    resolve_tool,
    run_remote,
    tool_reference,
)
from toolctx.remote.references import resolve_reference, worker_name


TIMEOUT = 120


def setup_error(name: str) -> str:
    """What the model reads when the worker cannot set a call up."""
    return (
        f"Tool {name!r} could not run: the host could not set up the call. "
        "The arguments are not the cause, so do not retry with other ones; "
        "tell the user the tool is unavailable right now."
    )


BASE_EXCEPTION_TOOLS = [
    pytest.param(
        (rt.parse_flags, {"argv": ["--bogus"]}, SystemExit, "SystemExit: 2"),
        id="argparse-SystemExit",
    ),
    pytest.param(
        (rt.first_of, {"items": []}, StopIteration, "StopIteration"),
        id="next-StopIteration",
    ),
    pytest.param(
        (
            rt.await_cancelled_future,
            {},
            asyncio.CancelledError,
            "CancelledError",
        ),
        id="awaited-CancelledError",
    ),
    pytest.param(
        (rt.raise_cancelled, {}, asyncio.CancelledError, "CancelledError"),
        id="raised-CancelledError",
    ),
]


def make_context(**changes: Any) -> ExecutionContext:
    """A call context as the parent's dispatcher would have derived it."""
    base = ExecutionContext(
        invocation_id="inv-parent-assigned",
        session_id="sess-1",
        turn=3,
        user_id="ada",
        agent_id="planner",
        tool_call_id="call_7",
        parent_invocation_id="inv-outer",
        metadata={"channel": "web"},
        state={"cart": [1, 2]},
    ).with_value(rt.TENANT, rt.Tenant(name="acme", plan="gold"))
    return attrs.evolve(base, **changes)


def remote(
    t: Any, arguments: dict[str, Any] | None = None, **options: Any
) -> RemoteCall:
    """A RemoteCall for tool *t* under make_context()."""
    ctx = make_context(tool_name=t.definition().name)
    return RemoteCall.for_tool(t, arguments or {}, ctx, **options)


@pytest.fixture(name="pool", scope="module")
def _pool() -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """One spawned worker process, shared by the module's pool tests."""
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        # Warm it up (and check the worker can import the test tools).
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        assert pid != os.getpid()
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def in_pool(
    pool: concurrent.futures.Executor, call: RemoteCall
) -> RemoteOutcome:
    """Run *call* in *pool* and wait (bounded) for the outcome."""
    outcome = pool.submit(run_remote, call).result(timeout=TIMEOUT)
    assert isinstance(outcome, RemoteOutcome)
    return outcome


class TestToolReference:
    """tool_reference(): where a worker imports a tool from."""

    def test_function_tool(self):
        """A module-level @tool is referenced by module and function name."""
        assert tool_reference(rt.whoami) == "remote_tools:whoami"

    def test_renamed_function_tool(self):
        """The reference follows the function, not the tool's name."""
        assert tool_reference(rt.renamed_impl) == ("remote_tools:renamed_impl")

    def test_plain_function_registered_undecorated(self):
        """A plain module-level function wrapped by a Registry is found."""
        registered = rt.registry["plain_add"]
        assert tool_reference(registered) == "remote_tools:plain_add"

    def test_tool_preferred_to_its_function(self):
        """When both are module attributes, the tool object is referenced."""
        assert tool_reference(rt.loud) == "remote_tools:loud"
        assert resolve_tool("remote_tools:loud", "loud") is rt.loud

    def test_tool_object(self):
        """A Tool instance is referenced by the module attribute holding it."""
        assert tool_reference(rt.weather) == "remote_tools:weather"

    def test_tool_defined_in_a_function_is_refused(self):
        """A tool defined in a function cannot be imported by a worker."""

        @tool
        def local() -> str:
            """Not importable."""
            return "x"

        with pytest.raises(TypeError, match="inside a function") as info:
            tool_reference(local)
        assert "'local'" in str(info.value)
        assert "module level" in str(info.value)

    def test_unreachable_tool_object_is_refused(self):
        """A Tool instance that no module attribute holds is refused."""
        with pytest.raises(TypeError, match="not a module-level attribute"):
            tool_reference(rt.WeatherTool())

    def test_main_is_refused_by_default(self, monkeypatch):
        """A tool from __main__ is refused unless allow_main is given."""

        def script_tool() -> str:
            """Lives in the main script."""
            return "main"

        script_tool.__module__ = "__main__"
        script_tool.__qualname__ = "script_tool"
        made = tool(script_tool)
        monkeypatch.setattr(
            sys.modules["__main__"], "script_tool", made, raising=False
        )
        with pytest.raises(TypeError, match="__main__") as info:
            tool_reference(made)
        assert "importable module" in str(info.value)
        assert tool_reference(made, allow_main=True) == "__main__:script_tool"

    def test_tool_without_a_module_is_refused(self):
        """A tool whose function has no importable module is refused."""

        def nowhere() -> str:
            """Defined by exec."""
            return "x"

        nowhere.__module__ = "not_a_loaded_module_xyz"
        nowhere.__qualname__ = "nowhere"
        with pytest.raises(TypeError, match="not an imported module"):
            tool_reference(tool(nowhere))


class TestResolveTool:
    """resolve_tool(): the worker imports the tool, once."""

    def test_resolves_and_caches(self):
        """A reference resolves to the very tool, once per process."""
        assert resolve_tool("remote_tools:whoami", "whoami") is rt.whoami
        assert resolve_tool("remote_tools:whoami", "whoami") is rt.whoami

    def test_plain_function_is_wrapped_with_the_tool_name(self):
        """A plain function becomes a FunctionTool named as the parent said."""
        found = resolve_tool("remote_tools:plain_add", "plain_add")
        assert found.definition().name == "plain_add"
        assert found is resolve_tool("remote_tools:plain_add", "plain_add")

    def test_class_is_instantiated_once(self):
        """A Tool class is instantiated with no arguments, once."""
        first = resolve_tool("remote_tools:WeatherTool", "weather")
        assert isinstance(first, rt.WeatherTool)
        assert resolve_tool("remote_tools:WeatherTool", "weather") is first

    def test_registry_reference(self):
        """A Registry reference picks the tool by name."""
        assert resolve_tool("remote_tools:registry", "record") is rt.record

    def test_registry_unknown_tool(self):
        """A name missing from a referenced Registry is a clear error."""
        with pytest.raises(ToolReferenceError, match="No tool named 'nope'"):
            resolve_tool("remote_tools:registry", "nope")

    def test_bad_module(self):
        """A module that cannot be imported names itself and the fix."""
        with pytest.raises(ToolReferenceError) as info:
            resolve_tool("no_such_module_xyz:thing", "thing")
        text = str(info.value)
        assert "'no_such_module_xyz'" in text
        assert "PYTHONPATH" in text
        assert isinstance(info.value, ToolctxError)
        assert isinstance(info.value, LookupError)

    def test_bad_attribute(self):
        """A missing attribute is named with its module."""
        with pytest.raises(ToolReferenceError, match="no attribute 'nope'"):
            resolve_tool("remote_tools:nope", "nope")

    def test_malformed_reference(self):
        """A reference without a colon is rejected with the right form."""
        with pytest.raises(ToolReferenceError, match=r"package\.module:name"):
            resolve_reference("remote_tools.whoami")

    def test_not_a_tool(self):
        """An object without definition()/execute() is not a tool."""
        with pytest.raises(ToolReferenceError, match="not a tool"):
            resolve_tool("remote_tools:LOADED", "LOADED")

    def test_name_mismatch(self):
        """A tool found under another name reports the version mismatch."""
        with pytest.raises(ToolReferenceError, match="another version"):
            resolve_tool("remote_tools:whoami", "record")


class TestRemoteCall:
    """RemoteCall: the picklable, JSON-safe request."""

    def test_for_tool(self):
        """for_tool fills the reference, the name and the context data."""
        call = remote(rt.record, {"n": 1}, timeout=5)
        assert call.tool_ref == "remote_tools:record"
        assert call.tool_name == "record"
        assert call.arguments == {"n": 1}
        assert call.context["invocation_id"] == "inv-parent-assigned"
        assert call.timeout == 5

    def test_for_tool_refuses_local_tools(self):
        """for_tool raises the TypeError of tool_reference."""

        @tool
        def local() -> None:
            """Not importable."""

        with pytest.raises(TypeError, match="inside a function"):
            RemoteCall.for_tool(local, {}, make_context())

    def test_json_round_trip(self):
        """to_dict survives JSON and from_dict restores an equal call."""
        call = remote(
            rt.needs_scope, scope_loader="remote_tools:load_scope", timeout=2
        )
        data = json.loads(json.dumps(call.to_dict()))
        assert RemoteCall.from_dict(data) == call

    def test_pickle_round_trip(self):
        """A call pickles to an equal call."""
        call = remote(rt.record, {"n": 4})
        assert pickle.loads(pickle.dumps(call)) == call

    def test_invalid_reference(self):
        """A malformed tool reference is rejected at construction."""
        with pytest.raises(ValueError, match="tool_ref"):
            RemoteCall(tool_ref="nope", tool_name="x", context={})

    def test_invalid_timeout(self):
        """A non-positive timeout is rejected."""
        with pytest.raises(ValueError, match="timeout"):
            RemoteCall(tool_ref="a:b", tool_name="b", context={}, timeout=0)

    def test_from_dict_rejects_other_data(self):
        """Data of another format or shape is a ContextDataError."""
        with pytest.raises(ContextDataError, match="format"):
            RemoteCall.from_dict({"format": "other"})
        good = remote(rt.record, {"n": 1}).to_dict()
        with pytest.raises(ContextDataError, match="tool_ref"):
            RemoteCall.from_dict({**good, "tool_ref": 3})
        with pytest.raises(ContextDataError, match="arguments"):
            RemoteCall.from_dict({**good, "arguments": [1]})


class TestRemoteOutcome:
    """RemoteOutcome: the picklable, JSON-safe answer."""

    def test_json_round_trip_drops_the_exception(self):
        """to_dict is JSON-safe; the exception stays behind."""
        outcome = RemoteOutcome(
            error="Tool 'x' failed: ValueError: no",
            exception_type="ValueError",
            exception=ValueError("no"),
            metadata={"a": 1},
            worker="host:1",
        )
        back = RemoteOutcome.from_dict(
            json.loads(json.dumps(outcome.to_dict()))
        )
        assert back == outcome
        assert back.exception is None
        assert back.is_error

    def test_from_dict_rejects_bad_fields(self):
        """Wrongly typed fields are a ContextDataError."""
        data = RemoteOutcome(output=1).to_dict()
        with pytest.raises(ContextDataError, match="error"):
            RemoteOutcome.from_dict({**data, "error": 5})

    def test_to_result_restores_typed_values(self):
        """to_result structures values of known keys back to their type."""
        outcome = RemoteOutcome(
            output=4,
            metadata={
                "remote_tests.audit": {"name": "acme", "plan": "p"},
                "plain": {"n": 1},
            },
            state_changes={"remote_tests.tenant": {"name": "g", "plan": "x"}},
            duration_ns=10,
        )
        result = outcome.to_result(
            name="record", call_id="c1", invocation_id="inv-1"
        )
        assert result.output == 4
        assert not result.is_error
        assert result.metadata["remote_tests.audit"] == rt.Tenant("acme", "p")
        assert result.metadata["plain"] == {"n": 1}
        assert result.state_changes["remote_tests.tenant"] == rt.Tenant(
            "g", "x"
        )
        assert (result.call_id, result.invocation_id) == ("c1", "inv-1")
        assert result.duration_ns == 10

    def test_typed_accessors(self):
        """typed_metadata/typed_state_changes restore known key types."""
        outcome = RemoteOutcome(
            metadata={"remote_tests.audit": {"name": "a", "plan": "b"}},
            state_changes={"remote_tests.tenant": {"name": "c", "plan": "d"}},
        )
        assert outcome.typed_metadata() == {
            "remote_tests.audit": rt.Tenant("a", "b")
        }
        assert outcome.typed_state_changes() == {
            "remote_tests.tenant": rt.Tenant("c", "d")
        }

    def test_data_that_no_longer_fits_its_key_stays_json(self):
        """A value that does not fit its key's type is kept as JSON data."""
        outcome = RemoteOutcome(metadata={"remote_tests.audit": [1, 2]})
        assert outcome.typed_metadata() == {"remote_tests.audit": [1, 2]}

    def test_to_result_error(self):
        """An error outcome becomes an error result with its exception."""
        exc = ValueError("bad")
        outcome = RemoteOutcome(error="Tool 't' failed.", exception=exc)
        result = outcome.to_result(
            name="t", call_id=None, invocation_id="i", duration_ns=5
        )
        assert result.is_error
        assert result.error == "Tool 't' failed."
        assert result.exception is exc
        assert result.duration_ns == 5


class TestRunRemoteInProcess:
    """run_remote() called directly in this process."""

    def test_context_crosses(self):
        """The tool sees the parent's context, ids included, bound."""
        outcome = run_remote(remote(rt.whoami))
        assert outcome.error is None
        seen = outcome.output
        assert seen["invocation_id"] == "inv-parent-assigned"
        assert seen["parent_invocation_id"] == "inv-outer"
        assert seen["tool_call_id"] == "call_7"
        assert seen["tool_name"] == "whoami"
        assert (seen["user_id"], seen["session_id"]) == ("ada", "sess-1")
        assert (seen["agent_id"], seen["turn"]) == ("planner", 3)
        assert seen["metadata"] == {"channel": "web"}
        assert seen["state"] == {"cart": [1, 2]}
        assert seen["bound_is_param"] is True
        assert outcome.worker == worker_name()

    def test_nothing_left_bound(self):
        """After the call, whatever happened, no context is bound."""
        run_remote(remote(rt.whoami))
        assert current_context() is None
        run_remote(remote(rt.explode, {"message": "boom"}))
        assert current_context() is None

    def test_previous_context_restored(self):
        """A context bound around run_remote is back afterwards."""
        outer = ExecutionContext(user_id="host")
        with use_context(outer):
            outcome = run_remote(remote(rt.whoami))
            assert current_context() is outer
        assert outcome.output["user_id"] == "ada"

    def test_typed_values_survive(self):
        """A typed value comes back as its key's type in the tool."""
        outcome = run_remote(remote(rt.tenant_info))
        assert outcome.output == {"type": "Tenant", "name": "acme"}

    def test_publish_and_set_state_come_back(self):
        """Published metadata and state changes are in the outcome."""
        outcome = run_remote(remote(rt.record, {"n": 5}))
        assert outcome.output == 10
        assert outcome.metadata == {
            "remote_tests.audit": {"name": "acme", "plan": "plan-5"},
            "plain": {"n": 5},
        }
        assert outcome.state_changes == {
            "count": 5,
            "remote_tests.tenant": {"name": "globex", "plan": "pro"},
        }
        result = outcome.to_result(
            name="record", call_id="call_7", invocation_id="inv"
        )
        assert result.state_changes["remote_tests.tenant"] == rt.Tenant(
            "globex", "pro"
        )

    def test_tool_error_is_an_outcome(self):
        """A raising tool gives an error outcome formatted as dispatch does."""
        outcome = run_remote(remote(rt.explode, {"message": "boom"}))
        assert outcome.error == "Tool 'explode' failed: ValueError: boom"
        assert outcome.exception_type == "ValueError"
        assert isinstance(outcome.exception, ValueError)
        assert outcome.output is None
        assert outcome.metadata == {"before": "crash"}
        assert outcome.state_changes == {}

    def test_exception_messages_can_be_hidden(self):
        """include_exception_messages=False hides the exception text."""
        call = remote(
            rt.explode, {"message": "secret"}, include_exception_messages=False
        )
        outcome = run_remote(call)
        assert outcome.error == "Tool 'explode' failed."
        assert outcome.exception_type == "ValueError"

    def test_unpicklable_exception_is_left_behind(self):
        """An exception that cannot be pickled is reported by type only."""
        outcome = run_remote(remote(rt.explode_unpicklable))
        assert outcome.exception is None
        assert outcome.exception_type == "remote_tools.LockedError"
        assert "holding a lock" in (outcome.error or "")
        pickle.dumps(outcome)

    def test_invalid_arguments(self):
        """The worker re-validates the arguments with the tool's rules."""
        outcome = run_remote(remote(rt.record, {"n": "5"}))
        assert outcome.error == (
            "Invalid arguments for tool 'record': n: expected an integer, "
            'got the string "5"'
        )
        assert outcome.exception_type == (
            "toolctx.exceptions.ToolArgumentsError"
        )
        assert outcome.exception is None or isinstance(
            outcome.exception, ToolArgumentsError
        )

    def test_denied_inside_the_tool(self):
        """A ToolDenied raised by the tool reads as a denial."""
        outcome = run_remote(remote(rt.deny))
        assert outcome.error == (
            "Call to tool 'deny' was denied: the user said no"
        )

    def test_scope_does_not_cross(self):
        """Without a loader the scope is None and scope_as says why."""
        outcome = run_remote(remote(rt.needs_scope))
        assert outcome.exception_type == "toolctx.exceptions.ScopeError"
        assert "never crosses to a worker process" in (outcome.error or "")
        assert "scope_loader" in (outcome.error or "")
        assert isinstance(outcome.exception, ScopeError)

    def test_scope_dropped_even_in_process(self):
        """A scope on the parent's context is never sent."""
        ctx = attrs.evolve(
            make_context(tool_name="needs_scope"), scope=object()
        )
        call = RemoteCall.for_tool(rt.needs_scope, {}, ctx)
        assert "scope" not in call.context
        assert run_remote(call).is_error

    def test_scope_loader_rebuilds_the_scope(self):
        """A scope loader rebuilds the scope from the call's identity."""
        call = remote(rt.needs_scope, scope_loader="remote_tools:load_scope")
        outcome = run_remote(call)
        assert outcome.error is None
        assert outcome.output["name"] == "user:ada"
        assert rt.LOADED[-1] == "inv-parent-assigned"

    @pytest.mark.parametrize("include", [True, False])
    def test_scope_loader_failure(self, include):
        """A failing scope loader's error is for the host, not the model.

        The model reads that the call could not be set up, whatever
        include_exception_messages says; the host's ScopeError names the
        loader and the worker, quotes the loader's error and chains it.
        """
        call = remote(
            rt.needs_scope,
            scope_loader="remote_tools:broken_loader",
            include_exception_messages=include,
        )
        outcome = run_remote(call)
        assert outcome.error == setup_error("needs_scope")
        assert outcome.exception_type == "toolctx.exceptions.ScopeError"
        assert isinstance(outcome.exception, ScopeError)
        detail = str(outcome.exception)
        assert "'remote_tools:broken_loader'" in detail
        assert f"in process {worker_name()}" in detail
        assert "LookupError: no such user 'ada'" in detail
        assert "never crosses" not in detail
        assert isinstance(outcome.exception.__cause__, LookupError)
        assert outcome.metadata == {}
        assert outcome.state_changes == {}

    def test_scope_loader_not_callable(self):
        """A scope loader reference to a non-callable is an error outcome."""
        call = remote(
            rt.needs_scope, scope_loader="remote_tools:not_callable_loader"
        )
        outcome = run_remote(call)
        assert outcome.error == setup_error("needs_scope")
        assert "is not callable" in str(outcome.exception)

    def test_unresolvable_tool_is_an_outcome(self):
        """A tool the worker cannot import is an error outcome, not a raise."""
        call = RemoteCall(
            tool_ref="no_such_module_xyz:tool",
            tool_name="tool",
            context=make_context().to_dict(),
        )
        outcome = run_remote(call)
        assert outcome.error == setup_error("tool")
        assert (outcome.exception_type or "").endswith(".ToolReferenceError")
        assert "'no_such_module_xyz'" in str(outcome.exception)
        assert worker_name() in str(outcome.exception)

    def test_module_exiting_at_import_is_an_outcome(
        self, tmp_path, monkeypatch
    ):
        """A tool module that calls sys.exit() on import cannot stop it.

        The SystemExit becomes a ToolReferenceError naming the module, for
        the host, and the model reads the generic set-up error.
        """
        (tmp_path / "toolctx_exits_on_import.py").write_text(
            "import sys\nsys.exit(4)\n", encoding="utf-8"
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        call = RemoteCall(
            tool_ref="toolctx_exits_on_import:tool",
            tool_name="tool",
            context=make_context().to_dict(),
        )
        outcome = run_remote(call)
        assert outcome.error == setup_error("tool")
        assert isinstance(outcome.exception, ToolReferenceError)
        assert "'toolctx_exits_on_import'" in str(outcome.exception)
        assert "SystemExit: 4" in str(outcome.exception)

    @pytest.mark.parametrize("case", BASE_EXCEPTION_TOOLS)
    def test_base_exceptions_are_tool_failures(self, case):
        """SystemExit, StopIteration, a tool's own CancelledError: outcomes.

        Like any other exception the tool raises, they give an error
        outcome carrying the exception; run_remote returns normally.
        """
        t, arguments, kind, text = case
        outcome = run_remote(remote(t, arguments))
        name = t.definition().name
        assert outcome.error == f"Tool {name!r} failed: {text}"
        assert isinstance(outcome.exception, kind)
        assert current_context() is None

    def test_unprintable_exception_is_an_outcome(self):
        """An exception whose __str__ raises still gives an error outcome."""
        outcome = run_remote(remote(rt.raise_unprintable))
        assert outcome.is_error
        assert (outcome.error or "").startswith(
            "Tool 'raise_unprintable' failed: UnprintableError"
        )
        assert outcome.exception_type == "remote_tools.UnprintableError"
        pickle.dumps(outcome)

    def test_corrupt_context_is_an_outcome(self):
        """Context data of an unknown format is an error outcome."""
        call = RemoteCall(
            tool_ref="remote_tools:whoami",
            tool_name="whoami",
            context={"format": "nope"},
        )
        outcome = run_remote(call)
        assert outcome.exception_type == "toolctx.exceptions.ContextDataError"

    def test_unserializable_publish_is_an_error(self):
        """A published value with no JSON form fails the call clearly."""
        outcome = run_remote(remote(rt.publish_unserializable))
        assert "published value 'thing'" in (outcome.error or "")
        assert outcome.output is None

    def test_async_tool(self):
        """An async tool runs to completion with the context bound."""
        outcome = run_remote(remote(rt.async_whoami))
        assert outcome.output == {
            "invocation_id": "inv-parent-assigned",
            "user_id": "ada",
        }
        assert outcome.state_changes == {"async": True}

    def test_async_tool_timeout(self):
        """An async tool past its timeout is cancelled: error outcome."""
        call = remote(rt.async_whoami, {"delay": 30}, timeout=0.05)
        outcome = run_remote(call)
        assert outcome.error is not None
        assert "timed out after 0.05 seconds" in outcome.error

    def test_async_tool_from_a_running_loop(self):
        """Called from async code, an async tool still runs to completion."""

        async def host() -> RemoteOutcome:
            return run_remote(remote(rt.async_whoami))

        outcome = asyncio.run(host())
        assert outcome.output["user_id"] == "ada"
        assert current_context() is None

    def test_generator_tool(self):
        """A generator tool runs to the end; its chunks are the output."""
        outcome = run_remote(remote(rt.countdown, {"n": 3}))
        assert outcome.output == [3, 2, 1]
        assert outcome.state_changes == {"counted": 3}

    def test_async_generator_tool(self):
        """An async generator tool sees its context on every step."""
        outcome = run_remote(remote(rt.acountdown, {"n": 2}))
        assert outcome.output == [
            {"i": 0, "user": "ada"},
            {"i": 1, "user": "ada"},
        ]

    def test_tool_object(self):
        """A hand-written Tool runs through execute() with its context."""
        outcome = run_remote(remote(rt.weather, {"city": "Oslo"}))
        assert outcome.output == {"city": "Oslo", "user": "ada"}
        assert outcome.metadata == {"source": "fake"}

    def test_renamed_tool(self):
        """A tool named differently from its function resolves by name."""
        outcome = run_remote(remote(rt.renamed_impl, {"text": "hi"}))
        assert outcome.output == "HI"

    def test_plain_function(self):
        """A plain function registered undecorated runs as a tool."""
        outcome = run_remote(
            remote(rt.registry["plain_add"], {"a": 1, "b": 2})
        )
        assert outcome.output == 3

    def test_json_transport(self):
        """A call and its outcome can travel as JSON text."""
        text = json.dumps(remote(rt.record, {"n": 2}).to_dict())
        outcome = run_remote(RemoteCall.from_dict(json.loads(text)))
        back = RemoteOutcome.from_dict(
            json.loads(json.dumps(outcome.to_dict()))
        )
        assert back == outcome
        assert back.output == 4


class TestProcessPool:
    """run_remote() in a spawned ProcessPoolExecutor worker."""

    def test_context_crosses(self, pool):
        """A spawned worker sees the parent's context and assigned ids."""
        outcome = in_pool(pool, remote(rt.whoami))
        seen = outcome.output
        assert seen["pid"] != os.getpid()
        assert outcome.worker.endswith(f":{seen['pid']}")
        assert seen["invocation_id"] == "inv-parent-assigned"
        assert seen["parent_invocation_id"] == "inv-outer"
        assert seen["tool_call_id"] == "call_7"
        assert (seen["user_id"], seen["session_id"]) == ("ada", "sess-1")
        assert seen["metadata"] == {"channel": "web"}
        assert seen["state"] == {"cart": [1, 2]}
        assert seen["scope_is_none"] is True

    def test_typed_values_survive(self, pool):
        """A typed value is rebuilt as its key's type in the worker."""
        outcome = in_pool(pool, remote(rt.tenant_info))
        assert outcome.output == {"type": "Tenant", "name": "acme"}

    def test_publish_and_set_state_come_back(self, pool):
        """publish/set_state in the worker come back in the outcome."""
        outcome = in_pool(pool, remote(rt.record, {"n": 3}))
        assert outcome.output == 6
        assert outcome.metadata["plain"] == {"n": 3}
        assert outcome.state_changes["count"] == 3
        result = outcome.to_result(
            name="record", call_id="call_7", invocation_id="inv"
        )
        assert result.metadata["remote_tests.audit"] == rt.Tenant(
            "acme", "plan-3"
        )

    def test_error_comes_back_with_its_exception(self, pool):
        """A tool's exception comes back pickled inside the outcome."""
        outcome = in_pool(pool, remote(rt.explode, {"message": "far"}))
        assert outcome.error == "Tool 'explode' failed: ValueError: far"
        assert isinstance(outcome.exception, ValueError)
        assert str(outcome.exception) == "far"

    def test_unpicklable_exception(self, pool):
        """An unpicklable exception does not break the outcome."""
        outcome = in_pool(pool, remote(rt.explode_unpicklable))
        assert outcome.exception is None
        assert outcome.exception_type == "remote_tools.LockedError"

    def test_scope_does_not_cross(self, pool):
        """The parent's scope never reaches the worker."""
        ctx = attrs.evolve(
            make_context(tool_name="needs_scope"),
            scope=rt.User(name="parent", pid=os.getpid()),
        )
        outcome = in_pool(pool, RemoteCall.for_tool(rt.needs_scope, {}, ctx))
        assert "never crosses to a worker process" in (outcome.error or "")

    def test_scope_loader_runs_in_the_worker(self, pool):
        """The scope loader rebuilds the scope inside the worker."""
        call = remote(rt.needs_scope, scope_loader="remote_tools:load_scope")
        outcome = in_pool(pool, call)
        assert outcome.output["name"] == "user:ada"
        assert outcome.output["scope_pid"] == outcome.output["pid"]
        assert outcome.output["pid"] != os.getpid()

    def test_nothing_left_bound_in_the_worker(self, pool):
        """After calls (ok and failing) the worker has no context bound."""
        first = in_pool(pool, remote(rt.whoami))
        in_pool(pool, remote(rt.explode, {"message": "x"}))
        in_pool(pool, remote(rt.async_whoami))
        clear = pool.submit(rt.context_is_clear).result(timeout=TIMEOUT)
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        assert clear is True
        assert first.output["pid"] == pid

    def test_async_tool(self, pool):
        """An async tool runs in the worker's own event loop."""
        outcome = in_pool(pool, remote(rt.async_whoami, {"delay": 0.01}))
        assert outcome.output["invocation_id"] == "inv-parent-assigned"

    def test_generator_tools(self, pool):
        """Sync and async generator tools run to the end in the worker."""
        sync = in_pool(pool, remote(rt.countdown, {"n": 2}))
        assert sync.output == [2, 1]
        agen = in_pool(pool, remote(rt.acountdown, {"n": 1}))
        assert agen.output == [{"i": 0, "user": "ada"}]

    def test_tool_object(self, pool):
        """A hand-written Tool object is imported and run in the worker."""
        outcome = in_pool(pool, remote(rt.weather, {"city": "Lima"}))
        assert outcome.output == {"city": "Lima", "user": "ada"}

    def test_unknown_module_in_the_worker(self, pool):
        """A reference the worker cannot import is an error outcome."""
        call = RemoteCall(
            tool_ref="no_such_module_xyz:tool",
            tool_name="tool",
            context=make_context().to_dict(),
        )
        outcome = in_pool(pool, call)
        assert outcome.error == setup_error("tool")
        assert isinstance(outcome.exception, ToolReferenceError)
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        detail = str(outcome.exception)
        assert "Cannot import module 'no_such_module_xyz'" in detail
        assert f"in process {socket.gethostname()}:{pid}" in detail

    @pytest.mark.parametrize("case", BASE_EXCEPTION_TOOLS)
    def test_base_exceptions_keep_the_worker(self, pool, case):
        """A tool's SystemExit and the like neither crash nor escape.

        The outcome is an error carrying the exception, and the same
        worker process serves the next call.
        """
        t, arguments, kind, text = case
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        outcome = in_pool(pool, remote(t, arguments))
        name = t.definition().name
        assert outcome.error == f"Tool {name!r} failed: {text}"
        assert isinstance(outcome.exception, kind)
        assert pool.submit(rt.worker_pid).result(timeout=TIMEOUT) == pid
        assert in_pool(pool, remote(rt.record, {"n": 1})).output == 2

    def test_unprintable_exception(self, pool):
        """An exception whose __str__ raises comes back as an error outcome."""
        outcome = in_pool(pool, remote(rt.raise_unprintable))
        assert (outcome.error or "").startswith(
            "Tool 'raise_unprintable' failed: UnprintableError"
        )
        assert outcome.exception_type == "remote_tools.UnprintableError"

    def test_json_transport(self, pool):
        """A call rebuilt from JSON runs in the worker like the original."""
        data = json.loads(json.dumps(remote(rt.record, {"n": 1}).to_dict()))
        outcome = in_pool(pool, RemoteCall.from_dict(data))
        assert outcome.output == 2


def _wired() -> bool:
    return hasattr(Dispatcher(Registry()), "executor")


@pytest.mark.skipif(not _wired(), reason="dispatcher wiring pending")
class TestDispatcherWithExecutor:
    """Dispatcher(registry, executor=..., scope_loader=...) end to end."""

    @pytest.fixture(name="dispatcher")
    def _dispatcher(self, pool) -> Dispatcher:
        registry = Registry(
            [rt.whoami, rt.record, rt.explode, rt.needs_scope, rt.weather]
        )
        registry.register(rt.async_whoami)
        return Dispatcher(
            registry, executor=pool, scope_loader="remote_tools:load_scope"
        )

    def test_dispatch_runs_in_the_worker(self, dispatcher):
        """Dispatch runs the tool in the pool with the call's own context."""
        ctx = ExecutionContext(user_id="ada", session_id="s1")
        result = dispatcher.dispatch(ToolCall("whoami", "{}", "c1"), ctx)
        assert not result.is_error, result.error
        assert result.output["pid"] != os.getpid()
        assert result.output["invocation_id"] == result.invocation_id
        assert result.output["tool_call_id"] == "c1"
        assert result.output["user_id"] == "ada"
        assert result.call_id == "c1"

    def test_nested_parent_invocation_id(self, dispatcher):
        """A call dispatched inside another keeps the parent's id."""
        outer = dispatcher.dispatch(
            ToolCall("whoami", "{}"), ExecutionContext()
        )
        template = ExecutionContext(parent_invocation_id=outer.invocation_id)
        result = dispatcher.dispatch(ToolCall("whoami", "{}"), template)
        assert result.output["parent_invocation_id"] == outer.invocation_id

    def test_session_state_applied(self, dispatcher):
        """State set in the worker is applied to the session."""
        session = Session("s1", user_id="ada")
        result = dispatcher.dispatch(ToolCall("record", '{"n": 2}'), session)
        assert result.output == 4
        assert session.state["count"] == 2
        assert result.metadata["plain"] == {"n": 2}

    def test_typed_values_come_back_typed(self, dispatcher):
        """Values published or set under a known key come back in its type."""
        session = Session("s1", user_id="ada")
        result = dispatcher.dispatch(ToolCall("record", '{"n": 3}'), session)
        assert result.metadata["remote_tests.audit"] == rt.Tenant(
            "acme", "plan-3"
        )
        assert result.state_changes["remote_tests.tenant"] == rt.Tenant(
            "globex", "pro"
        )

    def test_error_result(self, dispatcher):
        """A failure in the worker is an error result, not an exception."""
        result = dispatcher.dispatch(
            ToolCall("explode", '{"message": "no"}'), ExecutionContext()
        )
        assert result.is_error
        assert result.error == "Tool 'explode' failed: ValueError: no"
        assert isinstance(result.exception, ValueError)

    def test_invalid_json_stays_local(self, dispatcher):
        """Invalid JSON is an error result without reaching the worker."""
        result = dispatcher.dispatch(
            ToolCall("record", "{nope"), ExecutionContext()
        )
        assert result.is_error
        assert "not valid JSON" in (result.error or "")

    def test_scope_loader_option(self, dispatcher):
        """The dispatcher's scope_loader rebuilds the scope in the worker."""
        result = dispatcher.dispatch(
            ToolCall("needs_scope", "{}"), ExecutionContext(user_id="bo")
        )
        assert result.output["name"] == "user:bo"

    @pytest.mark.parametrize("include", [True, False])
    @pytest.mark.parametrize("path", ["dispatch", "adispatch"])
    def test_scope_loader_secret_stays_with_the_host(
        self, pool, include, path
    ):
        """A failing scope loader's message never reaches the model.

        Its error quotes a database password. The model reads only the
        generic set-up error (no secret, no loader, no hostname:pid),
        whatever include_exception_messages says; the host gets a
        picklable ScopeError with the whole story.
        """
        dispatcher = Dispatcher(
            Registry([rt.needs_scope]),
            executor=pool,
            scope_loader="remote_tools:leaky_loader",
            include_exception_messages=include,
        )
        call = ToolCall("needs_scope", "{}", "c1")
        ctx = ExecutionContext(user_id="ada")
        if path == "dispatch":
            result = dispatcher.dispatch(call, ctx)
        else:
            result = asyncio.run(dispatcher.adispatch(call, ctx))
        assert result.is_error
        assert result.error == setup_error("needs_scope")
        assert rt.DB_PASSWORD not in repr(result)
        exc = result.exception
        assert isinstance(exc, ScopeError)
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        assert str(exc) == (
            "The scope loader 'remote_tools:leaky_loader' failed in process "
            f"{socket.gethostname()}:{pid}: ConnectionError: could not "
            f"connect to postgres://admin:{rt.DB_PASSWORD}@db.internal/users "
            "to load 'ada'"
        )
        assert str(pickle.loads(pickle.dumps(exc))) == str(exc)

    def test_unimportable_scope_loader_hides_the_worker(self, pool):
        """A loader the worker cannot import: no hostname:pid for the model."""
        dispatcher = Dispatcher(
            Registry([rt.needs_scope]),
            executor=pool,
            scope_loader="no_such_module_xyz:load",
        )
        result = dispatcher.dispatch(ToolCall("needs_scope", "{}"))
        pid = pool.submit(rt.worker_pid).result(timeout=TIMEOUT)
        assert result.error == setup_error("needs_scope")
        assert isinstance(result.exception, ToolReferenceError)
        detail = str(result.exception)
        assert f"{socket.gethostname()}:{pid}" in detail
        assert "PYTHONPATH" in detail

    @pytest.mark.parametrize("case", BASE_EXCEPTION_TOOLS)
    @pytest.mark.parametrize("path", ["dispatch", "adispatch"])
    def test_base_exceptions_are_error_results(self, pool, path, case):
        """A tool's SystemExit and the like are error results in the host.

        Neither dispatch nor adispatch raises them (a SystemExit would
        stop the host, a CancelledError would pass for the caller's own
        cancellation), and the dispatcher serves the next call.
        """
        t, arguments, kind, text = case
        dispatcher = Dispatcher(Registry([t, rt.record]), executor=pool)
        name = t.definition().name
        call = ToolCall(name, arguments, "c1")
        if path == "dispatch":
            result = dispatcher.dispatch(call)
        else:
            result = asyncio.run(dispatcher.adispatch(call))
        assert result.is_error
        assert result.error == f"Tool {name!r} failed: {text}"
        assert isinstance(result.exception, kind)
        assert dispatcher.dispatch(ToolCall("record", {"n": 2})).output == 4

    def test_adispatch(self, dispatcher):
        """An adispatch awaits the worker without blocking the loop."""

        async def main() -> list[Any]:
            return await dispatcher.adispatch_all(
                [
                    ToolCall("async_whoami", "{}"),
                    ToolCall("weather", '{"city": "Rome"}'),
                ],
                ExecutionContext(user_id="cy"),
            )

        first, second = asyncio.run(main())
        assert first.output["user_id"] == "cy"
        assert first.output["invocation_id"] == first.invocation_id
        assert second.output == {"city": "Rome", "user": "cy"}
        assert current_context() is None

    def test_sync_tool_past_its_timeout(self, dispatcher):
        """An adispatch stops waiting for a sync tool past its timeout."""
        dispatcher.registry.register(rt.sleepy)

        async def main() -> Any:
            return await dispatcher.adispatch(
                ToolCall("sleepy", '{"seconds": 0.5}'), ExecutionContext()
            )

        result = asyncio.run(main())
        assert result.is_error
        assert "timed out after 0.1 seconds" in (result.error or "")

    def test_lost_worker_is_an_error_result(self):
        """A worker process that dies gives an error result, not a raise."""
        registry = Registry([rt.crash_worker])
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")
        ) as own_pool:
            dispatcher = Dispatcher(registry, executor=own_pool)
            result = dispatcher.dispatch(
                ToolCall("crash_worker", "{}"), ExecutionContext()
            )
        assert result.is_error
        assert "BrokenProcessPool" in (result.error or "")
        assert isinstance(
            result.exception, concurrent.futures.process.BrokenProcessPool
        )

    def test_local_tool_is_refused(self, pool):
        """A tool defined in a function cannot be sent to a pool."""
        registry = Registry()

        @registry.tool
        def local() -> str:
            """Not importable."""
            return "x"

        dispatcher = Dispatcher(registry, executor=pool)
        with pytest.raises(TypeError, match="inside a function"):
            dispatcher.dispatch(ToolCall("local", "{}"), ExecutionContext())
