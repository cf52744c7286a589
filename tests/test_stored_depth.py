"""Deeply nested stored data is a ``ContextDataError``, never a crash (#19.13).

Every reader of stored data (the session stores, ``session_from_dict``,
``ExecutionContext.from_dict``, ``ApprovalRequest.from_dict``, results and
remote payloads) refuses a field nested deeper than
``MAX_DATA_DEPTH`` levels with a ``ContextDataError`` that names the
field, before anything walks it recursively: a bare ``RecursionError``
never escapes. The writers refuse the same data, so that what is written
can be read back.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolctx import (
    ApprovalRequest,
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolResult,
    publish,
    set_state,
)
from toolctx._context.codec import result_from_dict
from toolctx._frozen import MAX_DATA_DEPTH
from toolctx.exceptions import ContextDataError
from toolctx.remote import RemoteCall, RemoteOutcome
from toolctx.sessions import (
    InMemorySessionStore,
    SQLiteSessionStore,
    session_from_dict,
    session_to_dict,
)


# Past the interpreter's recursion limit, and past json's own.
DEEPER_THAN_THE_STACK = 100_000
JUST_TOO_DEEP = MAX_DATA_DEPTH + 1
DEPTHS = [JUST_TOO_DEEP, DEEPER_THAN_THE_STACK]


def nested(levels: int) -> Any:
    """A value of *levels* nested arrays (alternating with objects)."""
    value: Any = "bottom"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def too_deep(field: str) -> str:
    """The pattern of the refusal naming *field*."""
    return (
        rf"{field} is nested deeper than {MAX_DATA_DEPTH} levels of "
        r"objects and arrays, the most toolctx stores and reads back\.$"
    )


class Auth:
    """A scope with a tenant, as the stores need."""

    tenant_id = "acme"


TENANT = ContextKey("stored_depth.tenant", dict)


def _held() -> ApprovalRequest:
    registry = Registry()

    @registry.tool(needs_approval=True)
    def send(to: str) -> str:
        """Send something to *to*."""
        return to

    request = Dispatcher(registry).dispatch(ToolCall("send", {"to": "a"}))
    assert request.approval is not None
    return request.approval


class TestSQLiteStore:
    """A stored row nested too deeply is refused on load, by name."""

    @pytest.fixture(name="path")
    def _path(self, tmp_path: Path) -> Path:
        """A database file holding session s1 and session s2."""
        path = tmp_path / "sessions.db"
        with SQLiteSessionStore(path) as store:
            store.save(Auth(), Session("s1", state={"n": 1}))
            store.save(Auth(), Session("s2", state={"n": 2}))
        return path

    def _write_state(self, path: Path, levels: int) -> None:
        """Replace s1's stored state with *levels* of nesting, by hand."""
        with sqlite3.connect(path) as db:
            (text,) = db.execute(
                "SELECT data FROM toolctx_sessions WHERE session_id = 's1'"
            ).fetchone()
            data = json.loads(text)
            data["state"] = {"deep": "HERE"}
            opening = "[" * levels
            text = json.dumps(data).replace(
                '"HERE"', f"{opening}1{']' * levels}"
            )
            db.execute(
                "UPDATE toolctx_sessions SET data = ? WHERE session_id = 's1'",
                (text,),
            )
        db.close()

    def test_field_too_deep(self, path: Path) -> None:
        """State just past the limit is refused, naming the field."""
        self._write_state(path, MAX_DATA_DEPTH + 1)
        with SQLiteSessionStore(path) as store:
            with pytest.raises(
                ContextDataError,
                match=too_deep("Session data field 'state' entry 'deep'"),
            ):
                store.load(Auth(), "s1")
            loaded = store.load(Auth(), "s2")
        assert loaded is not None
        assert loaded.state == {"n": 2}

    def test_deeper_than_the_json_decoder_goes(self, path: Path) -> None:
        """Text too deep for json itself is refused; the store goes on."""
        self._write_state(path, DEEPER_THAN_THE_STACK)
        with SQLiteSessionStore(path) as store:
            with pytest.raises(ContextDataError) as info:
                store.load(Auth(), "s1")
            loaded = store.load(Auth(), "s2")
        assert str(info.value).startswith(
            f"Stored session data is nested deeper than {MAX_DATA_DEPTH} "
            "levels of objects and arrays"
        )
        assert loaded is not None

    def test_at_the_limit_round_trips(self, path: Path) -> None:
        """Data exactly at the limit is written and read back whole."""
        state = {"deep": nested(MAX_DATA_DEPTH)}
        with SQLiteSessionStore(path) as store:
            store.save(Auth(), Session("s3", state=state))
            loaded = store.load(Auth(), "s3")
        assert loaded is not None
        assert loaded.state == state
        # A call's snapshot freezes it (lists become tuples): same JSON.
        assert json.dumps(loaded.context().state) == json.dumps(state)

    def test_writing_too_deep_is_refused(self, path: Path) -> None:
        """A save of data no store could read back changes nothing."""
        with SQLiteSessionStore(path) as store:
            deep = Session("s1", state={"deep": nested(JUST_TOO_DEEP)})
            with pytest.raises(ContextDataError) as info:
                store.save(Auth(), deep)
            loaded = store.load(Auth(), "s1")
        assert str(info.value) == (
            "Cannot serialize the session state: entry 'deep' is nested "
            "deeper than "
            f"{MAX_DATA_DEPTH} levels of objects and arrays, the most "
            "toolctx stores and reads back. Flatten the data."
        )
        assert loaded is not None
        assert loaded.state == {"n": 1}


