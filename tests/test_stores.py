"""Session persistence: the session codec and the tenant-aware stores."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from toolctx import ContextKey, ScopeError, Session, ToolctxError, ToolResult
from toolctx._context.keys import RawValue
from toolctx.exceptions import ContextDataError
from toolctx.sessions import (
    InMemorySessionStore,
    PostgresSessionStore,
    SessionAccessError,
    SessionConflictError,
    SessionSchemaError,
    SessionStore,
    SessionStoreError,
    SQLiteSessionStore,
    tenant_id_of,
)
from toolctx.sessions.codec import (
    SESSION_FORMAT,
    session_from_dict,
    session_to_dict,
)


SECRET = "hunter2-do-not-persist"
JOIN_TIMEOUT = 120.0
SUBPROCESS_TIMEOUT = 120.0


@attrs.frozen
class Point:
    """A non-trivial typed value: an attrs class with a nested list."""

    x: int
    y: int
    tags: list[str] = attrs.Factory(list)


POINT = ContextKey("test_stores_point", Point)
SCORES = ContextKey("test_stores_scores", list[int])
WHEN = ContextKey("test_stores_when", datetime)
NOTE: ContextKey[str | None] = ContextKey("test_stores_note", str | None)
RAW_PREFIX = "test_stores_unknown_"


@attrs.frozen
class Scope:
    """A runtime scope: a tenant plus a secret that must never be stored."""

    tenant_id: str | None
    token: str = SECRET


ACME = Scope("acme")
GLOBEX = Scope("globex")

Store = InMemorySessionStore | SQLiteSessionStore | PostgresSessionStore


def full_session(session_id: str = "s1", **changes: Any) -> Session:
    """A session with every field set, typed values and results included."""
    fields: dict[str, Any] = {
        "user_id": "ada",
        "turn": 3,
        "agent_id": "planner",
        "state": {"cart": [1, 2, 3], "nested": {"a": None, "b": 1.5}},
        "metadata": {"channel": "web", "ünïcode": "✓"},
        "values": {
            POINT.name: Point(1, 2, ["a"]),
            SCORES.name: [3, 1, 2],
            WHEN.name: datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc),
            NOTE.name: None,
            f"{RAW_PREFIX}blob": RawValue({"kept": ["as", "is"]}),
        },
        "results": [
            ToolResult(
                name="add",
                call_id="c1",
                invocation_id="i1",
                output={"sum": 3},
                metadata={"cost": 1},
                state_changes={"cart": [1, 2, 3]},
                duration_ns=10,
            ),
            ToolResult(name="boom", is_error=True, error="it broke"),
        ],
        "scope": ACME,
    }
    fields.update(changes)
    return Session(session_id, **fields)


@pytest.fixture(name="store", params=["memory", "sqlite", "postgres"])
def _store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield InMemorySessionStore()
    elif request.param == "sqlite":
        with SQLiteSessionStore(tmp_path / "sessions.db") as store:
            yield store
    else:
        with PostgresSessionStore(
            request.getfixturevalue("postgres_server").dsn,
            table=f"sessions_{uuid.uuid4().hex}",
            max_size=8,
        ) as store:
            yield store


@pytest.fixture(name="db_path")
def _db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


def run_python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run *script* in a new interpreter (the one running the tests)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )


def run_threads(count: int, target: Callable[[int], None]) -> None:
    """Run *target(i)* in *count* threads started together; re-raise errors."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=JOIN_TIMEOUT)
            target(index)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(i,), daemon=True)
        for i in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []


