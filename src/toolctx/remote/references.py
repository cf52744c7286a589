"""Import references: how a worker process finds a tool by name.

A tool crosses processes as ``"package.module:qualname"``:
:func:`tool_reference` finds the reference of a tool in the parent,
:func:`resolve_tool` imports the tool in the worker (once per process),
:func:`resolve_reference` imports any other object a reference names (a
scope loader), and :func:`check_reference` checks the form of one
without importing anything. Nothing here dispatches a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import re
import socket
import sys
import threading
import weakref

from toolctx._text import exception_text
from toolctx._tools.function import FunctionTool, ToolEntry
from toolctx._tools.protocols import Tool
from toolctx._tools.registry import Registry
from toolctx.exceptions import ToolReferenceError, UnknownToolError


_IDENT = r"[A-Za-z_]\w*"
_REFERENCE = re.compile(rf"{_IDENT}(\.{_IDENT})*:{_IDENT}(\.{_IDENT})*")
_HOST = socket.gethostname()

_references: weakref.WeakKeyDictionary[Tool, dict[bool, str]] = (
    weakref.WeakKeyDictionary()
)
_resolved: dict[str, object] = {}
_entries: dict[tuple[str, str], ToolEntry] = {}
_lock = threading.Lock()

# What an import may raise that becomes a ToolReferenceError: any failure,
# sys.exit() and a stray CancelledError included. Interrupts
# (KeyboardInterrupt, GeneratorExit...) propagate: the rule of
# toolctx._dispatch.core.propagates for code that did not await, spelled
# out here because this module sits below the dispatch layer.
_IMPORT_FAILURES = (Exception, SystemExit, asyncio.CancelledError)


def tool_reference(tool: Tool, *, allow_main: bool = False) -> str:
    """Return the import reference a worker process uses to find *tool*.

    The reference is ``"package.module:qualname"``: for a
    :class:`~toolctx.FunctionTool`, where its function is defined (the
    module attribute may be the tool or the plain function); for any
    other tool object, the module-level attribute that holds it.

    Args:
        tool: A registered tool.
        allow_main: Accept a tool defined in ``__main__``. Only process
            pools that re-import the main script in their workers
            (``multiprocessing``) can resolve it; Dask workers cannot.

    Raises:
        TypeError: The tool is defined inside a function or (without
            *allow_main*) in ``__main__``, or is not reachable from its
            module at all; the message says how to fix it.

    Example:
        >>> from toolctx import tool
        >>> def make():
        ...     @tool
        ...     def local() -> str:
        ...         '''Defined in a function.'''
        ...         return "x"
        ...     return local
        >>> try:
        ...     tool_reference(make())
        ... except TypeError as exc:
        ...     print(str(exc).split(",")[0])
        Tool 'local' is defined inside a function

    .. versionadded:: 0.1.0
    """
    try:
        return _references[tool][allow_main]
    except (KeyError, TypeError):  # not cached yet, or not weak-referable
        pass
    ref = _find_reference(tool, allow_main=allow_main)
    with contextlib.suppress(TypeError):
        _references.setdefault(tool, {})[allow_main] = ref
    return ref


def _find_reference(tool: Tool, *, allow_main: bool) -> str:
    if isinstance(tool, FunctionTool):
        name = tool.name
        module = getattr(tool.fn, "__module__", None)
        qualname = getattr(tool.fn, "__qualname__", None)
        accepted: tuple[object, ...] = (tool, tool.fn)
    else:
        name = _tool_name(tool)
        module = type(tool).__module__
        qualname = None
        accepted = (tool,)
    if module == "__main__" and not allow_main:
        msg = (
            f"Tool {name!r} is defined in __main__ (the script being run), "
            "which worker processes cannot import by that name. Move it to "
            "an importable module and import it from the script."
        )
        raise TypeError(msg)
    mod = sys.modules.get(module) if isinstance(module, str) else None
    if mod is not None:
        if qualname is not None and "<locals>" not in qualname:
            found = _walk(mod, qualname)
            if found is tool:
                return f"{module}:{qualname}"
        for obj in accepted:  # prefer the tool object to its function
            for attr, value in vars(mod).items():
                if value is obj:
                    return f"{module}:{attr}"
    raise _unreachable(name, module, qualname, imported=mod is not None)


def _unreachable(
    name: str, module: object, qualname: str | None, *, imported: bool
) -> TypeError:
    if qualname is not None and "<locals>" in qualname:
        where = "is defined inside a function"
    elif not isinstance(module, str):
        where = "does not come from an importable module"
    elif not imported:
        where = f"comes from {module!r}, which is not an imported module"
    else:
        where = f"is not a module-level attribute of {module!r}"
    return TypeError(
        f"Tool {name!r} {where}, so a worker process cannot import it. "
        "Define it at module level in an importable module (for example "
        "`@tool` on a top-level function, or `my_tool = MyTool()`)."
    )


def _tool_name(tool: Tool) -> str:
    try:
        return tool.definition().name
    except Exception:  # noqa: BLE001 - only for the error message
        return type(tool).__qualname__


def _walk(obj: object, qualname: str) -> object:
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def resolve_reference(ref: str, *, what: str = "object") -> object:
    """Import and return the object an import reference names (cached).

    Args:
        ref: ``"package.module:qualname"``.
        what: What the object is, for error messages ("tool"...).

    Raises:
        ToolReferenceError: Malformed reference, module not importable
            or attribute missing.

    .. versionadded:: 0.1.0
    """
    try:
        return _resolved[ref]
    except KeyError:
        pass
    if not _REFERENCE.fullmatch(ref):
        msg = (
            f"Invalid {what} reference {ref!r}: write it as "
            "'package.module:name'."
        )
        raise ToolReferenceError(msg)
    module_name, qualname = ref.split(":")
    try:
        module = importlib.import_module(module_name)
    except _IMPORT_FAILURES as exc:
        msg = (
            f"Cannot import module {module_name!r} for the {what} {ref!r} "
            f"in process {worker_name()}: {exception_text(exc)}. "
            "Make the module importable there (install the package, or "
            "put its folder on sys.path / PYTHONPATH of the workers)."
        )
        raise ToolReferenceError(msg) from None
    obj: object = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            msg = (
                f"Module {module_name!r} has no attribute {qualname!r} "
                f"(the {what} {ref!r}); the worker may run an older "
                "version of the code."
            )
            raise ToolReferenceError(msg) from None
    _resolved[ref] = obj
    return obj


def resolve_tool(ref: str, tool_name: str | None = None) -> Tool:
    """Return the tool an import reference names, once per process.

    The reference may name a tool object (a :class:`~toolctx.FunctionTool`
    or any :class:`~toolctx.Tool`), a plain function (wrapped with
    ``tool(name=tool_name)``), a tool class with a no-argument constructor
    (instantiated once), or a :class:`~toolctx.Registry` (the tool called
    *tool_name* in it).

    Raises:
        ToolReferenceError: The reference does not resolve to a tool, or
            the tool is not called *tool_name*.

    .. versionadded:: 0.1.0
    """
    return tool_entry(ref, tool_name).tool


def tool_entry(ref: str, tool_name: str | None) -> ToolEntry:
    """Return the entry (tool and call plan) *ref* names, once per process.

    :func:`resolve_tool` returns its tool; the worker runs calls with the
    whole entry. *ref* and *tool_name* are as for :func:`resolve_tool`.

    Raises:
        ToolReferenceError: As for :func:`resolve_tool`.
    """
    cache_key = (ref, tool_name or "")
    found = _entries.get(cache_key)
    if found is not None:
        return found
    with _lock:
        found = _entries.get(cache_key)
        if found is None:
            tool = _load_tool(ref, tool_name)
            found = ToolEntry(tool, tool.definition())
            _entries[cache_key] = found
    return found


def _load_tool(ref: str, tool_name: str | None) -> Tool:
    obj = resolve_reference(ref, what="tool")
    if isinstance(obj, Registry):
        if tool_name is None:
            msg = f"{ref!r} is a Registry: say which tool (tool_name)."
            raise ToolReferenceError(msg)
        try:
            return obj[tool_name]
        except UnknownToolError as exc:
            raise ToolReferenceError(str(exc)) from None
    tool: object
    if isinstance(obj, type):
        try:
            tool = obj()
        except Exception as exc:  # noqa: BLE001 - reported with the reference
            msg = (
                f"Cannot instantiate the tool class {ref!r} with no "
                f"arguments: {type(exc).__name__}: {exc}."
            )
            raise ToolReferenceError(msg) from None
    elif inspect.isfunction(obj):
        tool = FunctionTool(obj, name=tool_name)
    else:
        tool = obj
    if not isinstance(tool, Tool):
        msg = (
            f"{ref!r} is a {type(tool).__name__}, not a tool (an object "
            "with definition() and execute(args))."
        )
        raise ToolReferenceError(msg)
    name = tool.definition().name
    if tool_name is not None and name != tool_name:
        msg = (
            f"{ref!r} is the tool {name!r}, not {tool_name!r}; the worker "
            "may run another version of the code."
        )
        raise ToolReferenceError(msg)
    return tool


def worker_name() -> str:
    """Return ``"hostname:pid"`` of this process, for diagnostics.

    .. versionadded:: 0.1.0
    """
    return f"{_HOST}:{os.getpid()}"


def check_reference(value: str, what: str = "reference") -> str:
    """Return *value* if it reads ``"package.module:name"``.

    Checks the form only; nothing is imported.

    Raises:
        ValueError: *value* is not an import reference.

    .. versionadded:: 0.1.0
    """
    text: object = value  # callers pass unchecked input
    if not isinstance(text, str) or not _REFERENCE.fullmatch(text):
        msg = (
            f"{what} must be an import reference 'package.module:name', "
            f"got {value!r}."
        )
        raise ValueError(msg)
    return text
