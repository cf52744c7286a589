"""``Session``: host-side conversation state that tools change explicitly."""

from __future__ import annotations

import threading

from collections.abc import Iterable, Mapping
from typing import Any, cast, final

from toolctx._context.execution import ExecutionContext
from toolctx._records import ApprovalRequest, ToolResult, frozen_view


@final
class Session:
    """A conversation: id, user, turn, state and this turn's results.

    Pass a session as the ``context`` of a dispatch: the dispatcher builds
    the call's context from it (session id, user, turn, a read-only
    snapshot of ``state``, the results of this turn so far) and, after
    each successful call, applies the call's ``state_changes`` to
    ``state`` and appends the result to ``results``. Calls of one
    :meth:`Dispatcher.adispatch_all` apply their changes in input order
    once all have finished, so the outcome is deterministic.

    Args:
        id: The session (conversation) id.
        user_id: Who the conversation belongs to.
        state: Initial state; copied.
        turn: The current turn number.
        agent_id: The agent that owns the conversation.
        metadata: Metadata every call of this session carries.
        values: Typed values (by key name) every call carries.
        scope: Runtime-only object for every call (never persisted).
        results: This turn's results so far.
        pending: Calls waiting for a person (:class:`ApprovalRequest`),
            by invocation id.

    Example:
        >>> s = Session("s1", user_id="ada", state={"n": 1})
        >>> s.next_turn()
        1
        >>> s.context().state["n"], s.context().turn
        (1, 1)

    .. versionadded:: 0.1.0
    """

    __slots__ = (
        "_lock",
        "_prior",
        "_seen",
        "_views",
        "agent_id",
        "id",
        "metadata",
        "pending",
        "results",
        "scope",
        "state",
        "turn",
        "user_id",
        "values",
    )

    def __init__(
        self,
        id: str,  # noqa: A002 - the contract's name
        *,
        user_id: str | None = None,
        state: Mapping[str, object] | None = None,
        turn: int = 0,
        agent_id: str | None = None,
        metadata: Mapping[str, object] | None = None,
        values: Mapping[str, object] | None = None,
        scope: object | None = None,
        results: Iterable[ToolResult] = (),
        pending: Iterable[ApprovalRequest] = (),
    ) -> None:
        if not isinstance(cast("object", id), str) or not id:
            msg = f"Session id must be a non-empty str, got {id!r}."
            raise TypeError(msg)
        self.id = id
        self.user_id = user_id
        self.state: dict[str, object] = dict(state or {})
        self.turn = turn
        self.agent_id = agent_id
        self.metadata: dict[str, object] = dict(metadata or {})
        self.values: dict[str, object] = dict(values or {})
        self.scope = scope
        self.results: list[ToolResult] = list(results)
        self.pending: dict[str, ApprovalRequest] = {
            request.invocation_id: request for request in pending
        }
        self._lock = threading.Lock()
        # What later calls see in prior_results, kept up to date as the
        # turn grows so that each call costs the same however many came
        # before it: ``_prior`` holds the read-only views of the first
        # ``len(_prior)`` results of ``_seen``, and ``_seen`` mirrors
        # ``results`` as record() left it. A host that changes ``results``
        # itself is noticed (``results != _seen``) and the tuple rebuilt,
        # reusing the views cached in ``_views``.
        self._prior: tuple[ToolResult, ...] = ()
        self._seen: list[ToolResult] = []
        self._views: dict[int, tuple[ToolResult, ToolResult]] = {}

    def __repr__(self) -> str:
        return (
            f"Session(id={self.id!r}, user_id={self.user_id!r}, "
            f"turn={self.turn}, state_keys={sorted(self.state)!r}, "
            f"results={len(self.results)}, pending={len(self.pending)})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Session):
            return NotImplemented
        return (
            self.id == other.id
            and self.user_id == other.user_id
            and self.turn == other.turn
            and self.agent_id == other.agent_id
            and self.state == other.state
            and self.metadata == other.metadata
            and self.values == other.values
            and self.results == other.results
            and self.pending == other.pending
        )

    __hash__ = None  # type: ignore[assignment]

    def next_turn(self) -> int:
        """Start the next turn: increment ``turn``, clear ``results``.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            self.turn += 1
            self.results.clear()
            self._prior = ()
            self._seen = []
            self._views.clear()
            return self.turn

    def context(self, **changes: Any) -> ExecutionContext:
        """Return a template context for the next call of this session.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            base: dict[str, Any] = {
                "session_id": self.id,
                "user_id": self.user_id,
                "turn": self.turn,
                "agent_id": self.agent_id,
                "metadata": self.metadata,
                "values": self.values,
                "state": self.state,
                "prior_results": self._prior_results(),
                "scope": self.scope,
            }
        base.update(changes)
        return ExecutionContext(**base)

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of the session's fields, taken under its lock.

        ``id``, ``user_id``, ``turn``, ``agent_id``, and copies of
        ``state``, ``metadata``, ``values``, ``results`` and ``pending``
        (a list), all from one
        moment even while other threads record results; never the scope.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            return {
                "id": self.id,
                "user_id": self.user_id,
                "turn": self.turn,
                "agent_id": self.agent_id,
                "state": dict(self.state),
                "metadata": dict(self.metadata),
                "values": dict(self.values),
                "results": list(self.results),
                "pending": list(self.pending.values()),
            }

    def _prior_results(self) -> tuple[ToolResult, ...]:
        """This turn's results as the next call sees them (lock held).

        Amortized constant Python work per call: only results recorded
        since the last call are frozen, and the check that nobody changed
        ``results`` behind :meth:`record`'s back is one list comparison,
        which runs in C (identical items compare without calling
        ``__eq__``).
        """
        results = self.results
        try:
            changed = results != self._seen
        except Exception:  # noqa: BLE001 - an output whose == raises
            changed = True
        if changed:  # by the host, not by record(): start over
            self._seen = list(results)
            self._prior = ()
        prior = self._prior
        if len(prior) < len(results):
            fresh = results[len(prior) :]
            prior = self._prior = prior + tuple(map(self._view, fresh))
        return prior

    def _view(self, result: ToolResult) -> ToolResult:
        """The read-only copy of *result* later calls see (cached)."""
        cached = self._views.get(id(result))
        if cached is not None and cached[0] is result:
            return cached[1]
        view = frozen_view(result)
        self._views[id(result)] = (result, view)
        return view

    def record(self, result: ToolResult) -> None:
        """Append *result* to this turn and apply its state changes.

        A failed call (``is_error``) changes no state. A call waiting for
        a person (``result.approval``) goes to :attr:`pending` instead,
        until it is resumed.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            if result.approval is not None:
                self.pending[result.approval.invocation_id] = result.approval
                return
            self.results.append(result)
            self._seen.append(result)
            if not result.is_error and result.state_changes:
                self.state.update(result.state_changes)

    def resolve(self, invocation_id: str) -> ApprovalRequest | None:
        """Take the pending call *invocation_id* off :attr:`pending`.

        Returns it, or None if it is not pending (resumed already, or never
        made in this session). :meth:`Dispatcher.resume
        <toolctx.Dispatcher.resume>` calls this, so that a call is resumed
        once however many threads or processes try.

        .. versionadded:: 0.2.0
        """
        with self._lock:
            return self.pending.pop(invocation_id, None)

    def hold(self, request: ApprovalRequest) -> None:
        """Put *request* (back) on :attr:`pending`, by its invocation id.

        :meth:`Dispatcher.aresume <toolctx.Dispatcher.aresume>` calls this
        when a resume is interrupted before the tool's body started: the
        call is still waiting, as it was.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            self.pending[request.invocation_id] = request

    def outcome(self, invocation_id: str) -> ToolResult | None:
        """The result recorded this turn for *invocation_id*, or None.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            for result in reversed(self.results):
                if result.invocation_id == invocation_id:
                    return result
        return None
