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

from toolctx._frozen import ENTRIES, depth_problem
from toolctx._records import ToolResult
from toolctx._types.output import to_json as unstructure_output
from toolctx._types.values import structure_value, unstructure_value
from toolctx.content import part_from_dict, part_to_dict, parts_of
from toolctx.context.execution import ExecutionContext
from toolctx.context.keys import RawValue, known_key, matches, type_name
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


_FLATTEN = " Flatten the data."


def check_depth(
    value: object, what: str, advice: str = "", *, envelope: int = 0
) -> None:
    """Refuse *value* if it nests deeper than ``MAX_DATA_DEPTH`` (200).

    Stored data is checked before anything walks it recursively, so that
    data nested past the stack's reach is a :class:`ContextDataError`
    naming *what* (then *advice*), never a ``RecursionError``; data is
    checked when it is written too, so that what is written can be read.
    *envelope* counts the levels of toolctx's own records around the data
    (``ENTRIES`` for a mapping whose entries are the data).

    Raises:
        ContextDataError: *value* nests too deeply.
    """
    problem = depth_problem(value, what, envelope=envelope)
    if problem is not None:
        raise ContextDataError(problem + advice)


def to_json(value: object, where: str, *, envelope: int = 0) -> Any:
    """Return *value* as JSON data; ContextDataError names *where*.

    Data nested past the limit is refused too (see :func:`check_depth`).
    """
    try:
        data = unstructure_output(value)
    except TypeError as exc:
        msg = f"Cannot serialize {where}: {exc}"
        raise ContextDataError(msg) from None
    subject = f"Cannot serialize {where}:" + ("" if envelope else " it")
    check_depth(data, subject, _FLATTEN, envelope=envelope)
    return data


def context_to_dict(ctx: ExecutionContext) -> dict[str, Any]:
    """Return *ctx* as JSON-safe data; ``scope`` is dropped."""
    values = {
        name: value_to_json(name, value) for name, value in ctx.values.items()
    }
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
        "metadata": to_json(ctx.metadata, "metadata", envelope=ENTRIES),
        "state": to_json(ctx.state, "state", envelope=ENTRIES),
        "prior_results": [result_to_dict(r) for r in ctx.prior_results],
        "values": values,
    }


def value_to_json(name: str, value: object) -> Any:
    """Return a typed value as JSON data by its key's type.

    A :class:`RawValue` (a slot whose key was unknown when it was loaded)
    is written back unchanged; a value without a known key is written as
    plain JSON data.

    Raises:
        ContextDataError: The value does not match its key's type or has
            no JSON form.
    """
    if type(value) is RawValue:
        return value.data
    key = known_key(name)
    if key is None:
        return to_json(value, f"the typed value {name!r}")
    if not matches(value, key.type):
        msg = (
            f"Cannot serialize the typed value {name!r}: its key holds "
            f"{type_name(key.type)}, got {value!r} ({type(value).__name__})."
        )
        raise ContextDataError(msg)
    try:
        data = unstructure_value(value, key.type)
    except TypeError as exc:
        msg = f"Cannot serialize the typed value {name!r}: {exc}"
        raise ContextDataError(msg) from None
    check_depth(
        data, f"Cannot serialize the typed value {name!r}: it", _FLATTEN
    )
    return data


def value_from_json(name: str, raw: object) -> object:
    """Return a typed value read back as its key's type (or a RawValue).

    Raises:
        ContextDataError: The data does not fit the key's type.
    """
    key = known_key(name)
    if key is None:
        return RawValue(raw)
    check_depth(raw, f"Typed value {name!r}")
    try:
        return structure_value(raw, key.type)
    except ToolArgumentsError as exc:
        msg = f"Typed value {name!r} does not fit its key: {exc}"
        raise ContextDataError(msg) from None


def check_format(data: object, expected: str, what: str) -> Mapping[str, Any]:
    """Return *data* if it is a mapping in the *expected* format."""
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


def optional_field(
    data: Mapping[str, Any], name: str, kind: type, what: str
) -> Any:
    """Return field *name* if it is a *kind* or missing/null (None)."""
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


