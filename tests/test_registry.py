"""Registry: insertion order, duplicates, names, definitions, fingerprint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolctx import (
    DuplicateToolError,
    FunctionTool,
    InvalidToolNameError,
    Registry,
    ToolDefinition,
    UnknownToolError,
    tool,
)


@tool
def alpha(x: int) -> int:
    """First tool."""
    return x


@tool
def beta(y: str) -> str:
    """Second tool."""
    return y


@tool
def gamma() -> None:
    """Third tool."""


class TestMapping:
    """The registry reads like an ordered, read-only mapping."""

    def test_insertion_order(self) -> None:
        """Iteration, values and definitions follow registration order."""
        registry = Registry([gamma, alpha, beta])
        assert list(registry) == ["gamma", "alpha", "beta"]
        assert list(registry.values()) == [gamma, alpha, beta]
        assert [d.name for d in registry.definitions()] == list(registry)

    def test_lookup(self) -> None:
        """get, [], in and len behave like a Mapping."""
        registry = Registry([alpha])
        assert isinstance(registry, Mapping)
        assert registry["alpha"] is alpha
        assert registry.get("alpha") is alpha
        assert registry.get("nope") is None
        assert "alpha" in registry
        assert "nope" not in registry
        assert len(registry) == 1
        assert repr(registry) == "<toolctx.Registry(num_tools=1)>"

    def test_missing_key(self) -> None:
        """[] of an unknown name raises UnknownToolError, a KeyError."""
        registry = Registry([alpha])
        with pytest.raises(KeyError) as info:
            registry["nope"]
        assert isinstance(info.value, UnknownToolError)
        assert str(info.value) == (
            "No tool named 'nope' is registered. Registered tools: 'alpha'."
        )


class TestRegistration:
    """register, replace, unregister, @registry.tool."""

    def test_duplicate_raises_and_keeps_original(self) -> None:
        """A second tool under a taken name is refused; nothing changes."""
        registry = Registry([alpha])

        @tool(name="alpha")
        def other(x: int) -> int:
            """Impostor."""
            return -x

        before = registry.fingerprint()
        with pytest.raises(DuplicateToolError, match="replace=True"):
            registry.register(other)
        assert registry["alpha"] is alpha
        assert registry.fingerprint() == before

    def test_replace_keeps_position(self) -> None:
        """replace=True swaps the tool in place."""
        registry = Registry([alpha, beta, gamma])

        @tool(name="beta")
        def beta2(z: float) -> float:
            """Replacement."""
            return z

        registry.register(beta2, replace=True)
        assert list(registry) == ["alpha", "beta", "gamma"]
        assert registry["beta"] is beta2

    def test_unregister_and_reregister_appends(self) -> None:
        """A re-registered name goes to the end."""
        registry = Registry([alpha, beta, gamma])
        assert registry.unregister("alpha") is alpha
        registry.register(alpha)
        assert list(registry) == ["beta", "gamma", "alpha"]

    def test_unregister_unknown(self) -> None:
        """Unregistering an absent name raises UnknownToolError."""
        with pytest.raises(UnknownToolError):
            Registry().unregister("nope")

    def test_decorator_registers(self) -> None:
        """@registry.tool and @registry.tool(...) register as they decorate."""
        registry = Registry()

        @registry.tool
        def one() -> int:
            """One."""
            return 1

        @registry.tool(name="two_renamed", description="Two.")
        def two() -> int:
            return 2

        assert isinstance(one, FunctionTool)
        assert one() == 1
        assert two() == 2
        assert list(registry) == ["one", "two_renamed"]
        assert registry["two_renamed"].definition().description == "Two."

    def test_plain_function_is_wrapped(self) -> None:
        """register() of a typed function wraps it with @tool."""

        def plain(q: str) -> str:
            """Plain."""
            return q

        registry = Registry()
        registry.register(plain)
        assert registry.definitions()[0].parameters["required"] == ["q"]

    def test_non_tool_rejected(self) -> None:
        """Objects that are not tools are a TypeError naming the need."""
        with pytest.raises(TypeError, match="definition"):
            Registry().register(42)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "name",
        ["", "has space", "x" * 65, "dots.no", "é", "add\n", "\nadd", "a\r"],
    )
    def test_invalid_names(self, name: str) -> None:
        """Names outside [a-zA-Z0-9_-]{1,64} are refused, a newline too."""

        class Named:
            def definition(self) -> ToolDefinition:
                return ToolDefinition(name=name)

            def execute(self, args: Mapping[str, Any]) -> None:
                return None

        registry = Registry()
        with pytest.raises(InvalidToolNameError, match="1-64 characters"):
            registry.register(Named())
        assert len(registry) == 0

    def test_trailing_newline_name_refused_by_tool(self) -> None:
        """A tool name ending in a newline is refused: it is checked whole.

        A trailing newline used to pass (``re.match`` with ``$``), and
        providers then refused the whole tool list, or the model could
        never call the tool by its real name.
        """

        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        with pytest.raises(InvalidToolNameError, match=r"'add\\n'"):
            tool(name="add\n")(add)

    def test_invalid_name_message_is_bounded(self) -> None:
        """A huge invalid name is shortened in the message, not echoed."""

        class Named:
            def definition(self) -> ToolDefinition:
                return ToolDefinition(name="x" * 100_000)

            def execute(self, args: Mapping[str, Any]) -> None:
                return None

        with pytest.raises(InvalidToolNameError) as info:
            Registry().register(Named())
        assert len(str(info.value)) < 300
        assert "@tool(name=...)" in str(info.value)

    def test_concurrent_registration(self) -> None:
        """Registering from many threads loses nothing."""
        registry = Registry()

        def make(i: int) -> None:
            def f() -> int:
                return i

            registry.register(tool(name=f"t{i}")(f))

        threads = [
            threading.Thread(target=make, args=(i,)) for i in range(200)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(registry) == 200
        assert len(registry.definitions()) == 200


class TestFingerprint:
    """The fingerprint tracks definitions and order."""

    def test_changes_with_order_and_definitions(self) -> None:
        """Equal registrations agree; order and replacements change it."""
        a = Registry([alpha, beta])
        assert a.fingerprint() == Registry([alpha, beta]).fingerprint()
        assert a.fingerprint() != Registry([beta, alpha]).fingerprint()
        before = a.fingerprint()

        @tool(name="beta", description="Changed.")
        def beta3(y: str) -> str:
            return y

        a.register(beta3, replace=True)
        assert a.fingerprint() != before
        assert len(a.fingerprint()) == 64

    def test_definitions_cached_until_change(self) -> None:
        """definitions() is rebuilt only after a change."""
        registry = Registry([alpha])
        first = registry.definitions()
        assert registry.definitions()[0] is first[0]
        registry.register(beta)
        assert len(registry.definitions()) == 2

    def test_identical_across_hash_seeds(self, tmp_path: Path) -> None:
        """definitions() JSON and fingerprint() are byte-identical per seed."""
        script = tmp_path / "defs.py"
        script.write_text(
            textwrap.dedent(
                '''
                import enum, json
                from typing import Literal, TypedDict
                import attrs
                from toolctx import Registry, tool

                class Color(enum.Enum):
                    RED = "red"
                    BLUE = "blue"

                class Opts(TypedDict, total=False):
                    depth: int
                    tags: set[str]

                @attrs.define
                class Point:
                    x: float
                    y: float = 0.0

                registry = Registry()

                @registry.tool
                def paint(color: Color, where: list[Point], opts: Opts,
                          mode: Literal["fast", "slow"] = "fast",
                          labels: frozenset[str] = frozenset()) -> None:
                    """Paint points.

                    Args:
                        color: The colour.
                        where: Points to paint.
                    """

                @registry.tool
                def lookup(keys: dict[str, int], strict: bool | None = None) -> None:
                    """Look things up."""

                print(json.dumps([d.to_dict() for d in registry.definitions()]))
                print(registry.fingerprint())
                '''
            )
        )
        outputs = set()
        for seed in ["0", "1", "42", "12345", "random"]:
            env = {**os.environ, "PYTHONHASHSEED": seed}
            proc = subprocess.run(
                [sys.executable, str(script)],
                capture_output=True,
                env=env,
                check=True,
            )
            outputs.add(proc.stdout)
        assert len(outputs) == 1
        defs_json, fingerprint = outputs.pop().decode().splitlines()
        assert [d["name"] for d in json.loads(defs_json)] == [
            "paint",
            "lookup",
        ]
        assert len(fingerprint) == 64

    def test_sets_in_schema_values_across_hash_seeds(
        self, tmp_path: Path
    ) -> None:
        """Sets in defaults, examples and consts: one fingerprint per seed.

        pydantic writes a set in ``examples`` or a default in the order
        the set iterates, which ``PYTHONHASHSEED`` decides; the schema
        puts such arrays in one order.
        """
        script = tmp_path / "sets.py"
        script.write_text(
            textwrap.dedent(
                '''
                import json
                from typing import Annotated
                import pydantic
                from pydantic import Field
                from toolctx import Registry, tool

                WORDS = {"red", "green", "blue", "cyan", "teal", "plum"}

                class Tags(pydantic.BaseModel):
                    tags: set[str] = Field(
                        default=frozenset(WORDS), examples=[set(WORDS)]
                    )
                    nested: dict[str, frozenset[str]] = Field(
                        default_factory=lambda: {"k": frozenset(WORDS)},
                        examples=[{"k": frozenset(WORDS)}],
                    )
                    either: set[str] | None = Field(
                        default=None, examples=[set(WORDS)]
                    )

                registry = Registry()

                @registry.tool
                def label(
                    tags: Tags,
                    more: Annotated[str, Field(examples=set(WORDS))] = "red",
                    kept: Tags = Tags(tags=set(WORDS)),
                    words: frozenset[str] = frozenset(WORDS),
                ) -> Tags:
                    """Label a thing."""
                    return tags

                print(json.dumps([d.to_dict() for d in registry.definitions()]))
                print(registry.fingerprint())
                '''
            )
        )
        outputs = set()
        for seed in ["0", "1", "2", "3", "42"]:
            env = {**os.environ, "PYTHONHASHSEED": seed}
            proc = subprocess.run(
                [sys.executable, str(script)],
                capture_output=True,
                env=env,
                check=True,
            )
            outputs.add(proc.stdout)
        assert len(outputs) == 1
        [definition] = json.loads(outputs.pop().decode().splitlines()[0])
        words = sorted(["red", "green", "blue", "cyan", "teal", "plum"])
        tags = definition["parameters"]["$defs"]["Tags"]["properties"]
        assert tags["tags"]["examples"] == [words]
        assert tags["nested"]["examples"] == [{"k": words}]
        assert definition["parameters"]["properties"]["more"]["examples"] == (
            words
        )


def test_unknown_tool_error_is_bounded() -> None:
    """A long list of tools and a long asked-for name stay short."""
    registry = Registry()
    for i in range(40):
        registry.register(tool(lambda: None, name=f"t{i}"))
    with pytest.raises(UnknownToolError) as info:
        registry["x" * 10_000]
    message = str(info.value)
    assert len(message) < 700
    assert message.endswith("'t29' and 10 more.")
