"""JSON-safe round trips of contexts and sessions, through the codec.

``ExecutionContext.to_dict``/``from_dict`` and the session codec
(:mod:`toolctx.sessions.codec`) are thin calls into these functions,
which use :data:`toolctx.codec.converter`. The formats are versioned
(``"toolctx.context/1"``, ``"toolctx.session/1"``); ``scope`` is
runtime-only and never written. Typed values are unstructured by their
key's type and structured back to it; a value whose key is not known in
the loading process is kept as :class:`RawValue` and written back as it
came, so nothing is silently dropped.
"""

from __future__ import annotations

import functools

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple, cast

import attrs

from cattrs.gen import override

from toolctx._context.execution import ExecutionContext
from toolctx._context.keys import RawValue, known_key, matches, type_name
from toolctx._context.session import Session
from toolctx._frozen import ENTRIES, depth_problem
from toolctx._records import (
    ApprovalRequest,
    ToolResult,
    approval_to_dict,
    codec_hooks,
    json_data,
    result_from_dict,
    result_to_dict,
)
from toolctx._types.values import structure_value, unstructure_value
from toolctx.codec import (
    converter,
    data_hook,
    hosted,
    null_is_default,
    record_hooks,
)
from toolctx.exceptions import ContextDataError, ToolArgumentsError


__all__ = [
    "CONTEXT_FORMAT",
    "SESSION_FORMAT",
    "context_from_dict",
    "context_to_dict",
    "result_from_dict",
    "result_to_dict",
    "session_from_dict",
    "session_to_dict",
    "value_from_json",
    "value_to_json",
]

CONTEXT_FORMAT: Final = "toolctx.context/1"
"""The ``format`` of :meth:`ExecutionContext.to_dict` data."""
SESSION_FORMAT: Final = "toolctx.session/1"
"""The ``format`` of :func:`session_to_dict` data."""
_FLATTEN: Final = " Flatten the data."


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
        return json_data(value, f"the typed value {name!r}")
    where = f"Cannot serialize the typed value {name!r}"
    if not matches(value, key.type):
        msg = (
            f"{where}: its key holds {type_name(key.type)}, got "
            f"{value!r} ({type(value).__name__})."
        )
        raise ContextDataError(msg)
    try:
        if hosted(key.type):
            data = converter.unstructure(value, key.type)
        else:
            data = unstructure_value(value, key.type)
    except (TypeError, ValueError) as exc:
        msg = f"{where}: {exc}"
        raise ContextDataError(msg) from None
    problem = depth_problem(data, f"{where}: it")
    if problem is not None:
        raise ContextDataError(problem + _FLATTEN)
    return data


def value_from_json(name: str, raw: object) -> object:
    """Return a typed value read back as its key's type (or a RawValue).

    Raises:
        ContextDataError: The data does not fit the key's type.
    """
    key = known_key(name)
    if key is None:
        return RawValue(raw)
    problem = depth_problem(raw, f"Typed value {name!r}")
    if problem is not None:
        raise ContextDataError(problem)
    try:
        if hosted(key.type):
            return converter.structure(raw, key.type)
        return structure_value(raw, key.type)
    except (ToolArgumentsError, TypeError, ValueError) as exc:
        msg = f"Typed value {name!r} does not fit its key: {exc}"
        raise ContextDataError(msg) from None


def _values_hook(what: str) -> Callable[[Any, object], dict[str, object]]:
    entries = data_hook(what, "values", envelope=ENTRIES)

    def hook(data: Any, tp: object) -> dict[str, object]:
        return {
            name: value_from_json(name, raw)
            for name, raw in entries(data, tp).items()
        }

    return hook


def values_to_json(values: Mapping[str, object]) -> dict[str, Any]:
    """The typed values of a context or session as JSON data."""
    return {name: value_to_json(name, v) for name, v in values.items()}


def context_to_dict(ctx: ExecutionContext) -> dict[str, Any]:
    """Return *ctx* as JSON-safe data; ``scope`` is dropped."""
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
        "metadata": json_data(ctx.metadata, "metadata", envelope=ENTRIES),
        "state": json_data(ctx.state, "state", envelope=ENTRIES),
        "prior_results": [result_to_dict(r) for r in ctx.prior_results],
        "values": values_to_json(ctx.values),
    }


