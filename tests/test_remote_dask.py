"""Tool calls on a real Dask cluster (LocalCluster, worker processes)."""

from __future__ import annotations

import asyncio
import json
import os

from collections.abc import Iterator
from typing import Any

import pytest

import remote_tools as rt

from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    current_context,
)
from toolctx.remote import RemoteCall, RemoteOutcome, run_remote


distributed = pytest.importorskip("distributed")

TIMEOUT = 60


def remote(
    t: Any, arguments: dict[str, Any] | None = None, **options: Any
) -> RemoteCall:
    """A RemoteCall for tool *t* with a context the parent derived."""
    ctx = ExecutionContext(
        invocation_id="inv-dask",
        parent_invocation_id="inv-outer",
        tool_call_id="call_1",
        tool_name=t.definition().name,
        user_id="ada",
        session_id="sess-dask",
        metadata={"channel": "batch"},
    ).with_value(rt.TENANT, rt.Tenant(name="acme", plan="gold"))
    return RemoteCall.for_tool(t, arguments or {}, ctx, **options)


@pytest.fixture(name="client", scope="module")
def _client() -> Iterator[Any]:
    """A two-process LocalCluster on loopback, closed after the module."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        host="127.0.0.1",
        worker_dashboard_address=None,
    )
    try:
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def on_cluster(client: Any, call: RemoteCall) -> RemoteOutcome:
    """Run *call* on a worker (not deduplicated) and wait, bounded."""
    outcome = client.submit(run_remote, call, pure=False).result(
        timeout=TIMEOUT
    )
    assert isinstance(outcome, RemoteOutcome)
    return outcome


class TestDask:
    """run_remote() submitted to Dask worker processes."""

    def test_context_crosses(self, client):
        """A Dask worker process sees the parent's context and ids."""
        outcome = on_cluster(client, remote(rt.whoami))
        seen = outcome.output
        assert seen["pid"] != os.getpid()
        assert seen["invocation_id"] == "inv-dask"
        assert seen["parent_invocation_id"] == "inv-outer"
        assert seen["tool_call_id"] == "call_1"
        assert (seen["user_id"], seen["session_id"]) == ("ada", "sess-dask")
        assert seen["metadata"] == {"channel": "batch"}
        assert outcome.worker.endswith(f":{seen['pid']}")

    def test_typed_values_and_results(self, client):
        """Typed values arrive typed; publish/set_state come back."""
        tenant = on_cluster(client, remote(rt.tenant_info))
        assert tenant.output == {"type": "Tenant", "name": "acme"}
        outcome = on_cluster(client, remote(rt.record, {"n": 7}))
        assert outcome.output == 14
        assert outcome.state_changes["count"] == 7
        assert outcome.metadata["plain"] == {"n": 7}

    def test_error_is_an_outcome(self, client):
        """A raising tool is an error outcome, exception included."""
        outcome = on_cluster(client, remote(rt.explode, {"message": "dask"}))
        assert outcome.error == "Tool 'explode' failed: ValueError: dask"
        assert isinstance(outcome.exception, ValueError)

    def test_scope_loader(self, client):
        """The scope is rebuilt on the worker by the scope loader."""
        missing = on_cluster(client, remote(rt.needs_scope))
        assert "never crosses to a worker process" in (missing.error or "")
        call = remote(rt.needs_scope, scope_loader="remote_tools:load_scope")
        outcome = on_cluster(client, call)
        assert outcome.output["name"] == "user:ada"
        assert outcome.output["scope_pid"] == outcome.output["pid"]

    def test_many_calls_leave_nothing_bound(self, client):
        """After many calls, no worker's task thread keeps a context bound."""
        calls = [remote(rt.whoami) for _ in range(8)]
        futures = client.map(run_remote, calls, pure=False)
        outcomes = client.gather(futures)
        assert all(o.error is None for o in outcomes)
        workers = list(client.scheduler_info()["workers"])
        checks = [
            client.submit(rt.context_is_clear, workers=[w], pure=False)
            for w in workers
        ]
        assert client.gather(checks) == [True, True]

    def test_executor_interface(self, client):
        """client.get_executor() works as a concurrent.futures executor."""
        executor = client.get_executor(pure=False)
        future = executor.submit(run_remote, remote(rt.async_whoami))
        outcome = future.result(timeout=TIMEOUT)
        assert outcome.output == {
            "invocation_id": "inv-dask",
            "user_id": "ada",
        }

    def test_json_payloads(self, client):
        """The JSON forms travel too (e.g. through a queue)."""
        data = json.loads(json.dumps(remote(rt.record, {"n": 1}).to_dict()))
        outcome = on_cluster(client, RemoteCall.from_dict(data))
        back = RemoteOutcome.from_dict(
            json.loads(json.dumps(outcome.to_dict()))
        )
        assert back.output == 2


def _wired() -> bool:
    return hasattr(Dispatcher(Registry()), "executor")


@pytest.mark.skipif(not _wired(), reason="dispatcher wiring pending")
class TestDaskDispatcher:
    """Dispatcher(registry, executor=client.get_executor(pure=False))."""

    @pytest.fixture(name="dispatcher")
    def _dispatcher(self, client) -> Dispatcher:
        registry = Registry(
            [rt.whoami, rt.record, rt.needs_scope, rt.async_whoami]
        )
        return Dispatcher(
            registry,
            executor=client.get_executor(pure=False),
            scope_loader="remote_tools:load_scope",
        )

    def test_dispatch(self, dispatcher):
        """A dispatched call runs on a worker and applies session state."""
        session = Session("s-dask", user_id="ada")
        result = dispatcher.dispatch(ToolCall("record", '{"n": 4}'), session)
        assert result.output == 8
        assert session.state["count"] == 4
        who = dispatcher.dispatch(ToolCall("whoami", "{}", "c9"), session)
        assert who.output["pid"] != os.getpid()
        assert who.output["invocation_id"] == who.invocation_id
        assert who.output["tool_call_id"] == "c9"

    def test_adispatch_all(self, dispatcher):
        """Concurrent calls of one turn each get their own context."""

        async def main() -> list[Any]:
            return await dispatcher.adispatch_all(
                [ToolCall("async_whoami", "{}") for _ in range(4)]
                + [ToolCall("needs_scope", "{}")],
                ExecutionContext(user_id="bo"),
            )

        results = asyncio.run(main())
        assert [r.output["invocation_id"] for r in results[:4]] == [
            r.invocation_id for r in results[:4]
        ]
        assert len({r.invocation_id for r in results}) == 5
        assert results[4].output["name"] == "user:bo"
        assert current_context() is None
