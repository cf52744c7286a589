"""``ExecutionContext``: one frozen value that describes one tool call.

Here too, the conversions of its mappings: what its mapping fields go
through on the way in (the attrs converters freeze them) and what a
stored typed value goes through on the way out (raw data restored as its
key's type). attrs gives the context's ``__init__`` the converters'
parameter hints, resolved here: they name only types imported here.
"""

from __future__ import annotations

import threading

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import Any, TypeVar, final, overload

import attrs

from toolctx._builders import record_builder
from toolctx._context.keys import ContextKey, RawValue
from toolctx._frozen import (
    EMPTY_METADATA,
    EMPTY_STATE,
    EMPTY_VALUES,
    freeze_mapping,
)
from toolctx._ids import new_invocation_id
from toolctx._records import ToolProgress, ToolResult
from toolctx._types.nodes import MISSING
from toolctx.exceptions import MissingContextValueError, ScopeError


T = TypeVar("T")


def freeze_metadata(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.metadata``: a deeply frozen copy."""
    return freeze_mapping(value, "ExecutionContext.metadata")


def freeze_state(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.state``: a deeply frozen copy."""
    return freeze_mapping(value, "ExecutionContext.state")


def freeze_values(value: Mapping[str, object]) -> Mapping[str, object]:
    """Convert ``ExecutionContext.values``: frozen, the values as they are."""
    return freeze_mapping(value, "ExecutionContext.values", deep=False)


def typed_value(value: object, key: ContextKey[T]) -> T:
    """Return a stored value as the key's type (restoring raw data)."""
    if type(value) is RawValue:
        from toolctx._types.values import structure_value

        return structure_value(value.data, key.type)  # type: ignore[return-value]
    return value  # type: ignore[return-value]


S = TypeVar("S")


def _results(value: Iterable[ToolResult]) -> tuple[ToolResult, ...]:
    return value if type(value) is tuple else tuple(value)


RECORD_LOCK = threading.Lock()
"""Held by ``publish``/``set_state`` while they write to a recorder."""


class CallRecorder:
    """Collects what a running call publishes; one per dispatched call.

    Writers (``publish``/``set_state``, possibly from threads the tool
    started) check :attr:`closed` and write while holding
    :data:`RECORD_LOCK`. :meth:`close` needs no lock on the common path:
    once ``closed`` is set no new write starts, and a write already under
    way holds the lock, so waiting for the lock once is enough. After
    ``close()`` the dicts never change again: the result is built from a
    consistent snapshot, and a late write is refused.
    """

    # Class-level defaults and no __init__: one is made per call, and most
    # calls never write to it (an instance dict appears on first write).
    metadata: dict[str, object] | None = None
    state_changes: dict[str, object] | None = None
    closed: bool = False
    # Where report_progress sends a ToolProgress, or None (nobody listens).
    progress: Callable[[ToolProgress], object] | None = None

    def close(self) -> None:
        """Refuse further writes; wait for one under way to finish."""
        self.closed = True
        if RECORD_LOCK.locked():
            with RECORD_LOCK:
                pass


@final
@attrs.frozen(kw_only=True, repr=False, getstate_setstate=False)
class ExecutionContext:
    """Everything a tool may know about the call it runs in.

    Hosts build one as a *template* (session, user, metadata, typed
    values, scope) and pass it to :meth:`Dispatcher.dispatch`; the
    dispatcher derives the call's own context from it (fresh
    ``invocation_id``, ``tool_name``, ``tool_call_id``, lineage) and binds
    it for exactly the duration of the call. Tools read it with
    :func:`toolctx.execution_context` or by declaring a parameter of this
    type. It is frozen: every ``with_*`` method returns a new context.

    Attributes:
        invocation_id: Unique per tool call; the dispatcher always assigns
            a fresh one.
        session_id: The conversation.
        turn: The turn number within the session.
        user_id: Who the call runs on behalf of (set by the host, never by
            the model).
        agent_id: Which agent invoked the tool.
        tool_name: The running tool (set by the dispatcher).
        tool_call_id: The model's call id (set by the dispatcher).
        parent_invocation_id: The calling invocation, for nested calls and
            sub-agent contexts.
        metadata: Read-only mapping set by the host and interceptors.
        state: Read-only snapshot of the session's state at call time.
        prior_results: Results of the earlier calls of this turn, in order.
        values: Read-only typed values by key name; use :meth:`get` and
            :meth:`with_value` rather than this mapping.
        scope: Runtime-only object (auth identity, database handles);
            never serialized, never in ``repr``, not compared.

    Example:
        >>> ctx = ExecutionContext(user_id="ada", session_id="s1")
        >>> ctx.with_metadata(channel="web").metadata["channel"]
        'web'

    .. versionadded:: 0.1.0
    """

    invocation_id: str = attrs.field(factory=new_invocation_id)
    session_id: str | None = None
    turn: int = 0
    user_id: str | None = None
    agent_id: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    parent_invocation_id: str | None = None
    metadata: Mapping[str, object] = attrs.field(
        default=EMPTY_METADATA, converter=freeze_metadata
    )
    state: Mapping[str, object] = attrs.field(
        default=EMPTY_STATE, converter=freeze_state
    )
    prior_results: tuple[ToolResult, ...] = attrs.field(
        default=(), converter=_results
    )
    values: Mapping[str, object] = attrs.field(
        default=EMPTY_VALUES, converter=freeze_values
    )
    scope: object | None = attrs.field(default=None, eq=False)
    _recorder: CallRecorder | None = attrs.field(
        default=None, eq=False, alias="_recorder"
    )

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in _REPR_FIELDS
            if getattr(self, f.name) != f.default or f.name == "invocation_id"
        ]
        if self.scope is not None:  # runtime-only: not even its type
            parts.append("scope=<set>")
        return f"ExecutionContext({', '.join(parts)})"

    # -- copying and pickling ----------------------------------------------
    # The data fields are copied; the runtime-only ones (scope, the running
    # call's recorder) never leave the process. A pickle drops them, as
    # to_dict() and RemoteCall do: the receiving side re-attaches a scope
    # (from_dict(..., scope=...), a scope_loader) and is not a dispatched
    # call. copy.copy and copy.deepcopy stay in the process and share them.

    def __reduce__(self) -> tuple[Any, ...]:
        data = {f.name: getattr(self, f.name) for f in _REPR_FIELDS}
        return (_unpickle_context, (data,))

    def __copy__(self) -> ExecutionContext:
        return self  # frozen: a copy would be indistinguishable

    def __deepcopy__(self, memo: dict[int, Any]) -> ExecutionContext:
        from copy import deepcopy

        data = {
            f.name: deepcopy(getattr(self, f.name), memo) for f in _REPR_FIELDS
        }
        ctx = ExecutionContext(
            **data, scope=self.scope, _recorder=self._recorder
        )
        memo[id(self)] = ctx
        return ctx

    # -- typed values ------------------------------------------------------

    @overload
    def get(self, key: ContextKey[T]) -> T | None: ...
    @overload
    def get(self, key: ContextKey[T], default: S) -> T | S: ...
    def get(self, key: ContextKey[T], default: object = None) -> object:
        """Return the value for *key*, else the key's default, else *default*.

        .. versionadded:: 0.1.0
        """
        value = self.values.get(key.name, MISSING)
        if value is not MISSING:
            return typed_value(value, key)
        if key.default is not MISSING:
            return key.default
        return default

    def require(self, key: ContextKey[T]) -> T:
        """Return the value for *key* or its default.

        Raises:
            MissingContextValueError: Neither a value nor a default.

        .. versionadded:: 0.1.0
        """
        value = self.values.get(key.name, MISSING)
        if value is not MISSING:
            return typed_value(value, key)
        if key.default is not MISSING:
            return key.default
        raise MissingContextValueError(key.name)

    def with_value(self, key: ContextKey[T], value: T) -> ExecutionContext:
        """Return a new context with *key* set to *value*.

        Raises:
            ContextValueTypeError: *value* is not of the key's type.

        .. versionadded:: 0.1.0
        """
        key.check(value)
        return attrs.evolve(self, values={**self.values, key.name: value})

    def without(self, key: ContextKey[Any]) -> ExecutionContext:
        """Return a new context without a value for *key*.

        .. versionadded:: 0.1.0
        """
        if key.name not in self.values:
            return self
        values = {k: v for k, v in self.values.items() if k != key.name}
        return attrs.evolve(self, values=values)

    def has(self, key: ContextKey[Any]) -> bool:
        """Whether a value for *key* is set (defaults do not count).

        .. versionadded:: 0.1.0
        """
        return key.name in self.values

    # -- metadata, scope, lineage -----------------------------------------

    def with_metadata(
        self, mapping: Mapping[str, object] | None = None, /, **kwargs: object
    ) -> ExecutionContext:
        """Return a new context whose metadata has these entries merged in.

        Example:
            >>> ctx = ExecutionContext().with_metadata({"a": 1}, b=2)
            >>> dict(ctx.metadata)
            {'a': 1, 'b': 2}

        .. versionadded:: 0.1.0
        """
        merged = {**self.metadata, **(mapping or {}), **kwargs}
        return attrs.evolve(self, metadata=merged)

    def scope_as(self, cls: type[T]) -> T:
        """Return the scope if it is an instance of *cls*.

        Raises:
            ScopeError: There is no scope, or it is of another type.

        .. versionadded:: 0.1.0
        """
        scope = self.scope
        if isinstance(scope, cls):
            return scope
        if scope is None:
            msg = (
                f"This context has no scope; expected a {cls.__qualname__}. "
                "The host sets it on the template context: "
                "ExecutionContext(scope=...) or Session(..., scope=...)."
            )
        else:
            msg = (
                f"The context's scope is a {type(scope).__qualname__}, not "
                f"a {cls.__qualname__}."
            )
        raise ScopeError(msg)

    def child(
        self, *, agent_id: str | None = None, **changes: Any
    ) -> ExecutionContext:
        """Return a context for a sub-agent started from this one.

        The child gets a fresh ``invocation_id`` and ``parent_invocation_id``
        set to this context's; session, user, scope, metadata and typed
        values carry over; ``prior_results`` starts empty. ``agent_id``
        replaces this context's when given. Calls dispatched with the child
        as template link back to this invocation.

        Example:
            >>> parent = ExecutionContext(user_id="ada", agent_id="planner")
            >>> sub = parent.child(agent_id="researcher")
            >>> sub.parent_invocation_id == parent.invocation_id
            True
            >>> sub.user_id, sub.agent_id
            ('ada', 'researcher')

        .. versionadded:: 0.1.0
        """
        base: dict[str, Any] = {
            "invocation_id": new_invocation_id(),
            "parent_invocation_id": self.invocation_id,
            "tool_name": None,
            "tool_call_id": None,
            "prior_results": (),
            "_recorder": None,
        }
        if agent_id is not None:
            base["agent_id"] = agent_id
        base.update(changes)
        return attrs.evolve(self, **base)

    # -- serialization -----------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data for this context; ``scope`` is dropped.

        .. versionadded:: 0.1.0
        """
        from toolctx._context.codec import context_to_dict

        return context_to_dict(self)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, scope: object | None = None
    ) -> ExecutionContext:
        """Rebuild a context from :meth:`to_dict` output.

        Args:
            data: What ``to_dict`` returned (possibly through JSON).
            scope: The runtime scope to attach, rebuilt by the host.

        Raises:
            ContextDataError: *data* is not context data of this format: a
                field has the wrong type or nests deeper than 200 levels
                of objects and arrays, or a typed value does not fit its
                key. The message names the field.

        .. versionadded:: 0.1.0
        """
        from toolctx._context.codec import context_from_dict

        return context_from_dict(data, scope=scope)


_REPR_FIELDS = tuple(
    f
    for f in attrs.fields(ExecutionContext)
    if f.name not in {"scope", "_recorder"}
)

EMPTY_CONTEXT_FIELDS = {f.name: f.default for f in _REPR_FIELDS}


def _unpickle_context(data: dict[str, Any]) -> ExecutionContext:
    """Rebuild a pickled context: its data, no scope, not a running call."""
    return ExecutionContext(**data)


@record_builder(ExecutionContext, copy_from="template", _recorder="recorder")
def derive_call_context(  # noqa: PLR0917 - hot path, no kwargs parsing
    template: ExecutionContext,
    invocation_id: str,
    tool_name: str,
    tool_call_id: str | None,
    parent_invocation_id: str | None,
    recorder: CallRecorder,
) -> ExecutionContext:
    """Copy *template* with the per-call fields set, skipping the converters.

    The per-call fields come from the arguments, every other one (scope
    included) from *template*, whose mappings are already frozen, so
    sharing them is safe. The result equals ``attrs.evolve(template,
    invocation_id=..., ..., _recorder=recorder)`` at a fraction of the
    cost; it runs on every dispatch. :func:`record_builder` generates the
    body.
    """
    raise NotImplementedError  # pragma: no cover - replaced by the builder


@record_builder(ExecutionContext, copy_from="template")
def with_prior_results(
    template: ExecutionContext, prior_results: tuple[ToolResult, ...]
) -> ExecutionContext:
    """Copy *template* with *prior_results* (a tuple of frozen results).

    Equals ``attrs.evolve(template, prior_results=prior_results)``; used
    between the calls of one turn. :func:`record_builder` generates the
    body.
    """
    raise NotImplementedError  # pragma: no cover - replaced by the builder


recorder_of: Callable[[ExecutionContext], CallRecorder | None] = attrgetter(
    "_recorder"
)
"""The recorder of a dispatched call's context, None for a template."""