_CONTEXT = "ExecutionContext"
_SESSION = "Session data"


class _Hooks(NamedTuple):
    context: Callable[..., ExecutionContext]
    session: Callable[..., Any]


@functools.cache
def _hooks() -> _Hooks:
    """Register the strict hooks of contexts and session data, once."""
    codec_hooks()  # results and requests first: these hold them
    context = record_hooks(
        ExecutionContext,
        CONTEXT_FORMAT,
        _CONTEXT,
        before=lambda body: null_is_default(
            body, ("invocation_id", "prior_results")
        ),
        scope=override(omit=True),
        _recorder=override(omit=True),
        metadata=override(
            struct_hook=data_hook(_CONTEXT, "metadata", envelope=ENTRIES)
        ),
        state=override(
            struct_hook=data_hook(_CONTEXT, "state", envelope=ENTRIES)
        ),
        values=override(struct_hook=_values_hook(_CONTEXT)),
    )
    session: Callable[..., Any] = record_hooks(
        _SessionData,
        SESSION_FORMAT,
        _SESSION,
        before=lambda body: null_is_default(body, ("pending", "results")),
        noun="session data",
        state=override(
            struct_hook=data_hook(_SESSION, "state", envelope=ENTRIES)
        ),
        metadata=override(
            struct_hook=data_hook(_SESSION, "metadata", envelope=ENTRIES)
        ),
        values=override(struct_hook=_values_hook(_SESSION)),
    )
    return _Hooks(context, session)


def context_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> ExecutionContext:
    """Rebuild a context from :func:`context_to_dict` output."""
    ctx = _hooks().context(data)
    if scope is None:
        return ctx
    return attrs.evolve(ctx, scope=scope)


def session_to_dict(session: Session) -> dict[str, Any]:
    """Return *session* as JSON-safe data (see :mod:`toolctx.sessions`)."""
    snap = session.snapshot()
    return {
        "format": SESSION_FORMAT,
        "id": snap["id"],
        "user_id": snap["user_id"],
        "turn": snap["turn"],
        "agent_id": snap["agent_id"],
        "state": json_data(
            snap["state"], "the session state", envelope=ENTRIES
        ),
        "metadata": json_data(
            snap["metadata"], "the session metadata", envelope=ENTRIES
        ),
        "values": values_to_json(snap["values"]),
        "results": [result_to_dict(result) for result in snap["results"]],
        "pending": [approval_to_dict(item) for item in snap["pending"]],
    }


def _session_fields() -> type:
    """The fields of stored session data, as an attrs class."""

    def check_id(_: object, __: object, value: object) -> None:
        if type(value) is not str or not value:
            msg = f"must be a non-empty string, got {value!r:.40}."
            raise ContextDataError(f"{_SESSION} field 'id' {msg}")

    return attrs.make_class(
        "SessionData",
        {
            "id": attrs.field(type=Any, validator=check_id),
            "user_id": attrs.field(
                type=cast("type", str | None), default=None
            ),
            "turn": attrs.field(type=int, default=0),
            "agent_id": attrs.field(
                type=cast("type", str | None), default=None
            ),
            "state": attrs.field(type=dict, factory=dict),
            "metadata": attrs.field(type=dict, factory=dict),
            "values": attrs.field(type=dict, factory=dict),
            "results": attrs.field(type=list[ToolResult], factory=list),
            "pending": attrs.field(type=list[ApprovalRequest], factory=list),
        },
        kw_only=True,
        frozen=True,
    )


_SessionData: Final = _session_fields()


def session_from_dict(
    data: Mapping[str, Any], *, scope: object | None = None
) -> Session:
    """Rebuild a session from :func:`session_to_dict` output."""
    if not isinstance(cast("object", data), Mapping):
        msg = (
            f"session_from_dict() takes a mapping, got {type(data).__name__}."
        )
        raise ContextDataError(msg)
    fields = _hooks().session(data)
    return Session(
        fields.id,
        user_id=fields.user_id,
        turn=fields.turn,
        agent_id=fields.agent_id,
        state=fields.state,
        metadata=fields.metadata,
        values=fields.values,
        results=fields.results,
        pending=fields.pending,
        scope=scope,
    )
