"""JSON-safe round trips of contexts and results (``to_dict``/``from_dict``).

The format is versioned (``"format": "toolctx.context/1"``). ``scope`` is
runtime-only and never written. Typed values are unstructured by their
key's type and structured back to it; a value whose key is not known in
the loading process is kept as :class:`RawValue` and written back as it
came, so nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolctx._arguments import (
    structure_value,
    unstructure_output,
    unstructure_value,
)
from toolctx._context import ExecutionContext
from toolctx._keys import RawValue, known_key
from toolctx._records import ToolResult
from toolctx.exceptions import ContextDataError, ToolArgumentsError


CONTEXT_FORMAT = "toolctx.context/1"
RESULT_FORMAT = "toolctx.result/1"

_OPTIONAL_STR = (
    "invocation_id",
    "session_id",
    "user_id",
    "agent_id",
    "tool_name",
    "tool_call_id",
    "parent_invocation_id",
)


def _json(value: object, where: str) -> Any:
    try:
        return unstructure_output(value)
    except TypeError as exc:
        msg = f"Cannot serialize {where}: {exc}"
        raise ContextDataError(msg) from None


def context_to_dict(ctx: ExecutionContext) -> dict[str, Any]:
    """Return *ctx* as JSON-safe data; ``scope`` is dropped."""
    values: dict[str, Any] = {}
    for name, value in ctx.values.items():
        if type(value) is RawValue:
            values[name] = value.data
            continue
        key = known_key(name)
        try:
            values[name] = (
                unstructure_output(value)
                if key is None
                else unstructure_value(value, key.type)
            )
        except TypeError as exc:
            msg = f"Cannot serialize the typed value {name!r}: {exc}"
            raise ContextDataError(msg) from None
    return {
        "format": CONTEXT_FORMAT,
        "invocation_id": ctx.invocation_id,
        "session_id": ctx.session_id,
        "turn": ctx.turn,
        "user_id": ctx.user_id,
        "agent_id": ctx.agent_id,
        "tool_name": ctx.tool_name,
        "tool_call_id": ctx.tool_call_id,
        "parent_invocation_id": ctx.parent_invocation_id,
        "metadata": _json(ctx.metadata, "metadata"),
        "state": _json(ctx.state, "state"),
        "prior_results": [result_to_dict(r) for r in ctx.prior_results],
        "values": values,
    }


def _check_format(data: object, expected: str, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        msg = f"{what}.from_dict() takes a mapping, got {type(data).__name__}."
        raise ContextDataError(msg)
    fmt = data.get("format")
    if fmt != expected:
        msg = (
            f"Unsupported {what} data format {fmt!r}; this version of "
            f"toolctx reads {expected!r}."
        )
        raise ContextDataError(msg)
    return data


def _field(data: Mapping[str, Any], name: str, kind: type, what: str) -> Any:
    value = data.get(name)
    if value is None:
        return None
    if type(value) is not kind:
        msg = (
            f"{what} field {name!r} must be {kind.__name__} or null, got "
            f"{value!r}."
        )
        raise ContextDataError(msg)
    return value


def _mapping(data: Mapping[str, Any], name: str, what: str) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"{what} field {name!r} must be an object, got {value!r}."
        raise ContextDataError(msg)
    return dict(value)


def context_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> ExecutionContext:
    """Rebuild a context from :func:`context_to_dict` output."""
    what = "ExecutionContext"
    data = _check_format(data, CONTEXT_FORMAT, what)
    fields: dict[str, Any] = {
        name: _field(data, name, str, what) for name in _OPTIONAL_STR
    }
    if fields["invocation_id"] is None:
        del fields["invocation_id"]
    turn = data.get("turn", 0)
    if type(turn) is not int:
        msg = f"{what} field 'turn' must be an integer, got {turn!r}."
        raise ContextDataError(msg)
    values: dict[str, Any] = {}
    for name, raw in _mapping(data, "values", what).items():
        key = known_key(name)
        if key is None:
            values[name] = RawValue(raw)
            continue
        try:
            values[name] = structure_value(raw, key.type)
        except ToolArgumentsError as exc:
            msg = f"Typed value {name!r} does not fit its key: {exc}"
            raise ContextDataError(msg) from None
    results = data.get("prior_results")
    if results is None:
        results = []
    if not isinstance(results, list):
        msg = f"{what} field 'prior_results' must be a list."
        raise ContextDataError(msg)
    return ExecutionContext(
        **fields,
        turn=turn,
        metadata=_mapping(data, "metadata", what),
        state=_mapping(data, "state", what),
        prior_results=tuple(result_from_dict(r) for r in results),
        values=values,
        scope=scope,
    )


def result_to_dict(result: ToolResult) -> dict[str, Any]:
    """Return *result* as JSON-safe data; ``exception`` is dropped."""
    return {
        "format": RESULT_FORMAT,
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": _json(result.output, "the result output"),
        "is_error": result.is_error,
        "error": result.error,
        "metadata": _json(result.metadata, "the result metadata"),
        "state_changes": _json(result.state_changes, "the state changes"),
        "duration_ns": result.duration_ns,
    }


def result_from_dict(data: Mapping[str, Any]) -> ToolResult:
    """Rebuild a result from :func:`result_to_dict` output."""
    what = "ToolResult"
    data = _check_format(data, RESULT_FORMAT, what)
    name = data.get("name")
    if type(name) is not str:
        msg = f"{what} field 'name' must be a string, got {name!r}."
        raise ContextDataError(msg)
    return ToolResult(
        name=name,
        call_id=_field(data, "call_id", str, what),
        invocation_id=_field(data, "invocation_id", str, what) or "",
        output=data.get("output"),
        is_error=bool(data.get("is_error", False)),
        error=_field(data, "error", str, what),
        metadata=_mapping(data, "metadata", what),
        state_changes=_mapping(data, "state_changes", what),
        duration_ns=_field(data, "duration_ns", int, what) or 0,
    )
