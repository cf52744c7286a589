"""What crosses processes: a :class:`RemoteCall`, a :class:`RemoteOutcome`.

The parent process derives the call's context and runs the interceptors
as usual, then sends a :class:`RemoteCall` (plain data: picklable, and
JSON-safe through :meth:`RemoteCall.to_dict`) to the worker function
:func:`~toolctx.remote.run_remote`, which sends back a
:class:`RemoteOutcome`; the parent turns it into the
:class:`~toolctx.ToolResult`. Both classes are data with their codecs:
nothing here runs a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

import attrs

from cattrs.gen import override

from toolctx._context.codec import value_from_json
from toolctx._context.execution import ExecutionContext
from toolctx._context.keys import known_key
from toolctx._frozen import CONTEXT_ENVELOPE, ENTRIES, freeze_mapping
from toolctx._records import ToolResult, content_from_json, output_to_json
from toolctx._tools.function import FunctionTool
from toolctx._tools.protocols import Tool
from toolctx.codec import data_hook, record_hooks
from toolctx.exceptions import ContextDataError
from toolctx.remote.references import check_reference, tool_reference


CALL_FORMAT = "toolctx.remote-call/1"
OUTCOME_FORMAT = "toolctx.remote-outcome/1"


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
            fails) always reads generically: see
            :func:`~toolctx.remote.run_remote`.

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
        return _call_from_dict(data)


@final
@attrs.frozen(kw_only=True)
class RemoteOutcome:
    """What :func:`~toolctx.remote.run_remote` sends back: output or error.

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
        data: dict[str, Any] = {
            "format": OUTCOME_FORMAT,
            "output": None,
            "error": self.error,
            "exception_type": self.exception_type,
            "metadata": self.metadata,
            "state_changes": self.state_changes,
            "worker": self.worker,
            "duration_ns": self.duration_ns,
        }
        output_to_json(self.output, data, "the remote output")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RemoteOutcome:
        """Rebuild an outcome from :meth:`to_dict` output.

        Raises:
            ContextDataError: The data is not an outcome of this format.

        .. versionadded:: 0.1.0
        """
        return _outcome_from_dict(data)


_CALL, _OUTCOME = "RemoteCall", "RemoteOutcome"
_call_from_dict = record_hooks(
    RemoteCall,
    CALL_FORMAT,
    _CALL,
    arguments=override(
        struct_hook=data_hook(_CALL, "arguments", envelope=ENTRIES)
    ),
    context=override(
        struct_hook=data_hook(_CALL, "context", envelope=CONTEXT_ENVELOPE)
    ),
)
_outcome_from_dict = record_hooks(
    RemoteOutcome,
    OUTCOME_FORMAT,
    _OUTCOME,
    before=lambda body: content_from_json(body, _OUTCOME),
    exception=override(omit=True),
    output=override(struct_hook=data_hook(_OUTCOME, "output")),
    metadata=override(
        struct_hook=data_hook(_OUTCOME, "metadata", envelope=ENTRIES)
    ),
    state_changes=override(
        struct_hook=data_hook(_OUTCOME, "state_changes", envelope=ENTRIES)
    ),
)


def _typed_entries(entries: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, data in entries.items():
        key = known_key(name)
        if key is None:
            out[name] = data
            continue
        try:
            out[name] = value_from_json(name, data)
        except ContextDataError:
            out[name] = data
    return out
