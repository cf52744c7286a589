"""ContextKey: typed slots with one type per name."""

from __future__ import annotations

import pickle
import re

from typing import Literal, Optional

import pytest

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    ToolCall,
    ToolResult,
    publish,
)
from toolctx.exceptions import ContextKeyConflictError, ContextValueTypeError


class TestDeclaration:
    """Creating keys."""

    def test_same_name_same_type_is_fine(self) -> None:
        """Declaring a key twice with one type is allowed (module reloads)."""
        a = ContextKey("test_keys_same", int)
        b = ContextKey("test_keys_same", int)
        assert a == b
        assert hash(a) == hash(b)

    def test_same_name_other_type_is_an_error(self) -> None:
        """A second key with the same name and another type is refused."""
        ContextKey("test_keys_conflict", int)
        with pytest.raises(ContextKeyConflictError, match="already exists"):
            ContextKey("test_keys_conflict", str)

    def test_empty_name(self) -> None:
        """An empty name is refused."""
        with pytest.raises(TypeError, match="non-empty"):
            ContextKey("", int)

    def test_default_is_checked(self) -> None:
        """A default of the wrong type is refused at creation."""
        with pytest.raises(ContextValueTypeError):
            ContextKey("test_keys_bad_default", int, default="x")  # type: ignore[arg-type]

    def test_immutable_and_picklable(self) -> None:
        """Keys cannot be changed and survive pickling (process pools)."""
        key = ContextKey("test_keys_pickle", int, default=3)
        with pytest.raises(AttributeError):
            key.name = "other"  # type: ignore[misc]
        back = pickle.loads(pickle.dumps(key))
        assert back == key
        assert back.default == 3

    def test_repr(self) -> None:
        """The repr shows name, type and default."""
        key = ContextKey("test_keys_repr", list[int], default=[])
        assert (
            repr(key) == "ContextKey('test_keys_repr', list[int], default=[])"
        )


class TestTypeChecks:
    """with_value checks values against the key's type expression."""

    @pytest.mark.parametrize(
        ("tp", "good", "bad"),
        [
            (int, 1, True),
            (float, 1, "1.0"),
            (str, "x", b"x"),
            (list[int], [1, 2], [1, "2"]),
            (dict[str, int], {"a": 1}, {"a": "1"}),
            (tuple[int, str], (1, "a"), (1, 2)),
            (tuple[int, ...], (1, 2, 3), (1, "2")),
            (frozenset[str], frozenset({"a"}), frozenset({1})),
            (Optional[int], None, "x"),  # noqa: UP045 - the typing form on purpose
            (int | None, 3, 3.5),
            (Literal["a", "b"], "a", "c"),
            (Literal[1], 1, True),
        ],
    )
    def test_checks(self, tp: object, good: object, bad: object) -> None:
        """Values of the type pass; others raise ContextValueTypeError."""
        key: ContextKey[object] = ContextKey(f"test_keys_{tp!r}", tp)
        ctx = ExecutionContext().with_value(key, good)
        assert ctx.get(key) == good
        with pytest.raises(ContextValueTypeError, match=re.escape(key.name)):
            ctx.with_value(key, bad)


class TestPublish:
    """publish() with a key checks the value; interceptors can read it."""

    def test_interceptor_after_reads_published_metadata(self) -> None:
        """An interceptor's after() sees what the tool published."""
        cost = ContextKey("test_keys_cost", float)
        seen: list[object] = []

        class Meter:
            def before(
                self, call: ToolCall, context: ExecutionContext
            ) -> ExecutionContext:
                return context

            def after(
                self,
                call: ToolCall,
                context: ExecutionContext,
                result: ToolResult,
            ) -> ToolResult:
                seen.append(result.metadata.get("test_keys_cost"))
                return result

        registry = Registry()

        @registry.tool
        def pricey() -> str:
            """Publish a cost."""
            publish(cost, 0.25)
            return "ok"

        @registry.tool
        def wrong() -> str:
            """Publish a cost of the wrong type."""
            publish(cost, "free")
            return "never"

        dispatcher = Dispatcher(registry, interceptors=[Meter()])
        assert dispatcher.dispatch(ToolCall("pricey")).metadata == {
            "test_keys_cost": 0.25
        }
        bad = dispatcher.dispatch(ToolCall("wrong"))
        assert bad.is_error
        assert "ContextValueTypeError" in (bad.error or "")
        assert seen == [0.25, None]


class Connection:
    """A host-side object no JSON type describes."""


class TestPythonTypes:
    """Keys hold Python values: any class, any mapping key type."""

    @pytest.mark.parametrize(
        ("tp", "good", "bad"),
        [
            (Connection, Connection(), "conn"),
            (dict[int, str], {1: "a"}, {"1": "a"}),
            (list[Connection], [Connection()], [Connection(), 1]),
            (type[Connection], Connection, Connection()),
            (set[int], {1, 2}, [1, 2]),
        ],
    )
    def test_checks(self, tp: object, good: object, bad: object) -> None:
        """Checked with isinstance and their items, never as JSON."""
        key: ContextKey[object] = ContextKey(f"test_keys_py_{tp!r}", tp)
        ctx = ExecutionContext().with_value(key, good)
        assert ctx.get(key) is good
        with pytest.raises(ContextValueTypeError):
            ctx.with_value(key, bad)

    def test_what_cannot_be_checked_fully_is_checked_as_far_as_it_can(
        self,
    ) -> None:
        """A type variable takes anything; a callable type any callable."""
        from collections.abc import Callable
        from typing import TypeVar

        anything: ContextKey[object] = ContextKey("test_keys_tv", TypeVar("T"))
        assert ExecutionContext().with_value(anything, 3).get(anything) == 3
        hook: ContextKey[object] = ContextKey(
            "test_keys_callable", Callable[[int], str]
        )
        assert ExecutionContext().with_value(hook, str).get(hook) is str
        with pytest.raises(ContextValueTypeError):
            ExecutionContext().with_value(hook, 3)