class TestInMemoryStore:
    """The in-memory store keeps JSON text too: the same rules."""

    def test_writing_too_deep_is_refused(self) -> None:
        """Nothing is saved, the earlier version stays."""
        store = InMemorySessionStore()
        store.save(Auth(), Session("s1", state={"n": 1}))
        deep = Session("s1", state={"deep": nested(JUST_TOO_DEEP)})
        with pytest.raises(
            ContextDataError, match="session state: entry 'deep' is nested"
        ):
            store.save(Auth(), deep)
        loaded = store.load(Auth(), "s1")
        assert loaded is not None
        assert loaded.state == {"n": 1}


def _session_data(field: str, levels: int) -> dict[str, Any]:
    """Session data with *field* nested *levels* deep."""
    data = session_to_dict(Session("s1"))
    deep = nested(levels)
    if field == "results":
        data["results"] = [
            {"format": "toolctx.result/1", "name": "t", "output": deep}
        ]
    elif field == "pending":
        held = _held().to_dict()
        held["call"]["arguments"] = {"to": deep}
        data["pending"] = [held]
    else:
        data[field] = {"k": deep}
    return data


class TestSessionFromDict:
    """session_from_dict() names the field that nests too deeply."""

    @pytest.mark.parametrize("levels", DEPTHS)
    @pytest.mark.parametrize(
        ("field", "named"),
        [
            ("state", "Session data field 'state' entry 'k'"),
            ("metadata", "Session data field 'metadata' entry 'k'"),
            ("values", "Session data field 'values' entry 'k'"),
            ("results", "ToolResult field 'output'"),
            ("pending", "ApprovalRequest field 'arguments' entry 'to'"),
        ],
    )
    def test_refused(self, field: str, named: str, levels: int) -> None:
        """Each field of session data is refused by name."""
        with pytest.raises(ContextDataError, match=too_deep(named)):
            session_from_dict(_session_data(field, levels))


