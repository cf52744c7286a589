"""Run tool calls in other processes: process pools, Dask clusters.

The parent process derives the call's context and runs the interceptors
as usual, then sends a :class:`RemoteCall` (plain data: picklable, and
JSON-safe through :meth:`RemoteCall.to_dict`) to :func:`run_remote` in a
worker. The worker imports the tool by reference, rebuilds the context
(the runtime ``scope`` never crosses a process: a *scope loader* rebuilds
it from the serialized identity), binds it exactly like the dispatcher
does, runs the tool and returns a :class:`RemoteOutcome`, which the
parent turns into the :class:`~toolctx.ToolResult`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import pickle
import re
import socket
import sys
import threading
import weakref

from collections.abc import Awaitable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from time import perf_counter_ns
from typing import Any, final

import attrs

from toolctx._frozen import freeze_mapping
from toolctx._records import ToolCall, ToolResult
from toolctx._text import exception_text
from toolctx._types.decode import DEFAULT_LIMITS
from toolctx.context.codec import check_format, mapping_field, value_to_json
from toolctx.context.execution import (
    CallRecorder,
    ExecutionContext,
    derive_call_context,
)
from toolctx.context.keys import known_key
from toolctx.dispatch.core import Core, Prepared
from toolctx.dispatch.run import run_sync
from toolctx.dispatch.steps import (
    Failure,
    decode_arguments,
    propagates,
    run_to_end,
    structure,
    tool_failure,
    with_timeout,
)
from toolctx.exceptions import (
    ContextDataError,
    ScopeError,
    ToolArgumentsError,
    ToolReferenceError,
    UnknownToolError,
)
from toolctx.tools.arguments import structure_value
from toolctx.tools.function import FunctionTool, ToolEntry
from toolctx.tools.protocols import Tool
from toolctx.tools.registry import Registry


CALL_FORMAT = "toolctx.remote-call/1"
OUTCOME_FORMAT = "toolctx.remote-outcome/1"

_IDENT = r"[A-Za-z_]\w*"
_REFERENCE = re.compile(rf"{_IDENT}(\.{_IDENT})*:{_IDENT}(\.{_IDENT})*")
_HOST = socket.gethostname()

_references: weakref.WeakKeyDictionary[Tool, dict[bool, str]] = (
    weakref.WeakKeyDictionary()
)
_resolved: dict[str, object] = {}
_entries: dict[tuple[str, str], ToolEntry] = {}
_lock = threading.Lock()


# -- references --------------------------------------------------------------


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
    except BaseException as exc:  # any import failure, sys.exit() included
        if propagates(exc, awaited=False):
            raise
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
    return _entry(ref, tool_name).tool


def _entry(ref: str, tool_name: str | None) -> ToolEntry:
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


# -- the payloads ------------------------------------------------------------


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


def _check_reference(_: object, attribute: Any, value: str) -> None:
    check_reference(value, attribute.name)


def _check_timeout(_: object, __: Any, value: float | None) -> None:
    if value is not None and not value > 0:
        msg = f"timeout must be positive seconds, got {value!r}."
        raise ValueError(msg)


def _as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    return dict(value)


@final
@attrs.frozen(kw_only=True)
class RemoteCall:
    """One tool call to run in another process, as plain data.

    Picklable (for ``concurrent.futures`` and Dask) and JSON-safe through
    :meth:`to_dict` (for queues and other transports).

    Attributes:
        tool_ref: Import reference of the tool, ``"package.module:name"``
            (see :func:`tool_reference`).
        tool_name: The tool's registered name.
        arguments: The model's decoded JSON arguments; the worker
            validates them with the tool's own rules.
        context: The call's context, as ``ExecutionContext.to_dict()``
            (ids already assigned by the parent).
        scope_loader: Import reference of a worker-side function
            ``(ExecutionContext) -> object`` that rebuilds the scope, or
            None (the scope is then None in the worker).
        timeout: Seconds an async tool may run in the worker, or None.
        include_exception_messages: Put the type and message of an
            exception the tool raised in the error the model sees, as the
            dispatcher option does. A call the worker cannot set up (the
            tool or the scope loader does not import, the scope loader
            fails) always reads generically: see :func:`run_remote`.

    .. versionadded:: 0.1.0
    """

    tool_ref: str = attrs.field(validator=_check_reference)
    tool_name: str = attrs.field(validator=attrs.validators.instance_of(str))
    arguments: dict[str, Any] = attrs.field(factory=dict, converter=_as_dict)
    context: dict[str, Any] = attrs.field(converter=_as_dict)
    scope_loader: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(_check_reference)
    )
    timeout: float | None = attrs.field(default=None, validator=_check_timeout)
    include_exception_messages: bool = True

    @classmethod
    def for_tool(
        cls,
        tool: Tool,
        arguments: Mapping[str, Any],
        context: ExecutionContext,
        *,
        scope_loader: str | None = None,
        timeout: float | None = None,
        include_exception_messages: bool = True,
        allow_main: bool = False,
    ) -> RemoteCall:
        """Build the payload for running *tool* under *context* elsewhere.

        Raises:
            TypeError: The tool cannot be imported by reference (see
                :func:`tool_reference`).
            ContextDataError: The context holds data with no JSON form.

        .. versionadded:: 0.1.0
        """
        name = (
            tool.name
            if isinstance(tool, FunctionTool)
            else tool.definition().name
        )
        return cls(
            tool_ref=tool_reference(tool, allow_main=allow_main),
            tool_name=name,
            arguments=arguments,
            context=context.to_dict(),
            scope_loader=scope_loader,
            timeout=timeout,
            include_exception_messages=include_exception_messages,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return this call as JSON-safe data.

        .. versionadded:: 0.1.0
        """
        return {
            "format": CALL_FORMAT,
            "tool_ref": self.tool_ref,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "context": self.context,
            "scope_loader": self.scope_loader,
            "timeout": self.timeout,
            "include_exception_messages": self.include_exception_messages,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RemoteCall:
        """Rebuild a call from :meth:`to_dict` output.

        Raises:
            ContextDataError: The data is not a remote call of this format.

        .. versionadded:: 0.1.0
        """
        data = check_format(data, CALL_FORMAT, "RemoteCall")
        timeout = data.get("timeout")
        if isinstance(timeout, int) and not isinstance(timeout, bool):
            timeout = float(timeout)
        try:
            return cls(
                tool_ref=data.get("tool_ref"),  # type: ignore[arg-type]
                tool_name=data.get("tool_name"),  # type: ignore[arg-type]
                arguments=mapping_field(data, "arguments", "RemoteCall"),
                context=mapping_field(data, "context", "RemoteCall"),
                scope_loader=data.get("scope_loader"),
                timeout=timeout,
                include_exception_messages=data.get(
                    "include_exception_messages", True
                )
                is not False,
            )
        except (TypeError, ValueError) as exc:
            msg = f"Invalid RemoteCall data: {exc}"
            raise ContextDataError(msg) from None


@final
@attrs.frozen(kw_only=True)
class RemoteOutcome:
    """What :func:`run_remote` sends back: the output or the error.

    Picklable and JSON-safe (through :meth:`to_dict`, which drops
    ``exception``). ``metadata`` and ``state_changes`` hold JSON data;
    :meth:`to_result` turns values published under a known
    :class:`~toolctx.ContextKey` back into the key's type.

    Attributes:
        output: The tool's return value as JSON data (None on error).
        error: The model-readable error message, or None on success.
        exception_type: ``module.QualName`` of the exception, or None.
        exception: The original exception when it survives pickling,
            else None (host-only).
        metadata: What the tool published (:func:`toolctx.publish`).
        state_changes: What the tool set (:func:`toolctx.set_state`);
            empty on error, as on a local error result.
        worker: ``"hostname:pid"`` of the process that ran the call.
        duration_ns: Time spent in the worker, in nanoseconds.

    .. versionadded:: 0.1.0
    """

    output: Any = None
    error: str | None = None
    exception_type: str | None = None
    exception: BaseException | None = attrs.field(
        default=None, eq=False, repr=False
    )
    metadata: dict[str, Any] = attrs.field(factory=dict, converter=_as_dict)
    state_changes: dict[str, Any] = attrs.field(
        factory=dict, converter=_as_dict
    )
    worker: str = ""
    duration_ns: int = attrs.field(default=0, eq=False)

    @property
    def is_error(self) -> bool:
        """Whether the call failed.

        .. versionadded:: 0.1.0
        """
        return self.error is not None

    def typed_metadata(self) -> dict[str, Any]:
        """Return ``metadata`` with values of known keys in their type.

        A value published under a :class:`~toolctx.ContextKey` that this
        process knows comes back as the key's type (an attrs class, an
        enum...); other values stay JSON data.

        .. versionadded:: 0.1.0
        """
        return _typed_entries(self.metadata)

    def typed_state_changes(self) -> dict[str, Any]:
        """Return ``state_changes`` with values of known keys in their type.

        .. versionadded:: 0.1.0
        """
        return _typed_entries(self.state_changes)

    def to_result(
        self,
        *,
        name: str,
        call_id: str | None,
        invocation_id: str,
        duration_ns: int | None = None,
    ) -> ToolResult:
        """Return the :class:`~toolctx.ToolResult` for this outcome.

        Args:
            name: The tool's name.
            call_id: The model's call id.
            invocation_id: The id the parent assigned to the call.
            duration_ns: The call's wall time as the parent saw it;
                defaults to the time spent in the worker.

        .. versionadded:: 0.1.0
        """
        return ToolResult(
            name=name,
            call_id=call_id,
            invocation_id=invocation_id,
            output=self.output,
            is_error=self.error is not None,
            error=self.error,
            exception=self.exception,
            metadata=freeze_mapping(
                self.typed_metadata(), "ToolResult.metadata", deep=False
            ),
            state_changes=freeze_mapping(
                self.typed_state_changes(),
                "ToolResult.state_changes",
                deep=False,
            ),
            duration_ns=self.duration_ns
            if duration_ns is None
            else duration_ns,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return this outcome as JSON-safe data; ``exception`` is dropped.

        .. versionadded:: 0.1.0
        """
        return {
            "format": OUTCOME_FORMAT,
            "output": self.output,
            "error": self.error,
            "exception_type": self.exception_type,
            "metadata": self.metadata,
            "state_changes": self.state_changes,
            "worker": self.worker,
            "duration_ns": self.duration_ns,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RemoteOutcome:
        """Rebuild an outcome from :meth:`to_dict` output.

        Raises:
            ContextDataError: The data is not an outcome of this format.

        .. versionadded:: 0.1.0
        """
        what = "RemoteOutcome"
        data = check_format(data, OUTCOME_FORMAT, what)
        text: dict[str, str | None] = {}
        for name in ("error", "exception_type", "worker"):
            value = data.get(name)
            if value is not None and type(value) is not str:
                msg = f"{what} field {name!r} must be a string or null."
                raise ContextDataError(msg)
            text[name] = value
        duration = data.get("duration_ns") or 0
        if type(duration) is not int:
            msg = f"{what} field 'duration_ns' must be an integer."
            raise ContextDataError(msg)
        return cls(
            output=data.get("output"),
            error=text["error"],
            exception_type=text["exception_type"],
            metadata=mapping_field(data, "metadata", what),
            state_changes=mapping_field(data, "state_changes", what),
            worker=text["worker"] or "",
            duration_ns=duration,
        )


def _json_entries(
    entries: dict[str, object] | None, what: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in (entries or {}).items():
        try:
            out[name] = value_to_json(name, value)
        except ContextDataError as exc:
            msg = (
                f"Cannot send the {what} {name!r} back from the worker: "
                f"{str(exc).rstrip('.')}. Only values with a JSON form "
                "cross processes."
            )
            raise ContextDataError(msg) from None
    return out


def _typed_entries(entries: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, data in entries.items():
        key = known_key(name)
        if key is None:
            out[name] = data
            continue
        try:
            out[name] = structure_value(data, key.type)
        except (ToolArgumentsError, TypeError):
            out[name] = data
    return out


# -- the worker --------------------------------------------------------------


def run_remote(call: RemoteCall) -> RemoteOutcome:
    """Run one :class:`RemoteCall` in this process; the worker function.

    Imports the tool, rebuilds the context (the scope through
    ``call.scope_loader``, else None), validates the arguments with the
    tool's own rules, binds the context as a dispatched call with the
    parent's ids (so ``publish`` and ``set_state`` work), runs the tool
    like :meth:`Dispatcher.dispatch` does (an ``async`` tool in its own
    event loop, within ``call.timeout``; a generator tool to the end), and
    unbinds the context whatever happens.

    Tool-level failures come back as an error outcome; this function does
    not raise for them. Whatever the tool raises is one, ``SystemExit``,
    ``StopIteration`` and a ``CancelledError`` of its own included (no
    caller can cancel a call here); only ``KeyboardInterrupt`` and the
    like propagate. A call the worker cannot set up (the tool or the scope
    loader does not import, the context data is corrupt, the scope loader
    fails) is an error outcome too, whose ``error`` is a generic message
    whatever ``call.include_exception_messages`` says: the details name
    modules, processes and what the host's loader said, which are for the
    host only, on ``exception``.

    .. versionadded:: 0.1.0
    """
    start = perf_counter_ns()
    recorder = CallRecorder()
    call_id = call.context.get("tool_call_id")
    request = ToolCall(
        call.tool_name,
        call.arguments,
        call_id if isinstance(call_id, str) else None,
    )
    try:
        entry = _entry(call.tool_ref, call.tool_name)
        ctx = _restore(call, recorder)
    except BaseException as exc:
        if propagates(exc, awaited=False):
            raise
        return _failed(_setup_failure(request, exc), recorder, start)
    detail = call.include_exception_messages
    core = Core(
        {request.name: entry}.get,
        lambda: [request.name],
        (),
        DEFAULT_LIMITS,
        detail=detail,
    )
    try:
        decoded = decode_arguments(request, entry, DEFAULT_LIMITS)
        structurer = entry.structurer
        args = (
            decoded
            if structurer is None
            else structure(request, structurer, decoded)
        )
        for name in entry.context_parameters:
            args[name] = ctx
    except Failure as failure:
        return _failed(failure, recorder, start)
    prepared = Prepared(request, ctx, entry, args, decoded, 0, start)
    result = run_sync(core, prepared, partial(_run_async, call=call))
    if result.is_error:
        raised = result.exception
        hinted = (
            None if raised is None else _with_scope_hint(raised, call, ctx)
        )
        return _failed(
            Failure(result.error or "", raised)
            if hinted is None or hinted is raised
            else tool_failure(request, hinted, detail=detail),
            recorder,
            start,
        )
    try:
        metadata = _json_entries(recorder.metadata, "published value")
        changes = _json_entries(recorder.state_changes, "state change")
    except ContextDataError as exc:
        return _failed(
            tool_failure(request, exc, detail=detail), recorder, start
        )
    return RemoteOutcome(
        output=result.output,
        metadata=metadata,
        state_changes=changes,
        worker=worker_name(),
        duration_ns=perf_counter_ns() - start,
    )


def _restore(call: RemoteCall, recorder: CallRecorder) -> ExecutionContext:
    base = ExecutionContext.from_dict(call.context)
    if call.scope_loader is not None:
        base = attrs.evolve(base, scope=_load_scope(call.scope_loader, base))
    return derive_call_context(
        base,
        base.invocation_id,
        call.tool_name,
        base.tool_call_id,
        base.parent_invocation_id,
        recorder,
    )


def _load_scope(ref: str, ctx: ExecutionContext) -> object:
    """Call the scope loader *ref*; its failures become a ScopeError.

    The messages are for the host (``ToolResult.exception``): they say
    which loader failed where and quote its error, bounded.
    """
    loader = resolve_reference(ref, what="scope loader")
    if not callable(loader):
        msg = f"The scope loader {ref!r} is not callable."
        raise ScopeError(msg)
    try:
        scope = loader(ctx)
    except BaseException as exc:
        if propagates(exc, awaited=False):
            raise
        msg = (
            f"The scope loader {ref!r} failed in process {worker_name()}: "
            f"{exception_text(exc)}"
        )
        raise ScopeError(msg) from exc
    if inspect.isawaitable(scope):
        if inspect.iscoroutine(scope):
            scope.close()
        msg = (
            f"The scope loader {ref!r} must be a plain function returning "
            "the scope, not a coroutine function."
        )
        raise ScopeError(msg)
    return scope


def _run_async(value: Awaitable[Any], call: RemoteCall) -> Any:
    main = (
        value
        if call.timeout is None
        else with_timeout(value, call.timeout, call.tool_name)
    )
    if asyncio.events._get_running_loop() is None:  # noqa: SLF001
        return run_to_end(main)
    # A loop runs in this thread (an async host calling in-process), and
    # asyncio.run() cannot nest: finish in a helper thread that sees the
    # bound context.
    with ThreadPoolExecutor(1, thread_name_prefix="toolctx-remote") as pool:
        return pool.submit(copy_context().run, run_to_end, main).result()


def _with_scope_hint(
    exc: BaseException, call: RemoteCall, ctx: ExecutionContext
) -> BaseException:
    """Say why the scope is missing when it was never rebuilt."""
    if (
        not isinstance(exc, ScopeError)
        or call.scope_loader is not None
        or ctx.scope is not None
    ):
        return exc
    hinted = ScopeError(
        f"{exc} The scope never crosses to a worker process: give the "
        "dispatcher (or the RemoteCall) a scope_loader, the import "
        "reference 'package.module:function' of a function that takes the "
        "ExecutionContext and returns the scope, and the worker rebuilds it "
        "there."
    )
    hinted.__cause__ = exc
    return hinted


def _setup_failure(request: ToolCall, exc: BaseException) -> Failure:
    """The failure for a call the worker could not set up; *exc* kept.

    The tool never ran, and nothing in the arguments caused it: the model
    reads that, and what to do. Why (a module that does not import, the
    host's scope loader failing, the worker's ``hostname:pid``) is for the
    host, on ``ToolResult.exception``.
    """
    return Failure(
        f"Tool {request.name!r} could not run: the host could not set up "
        "the call. The arguments are not the cause, so do not retry with "
        "other ones; tell the user the tool is unavailable right now.",
        exc,
    )


def _failed(
    failure: Failure, recorder: CallRecorder, start: int
) -> RemoteOutcome:
    try:
        metadata = _json_entries(recorder.metadata, "published value")
    except ContextDataError:
        metadata = {}
    exc = failure.exception
    return RemoteOutcome(
        error=failure.message,
        exception_type=None if exc is None else _type_name(exc),
        exception=None if exc is None else _portable(exc),
        metadata=metadata,
        worker=worker_name(),
        duration_ns=perf_counter_ns() - start,
    )


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _portable(exc: BaseException) -> BaseException | None:
    """Return *exc* if a pickled copy comes back equal, else None."""
    try:
        copy = pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes
        same = type(copy) is type(exc) and str(copy) == str(exc)
    except Exception:  # noqa: BLE001 - unpicklable or unprintable: send none
        return None
    return exc if same else None