def sqlite_rows(path: Path) -> list[tuple[Any, ...]]:
    """Every row of the sessions table, read with a separate connection."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT session_id, tenant, turn, version, updated_at, data "
            "FROM toolctx_sessions ORDER BY session_id"
        ).fetchall()


# -- the codec ---------------------------------------------------------------


class TestSessionCodec:
    """session_to_dict / session_from_dict."""

    def test_round_trip_is_equal(self) -> None:
        """A full session survives to_dict, JSON text and from_dict."""
        session = full_session()
        text = json.dumps(session_to_dict(session))
        assert session_from_dict(json.loads(text)) == session

    def test_format_and_fields(self) -> None:
        """The data is versioned and holds every persistent field."""
        data = session_to_dict(full_session())
        assert data["format"] == SESSION_FORMAT == "toolctx.session/1"
        assert set(data) == {
            "format",
            "id",
            "user_id",
            "turn",
            "agent_id",
            "state",
            "metadata",
            "values",
            "results",
            "pending",
        }
        assert data["results"][0]["format"] == "toolctx.result/1"

    def test_typed_values_use_their_key_types(self) -> None:
        """Typed values are written as JSON and read back as their types."""
        data = json.loads(json.dumps(session_to_dict(full_session())))
        assert data["values"][POINT.name] == {"x": 1, "y": 2, "tags": ["a"]}
        assert data["values"][WHEN.name] == "2024-05-06T07:08:09+00:00"
        values = session_from_dict(data).values
        assert values[POINT.name] == Point(1, 2, ["a"])
        assert type(values[POINT.name]) is Point
        assert values[SCORES.name] == [3, 1, 2]
        assert values[WHEN.name] == datetime(
            2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc
        )

    def test_loaded_values_work_in_contexts(self) -> None:
        """A loaded session's typed values read back through its context."""
        data = json.loads(json.dumps(session_to_dict(full_session())))
        ctx = session_from_dict(data).context()
        assert ctx.require(POINT) == Point(1, 2, ["a"])
        assert ctx.require(SCORES) == [3, 1, 2]

    def test_unknown_keys_are_kept_raw(self) -> None:
        """A value of an unknown key loads as RawValue and is written back."""
        raw = {"deep": [1, {"x": None}], "n": 1.5}
        data = session_to_dict(Session("s1"))
        data["values"] = {f"{RAW_PREFIX}thing": raw}
        session = session_from_dict(data)
        assert session.values == {f"{RAW_PREFIX}thing": RawValue(raw)}
        assert session_to_dict(session) == data

    def test_scope_is_never_written(self) -> None:
        """The scope is not in the data, and from_dict attaches the new one."""
        session = full_session(scope=Scope("acme", token=SECRET))
        data = session_to_dict(session)
        assert "scope" not in data
        assert SECRET not in json.dumps(data)
        other = object()
        assert session_from_dict(data, scope=other).scope is other
        assert session_from_dict(data).scope is None

    def test_later_changes_do_not_touch_the_data(self) -> None:
        """The data is a snapshot: mutating the session afterwards is safe."""
        session = full_session()
        data = session_to_dict(session)
        session.state["cart"].append(4)  # type: ignore[attr-defined]
        session.metadata["channel"] = "sms"
        assert data["state"]["cart"] == [1, 2, 3]
        assert data["metadata"]["channel"] == "web"

    def test_wrong_typed_value_fails_to_serialize(self) -> None:
        """A value that does not match its key is refused when written."""
        session = Session("s1", values={SCORES.name: ["not", "ints"]})
        with pytest.raises(ContextDataError, match=SCORES.name):
            session_to_dict(session)

    def test_unserializable_state_fails(self) -> None:
        """State with no JSON form raises ContextDataError naming the state."""
        with pytest.raises(ContextDataError, match="session state"):
            session_to_dict(Session("s1", state={"lock": threading.Lock()}))

    def test_typed_value_that_does_not_fit_fails_to_load(self) -> None:
        """Stored data that does not fit its key's type names the key."""
        data = session_to_dict(Session("s1"))
        data["values"] = {SCORES.name: ["x"]}
        with pytest.raises(ContextDataError, match=SCORES.name):
            session_from_dict(data)

    @pytest.mark.parametrize(
        ("change", "match"),
        [
            ({"format": "toolctx.session/2"}, "Unsupported session data"),
            ({"format": None}, "Unsupported session data"),
            ({"id": ""}, "'id' must be a non-empty string"),
            ({"id": 5}, "'id' must be a non-empty string"),
            ({"turn": "3"}, "'turn' must be an integer"),
            ({"user_id": 1}, "'user_id' must be a string or null"),
            ({"state": [1]}, "'state' must be an object"),
            ({"metadata": []}, "'metadata' must be an object"),
            ({"results": {}}, "'results' must be a list"),
        ],
    )
    def test_bad_data_is_rejected(
        self, change: dict[str, Any], match: str
    ) -> None:
        """Malformed data raises ContextDataError saying what is wrong."""
        data = {**session_to_dict(Session("s1")), **change}
        with pytest.raises(ContextDataError, match=match):
            session_from_dict(data)

    def test_non_mapping_is_rejected(self) -> None:
        """from_dict of something other than a mapping fails clearly."""
        with pytest.raises(ContextDataError, match="takes a mapping"):
            session_from_dict(["not", "a", "dict"])  # type: ignore[arg-type]


# -- hypothesis ----------------------------------------------------------------

