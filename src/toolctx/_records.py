"""The plain records that cross the dispatcher: definitions, calls, results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

import attrs

from toolctx._frozen import freeze_mapping


_EMPTY = freeze_mapping({}, "ToolResult.metadata")
_NO_CHANGES = freeze_mapping({}, "ToolResult.state_changes")


@final
@attrs.frozen(kw_only=True)
class ToolDefinition:
    """What a model is told about a tool.

    Attributes:
        name: The tool's name, ``^[a-zA-Z0-9_-]{1,64}$``.
        description: What the tool does, for the model.
        parameters: A JSON Schema (Draft 2020-12) object describing the
            arguments. Keys are in a deterministic order.
        output_schema: The JSON Schema of the tool's output, from its
            return annotation (for a streaming tool: the array of its
            chunks); None when the return is unannotated, ``Any``, ``None``
            or of a type without a JSON Schema.

    .. versionadded:: 0.1.0
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(
        factory=lambda: {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
    )
    output_schema: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the definition as plain JSON data.

        ``{"name", "description", "parameters"}``, and ``"output_schema"``
        when the tool has one.

        .. versionadded:: 0.1.0
        """
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.output_schema is not None:
            data["output_schema"] = self.output_schema
        return data


@final
@attrs.frozen
class ToolCall:
    """One tool call the model asked for.

    Attributes:
        name: The tool's name as the model wrote it.
        arguments: The model's arguments: JSON text (``str`` or UTF-8
            ``bytes``), an already-decoded mapping, or None for ``{}``.
            Whatever it holds is model output: malformed or hostile
            content becomes an error result, never an exception.
        id: The provider's call id (``tool_call_id``), if any.

    .. versionadded:: 0.1.0
    """

    name: str
    arguments: str | bytes | Mapping[str, Any] | None = None
    id: str | None = None


@final
@attrs.frozen(kw_only=True)
class ToolResult:
    """The outcome of one dispatched call.

    Attributes:
        name: The tool's name.
        call_id: The model's call id (:attr:`ToolCall.id`).
        invocation_id: The id the dispatcher gave this invocation.
        output: The tool's return value as JSON-safe data (None for
            errors).
        is_error: Whether the call failed.
        error: A short message a model can act on, or None.
        exception: The original exception (host-only, never rendered).
        metadata: Host-only result metadata from :func:`toolctx.publish`.
        state_changes: Session state changes from
            :func:`toolctx.set_state`, in the order they were made.
        duration_ns: Wall time of the call in nanoseconds.

    .. versionadded:: 0.1.0
    """

    name: str
    call_id: str | None = None
    invocation_id: str = ""
    output: Any = None
    is_error: bool = False
    error: str | None = None
    exception: BaseException | None = attrs.field(
        default=None, repr=False, eq=False
    )
    metadata: Mapping[str, Any] = attrs.field(default=_EMPTY, repr=False)
    state_changes: Mapping[str, Any] = attrs.field(
        default=_NO_CHANGES, repr=False
    )
    duration_ns: int = attrs.field(default=0, eq=False)

    @property
    def content(self) -> Any:
        """What the model should see: the error message or the output.

        .. versionadded:: 0.1.0
        """
        return self.error if self.is_error else self.output


@final
@attrs.frozen(kw_only=True)
class ToolChunk:
    """One piece of partial output from a streaming tool.

    :meth:`Dispatcher.stream` and :meth:`Dispatcher.astream` yield these
    while a generator tool runs, then the final :class:`ToolResult`.

    Attributes:
        name: The tool's name.
        call_id: The model's call id.
        invocation_id: The invocation the chunk belongs to.
        index: 0 for the first chunk, then 1, 2, ...
        data: The yielded value as JSON-safe data.

    .. versionadded:: 0.1.0
    """

    name: str
    call_id: str | None = None
    invocation_id: str = ""
    index: int = 0
    data: Any = None


def _result_slot(name: str) -> Any:
    return ToolResult.__dict__[name].__set__


_new_result = object.__new__
_set_name = _result_slot("name")
_set_call_id = _result_slot("call_id")
_set_invocation_id = _result_slot("invocation_id")
_set_output = _result_slot("output")
_set_is_error = _result_slot("is_error")
_set_error = _result_slot("error")
_set_exception = _result_slot("exception")
_set_metadata = _result_slot("metadata")
_set_state_changes = _result_slot("state_changes")
_set_duration_ns = _result_slot("duration_ns")
if [f.name for f in attrs.fields(ToolResult)] != [
    "name",
    "call_id",
    "invocation_id",
    "output",
    "is_error",
    "error",
    "exception",
    "metadata",
    "state_changes",
    "duration_ns",
]:  # pragma: no cover - guards new_result against new fields
    msg = "new_result() must set every ToolResult field."
    raise AssertionError(msg)


def new_result(  # noqa: PLR0917 - hot path, positional on purpose
    name: str,
    call_id: str | None,
    invocation_id: str,
    output: Any,
    is_error: bool,
    error: str | None,
    exception: BaseException | None,
    metadata: Mapping[str, Any],
    state_changes: Mapping[str, Any],
    duration_ns: int,
) -> ToolResult:
    """Build a ToolResult from already-frozen parts, skipping ``__init__``.

    The dispatcher makes one per call; this costs half of the generated
    frozen ``__init__``. Callers pass read-only mappings.
    """
    result: ToolResult = _new_result(ToolResult)
    _set_name(result, name)
    _set_call_id(result, call_id)
    _set_invocation_id(result, invocation_id)
    _set_output(result, output)
    _set_is_error(result, is_error)
    _set_error(result, error)
    _set_exception(result, exception)
    _set_metadata(result, metadata)
    _set_state_changes(result, state_changes)
    _set_duration_ns(result, duration_ns)
    return result


def frozen_view(result: ToolResult) -> ToolResult:
    """Return *result* as later calls see it in ``prior_results``.

    Output, metadata and state changes are deep-frozen copies, so a later
    tool cannot change what the host renders for an earlier call.
    """
    from toolctx._frozen import deep_freeze

    return attrs.evolve(
        result,
        output=deep_freeze(result.output, "A prior result's output"),
        metadata=freeze_mapping(
            dict(result.metadata), "A prior result's metadata"
        ),
        state_changes=freeze_mapping(
            dict(result.state_changes), "A prior result's state_changes"
        ),
    )
