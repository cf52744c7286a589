"""ExecutionContext: a frozen value with copy-on-write methods."""

from __future__ import annotations

import copy
import pickle
import threading

import attrs
import pytest

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    MissingContextValueError,
    Registry,
    ScopeError,
    ToolCall,
    ToolctxError,
    publish,
    tool,
    use_context,
)
from toolctx.exceptions import ContextValueTypeError


REGION = ContextKey("test_context_region", str)
LIMIT = ContextKey("test_context_limit", int, default=10)
TAGS = ContextKey("test_context_tags", list[str])


class Secret:
    """A scope object whose repr would leak if printed."""

    def __repr__(self) -> str:
        return "Secret(token='hunter2')"


class LockedSecret:
    """A scope that cannot be pickled or deep-copied (it holds a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.token = "hunter2"


class TestFields:
    """The fields and their defaults."""

    def test_defaults(self) -> None:
        """A bare context has empty fields, turn 0 and a fresh id."""
        ctx = ExecutionContext()
        assert len(ctx.invocation_id) == 32
        assert ctx.session_id is None
        assert ctx.turn == 0
        assert ctx.user_id is None
        assert ctx.agent_id is None
        assert ctx.tool_name is None
        assert ctx.tool_call_id is None
        assert ctx.parent_invocation_id is None
        assert dict(ctx.metadata) == {}
        assert dict(ctx.state) == {}
        assert ctx.prior_results == ()
        assert ctx.scope is None

    def test_fresh_ids(self) -> None:
        """Two contexts never share an invocation id."""
        ids = {ExecutionContext().invocation_id for _ in range(1000)}
        assert len(ids) == 1000

    def test_keyword_only(self) -> None:
        """Fields are keyword-only, so positional mistakes fail loudly."""
        with pytest.raises(TypeError):
            ExecutionContext("abc")  # type: ignore[misc]

    def test_frozen(self) -> None:
        """Assigning to a field raises."""
        ctx = ExecutionContext(user_id="ada")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            ctx.user_id = "mallory"  # type: ignore[misc]

    def test_slotted(self) -> None:
        """The class is slotted: no per-instance __dict__."""
        assert not hasattr(ExecutionContext(), "__dict__")

    def test_metadata_is_read_only(self) -> None:
        """Tools cannot mutate metadata, nested values included."""
        ctx = ExecutionContext(metadata={"tags": ["a"], "nested": {"k": 1}})
        with pytest.raises(TypeError, match="read-only"):
            ctx.metadata["x"] = 1  # type: ignore[index]
        with pytest.raises(TypeError, match="read-only"):
            ctx.metadata["nested"]["k"] = 2  # type: ignore[index]
        assert ctx.metadata["tags"] == ("a",)
        for name in ("clear", "popitem"):
            with pytest.raises(TypeError):
                getattr(ctx.metadata, name)()
        with pytest.raises(TypeError):
            ctx.metadata.update(x=1)  # type: ignore[attr-defined]

    def test_metadata_is_copied(self) -> None:
        """Changing the dict the host passed does not change the context."""
        meta = {"a": 1}
        ctx = ExecutionContext(metadata=meta)
        meta["a"] = 2
        assert ctx.metadata["a"] == 1

    def test_state_is_read_only(self) -> None:
        """The state snapshot cannot be mutated."""
        ctx = ExecutionContext(state={"cart": ["x"]})
        with pytest.raises(TypeError, match="set_state"):
            ctx.state["cart"] = []  # type: ignore[index]

    def test_scope_not_in_repr_and_not_compared(self) -> None:
        """Repr shows only that a scope is set, not even its type.

        The scope's type can itself say too much (``AdminScope``), and
        reprs end up in logs and tracebacks. The scope does not affect
        equality either.
        """
        ctx = ExecutionContext(invocation_id="i", scope=Secret())
        assert "hunter2" not in repr(ctx)
        assert "Secret" not in repr(ctx)
        assert repr(ctx) == "ExecutionContext(invocation_id='i', scope=<set>)"
        assert str(ctx) == repr(ctx)
        assert ctx == ExecutionContext(invocation_id="i")

    def test_repr_shows_set_fields(self) -> None:
        """The repr lists the id and the fields that differ from defaults."""
        ctx = ExecutionContext(invocation_id="i", user_id="ada", turn=2)
        assert repr(ctx) == (
            "ExecutionContext(invocation_id='i', turn=2, user_id='ada')"
        )

    def test_pickle_round_trip(self) -> None:
        """Contexts pickle (for process pools) and stay read-only."""
        ctx = ExecutionContext(user_id="ada", metadata={"a": [1]})
        back = pickle.loads(pickle.dumps(ctx))
        assert back == ctx
        with pytest.raises(TypeError):
            back.metadata["a"] = 2

    def test_pickle_drops_the_scope(self) -> None:
        """A pickle never carries the scope, like ``to_dict()``.

        The scope is runtime-only (credentials, handles): the bytes hold
        no trace of it, a scope that cannot be pickled (it holds a lock)
        does not stop the context from pickling, and the copy has no scope
        until the receiving side attaches one.
        """
        scope = LockedSecret()
        ctx = ExecutionContext(
            user_id="ada", metadata={"a": 1}, scope=scope
        ).with_value(REGION, "eu")
        data = pickle.dumps(ctx)
        assert b"hunter2" not in data
        assert b"LockedSecret" not in data
        back = pickle.loads(data)
        assert back == ctx
        assert back.scope is None
        assert back.get(REGION) == "eu"
        with pytest.raises(ScopeError, match="no scope"):
            back.scope_as(LockedSecret)
        again = attrs.evolve(back, scope=scope)
        assert again.scope_as(LockedSecret) is scope

    def test_pickled_call_context_is_not_a_running_call(self) -> None:
        """A dispatched call's context, pickled, cannot publish.

        Only the call's own context writes to its result; a pickled copy
        (sent to another process, or loaded back later) is plain data, so
        ``publish()`` under it is refused instead of writing nowhere.
        """
        seen: list[bytes] = []

        @tool
        def grab(ctx: ExecutionContext) -> str:
            """Pickle the running call's context."""
            publish("mine", 1)
            seen.append(pickle.dumps(ctx))
            return "ok"

        registry = Registry()
        registry.register(grab)
        result = Dispatcher(registry).dispatch(
            ToolCall("grab", "{}", "c1"), ExecutionContext(user_id="ada")
        )
        assert not result.is_error
        assert dict(result.metadata) == {"mine": 1}
        back = pickle.loads(seen[0])
        assert (back.tool_name, back.tool_call_id) == ("grab", "c1")
        assert back.invocation_id == result.invocation_id
        with use_context(back), pytest.raises(ToolctxError, match="no disp"):
            publish("late", 2)

    def test_copy_is_the_same_value(self) -> None:
        """``copy.copy`` of a frozen context is the context itself."""
        ctx = ExecutionContext(user_id="ada", scope=LockedSecret())
        assert copy.copy(ctx) is ctx

    def test_deepcopy_copies_data_and_shares_the_scope(self) -> None:
        """``copy.deepcopy`` copies the data but keeps the same scope.

        The scope is a runtime handle (a lock here, a connection in real
        hosts): deep-copying it would fail or duplicate it, and dropping it
        would silently break ``scope_as``. Typed values, which may be
        mutable, are copied, so changing the copy's does not change the
        original's.
        """
        scope = LockedSecret()
        ctx = ExecutionContext(
            user_id="ada", metadata={"m": [1]}, scope=scope
        ).with_value(TAGS, ["a"])
        clone = copy.deepcopy(ctx)
        assert clone == ctx
        assert clone.scope is scope
        clone.require(TAGS).append("b")
        assert ctx.require(TAGS) == ["a"]
        with pytest.raises(TypeError, match="read-only"):
            clone.metadata["m"] = 2  # type: ignore[index]
        pair = copy.deepcopy([ctx, ctx])
        assert pair[0] is pair[1]