json_scalars = (  # what JSON carries: no NaN, no infinities
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
optional_text = st.none() | st.text()

tool_results = st.builds(
    ToolResult,
    name=st.text(min_size=1),
    call_id=optional_text,
    invocation_id=st.text(),
    output=json_values,
    is_error=st.booleans(),
    error=optional_text,
    metadata=json_objects,
    state_changes=json_objects,
    duration_ns=st.integers(min_value=0, max_value=2**63),
)

typed_values = st.fixed_dictionaries(
    {},
    optional={
        POINT.name: st.builds(
            Point, st.integers(), st.integers(), st.lists(st.text())
        ),
        SCORES.name: st.lists(st.integers()),
        WHEN.name: st.datetimes(timezones=st.just(timezone.utc)),
        NOTE.name: optional_text,
    },
)
raw_values = st.dictionaries(
    st.text().map(lambda s: RAW_PREFIX + s),
    json_values.map(RawValue),
    max_size=3,
)


@st.composite
def sessions(draw: st.DrawFn) -> Session:
    """Sessions with JSON-able state/metadata, typed and raw values."""
    return Session(
        draw(st.text(min_size=1)),
        user_id=draw(optional_text),
        turn=draw(st.integers()),
        agent_id=draw(optional_text),
        state=draw(json_objects),
        metadata=draw(json_objects),
        values={**draw(typed_values), **draw(raw_values)},
        results=draw(st.lists(tool_results, max_size=3)),
        scope=Scope("acme"),
    )


class TestSessionCodecProperties:
    """Round trips over generated sessions."""

    @given(session=sessions())
    def test_round_trip(self, session: Session) -> None:
        """Any session survives to_dict, JSON text and from_dict, equal."""
        data = session_to_dict(session)
        loaded = session_from_dict(json.loads(json.dumps(data)))
        assert loaded == session
        assert session_to_dict(loaded) == data

    @settings(max_examples=25)
    @given(session=sessions())
    def test_store_round_trip(self, session: Session) -> None:
        """Any session (turn within SQLite's range) saves and loads equal."""
        session.turn %= 2**63
        with SQLiteSessionStore(":memory:") as sqlite_store:
            for store in (InMemorySessionStore(), sqlite_store):
                store.save(ACME, session)
                assert store.load(ACME, session.id) == session


# -- both stores ---------------------------------------------------------------


class TestStores:
    """Behaviour shared by InMemorySessionStore and SQLiteSessionStore."""

    def test_is_a_session_store(self, store: Store) -> None:
        """Both stores satisfy the runtime-checkable SessionStore protocol."""
        assert isinstance(store, SessionStore)
        assert not isinstance(object(), SessionStore)

    def test_save_and_load(self, store: Store) -> None:
        """A saved session loads back equal, as a new object."""
        session = full_session()
        store.save(ACME, session)
        loaded = store.load(ACME, "s1")
        assert loaded == session
        assert loaded is not session

    def test_load_attaches_the_callers_scope(self, store: Store) -> None:
        """The loaded session carries the scope passed to load."""
        store.save(ACME, full_session())
        scope = Scope("acme")
        loaded = store.load(scope, "s1")
        assert loaded is not None
        assert loaded.scope is scope

    def test_missing_session_loads_none(self, store: Store) -> None:
        """Loading an id that was never saved returns None."""
        assert store.load(ACME, "nope") is None

    def test_save_replaces(self, store: Store) -> None:
        """A second save replaces the first version."""
        session = full_session()
        store.save(ACME, session)
        session.next_turn()
        session.state["cart"] = []
        store.save(ACME, session)
        assert store.load(ACME, "s1") == session

    def test_saved_data_is_a_copy(self, store: Store) -> None:
        """Mutating the session or a loaded copy never changes the store."""
        session = full_session()
        store.save(ACME, session)
        cart = session.state["cart"]
        assert isinstance(cart, list)
        cart.append(99)
        loaded = store.load(ACME, "s1")
        assert loaded is not None
        loaded_cart = loaded.state["cart"]
        assert loaded_cart == [1, 2, 3]
        assert isinstance(loaded_cart, list)
        loaded_cart.append(98)
        again = store.load(ACME, "s1")
        assert again is not None
        assert again.state["cart"] == [1, 2, 3]

    def test_delete(self, store: Store) -> None:
        """Delete removes the session and reports whether it existed."""
        store.save(ACME, full_session())
        assert store.delete(ACME, "s1") is True
        assert store.load(ACME, "s1") is None
        assert store.delete(ACME, "s1") is False

    def test_unknown_keys_survive(self, store: Store) -> None:
        """A raw value of an unknown key is stored and loaded unchanged."""
        raw = RawValue({"from": "a newer release", "n": [1, 2]})
        session = Session("s1", values={f"{RAW_PREFIX}future": raw})
        store.save(ACME, session)
        loaded = store.load(ACME, "s1")
        assert loaded is not None
        assert loaded.values[f"{RAW_PREFIX}future"] == raw
        assert session_to_dict(loaded) == session_to_dict(session)

    def test_failed_save_keeps_the_previous_version(
        self, store: Store
    ) -> None:
        """A save that fails to serialize changes nothing."""
        store.save(ACME, full_session())
        broken = full_session(state={"lock": threading.Lock()}, turn=9)
        with pytest.raises(ContextDataError):
            store.save(ACME, broken)
        assert store.load(ACME, "s1") == full_session()
        assert store.version(ACME, "s1") == 1

    def test_bad_session_id(self, store: Store) -> None:
        """A session id that is not a non-empty str is a TypeError."""
        with pytest.raises(TypeError, match="session_id"):
            store.load(ACME, "")
        with pytest.raises(TypeError, match="session_id"):
            store.delete(ACME, 5)  # type: ignore[arg-type]


class TestTenancy:
    """One tenant can never reach another tenant's sessions."""

    def test_other_tenant_cannot_load(self, store: Store) -> None:
        """Another tenant loads None, exactly as for a missing id."""
        store.save(ACME, full_session())
        assert store.load(GLOBEX, "s1") is None
        assert store.version(GLOBEX, "s1") is None

    def test_other_tenant_cannot_overwrite(self, store: Store) -> None:
        """Another tenant's save of a taken id raises and changes nothing."""
        store.save(ACME, full_session())
        intruder = full_session(state={"pwned": True}, scope=GLOBEX)
        with pytest.raises(SessionAccessError) as info:
            store.save(GLOBEX, intruder)
        assert info.value.session_id == "s1"
        assert isinstance(info.value, SessionStoreError)
        assert isinstance(info.value, ToolctxError)
        assert "acme" not in str(info.value)
        assert store.load(ACME, "s1") == full_session()
        assert store.version(ACME, "s1") == 1

    def test_other_tenant_cannot_delete(self, store: Store) -> None:
        """Another tenant's delete returns False and leaves the session."""
        store.save(ACME, full_session())
        assert store.delete(GLOBEX, "s1") is False
        assert store.load(ACME, "s1") == full_session()

    def test_tenants_do_not_share_sessions(self, store: Store) -> None:
        """Each tenant sees only the ids it saved."""
        store.save(ACME, Session("a"))
        store.save(GLOBEX, Session("g"))
        assert store.load(ACME, "a") is not None
        assert store.load(ACME, "g") is None
        assert store.load(GLOBEX, "g") is not None
        assert store.load(GLOBEX, "a") is None

    def test_deleted_id_is_free_again(self, store: Store) -> None:
        """After its owner deletes it, an id can be saved by anyone."""
        store.save(ACME, Session("s1"))
        assert store.delete(ACME, "s1")
        store.save(GLOBEX, Session("s1", turn=1))
        assert store.load(GLOBEX, "s1") == Session("s1", turn=1)
        assert store.load(ACME, "s1") is None

    @pytest.mark.parametrize("scope", [None, object(), Scope(None), Scope("")])
    def test_scope_without_tenant(self, store: Store, scope: object) -> None:
        """A scope without a tenant is refused with a ScopeError that helps."""
        with pytest.raises(ScopeError, match="tenant_of="):
            store.load(scope, "s1")
        with pytest.raises(ScopeError, match="tenant_id"):
            store.save(scope, Session("s1"))
        with pytest.raises(ScopeError):
            store.delete(scope, "s1")

    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    def test_custom_tenant_of(self, kind: str) -> None:
        """A store built with tenant_of uses it to tell tenants apart."""

        def tenant_of(scope: object) -> str:
            assert isinstance(scope, dict)
            return str(scope["org"])

        with contextlib.ExitStack() as stack:
            store: Store = (
                InMemorySessionStore(tenant_of=tenant_of)
                if kind == "memory"
                else stack.enter_context(
                    SQLiteSessionStore(":memory:", tenant_of=tenant_of)
                )
            )
            store.save({"org": "a"}, Session("s1"))
            assert store.load({"org": "a"}, "s1") == Session("s1")
            assert store.load({"org": "b"}, "s1") is None

    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    def test_tenant_of_must_return_a_name(self, kind: str) -> None:
        """A tenant_of that returns no usable name is a ScopeError."""
        with contextlib.ExitStack() as stack:
            store: Store = (
                InMemorySessionStore(tenant_of=lambda _: "")
                if kind == "memory"
                else stack.enter_context(
                    SQLiteSessionStore(":memory:", tenant_of=lambda _: "")
                )
            )
            with pytest.raises(ScopeError, match="tenant_of returned ''"):
                store.save(ACME, Session("s1"))

    def test_tenant_id_of(self) -> None:
        """The default tenant_of reads scope.tenant_id."""
        assert tenant_id_of(ACME) == "acme"
        with pytest.raises(ScopeError, match="scope is None"):
            tenant_id_of(None)


class TestScopeIsNeverStored:
    """Nothing of the scope reaches the storage."""

    def test_memory_store_text(self) -> None:
        """The in-memory store's stored text has no trace of the scope."""
        store = InMemorySessionStore()
        store.save(ACME, full_session(scope=Scope("acme", SECRET)))
        texts = [entry.text for entry in store._entries.values()]
        assert texts
        assert all(SECRET not in text for text in texts)
        assert all("scope" not in json.loads(text) for text in texts)

    def test_sqlite_files(self, tmp_path: Path, db_path: Path) -> None:
        """No file of the SQLite database holds the scope's secret."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session(scope=Scope("acme", SECRET)))
            (row,) = sqlite_rows(db_path)
            assert SECRET not in repr(row)
            blobs = [p.read_bytes() for p in tmp_path.iterdir()]
            assert any(b"planner" in blob for blob in blobs)
            assert all(SECRET.encode() not in blob for blob in blobs)


class TestVersions:
    """Optimistic concurrency with version() and expected_version."""

    def test_versions_count_saves(self, store: Store) -> None:
        """The version is None before the first save, then counts saves."""
        assert store.version(ACME, "s1") is None
        store.save(ACME, Session("s1"))
        assert store.version(ACME, "s1") == 1
        store.save(ACME, Session("s1"))
        assert store.version(ACME, "s1") == 2

    def test_expected_version_matches(self, store: Store) -> None:
        """A save with the current version succeeds."""
        store.save(ACME, Session("s1"), expected_version=0)
        store.save(ACME, Session("s1", turn=1), expected_version=1)
        assert store.load(ACME, "s1") == Session("s1", turn=1)

    def test_stale_version_conflicts(self, store: Store) -> None:
        """A save with an outdated version raises and changes nothing."""
        store.save(ACME, Session("s1"))
        store.save(ACME, Session("s1", turn=1))
        with pytest.raises(SessionConflictError) as info:
            store.save(ACME, Session("s1", turn=7), expected_version=1)
        assert (info.value.expected, info.value.actual) == (1, 2)
        assert "Load it again" in str(info.value)
        with pytest.raises(SessionConflictError):
            store.save(ACME, Session("s1", turn=7), expected_version=0)
        assert store.load(ACME, "s1") == Session("s1", turn=1)

    def test_conflict_on_missing_session(self, store: Store) -> None:
        """Expecting a version of a session that is gone conflicts."""
        with pytest.raises(SessionConflictError) as info:
            store.save(ACME, Session("s1"), expected_version=3)
        assert info.value.actual == 0
        assert store.load(ACME, "s1") is None

    def test_access_is_checked_before_versions(self, store: Store) -> None:
        """Another tenant gets SessionAccessError, never a version hint."""
        store.save(ACME, Session("s1"))
        with pytest.raises(SessionAccessError):
            store.save(GLOBEX, Session("s1"), expected_version=1)

    @pytest.mark.parametrize("bad", [-1, "1", 1.0, True])
    def test_bad_expected_version(self, store: Store, bad: Any) -> None:
        """expected_version must be None or an int >= 0."""
        with pytest.raises(TypeError, match="expected_version"):
            store.save(ACME, Session("s1"), expected_version=bad)


class TestConcurrency:
    """Saves from many threads: each atomic, none lost."""

    THREADS = 8
    SAVES = 25

    def test_different_sessions_all_land(self, store: Store) -> None:
        """8 threads x N saves of distinct sessions: every one is stored."""

        def work(t: int) -> None:
            for i in range(self.SAVES):
                store.save(ACME, full_session(f"t{t}-{i}", turn=i))
                store.save(ACME, full_session(f"t{t}", turn=i))

        run_threads(self.THREADS, work)
        for t in range(self.THREADS):
            for i in range(self.SAVES):
                expected = full_session(f"t{t}-{i}", turn=i)
                assert store.load(ACME, f"t{t}-{i}") == expected
            last = full_session(f"t{t}", turn=self.SAVES - 1)
            assert store.load(ACME, f"t{t}") == last
            assert store.version(ACME, f"t{t}") == self.SAVES

    def test_same_session_ends_with_one_whole_version(
        self, store: Store
    ) -> None:
        """Racing saves of one id leave exactly one writer's whole version."""
        versions = [
            full_session(
                "shared",
                turn=t,
                state={"writer": t, "payload": [t] * 200},
                values={SCORES.name: [t] * 50},
                results=[ToolResult(name=f"tool{t}", output=[t] * 20)],
            )
            for t in range(self.THREADS)
        ]

        def work(t: int) -> None:
            for _ in range(self.SAVES):
                store.save(ACME, versions[t])
                loaded = store.load(ACME, "shared")
                assert loaded in versions

        run_threads(self.THREADS, work)
        assert store.load(ACME, "shared") in versions
        assert store.version(ACME, "shared") == self.THREADS * self.SAVES

    def test_compare_and_set_loses_no_increment(self, store: Store) -> None:
        """Increments retried on conflict all count, none is lost."""
        increments = 10
        store.save(ACME, Session("counter", state={"n": 0}))

        def work(_: int) -> None:
            done = 0
            for _attempt in range(10_000):
                if done == increments:
                    return
                version = store.version(ACME, "counter")
                session = store.load(ACME, "counter")
                assert session is not None
                assert version is not None
                session.state["n"] += 1  # type: ignore[operator]
                try:
                    store.save(ACME, session, expected_version=version)
                except SessionConflictError:
                    continue
                done += 1
            pytest.fail("too many conflicts")

        run_threads(self.THREADS, work)
        final = store.load(ACME, "counter")
        assert final is not None
        assert final.state["n"] == self.THREADS * increments
        assert store.version(ACME, "counter") == self.THREADS * increments + 1

    def test_two_sqlite_connections_lose_nothing(self, db_path: Path) -> None:
        """Two stores on one file, written from threads, keep every save."""
        with (
            SQLiteSessionStore(db_path) as first,
            SQLiteSessionStore(db_path) as second,
        ):
            stores = (first, second)

            def work(t: int) -> None:
                for i in range(self.SAVES):
                    stores[t % 2].save(ACME, Session(f"t{t}-{i}", turn=i))

            run_threads(self.THREADS, work)
            ids = {row[0] for row in sqlite_rows(db_path)}
        assert ids == {
            f"t{t}-{i}" for t in range(self.THREADS) for i in range(self.SAVES)
        }


# -- SQLite only ---------------------------------------------------------------


class TestSQLiteStore:
    """What only the SQLite store does: files, processes, transactions."""

    def test_new_process_loads_an_equal_session(self, db_path: Path) -> None:
        """A session saved here loads equal in a new interpreter, and back."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session())
        script = """
            import sys
            from datetime import datetime, timezone
            import attrs
            from toolctx import ContextKey, Session, ToolResult
            from toolctx._context.keys import RawValue
            from toolctx.sessions import SQLiteSessionStore

            @attrs.frozen
            class Point:
                x: int
                y: int
                tags: list[str] = attrs.Factory(list)

            POINT = ContextKey("test_stores_point", Point)
            SCORES = ContextKey("test_stores_scores", list[int])
            WHEN = ContextKey("test_stores_when", datetime)
            NOTE = ContextKey("test_stores_note", str | None)

            class Scope:
                tenant_id = "acme"

            expected = Session(
                "s1",
                user_id="ada",
                turn=3,
                agent_id="planner",
                state={"cart": [1, 2, 3], "nested": {"a": None, "b": 1.5}},
                metadata={"channel": "web", "ünïcode": "✓"},
                values={
                    POINT.name: Point(1, 2, ["a"]),
                    SCORES.name: [3, 1, 2],
                    WHEN.name: datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc),
                    NOTE.name: None,
                    "test_stores_unknown_blob": RawValue({"kept": ["as", "is"]}),
                },
                results=[
                    ToolResult(
                        name="add",
                        call_id="c1",
                        invocation_id="i1",
                        output={"sum": 3},
                        metadata={"cost": 1},
                        state_changes={"cart": [1, 2, 3]},
                    ),
                    ToolResult(name="boom", is_error=True, error="it broke"),
                ],
            )
            with SQLiteSessionStore(sys.argv[1]) as store:
                loaded = store.load(Scope(), "s1")
                assert loaded == expected, (loaded, expected)
                assert type(loaded.values[POINT.name]) is Point
                assert store.load(type("Other", (), {"tenant_id": "x"})(), "s1") is None
                loaded.next_turn()
                loaded.state["from_child"] = True
                store.save(Scope(), loaded)
            print("ok")
        """
        proc = run_python(script, str(db_path))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "ok"
        with SQLiteSessionStore(db_path) as store:
            loaded = store.load(ACME, "s1")
        expected = full_session(turn=4, results=[])
        expected.state["from_child"] = True
        assert loaded == expected

    def test_process_crash_mid_save_keeps_previous(
        self, db_path: Path
    ) -> None:
        """A process killed after the write, before commit, changes nothing."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session())
            script = """
                import os, sys
                from toolctx import Session
                from toolctx.sessions import SQLiteSessionStore

                class Scope:
                    tenant_id = "acme"

                original = SQLiteSessionStore._write

                def crash(self, *args, **kwargs):
                    original(self, *args, **kwargs)
                    os._exit(17)

                SQLiteSessionStore._write = crash
                store = SQLiteSessionStore(sys.argv[1])
                store.save(Scope(), Session("s1", turn=99, state={"half": 1}))
            """
            proc = run_python(script, str(db_path))
            assert proc.returncode == 17, proc.stderr
            assert store.load(ACME, "s1") == full_session()
            assert store.version(ACME, "s1") == 1
        with SQLiteSessionStore(db_path) as reopened:
            assert reopened.load(ACME, "s1") == full_session()

    def test_error_inside_transaction_rolls_back(
        self, db_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An error after the write, before commit, leaves the old version."""
        original = SQLiteSessionStore._write

        def write_then_fail(*args: Any, **kwargs: Any) -> None:
            original(*args, **kwargs)
            msg = "disk on fire"
            raise RuntimeError(msg)

        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session())
            monkeypatch.setattr(SQLiteSessionStore, "_write", write_then_fail)
            with pytest.raises(RuntimeError, match="disk on fire"):
                store.save(ACME, full_session(turn=99, state={}))
            with pytest.raises(RuntimeError, match="disk on fire"):
                store.save(ACME, Session("new"))
            assert store.load(ACME, "s1") == full_session()
            assert store.load(ACME, "new") is None
            assert [row[3] for row in sqlite_rows(db_path)] == [1]
            monkeypatch.undo()
            store.save(ACME, full_session(turn=5))
            assert store.load(ACME, "s1") == full_session(turn=5)

    def test_persists_across_reopen(self, db_path: Path) -> None:
        """A closed and reopened file still holds the session."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session())
        with SQLiteSessionStore(db_path) as store:
            assert store.load(ACME, "s1") == full_session()

    def test_row_columns(self, db_path: Path) -> None:
        """Each row holds tenant, id, turn, version, a UTC time and the JSON."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session(turn=7))
            ((session_id, tenant, turn, version, updated_at, data),) = (
                sqlite_rows(db_path)
            )
        assert (session_id, tenant, turn, version) == ("s1", "acme", 7, 1)
        stamp = datetime.fromisoformat(updated_at)
        assert stamp.utcoffset() is not None
        assert stamp.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert json.loads(data) == session_to_dict(full_session(turn=7))

    def test_wal_mode(self, db_path: Path) -> None:
        """The database file is in WAL journal mode."""
        with SQLiteSessionStore(db_path):
            with contextlib.closing(sqlite3.connect(db_path)) as conn:
                (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
        assert mode == "wal"

    def test_newer_schema_is_refused(self, db_path: Path) -> None:
        """A file of a newer schema version raises a clear error on open."""
        with SQLiteSessionStore(db_path):
            pass
        with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
            conn.execute(
                "UPDATE toolctx_meta SET value = 2 "
                "WHERE key = 'schema_version'"
            )
        with pytest.raises(SessionSchemaError, match="newer toolctx"):
            SQLiteSessionStore(db_path)

    def test_unknown_schema_is_refused(self, db_path: Path) -> None:
        """A schema version no toolctx writes is refused too."""
        with SQLiteSessionStore(db_path):
            pass
        with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
            conn.execute(
                "UPDATE toolctx_meta SET value = 0 "
                "WHERE key = 'schema_version'"
            )
        with pytest.raises(SessionSchemaError, match="another file"):
            SQLiteSessionStore(db_path)

    def test_shares_a_file_with_application_tables(
        self, db_path: Path
    ) -> None:
        """The store leaves the application's tables and user_version be."""
        with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
            conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
            conn.execute("INSERT INTO orders VALUES (42)")
            conn.execute("PRAGMA user_version = 7")
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, Session("s1"))
        with contextlib.closing(sqlite3.connect(db_path)) as conn:
            assert conn.execute("SELECT id FROM orders").fetchall() == [(42,)]
            assert conn.execute("PRAGMA user_version").fetchone() == (7,)

    def test_memory_database(self) -> None:
        """':memory:' gives a private database that works like a file."""
        with SQLiteSessionStore(":memory:") as store:
            store.save(ACME, full_session())
            assert store.load(ACME, "s1") == full_session()
        with SQLiteSessionStore(":memory:") as other:
            assert other.load(ACME, "s1") is None

    def test_close(self, db_path: Path) -> None:
        """A closed store refuses every call; closing twice is fine."""
        store = SQLiteSessionStore(db_path)
        assert store.path == str(db_path)
        store.close()
        store.close()
        assert "closed=True" in repr(store)
        with pytest.raises(SessionStoreError, match="is closed"):
            store.load(ACME, "s1")
        with pytest.raises(SessionStoreError, match="is closed"):
            store.save(ACME, Session("s1"))
        with pytest.raises(SessionStoreError, match="is closed"):
            store.delete(ACME, "s1")

    def test_context_manager_closes(self, db_path: Path) -> None:
        """Leaving the with block closes the store."""
        with SQLiteSessionStore(db_path) as store:
            assert (
                repr(store) == f"<SQLiteSessionStore(path={str(db_path)!r})>"
            )
        with pytest.raises(SessionStoreError):
            store.version(ACME, "s1")