def mapping_field(
    data: Mapping[str, Any],
    name: str,
    what: str,
    *,
    envelope: int = ENTRIES,
) -> dict[str, Any]:
    """Return field *name* as a dict; missing or null gives ``{}``.

    Raises:
        ContextDataError: The field is not an object, or an entry nests
            deeper than 200 levels (``MAX_DATA_DEPTH``; *envelope* as for
            :func:`check_depth`).
    """
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"{what} field {name!r} must be an object, got {value!r}."
        raise ContextDataError(msg)
    check_depth(value, f"{what} field {name!r}", envelope=envelope)
    return dict(value)


def context_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> ExecutionContext:
    """Rebuild a context from :func:`context_to_dict` output."""
    what = "ExecutionContext"
    data = check_format(data, CONTEXT_FORMAT, what)
    fields: dict[str, Any] = {
        name: optional_field(data, name, str, what) for name in _OPTIONAL_STR
    }
    if fields["invocation_id"] is None:
        del fields["invocation_id"]
    turn = data.get("turn", 0)
    if type(turn) is not int:
        msg = f"{what} field 'turn' must be an integer, got {turn!r}."
        raise ContextDataError(msg)
    values = {
        name: value_from_json(name, raw)
        for name, raw in mapping_field(data, "values", what).items()
    }
    results = data.get("prior_results")
    if results is None:
        results = []
    if not isinstance(results, list):
        msg = f"{what} field 'prior_results' must be a list."
        raise ContextDataError(msg)
    return ExecutionContext(
        **fields,
        turn=turn,
        metadata=mapping_field(data, "metadata", what),
        state=mapping_field(data, "state", what),
        prior_results=tuple(result_from_dict(r) for r in results),
        values=values,
        scope=scope,
    )


def result_to_dict(result: ToolResult) -> dict[str, Any]:
    """Return *result* as JSON-safe data; ``exception`` is dropped.

    A content output (a tuple of parts) is stored under ``"content"``
    (:func:`toolctx.content.part_to_dict` each), ``"output"`` then None.
    """
    parts = parts_of(result.output)
    data = {
        "format": RESULT_FORMAT,
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": None
        if parts is not None
        else to_json(result.output, "the result output"),
        "is_error": result.is_error,
        "error": result.error,
        "metadata": to_json(
            result.metadata, "the result metadata", envelope=ENTRIES
        ),
        "state_changes": to_json(
            result.state_changes, "the state changes", envelope=ENTRIES
        ),
        "duration_ns": result.duration_ns,
    }
    if parts is not None:
        data["content"] = [part_to_dict(part) for part in parts]
    return data


def content_from_json(data: Mapping[str, Any], what: str) -> Any:
    """The parts stored under ``"content"``, else the ``"output"``."""
    content = data.get("content")
    if content is None:
        output = data.get("output")
        check_depth(output, f"{what} field 'output'")
        return output
    if not isinstance(content, list) or not content:
        msg = f"{what} field 'content' must be a non-empty list of parts."
        raise ContextDataError(msg)
    try:
        return tuple(part_from_dict(item) for item in content)
    except (TypeError, ValueError) as exc:
        msg = f"{what} field 'content' holds a bad part: {exc}"
        raise ContextDataError(msg) from None


def result_from_dict(data: Mapping[str, Any]) -> ToolResult:
    """Rebuild a result from :func:`result_to_dict` output."""
    what = "ToolResult"
    data = check_format(data, RESULT_FORMAT, what)
    name = data.get("name")
    if type(name) is not str:
        msg = f"{what} field 'name' must be a string, got {name!r}."
        raise ContextDataError(msg)
    return ToolResult(
        name=name,
        call_id=optional_field(data, "call_id", str, what),
        invocation_id=optional_field(data, "invocation_id", str, what) or "",
        output=content_from_json(data, what),
        is_error=bool(data.get("is_error", False)),
        error=optional_field(data, "error", str, what),
        metadata=mapping_field(data, "metadata", what),
        state_changes=mapping_field(data, "state_changes", what),
        duration_ns=optional_field(data, "duration_ns", int, what) or 0,
    )