class TestContextFromDict:
    """ExecutionContext.from_dict() refuses deep fields by name."""

    @pytest.mark.parametrize("levels", DEPTHS)
    @pytest.mark.parametrize("field", ["state", "metadata", "values"])
    def test_refused(self, field: str, levels: int) -> None:
        """State, metadata and typed values."""
        data = ExecutionContext().to_dict()
        data[field] = {TENANT.name: nested(levels)}
        with pytest.raises(
            ContextDataError,
            match=too_deep(
                f"ExecutionContext field {field!r} entry '{TENANT.name}'"
            ),
        ):
            ExecutionContext.from_dict(data)

    @pytest.mark.parametrize("levels", DEPTHS)
    def test_prior_result_output(self, levels: int) -> None:
        """A prior result's output."""
        data = ExecutionContext().to_dict()
        data["prior_results"] = [
            {"format": "toolctx.result/1", "name": "t", "output": [1]}
        ]
        data["prior_results"][0]["output"] = nested(levels)
        with pytest.raises(
            ContextDataError, match=too_deep("ToolResult field 'output'")
        ):
            ExecutionContext.from_dict(data)

    def test_writing_too_deep_is_refused(self) -> None:
        """to_dict() refuses what from_dict() would."""
        ctx = ExecutionContext(metadata={"k": nested(JUST_TOO_DEEP)})
        with pytest.raises(ContextDataError, match="Cannot serialize"):
            ctx.to_dict()


class TestApprovalRequestFromDict:
    """ApprovalRequest.from_dict() refuses deep arguments and context."""

    @pytest.mark.parametrize("levels", DEPTHS)
    @pytest.mark.parametrize("field", ["arguments", "context"])
    def test_refused(self, field: str, levels: int) -> None:
        """The refusal names the field."""
        data = _held().to_dict()
        if field == "arguments":
            data["call"]["arguments"] = {"to": nested(levels)}
        else:
            # A prior result's metadata: four levels of the context's own
            # around it.
            result = {"metadata": {"k": nested(levels)}}
            data["context"] = {"prior_results": [result]}
        with pytest.raises(
            ContextDataError,
            match=too_deep(
                f"ApprovalRequest field {field!r} entry "
                + ("'to'" if field == "arguments" else "'prior_results'")
            ),
        ):
            ApprovalRequest.from_dict(data)


class TestApprovalAtTheLimit:
    """A call held with data at the limit comes back from to_dict()."""

    def test_round_trip(self) -> None:
        """State and a prior output 200 levels deep survive JSON."""
        registry = Registry()

        @registry.tool(needs_approval=True)
        def send(to: str) -> str:
            """Send something to *to*."""
            return to

        earlier = ToolResult(
            name="t", invocation_id="i0", output=nested(MAX_DATA_DEPTH)
        )
        ctx = ExecutionContext(
            state={"k": nested(MAX_DATA_DEPTH)}, prior_results=(earlier,)
        )
        held = Dispatcher(registry).dispatch(
            ToolCall("send", {"to": "a"}), ctx
        )
        assert held.approval is not None
        data = json.loads(json.dumps(held.approval.to_dict()))
        assert ApprovalRequest.from_dict(data) == held.approval

    def test_holding_too_deep_fails_the_call(self) -> None:
        """State past the limit fails the held call by name, as a result."""
        registry = Registry()

        @registry.tool(needs_approval=True)
        def send(to: str) -> str:
            """Send something to *to*."""
            return to

        ctx = ExecutionContext(state={"k": nested(JUST_TOO_DEEP)})
        held = Dispatcher(registry).dispatch(
            ToolCall("send", {"to": "a"}), ctx
        )
        assert held.approval is None
        assert held.error is not None
        assert (
            "Cannot serialize state: entry 'k' is nested deeper" in held.error
        )