def clobber_table(path: Path, table: str) -> None:
    """Overwrite the root page of *table* in the closed database file."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        (root,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(bytes(range(256)) * (page_size // 256))


class TestDamagedStorage:
    """A damaged database or entry is a SessionStoreError that says so."""

    def test_file_that_is_not_a_database(self, db_path: Path) -> None:
        """Opening a file that is not SQLite names it and leaves it alone.

        It used to raise ``sqlite3.DatabaseError: file is not a database``,
        which hosts catching the store's own errors did not expect.
        """
        garbage = b"not a database, just some bytes\n" * 200
        db_path.write_bytes(garbage)
        with pytest.raises(SessionStoreError) as info:
            SQLiteSessionStore(db_path)
        message = str(info.value)
        assert str(db_path) in message
        assert "is damaged or is not an SQLite database" in message
        assert "backup" in message
        assert isinstance(info.value.__cause__, sqlite3.DatabaseError)
        assert db_path.read_bytes() == garbage

    def test_truncated_file(self, db_path: Path) -> None:
        """A file cut short (a partial copy) is refused on open."""
        with SQLiteSessionStore(db_path) as store:
            for i in range(40):
                store.save(ACME, full_session(f"s{i}"))
        data = db_path.read_bytes()
        db_path.write_bytes(data[: len(data) // 3])
        with pytest.raises(SessionStoreError, match="is damaged"):
            SQLiteSessionStore(db_path)

    def test_damaged_sessions_table(self, db_path: Path) -> None:
        """Every method on a damaged sessions table raises SessionStoreError.

        The schema is intact, so the store opens; reading or writing the
        broken table says the file is damaged, and the store still closes.
        """
        with SQLiteSessionStore(db_path) as store:
            for i in range(40):
                store.save(ACME, full_session(f"s{i}"))
        clobber_table(db_path, "toolctx_sessions")
        with SQLiteSessionStore(db_path) as store:
            calls: list[Callable[[], object]] = [
                lambda: store.load(ACME, "s1"),
                lambda: store.version(ACME, "s1"),
                lambda: store.save(ACME, full_session("s1")),
                lambda: store.delete(ACME, "s1"),
            ]
            for call in calls:
                with pytest.raises(SessionStoreError, match="is damaged"):
                    call()

    def test_locked_database(self, db_path: Path) -> None:
        """A write lock held too long is a SessionStoreError naming the fix.

        Another real connection holds the write lock; the save gives up
        after the store's timeout and the previous version stays.
        """
        with SQLiteSessionStore(db_path, timeout=0.01) as store:
            store.save(ACME, full_session())
            with contextlib.closing(
                sqlite3.connect(db_path, isolation_level=None)
            ) as other:
                other.execute("BEGIN IMMEDIATE")
                with pytest.raises(SessionStoreError, match="timeout="):
                    store.save(ACME, full_session(turn=9))
                other.execute("ROLLBACK")
            assert store.load(ACME, "s1") == full_session()
            store.save(ACME, full_session(turn=9))
            assert store.version(ACME, "s1") == 2

    def test_row_holding_another_sessions_data(self, db_path: Path) -> None:
        """A row whose JSON id is not its key is refused, not loaded as it.

        A row edited outside the store (here: s2's data copied into s1's
        row) used to load as session s2 when asking for s1.
        """
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session("s1"))
            store.save(ACME, full_session("s2", turn=8))
            with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
                conn.execute(
                    "UPDATE toolctx_sessions SET data = (SELECT data FROM "
                    "toolctx_sessions WHERE session_id = 's2') "
                    "WHERE session_id = 's1'"
                )
            with pytest.raises(SessionStoreError) as info:
                store.load(ACME, "s1")
            message = str(info.value)
            assert "session 's1' holds the data of session 's2'" in message
            assert "outside this store" in message
            assert store.load(ACME, "s2") == full_session("s2", turn=8)

    def test_memory_entry_holding_another_sessions_data(self) -> None:
        """The in-memory store refuses such an entry the same way."""
        store = InMemorySessionStore()
        store.save(ACME, full_session("s1"))
        store.save(ACME, full_session("s2"))
        store._entries["s1"] = store._entries["s2"]
        with pytest.raises(SessionStoreError, match="data of session 's2'"):
            store.load(ACME, "s1")

    def test_huge_foreign_id_is_shortened(self, db_path: Path) -> None:
        """The message stays short even if the stored id is enormous."""
        with SQLiteSessionStore(db_path) as store:
            store.save(ACME, full_session("s1"))
            data = session_to_dict(full_session("x" * 100_000))
            with contextlib.closing(sqlite3.connect(db_path)) as conn, conn:
                conn.execute(
                    "UPDATE toolctx_sessions SET data = ? "
                    "WHERE session_id = 's1'",
                    (json.dumps(data),),
                )
            with pytest.raises(SessionStoreError) as info:
                store.load(ACME, "s1")
        assert len(str(info.value)) < 400