class TestTypedValues:
    """get/require/with_value/without on ContextKey slots."""

    def test_get_absent_is_none(self) -> None:
        """get() returns None for an unset key without a default."""
        assert ExecutionContext().get(REGION) is None

    def test_get_falls_back_to_key_default(self) -> None:
        """get() and require() use the key's default."""
        ctx = ExecutionContext()
        assert ctx.get(LIMIT) == 10
        assert ctx.require(LIMIT) == 10

    def test_get_with_explicit_default(self) -> None:
        """get(key, default) returns that default when nothing is set."""
        assert ExecutionContext().get(REGION, "eu") == "eu"

    def test_with_value_returns_new_context(self) -> None:
        """with_value leaves the original untouched."""
        ctx = ExecutionContext()
        new = ctx.with_value(REGION, "eu")
        assert new.get(REGION) == "eu"
        assert ctx.get(REGION) is None
        assert new.invocation_id == ctx.invocation_id

    def test_require_missing_raises(self) -> None:
        """require() names the missing key and how to set it."""
        with pytest.raises(MissingContextValueError, match="with_value"):
            ExecutionContext().require(REGION)

    def test_with_value_checks_type(self) -> None:
        """A value of the wrong type is rejected with both types named."""
        with pytest.raises(ContextValueTypeError, match="holds str, got 3"):
            ExecutionContext().with_value(REGION, 3)  # type: ignore[arg-type]

    def test_bool_is_not_int(self) -> None:
        """True is not accepted for an int key."""
        with pytest.raises(ContextValueTypeError):
            ExecutionContext().with_value(LIMIT, True)

    def test_without(self) -> None:
        """without() removes a value; removing an absent one is a no-op."""
        ctx = ExecutionContext().with_value(REGION, "eu")
        assert ctx.without(REGION).get(REGION) is None
        plain = ExecutionContext()
        assert plain.without(REGION) is plain


