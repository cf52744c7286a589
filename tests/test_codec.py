"""to_dict/from_dict: JSON-safe round trips of contexts and results."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from typing import Any

import attrs
import pytest

from hypothesis import given
from hypothesis import strategies as st

from toolctx import ContextKey, ExecutionContext, ToolResult
from toolctx._context.codec import result_from_dict, result_to_dict
from toolctx._context.keys import RawValue
from toolctx.exceptions import ContextDataError


@attrs.frozen
class Budget:
    """A typed value with structure."""

    limit: int
    currency: str = "EUR"


BUDGET = ContextKey("test_codec_budget", Budget)
TAGS = ContextKey("test_codec_tags", list[str])
REGION = ContextKey("test_codec_region", str)

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
ids = st.none() | st.text(min_size=1, max_size=12)


@st.composite
def contexts(draw: st.DrawFn) -> ExecutionContext:
    """Generate contexts with every channel filled in."""
    ctx = ExecutionContext(
        session_id=draw(ids),
        turn=draw(st.integers(0, 1000)),
        user_id=draw(ids),
        agent_id=draw(ids),
        tool_name=draw(ids),
        tool_call_id=draw(ids),
        parent_invocation_id=draw(ids),
        metadata=draw(
            st.dictionaries(st.text(max_size=6), json_values, max_size=4)
        ),
        state=draw(
            st.dictionaries(st.text(max_size=6), json_values, max_size=4)
        ),
        prior_results=draw(
            st.lists(
                st.builds(
                    ToolResult,
                    name=st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
                    call_id=ids,
                    invocation_id=st.text(max_size=8),
                    output=json_values,
                    is_error=st.booleans(),
                    error=ids,
                ),
                max_size=3,
            )
        ),
        scope=object(),
    )
    if draw(st.booleans()):
        ctx = ctx.with_value(
            BUDGET,
            Budget(draw(st.integers(-5, 10**6)), draw(st.text(max_size=3))),
        )
    if draw(st.booleans()):
        ctx = ctx.with_value(
            TAGS, draw(st.lists(st.text(max_size=4), max_size=3))
        )
    return ctx


def _thaw(value: Any) -> Any:
    """Compare frozen and JSON data alike (tuples as lists)."""
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


class TestRoundTrip:
    """A context survives to_dict -> JSON -> from_dict."""

    @given(contexts())
    def test_round_trip_through_json(self, ctx: ExecutionContext) -> None:
        """Every generated context round-trips equal, scope aside."""
        data = json.loads(json.dumps(ctx.to_dict()))
        back = ExecutionContext.from_dict(data)
        assert back == ctx
        assert back.scope is None
        assert back.get(BUDGET) == ctx.get(BUDGET)
        assert _thaw(back.to_dict()) == _thaw(ctx.to_dict())

    def test_format_and_fields(self) -> None:
        """The data carries a format version and plain JSON values."""
        ctx = ExecutionContext(invocation_id="i1", user_id="ada", turn=2)
        data = ctx.with_value(BUDGET, Budget(5)).to_dict()
        assert data["format"] == "toolctx.context/1"
        assert data["invocation_id"] == "i1"
        assert data["values"] == {
            "test_codec_budget": {"limit": 5, "currency": "EUR"}
        }

    def test_typed_values_restored_to_their_type(self) -> None:
        """Values come back as instances of their key's type."""
        ctx = ExecutionContext().with_value(BUDGET, Budget(7, "USD"))
        back = ExecutionContext.from_dict(
            json.loads(json.dumps(ctx.to_dict()))
        )
        assert back.require(BUDGET) == Budget(7, "USD")
        assert isinstance(back.values["test_codec_budget"], Budget)

    def test_scope_is_dropped(self) -> None:
        """The runtime scope never reaches the serialized data."""

        class Secret:
            token = "hunter2"

            def __repr__(self) -> str:
                return "Secret(hunter2)"

        ctx = ExecutionContext(scope=Secret())
        text = json.dumps(ctx.to_dict())
        assert "hunter2" not in text
        assert "scope" not in ctx.to_dict()

    def test_from_dict_attaches_a_new_scope(self) -> None:
        """The host can attach a rebuilt scope when loading."""
        back = ExecutionContext.from_dict(
            ExecutionContext().to_dict(), scope=42
        )
        assert back.scope == 42


