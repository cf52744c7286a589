"""``Registry``: an insertion-ordered, thread-safe map of tools."""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import threading

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast, final, overload

from typing_extensions import ParamSpec

from toolctx._records import ToolAnnotations, ToolDefinition
from toolctx._tools.function import (
    ApprovalCheck,
    FunctionTool,
    ToolEntry,
    check_tool_name,
    tool,
)
from toolctx._tools.protocols import Tool
from toolctx.exceptions import DuplicateToolError, UnknownToolError


P = ParamSpec("P")
R = TypeVar("R")

_log = logging.getLogger("toolctx")


@final
class Registry(Mapping[str, Tool]):
    """The tools a model may call, in the order they were registered.

    A read-only mapping from name to tool (iteration yields names in
    insertion order; ``get`` returns None when absent) with registration
    methods. Safe to use from several threads. The order is the order the
    model sees, so the same registrations give byte-identical definitions
    in every process.

    Args:
        tools: Tools to register now, in order.

    Example:
        >>> registry = Registry()
        >>> @registry.tool
        ... def ping() -> str:
        ...     '''Answer pong.'''
        ...     return "pong"
        >>> list(registry), len(registry), "ping" in registry
        (['ping'], 1, True)

    .. versionadded:: 0.1.0
    """

    __slots__ = (
        "_definitions",
        "_entries",
        "_fingerprint",
        "_listeners",
        "_lock",
        "entry",
    )

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = ()
    ) -> None:
        self._entries: dict[str, ToolEntry] = {}
        # The call plan registered for a name, or None (internal): the
        # dict's own get, for the dispatcher's hot path.
        self.entry: Callable[[str], ToolEntry | None] = self._entries.get
        self._lock = threading.RLock()
        self._definitions: tuple[ToolDefinition, ...] | None = None
        self._fingerprint: str | None = None
        self._listeners: tuple[Callable[[], object], ...] = ()
        for t in tools:
            self.register(t)

    # -- Mapping -----------------------------------------------------------

    def __getitem__(self, name: str) -> Tool:
        entry = self._entries.get(name)
        if entry is None:
            raise UnknownToolError(name, list(self._entries))
        return entry.tool

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"<toolctx.Registry(num_tools={len(self._entries)})>"

    # -- registration ------------------------------------------------------

    def register(
        self,
        tool: Tool | Callable[..., Any],
        *,
        replace: bool = False,
        check_arguments: bool = False,
        check_formats: bool = False,
    ) -> Tool:
        """Add *tool* under its definition's name and return it.

        A plain function is wrapped with :func:`toolctx.tool` first. The
        tool's ``definition()`` is read once, here.

        A :func:`toolctx.tool` function's arguments are always checked
        against its parameters. A plain tool (``definition()`` and
        ``execute()``) gets the model's decoded JSON object as it is,
        unchecked, unless *check_arguments* is true: then each call's
        arguments are validated against ``definition().parameters`` with
        the ``jsonschema`` library (extra ``toolctx[jsonschema]``; the
        schema's ``$schema`` draft, by default Draft 2020-12), and
        arguments that do not fit become an error result naming every
        problem by its path, as for a function tool; ``execute`` never
        sees them.

        Args:
            tool: A :class:`~toolctx.Tool` or a typed function.
            replace: Swap out a tool of the same name, keeping its position.
            check_arguments: Validate a plain tool's arguments against its
                own schema (a function tool is checked anyway).
            check_formats: With *check_arguments*, also assert ``format``
                keywords (``date-time``, ``email``, ``uuid``...), which
                Draft 2020-12 treats as annotations; formats whose
                package jsonschema lacks are not checked.

        Raises:
            DuplicateToolError: The name is taken and *replace* is false.
            InvalidToolNameError: The definition's name is not valid.
            TypeError: *tool* is neither a Tool nor a function.
            SchemaError: *check_arguments* is true and the tool's
                parameters are not a valid JSON Schema.
            ImportError: *check_arguments* is true and jsonschema is not
                installed (the message names ``toolctx[jsonschema]``).
            ValueError: *check_formats* without *check_arguments*.

        .. versionadded:: 0.1.0
        """
        if check_formats and not check_arguments:
            msg = (
                "check_formats=True needs check_arguments=True: formats are "
                "checked as part of the schema check."
            )
            raise ValueError(msg)
        if not isinstance(tool, Tool):
            if inspect.isfunction(tool) or inspect.ismethod(tool):
                tool = FunctionTool(tool)
            else:
                msg = (
                    "register() takes a Tool (an object with definition() "
                    "and execute(args)) or a typed function, got "
                    f"{type(tool).__name__}."
                )
                raise TypeError(msg)
        definition = tool.definition()
        if not isinstance(cast("object", definition), ToolDefinition):
            msg = (
                f"{type(tool).__name__}.definition() must return a "
                f"ToolDefinition, got {type(definition).__name__}."
            )
            raise TypeError(msg)
        name = check_tool_name(definition.name)
        check = None
        if check_arguments and not isinstance(tool, FunctionTool):
            from toolctx._tools._schema_arguments import SchemaStructurer

            check = SchemaStructurer(
                definition.parameters,
                owner=f"tool {name!r}",
                formats=check_formats,
            )
        entry = ToolEntry(tool, definition, check=check)
        with self._lock:
            if name in self._entries and not replace:
                raise DuplicateToolError(name)
            self._entries[name] = entry
            self._changed()
        self._notify()
        return tool

    def unregister(self, name: str) -> Tool:
        """Remove the tool called *name* and return it.

        Raises:
            UnknownToolError: No such tool.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            entry = self._entries.pop(name, None)
            if entry is None:
                raise UnknownToolError(name, list(self._entries))
            self._changed()
        self._notify()
        return entry.tool

    def on_change(self, listener: Callable[[], object]) -> Callable[[], None]:
        """Call *listener* after every change; return what unsubscribes it.

        *listener* is called with no arguments after each ``register`` and
        ``unregister`` (replacements included), in the thread that made
        the change, outside the registry's lock (it may read the
        registry). An exception it raises is logged on the ``toolctx``
        logger and does not undo the change or stop other listeners. The
        MCP server uses this to send ``notifications/tools/list_changed``.

        Example:
            >>> registry = Registry()
            >>> seen = []
            >>> stop = registry.on_change(lambda: seen.append(len(registry)))
            >>> @registry.tool
            ... def ping() -> str:
            ...     return "pong"
            >>> stop()
            >>> _ = registry.unregister("ping")
            >>> seen
            [1]

        .. versionadded:: 0.2.0
        """
        if not callable(cast("object", listener)):
            msg = (
                "on_change() takes a function of no arguments, got "
                f"{type(listener).__name__}."
            )
            raise TypeError(msg)
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                kept = list(self._listeners)
                if listener in kept:
                    kept.remove(listener)
                self._listeners = tuple(kept)

        return unsubscribe

    def _changed(self) -> None:
        self._definitions = None
        self._fingerprint = None

    def _notify(self) -> None:
        for listener in self._listeners:
            try:
                listener()
            except Exception:  # noqa: BLE001  # logged; the change stands
                _log.exception(
                    "A Registry.on_change listener (%r) raised; the change "
                    "stands.",
                    listener,
                )

    @overload
    def tool(self, fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
    @overload
    def tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        requires: Iterable[str] = (),
        timeout: float | None = None,
        inline: bool = False,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
        needs_approval: ApprovalCheck = False,
        replace: bool = False,
    ) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
    def tool(  # type: ignore[misc]  # mypy quirk: ParamSpec overloads on methods
        self,
        fn: Callable[P, R] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        requires: Iterable[str] = (),
        timeout: float | None = None,
        inline: bool = False,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
        needs_approval: ApprovalCheck = False,
        replace: bool = False,
    ) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
        """Like :func:`toolctx.tool`, and register the result here.

        .. versionadded:: 0.1.0
        """

        def decorate(f: Callable[P, R]) -> FunctionTool[P, R]:
            made = tool(
                name=name,
                description=description,
                requires=requires,
                timeout=timeout,
                inline=inline,
                title=title,
                annotations=annotations,
                needs_approval=needs_approval,
            )(f)
            self.register(made, replace=replace)
            return made

        if fn is not None:
            return decorate(fn)
        return decorate

    # -- what the model sees -----------------------------------------------

    def definitions(self) -> list[ToolDefinition]:
        """Return every tool's definition, in registration order.

        Built once and cached until the registry changes.

        .. versionadded:: 0.1.0
        """
        defs = self._definitions
        if defs is None:
            with self._lock:
                defs = tuple(e.definition for e in self._entries.values())
                self._definitions = defs
        return list(defs)

    def fingerprint(self) -> str:
        """Return a stable SHA-256 hex digest of the ordered definitions.

        Equal for equal registrations in any process (whatever
        ``PYTHONHASHSEED``); different after any change of a definition or
        of the order. Use it as (part of) a prompt-cache key.

        .. versionadded:: 0.1.0
        """
        fp = self._fingerprint
        if fp is None:
            with self._lock:
                fp = digest([d.to_dict() for d in self.definitions()])
                self._fingerprint = fp
        return fp


def digest(data: object) -> str:
    """A stable SHA-256 hex digest of JSON *data* (keys in their order)."""
    payload = json.dumps(
        data, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return hashlib.sha256(payload.encode()).hexdigest()