class TestMetadataScopeChild:
    """with_metadata, scope_as and child."""

    def test_with_metadata_merges(self) -> None:
        """Mapping and keyword entries merge over existing metadata."""
        ctx = ExecutionContext(metadata={"a": 1, "b": 1})
        new = ctx.with_metadata({"b": 2}, c=3)
        assert dict(new.metadata) == {"a": 1, "b": 2, "c": 3}
        assert dict(ctx.metadata) == {"a": 1, "b": 1}

    def test_scope_as(self) -> None:
        """scope_as returns the scope when it has the asked type."""
        secret = Secret()
        assert ExecutionContext(scope=secret).scope_as(Secret) is secret

    def test_scope_as_wrong_type(self) -> None:
        """scope_as names both types when they differ."""
        with pytest.raises(ScopeError, match="is a Secret, not a int"):
            ExecutionContext(scope=Secret()).scope_as(int)

    def test_scope_as_missing(self) -> None:
        """scope_as explains where a scope comes from when there is none."""
        with pytest.raises(ScopeError, match="no scope"):
            ExecutionContext().scope_as(Secret)

    def test_child_links_to_parent(self) -> None:
        """A child has a fresh id, links to the parent and keeps the rest."""
        secret = Secret()
        parent = ExecutionContext(
            session_id="s",
            user_id="ada",
            agent_id="planner",
            tool_name="research",
            tool_call_id="call_1",
            scope=secret,
            metadata={"m": 1},
        ).with_value(REGION, "eu")
        child = parent.child(agent_id="researcher")
        assert child.invocation_id != parent.invocation_id
        assert child.parent_invocation_id == parent.invocation_id
        assert child.agent_id == "researcher"
        assert (child.session_id, child.user_id) == ("s", "ada")
        assert child.scope is secret
        assert child.get(REGION) == "eu"
        assert dict(child.metadata) == {"m": 1}
        assert child.tool_name is None
        assert child.tool_call_id is None
        assert child.prior_results == ()

    def test_child_keeps_agent_when_omitted(self) -> None:
        """Without agent_id the child keeps the parent's agent."""
        parent = ExecutionContext(agent_id="planner")
        assert parent.child().agent_id == "planner"

    def test_child_accepts_changes(self) -> None:
        """Extra keyword changes apply to the child."""
        assert ExecutionContext().child(turn=4).turn == 4