class TestUnknownKeys:
    """Slots whose key this process does not know are kept, not dropped."""

    def test_unknown_slot_survives_round_trips(self, tmp_path: Any) -> None:
        """A value from a process with more keys round-trips untouched."""
        script = tmp_path / "emit.py"
        script.write_text(
            textwrap.dedent(
                """
                import json
                from toolctx import ContextKey, ExecutionContext
                ONLY_THERE = ContextKey("test_codec_only_there", dict[str, int])
                ctx = ExecutionContext(user_id="ada").with_value(ONLY_THERE, {"a": 1})
                print(json.dumps(ctx.to_dict()))
                """
            )
        )
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, check=True
        ).stdout
        data = json.loads(out)
        here = ExecutionContext.from_dict(data)
        assert here.values["test_codec_only_there"] == RawValue({"a": 1})
        again = json.loads(json.dumps(here.to_dict()))
        assert again["values"] == {"test_codec_only_there": {"a": 1}}
        later_key = ContextKey("test_codec_only_there", dict[str, int])
        assert here.get(later_key) == {"a": 1}


class TestBadData:
    """Malformed data is refused with a message naming the problem."""

    @pytest.mark.parametrize(
        ("data", "match"),
        [
            ({"format": "toolctx.context/9"}, "Unsupported"),
            ([], "takes a mapping"),
            ({"format": "toolctx.context/1", "turn": "1"}, "'turn'"),
            ({"format": "toolctx.context/1", "user_id": 5}, "'user_id'"),
            ({"format": "toolctx.context/1", "metadata": []}, "'metadata'"),
            (
                {
                    "format": "toolctx.context/1",
                    "values": {"test_codec_budget": {"limit": "x"}},
                },
                "test_codec_budget",
            ),
        ],
    )
    def test_rejected(self, data: Any, match: str) -> None:
        """Each malformed input raises ContextDataError."""
        with pytest.raises(ContextDataError, match=match):
            ExecutionContext.from_dict(data)

    def test_unserializable_metadata(self) -> None:
        """Metadata that has no JSON form is named in the error."""
        ctx = ExecutionContext(metadata={"handle": object()})
        with pytest.raises(ContextDataError, match="metadata"):
            ctx.to_dict()


class TestResults:
    """ToolResult round trips (used for persistence and process pools)."""

    def test_result_round_trip(self) -> None:
        """A result round-trips; the exception is host-only and dropped."""
        result = ToolResult(
            name="t",
            call_id="c",
            invocation_id="i",
            output={"x": [1, 2]},
            is_error=True,
            error="bad",
            exception=ValueError("secret"),
            metadata={"m": 1},
            state_changes={"s": 2},
            duration_ns=10,
        )
        data = json.loads(json.dumps(result_to_dict(result)))
        assert "secret" not in json.dumps(data)
        back = result_from_dict(data)
        assert back == result
        assert back.exception is None


class TestSessionSnapshot:
    """Session.snapshot(): the fields the codec writes, from one moment."""

    def test_copies_every_field_but_the_scope(self) -> None:
        """The copies are the session's values and never change with it."""
        from toolctx import Session

        session = Session("s1", user_id="ada", state={"n": 1}, scope=object())
        snap = session.snapshot()
        assert snap == {
            "id": "s1",
            "user_id": "ada",
            "turn": 0,
            "agent_id": None,
            "state": {"n": 1},
            "metadata": {},
            "values": {},
            "results": [],
            "pending": [],
        }
        session.next_turn()
        assert snap["turn"] == 0
