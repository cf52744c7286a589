"""Held calls in stored sessions, resumed exactly once across hosts.

:func:`resume_stored` (and :func:`aresume_stored`) resume a call waiting
for a person in a session kept in a store that every host shares. The
claim is durable before anything runs: the request is taken off the
stored session's ``pending`` with a save against the version that was
loaded (``expected_version``), so of all the hosts that race, one save
succeeds and only that host runs the call; every other host gets an
:class:`~toolctx.exceptions.ApprovalError` and runs nothing. The winner
then records the result in the stored session.

What happens on failure:

- the dispatcher refuses the request (expired, changed, its tool gone) or
  the resume is interrupted before the tool's body started: nothing ran,
  and the request is put back on the stored session's ``pending``;
- interrupted while the body ran: the interruption is recorded (the call
  may have had effects), as :meth:`Dispatcher.resume
  <toolctx.Dispatcher.resume>` records it;
- the host dies after the claim and before the record: the request is no
  longer pending and no result is recorded. It is never run again by
  these functions (at most once); a host that finds a request neither
  pending nor in ``session.outcome(...)`` knows it may have run, and asks
  the person again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

from toolctx.exceptions import (
    ApprovalError,
    SessionConflictError,
    SessionStoreError,
)


if TYPE_CHECKING:
    from toolctx._context.session import Session
    from toolctx._dispatch.dispatcher import Dispatcher
    from toolctx._records import ApprovalRequest, ToolResult


__all__ = ["aresume_stored", "resume_stored"]

MAX_ATTEMPTS: Final = 100
"""Most reloads of a session whose saves keep conflicting."""


class VersionedStore(Protocol):
    """A store with versions: every store in :mod:`toolctx.sessions`."""

    def load(self, scope: object, session_id: str) -> Session | None: ...
    def version(self, scope: object, session_id: str) -> int | None: ...
    def save(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None: ...


class AsyncVersionedStore(Protocol):
    """An async store with versions: every store in :mod:`toolctx.sessions`."""

    async def aload(self, scope: object, session_id: str) -> Session | None:
        """See :meth:`VersionedStore.load`."""
        ...

    async def aversion(self, scope: object, session_id: str) -> int | None:
        """See :meth:`VersionedStore.version`."""
        ...

    async def asave(
        self,
        scope: object,
        session: Session,
        *,
        expected_version: int | None = None,
    ) -> None:
        """See :meth:`VersionedStore.save`."""
        ...


def resume_stored(
    dispatcher: Dispatcher,
    store: VersionedStore,
    scope: object,
    session_id: str,
    request: ApprovalRequest | str,
    *,
    approved: bool,
    reason: str | None = None,
) -> ToolResult:
    """Resume a call held in a stored session, once across every host.

    Loads the session, takes the request off its ``pending`` and saves
    that claim against the version it loaded; only then runs the call
    with ``dispatcher.resume(..., context=session)`` (the loaded
    session, carrying *scope*, is the authority it runs with) and saves
    the result in the session. Of all the hosts racing for one request,
    one claims it; every other one gets :class:`ApprovalError`, nothing
    run. A save that conflicts with an unrelated one is retried on a
    fresh load.

    Args:
        dispatcher: The dispatcher that runs the call.
        store: The shared store (any store of :mod:`toolctx.sessions`).
        scope: The caller's scope (its tenant owns the session).
        session_id: The session the call is pending in.
        request: The :class:`~toolctx.ApprovalRequest` the person
            decided on (it must be the session's own pending request in
            everything), or just its invocation id.
        approved: The person's decision.
        reason: Why, for the model (declined calls).

    Returns:
        The call's result, recorded in the stored session.

    Raises:
        ApprovalError: Nothing ran: the session is missing, the request
            is not pending in it (another host claimed it: the message
            says how it ended, if it did), or the dispatcher refused it
            (the request is pending again then).
        SessionStoreError: The store failed. Before the claim nothing ran;
            after the call ran, the message says so (its result could not
            be recorded).

    .. versionadded:: 0.1.0
    """
    inv = request if isinstance(request, str) else request.invocation_id
    for _ in range(MAX_ATTEMPTS):
        version = store.version(scope, session_id)
        session = store.load(scope, session_id)
        held = _held(session, session_id, inv)
        assert session is not None  # noqa: S101 - _held checked it
        session.resolve(inv)
        try:
            store.save(scope, session, expected_version=version)
        except SessionConflictError:
            continue
        break
    else:
        raise _contended(session_id, inv)
    session.hold(held)
    given = held if isinstance(request, str) else request
    try:
        result = dispatcher.resume(
            given, approved=approved, reason=reason, context=session
        )
    finally:
        try:
            _settle(store, scope, session, held, (version or 0) + 1)
        except SessionStoreError as exc:
            raise _unrecorded(session, held, exc) from exc
    return result


async def aresume_stored(
    dispatcher: Dispatcher,
    store: AsyncVersionedStore,
    scope: object,
    session_id: str,
    request: ApprovalRequest | str,
    *,
    approved: bool,
    reason: str | None = None,
) -> ToolResult:
    """:func:`resume_stored` for async hosts (``aresume``, async store).

    .. versionadded:: 0.1.0
    """
    inv = request if isinstance(request, str) else request.invocation_id
    for _ in range(MAX_ATTEMPTS):
        version = await store.aversion(scope, session_id)
        session = await store.aload(scope, session_id)
        held = _held(session, session_id, inv)
        assert session is not None  # noqa: S101 - _held checked it
        session.resolve(inv)
        try:
            await store.asave(scope, session, expected_version=version)
        except SessionConflictError:
            continue
        break
    else:
        raise _contended(session_id, inv)
    session.hold(held)
    given = held if isinstance(request, str) else request
    try:
        result = await dispatcher.aresume(
            given, approved=approved, reason=reason, context=session
        )
    finally:
        try:
            await _asettle(store, scope, session, held, (version or 0) + 1)
        except SessionStoreError as exc:
            raise _unrecorded(session, held, exc) from exc
    return result


def _held(
    session: Session | None, session_id: str, inv: str
) -> ApprovalRequest:
    """The request *inv* pending in *session*, or why it cannot be."""
    if session is None:
        msg = (
            f"No session {session_id!r:.80} for this tenant in the store, "
            f"so the request (invocation {inv!r:.80}) cannot be resumed "
            "from it. Nothing ran."
        )
        raise ApprovalError(msg)
    held = session.pending.get(inv)
    if held is not None:
        return held
    outcome = session.outcome(inv)
    if outcome is not None:
        how = "failed" if outcome.is_error else "ran"
        msg = (
            f"The request (invocation {inv!r:.80}) in session "
            f"{session_id!r:.80} was resumed already, by this or another "
            f"host, and {how}: see session.outcome(...). It runs once. "
            "Nothing ran now."
        )
    else:
        msg = (
            f"The request (invocation {inv!r:.80}) is not pending in "
            f"session {session_id!r:.80}: another host claimed it and is "
            "running it (or stopped while it ran, so it may have run: ask "
            "the person again), or it was never held there. Nothing ran."
        )
    raise ApprovalError(msg)


def _contended(session_id: str, inv: str) -> ApprovalError:
    msg = (
        f"Session {session_id!r:.80} changed {MAX_ATTEMPTS} times while "
        f"claiming the request (invocation {inv!r:.80}); gave up. Nothing "
        "ran: retry."
    )
    return ApprovalError(msg)


def _merged(latest: Session, mine: Session, held: ApprovalRequest) -> Session:
    """*latest* plus what the resume did to *mine*: held again, or recorded."""
    inv = held.invocation_id
    if inv in mine.pending:  # nothing ran: pending again
        latest.hold(held)
        return latest
    outcome = mine.outcome(inv)
    if outcome is not None and latest.outcome(inv) is None:
        latest.record(outcome)
    return latest


def _unrecorded(
    session: Session, held: ApprovalRequest, exc: SessionStoreError
) -> SessionStoreError:
    """The error for an outcome the store could not take after the claim."""
    inv = held.invocation_id
    if inv in session.pending:
        what = "nothing ran, but the request could not be put back"
    else:
        what = "the call ran (or was declined), but its outcome was not saved"
    msg = (
        f"Resuming invocation {inv!r:.80} in session {session.id!r:.80}: "
        f"{what} ({exc}). It is claimed in the store, so no host runs it "
        "again; check its effect before asking the person again."
    )
    return SessionStoreError(msg)


async def _asettle(
    store: AsyncVersionedStore,
    scope: object,
    session: Session,
    held: ApprovalRequest,
    claimed: int,
) -> None:
    """:func:`_settle` through the async store."""
    for _ in range(MAX_ATTEMPTS):
        try:
            await store.asave(scope, session, expected_version=claimed)
        except SessionConflictError:
            latest_version = await store.aversion(scope, session.id)
            latest = await store.aload(scope, session.id)
            if latest is None:  # deleted meanwhile: nothing to record in
                return
            session = _merged(latest, session, held)
            claimed = latest_version or 0
        else:
            return


def _settle(
    store: VersionedStore,
    scope: object,
    session: Session,
    held: ApprovalRequest,
    claimed: int,
) -> None:
    """Save what the resume did, onto whatever was saved since the claim."""
    for _ in range(MAX_ATTEMPTS):
        try:
            store.save(scope, session, expected_version=claimed)
        except SessionConflictError:
            latest_version = store.version(scope, session.id)
            latest = store.load(scope, session.id)
            if latest is None:  # deleted meanwhile: nothing to record in
                return
            session = _merged(latest, session, held)
            claimed = latest_version or 0
        else:
            return
