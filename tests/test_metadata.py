"""Tool metadata: a title and behaviour hints, and registry change listeners.

``@tool(title=..., annotations=ToolAnnotations(...))`` puts them in the
definition, in ``to_dict()`` and in the registry's fingerprint; bad values
are refused where they are written. ``Registry.on_change`` tells a host
(the MCP server) after every change, outside the registry's lock.
"""

from __future__ import annotations

import logging
import threading

import pytest

from toolctx import Registry, ToolAnnotations, ToolDefinition, tool


def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class TestTitleAndAnnotations:
    """Title and hints travel in the definition."""

    def test_they_are_in_the_definition_and_its_dict(self) -> None:
        """Only the hints that are set appear in to_dict()."""
        add = tool(
            title="Add numbers",
            annotations=ToolAnnotations(read_only=True, open_world=False),
        )(_add)
        definition = add.definition()
        assert definition.title == "Add numbers"
        assert definition.annotations == ToolAnnotations(
            read_only=True, open_world=False
        )
        data = definition.to_dict()
        assert data["title"] == "Add numbers"
        assert data["annotations"] == {"read_only": True, "open_world": False}

    def test_a_tool_without_them_has_neither(self) -> None:
        """No title, no annotations: the dict is as before."""
        data = tool(_add).definition().to_dict()
        assert "title" not in data
        assert "annotations" not in data

    def test_the_registry_decorator_takes_them(self) -> None:
        """Registry.tool passes them on."""
        registry = Registry()
        registry.tool(
            title="Add", annotations=ToolAnnotations(idempotent=True)
        )(_add)
        definition = registry.definitions()[0]
        assert (definition.title, definition.annotations) == (
            "Add",
            ToolAnnotations(idempotent=True),
        )

    def test_the_fingerprint_covers_them(self) -> None:
        """A new title or hint changes the fingerprint."""
        prints = set()
        for options in (
            {},
            {"title": "Add"},
            {"annotations": ToolAnnotations(read_only=True)},
            {"annotations": ToolAnnotations(read_only=False)},
        ):
            prints.add(Registry([tool(**options)(_add)]).fingerprint())  # type: ignore[call-overload]
        assert len(prints) == 4

    @pytest.mark.parametrize(
        ("options", "error", "message"),
        [
            ({"title": ""}, TypeError, "non-empty string"),
            ({"title": 3}, TypeError, "non-empty string"),
            (
                {"annotations": {"read_only": True}},
                TypeError,
                "takes a toolctx.ToolAnnotations",
            ),
        ],
    )
    def test_bad_values_are_refused(
        self, options: dict[str, object], error: type[Exception], message: str
    ) -> None:
        """The decorator names what is wrong."""
        with pytest.raises(error, match=message):
            tool(**options)(_add)  # type: ignore[call-overload]

    def test_hints_must_be_bools(self) -> None:
        """ToolAnnotations(read_only="yes") is refused."""
        with pytest.raises(TypeError, match="read_only"):
            ToolAnnotations(read_only="yes")  # type: ignore[arg-type]

    def test_a_plain_tool_class_can_set_them(self) -> None:
        """ToolDefinition takes them directly."""
        definition = ToolDefinition(
            name="t", title="T", annotations=ToolAnnotations(destructive=True)
        )
        assert definition.to_dict()["annotations"] == {"destructive": True}


class TestOnChange:
    """Listeners hear every change, after it is made."""

    def test_register_replace_and_unregister(self) -> None:
        """Each change calls the listener once; it sees the new registry."""
        registry = Registry()
        seen: list[list[str]] = []
        registry.on_change(lambda: seen.append(list(registry)))
        registry.register(tool(_add))
        registry.register(tool(_add), replace=True)
        registry.unregister("_add")
        assert seen == [["_add"], ["_add"], []]

    def test_a_refused_change_is_not_announced(self) -> None:
        """A duplicate name raises and calls nobody."""
        registry = Registry([tool(_add)])
        seen: list[int] = []
        registry.on_change(lambda: seen.append(1))
        with pytest.raises(Exception, match="already"):
            registry.register(tool(_add))
        assert seen == []

    def test_unsubscribe(self) -> None:
        """The returned function removes the listener (twice is harmless)."""
        registry = Registry()
        seen: list[int] = []
        stop = registry.on_change(lambda: seen.append(1))
        stop()
        stop()
        registry.register(tool(_add))
        assert seen == []

    def test_a_listener_that_raises_is_logged_and_the_change_stands(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The change is made, later listeners still run, the log says why."""
        registry = Registry()
        seen: list[int] = []

        def broken() -> None:
            raise RuntimeError("listener bug")

        registry.on_change(broken)
        registry.on_change(lambda: seen.append(1))
        with caplog.at_level(logging.ERROR, logger="toolctx"):
            registry.register(tool(_add))
        assert "_add" in registry
        assert seen == [1]
        assert "listener bug" in caplog.text

    def test_a_listener_may_use_the_registry_from_another_thread(self) -> None:
        """Listeners run outside the lock: a thread reading it does not deadlock."""
        registry = Registry()
        seen: list[int] = []

        def listener() -> None:
            reader = threading.Thread(
                target=lambda: seen.append(len(registry.definitions()))
            )
            reader.start()
            reader.join(10)

        registry.on_change(listener)
        registry.register(tool(_add))
        assert seen == [1]

    def test_on_change_takes_a_function(self) -> None:
        """A non-callable is a clear TypeError."""
        with pytest.raises(TypeError, match="function of no arguments"):
            Registry().on_change(None)  # type: ignore[arg-type]