class TestResultsAndRemotePayloads:
    """Results and the remote payloads share the same readers."""

    @pytest.mark.parametrize("levels", DEPTHS)
    def test_result(self, levels: int) -> None:
        """A stored result's output and metadata."""
        data = {"format": "toolctx.result/1", "name": "t"}
        with pytest.raises(
            ContextDataError, match=too_deep("ToolResult field 'output'")
        ):
            result_from_dict({**data, "output": nested(levels)})
        with pytest.raises(
            ContextDataError,
            match=too_deep("ToolResult field 'metadata' entry 'k'"),
        ):
            result_from_dict({**data, "metadata": {"k": nested(levels)}})

    @pytest.mark.parametrize("levels", DEPTHS)
    def test_remote_outcome(self, levels: int) -> None:
        """What a worker sends back."""
        data = RemoteOutcome(output=1).to_dict()
        data["output"] = nested(levels)
        with pytest.raises(
            ContextDataError, match=too_deep("RemoteOutcome field 'output'")
        ):
            RemoteOutcome.from_dict(data)

    @pytest.mark.parametrize("levels", DEPTHS)
    def test_remote_call(self, levels: int) -> None:
        """What a worker receives."""
        data = {
            "format": "toolctx.remote-call/1",
            "tool_ref": "tests.remote_tools:add",
            "tool_name": "add",
            "arguments": {"a": nested(levels)},
            "context": {},
        }
        with pytest.raises(
            ContextDataError,
            match=too_deep("RemoteCall field 'arguments' entry 'a'"),
        ):
            RemoteCall.from_dict(data)


def _adispatch_all(d: Dispatcher, c: ToolCall, s: Session) -> ToolResult:
    (result,) = asyncio.run(d.adispatch_all([c], s))
    return result


def _last(items: Iterator[object]) -> ToolResult:
    *_, last = items
    assert isinstance(last, ToolResult)
    return last


async def _alast(items: AsyncIterator[object]) -> ToolResult:
    last = None
    async for item in items:
        last = item
    assert isinstance(last, ToolResult)
    return last


RUNNERS: dict[str, Callable[[Dispatcher, ToolCall, Session], ToolResult]] = {
    "dispatch": lambda d, c, s: d.dispatch(c, s),
    "dispatch_all": lambda d, c, s: d.dispatch_all([c], s)[0],
    "adispatch": lambda d, c, s: asyncio.run(d.adispatch(c, s)),
    "adispatch_all": _adispatch_all,
    "stream": lambda d, c, s: _last(d.stream(c, s)),
    "astream": lambda d, c, s: asyncio.run(_alast(d.astream(c, s))),
}


class TestToolsCannotKeepTooDeep:
    """set_state/publish refuse what later calls and stores could not take.

    Before, the call succeeded and every later call of its session raised
    a bare RecursionError out of the dispatcher.
    """

    @pytest.fixture(name="dispatcher")
    def _dispatcher(self) -> Dispatcher:
        """Tools that keep data *levels* deep in state or metadata."""
        registry = Registry()

        @registry.tool
        def keep(levels: int, how: str) -> int:
            """Keep a value nested *levels* deep."""
            (set_state if how == "state" else publish)("deep", nested(levels))
            return levels

        return Dispatcher(registry)

    @pytest.mark.parametrize("how", ["state", "publish"])
    @pytest.mark.parametrize("run", sorted(RUNNERS))
    def test_refused_and_the_session_goes_on(
        self, dispatcher: Dispatcher, run: str, how: str
    ) -> None:
        """The call fails by name; the session and later calls are fine."""
        session = Session("s1", state={"n": 1})
        call = ToolCall("keep", {"levels": DEEPER_THAN_THE_STACK, "how": how})
        failed = RUNNERS[run](dispatcher, call, session)
        what = "set_state" if how == "state" else "publish"
        assert failed.error == (
            f"Tool 'keep' failed: ContextDataError: The {what}('deep') "
            f"value is nested deeper than {MAX_DATA_DEPTH} levels of objects "
            "and arrays, the most toolctx stores and reads back. Flatten "
            "the data."
        )
        assert session.state == {"n": 1}
        ok = ToolCall("keep", {"levels": 3, "how": how})
        later = RUNNERS[run](dispatcher, ok, session)
        assert later.is_error is False
        assert later.output == 3
