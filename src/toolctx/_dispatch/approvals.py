"""Calls that wait for a person: holding them, and resuming them safely.

A tool declared ``@tool(needs_approval=...)`` meets the *gate* in
:meth:`Core.prepare <toolctx._dispatch.core.Core.prepare>` before any
interceptor runs. Arguments that do not fit are an ordinary error result
(the call goes the usual way). ``needs_approval=True`` holds the call at
once; a check makes the call a :class:`Checking`, which the shell that
dispatched it settles (:func:`settle` calls the check, :func:`asettle`
awaits it or runs it in a worker thread: the only difference between the
two) and hands back to :meth:`Core.decide
<toolctx._dispatch.core.Core.decide>`. Whatever the check returns is read
as a condition: truthy holds the call; a check that raises fails it.

A held call is a result whose ``approval`` is an
:class:`~toolctx.ApprovalRequest`; nothing ran. :class:`Approvals`
stamps its lifetime and signature and remembers what this dispatcher
held. Resuming (:meth:`Approvals.claim`) runs only what was held: the
session's own pending request, a request this dispatcher remembers
holding, or one whose signature verifies; anything else is refused. The
resumed call's identity is the held call's, its authority (metadata,
typed values, state, scope) the host's context at resume time
(:func:`resumed_template`). :class:`Resumption` makes claiming, running
and recording one step: interrupted before the tool's body started, the
claim is released; after, the interruption is recorded.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import inspect
import json
import threading
import time

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, final

import attrs

from toolctx._context.execution import ExecutionContext
from toolctx._context.session import Session
from toolctx._dispatch import workers
from toolctx._dispatch.run import (
    AWAIT_DIRECTLY,
    await_tool,
    loop_running,
    run_to_end,
    thread_result,
)
from toolctx._frozen import freeze_mapping
from toolctx._records import (
    ApprovalRequest,
    ToolCall,
    ToolResult,
)
from toolctx._text import bounded, exception_text
from toolctx._tools.function import ASYNC, ASYNC_STREAM, ToolEntry
from toolctx._tools.registry import digest
from toolctx._types.decode import DecodeError
from toolctx._types.decode import decode_arguments as decode
from toolctx.exceptions import (
    ApprovalDenied,
    ApprovalError,
    ToolArgumentsError,
    ToolctxError,
)


if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from toolctx._dispatch.core import Core, Prepared
    from toolctx._records import ToolDefinition
    from toolctx._types.decode import ArgumentLimits

MAX_REASON: Final = 500
"""Longest denial reason passed to the model; longer ones are cut."""

MAX_REMEMBERED: Final = 10_000
"""Most held, and most resumed, requests a dispatcher remembers.

Past it the oldest are forgotten, which fails closed: a forgotten held
request can no longer be verified from memory (resume it with its
session, or sign requests), and a forgotten resumed one can no longer be
verified either (a signed one is kept until it expires instead).
"""

MIN_KEY_BYTES: Final = 16
"""Shortest ``approval_key`` accepted (use 32 random bytes)."""


def tool_fingerprint(definition: ToolDefinition) -> str:
    """The digest of one tool's definition, as a request records it."""
    return digest(definition.to_dict())


# -- the gate ----------------------------------------------------------------


def checked_call(
    call: ToolCall, entry: ToolEntry, limits: ArgumentLimits
) -> ToolCall | None:
    """*call* with its arguments decoded, checked and frozen; None if bad.

    None when the arguments do not fit: the usual path turns them into an
    error result.
    """
    try:
        decoded = decode(call.arguments, limits)
        if entry.structurer is not None:
            entry.structurer.structure(decoded)
    except (DecodeError, ToolArgumentsError):
        return None
    arguments = freeze_mapping(decoded, "ApprovalRequest.call.arguments")
    return ToolCall(call.name, arguments, call.id)


@final
class Checking:
    """A call whose tool's approval check has to run before it can go on.

    Attributes:
        call: The model's call.
        checked: The call with its arguments decoded (what the check gets).
        ctx: The call's context (what the check gets).
        entry: The tool's call plan.
        check: The tool's check.
        start: ``perf_counter_ns()`` when the dispatch began.
    """

    __slots__ = ("call", "check", "checked", "ctx", "entry", "start")

    def __init__(  # noqa: PLR0917 - the parts of a call
        self,
        call: ToolCall,
        checked: ToolCall,
        ctx: ExecutionContext,
        entry: ToolEntry,
        check: Callable[[ToolCall, ExecutionContext], object],
        start: int,
    ) -> None:
        self.call = call
        self.checked = checked
        self.ctx = ctx
        self.entry = entry
        self.check = check
        self.start = start


def settle(core: Core, c: Checking) -> Prepared | ToolResult:
    """Run *c*'s check here, then let the core decide (sync shells).

    An awaitable the check returns (an ``async def`` check) runs to its
    end on a private event loop, as an async tool's body would; inside a
    running loop that is a host error pointing to ``adispatch``.

    Raises:
        ToolctxError: The check is async and an event loop is running in
            this thread.
    """
    try:
        value = c.check(c.checked, c.ctx)
    except BaseException as exc:  # noqa: BLE001 - core.decide re-raises
        return core.decide(c, False, exc)  # noqa: FBT003
    if inspect.isawaitable(value):
        if loop_running():
            _discard(value)
            msg = (
                f"The approval check of tool {c.call.name!r} is async and "
                "an event loop is running in this thread: use `await "
                "dispatcher.adispatch(call, context)` instead of dispatch()."
            )
            raise ToolctxError(msg)
        try:
            value = run_to_end(value)
        except BaseException as exc:  # noqa: BLE001 - core.decide re-raises
            return core.decide(c, False, exc)  # noqa: FBT003
    return core.decide(c, True, value)  # noqa: FBT003


async def asettle(core: Core, c: Checking) -> Prepared | ToolResult:
    """Await *c*'s check without blocking the loop, then let the core decide.

    An ``async def`` check is awaited in this task; a sync one runs in a
    worker thread that sees this context, as a sync tool's body does (and
    an awaitable it returns is awaited here).
    """
    check = c.check
    try:
        if inspect.iscoroutinefunction(check):
            work = check(c.checked, c.ctx)
        else:
            outcome = await workers.submit(partial(check, c.checked, c.ctx))
            work = thread_result(outcome)
            if not inspect.isawaitable(work):
                return core.decide(c, True, work)  # noqa: FBT003
        value = await (work if AWAIT_DIRECTLY else await_tool(work))
    except BaseException as exc:  # noqa: BLE001 - core.decide re-raises
        return core.decide(c, False, exc, awaited=True)  # noqa: FBT003
    return core.decide(c, True, value)  # noqa: FBT003


def _discard(value: object) -> None:
    """Close an awaitable that will not be awaited (no warning later)."""
    close = getattr(value, "close", None)
    if callable(close):
        close()


# -- requests: digest, signature, lifetime -----------------------------------


def canonical(request: ApprovalRequest) -> bytes:
    """The request's bytes as signed and compared: all but the signature."""
    data = request.to_dict()
    del data["signature"]
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=True
    ).encode("ascii")


def request_digest(request: ApprovalRequest) -> bytes:
    """A SHA-256 of :func:`canonical`: equal digests, equal requests."""
    return hashlib.sha256(canonical(request)).digest()


def _signature(key: bytes, request: ApprovalRequest) -> str:
    return hmac.new(key, canonical(request), hashlib.sha256).hexdigest()


def _expiry(request: ApprovalRequest) -> float | None:
    """When *request* expires (POSIX seconds), or None for never.

    Raises:
        ApprovalError: ``expires_at`` is not an ISO 8601 time with a zone.
    """
    text = request.expires_at
    if text is None:
        return None
    try:
        when = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        when = None
    if when is None or when.tzinfo is None:
        msg = (
            f"The request for {request.call.name!r} has an unreadable "
            "expires_at; it is refused. Nothing ran."
        )
        raise ApprovalError(msg)
    return when.timestamp()


HELD: Final = "held"
RUNNING: Final = "running"
DONE: Final = "done"
DECLINED: Final = "declined"
INTERRUPTED: Final = "interrupted"


@final
class _Memory:
    """What a dispatcher remembers of one request."""

    __slots__ = ("digest", "expires", "signed", "status")

    def __init__(
        self, digest: bytes, expires: float | None, *, signed: bool
    ) -> None:
        self.digest = digest
        self.expires = expires
        self.signed = signed
        self.status = HELD


@final
class Claim:
    """A request claimed for one resume: what runs, and where it came from.

    Attributes:
        request: What runs: the session's own pending request, or the
            verified request.
        session: The session it was taken off, if any.
        from_memory: It was taken off this dispatcher's held memory.
        memory: What this dispatcher remembers of the resume.
    """

    __slots__ = ("from_memory", "memory", "request", "session")

    def __init__(
        self,
        request: ApprovalRequest,
        session: Session | None,
        memory: _Memory,
        *,
        from_memory: bool,
    ) -> None:
        self.request = request
        self.session = session
        self.memory = memory
        self.from_memory = from_memory


@final
class Approvals:
    """One dispatcher's approvals: lifetime, signature, bounded memory.

    Args:
        key: The HMAC key requests are signed with, or None.
        lifetime: Seconds a request stays resumable, or None for ever.
    """

    __slots__ = ("_held", "_key", "_lock", "_resumed", "lifetime")

    def __init__(
        self, key: bytes | None = None, lifetime: float | None = None
    ) -> None:
        self._key = key
        self.lifetime = lifetime
        self._held: OrderedDict[str, _Memory] = OrderedDict()
        self._resumed: OrderedDict[str, _Memory] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return (
            f"<Approvals(signed={self._key is not None}, "
            f"held={len(self._held)}, resumed={len(self._resumed)})>"
        )

    def request(
        self, checked: ToolCall, ctx: ExecutionContext, entry: ToolEntry
    ) -> ApprovalRequest:
        """The request of a call being held: stamped, signed, remembered."""
        now = dt.datetime.now(dt.timezone.utc)
        lifetime = self.lifetime
        request = ApprovalRequest(
            call=checked,
            invocation_id=ctx.invocation_id,
            parent_invocation_id=ctx.parent_invocation_id,
            context=freeze_mapping(ctx.to_dict(), "ApprovalRequest.context"),
            tool_fingerprint=tool_fingerprint(entry.definition),
            requested_at=now.isoformat(),
            expires_at=None
            if lifetime is None
            else (now + dt.timedelta(seconds=lifetime)).isoformat(),
        )
        key = self._key
        if key is not None:
            request = _with_signature(request, _signature(key, request))
        memory = _Memory(
            request_digest(request),
            _expiry(request),
            signed=key is not None,
        )
        with self._lock:
            self._held[request.invocation_id] = memory
            _forget(self._held, time.time(), keep_signed=False)
        return request

    def claim(
        self,
        request: ApprovalRequest,
        session: Session | None,
        *,
        approved: bool,
    ) -> Claim:
        """Take *request* for one resume, or raise :class:`ApprovalError`.

        With a *session*, what runs is the session's own pending request,
        and *request* must be the same in everything; without one, a
        request this dispatcher remembers holding (the same in everything)
        or one whose signature verifies. An expired request is refused
        (declining it is allowed). Each request is resumed once.
        """
        inv = request.invocation_id
        with self._lock:
            now = time.time()
            _forget(self._resumed, now, keep_signed=True)
            done = self._resumed.get(inv)
            if done is not None:
                raise _again(request, done.status)
            given = request_digest(request)
            if session is not None:
                found = _verified_in(session, request, given)
            else:
                found = request
                self._verify(request, given)
            expires = _expiry(found)
            if approved and expires is not None and now >= expires:
                msg = (
                    f"The request for {request.call.name!r} (invocation "
                    f"{inv}) expired at {found.expires_at}: a person's "
                    "approval is valid only so long. Nothing ran; decline "
                    "it (approved=False) and ask again if still wanted."
                )
                raise ApprovalError(msg)
            if session is not None and session.resolve(inv) is None:
                raise _not_pending(request, session)
            taken = self._held.pop(inv, None)
            memory = _Memory(
                given, expires, signed=found.signature is not None
            )
            memory.status = RUNNING
            self._resumed[inv] = memory
            return Claim(found, session, memory, from_memory=taken is not None)

    def _verify(self, request: ApprovalRequest, given: bytes) -> None:
        """Check that *request* is what this dispatcher held, or signed.

        Raises:
            ApprovalError: *request* differs from what was held, its
                signature does not verify, or it cannot be verified.
        """
        held = self._held.get(request.invocation_id)
        if held is not None:
            if not hmac.compare_digest(held.digest, given):
                raise _changed(request, "the request this dispatcher held")
            return
        key = self._key
        if key is None:
            msg = (
                f"The request for {request.call.name!r} (invocation "
                f"{request.invocation_id}) was not held by this dispatcher "
                "(or is no longer remembered), so it cannot tell whether "
                "it is the call that was held. Resume it with the Session "
                "it is pending in (context=session), or give every "
                "dispatcher the same approval_key so that requests carry a "
                "signature. Nothing ran."
            )
            raise ApprovalError(msg)
        signature = request.signature
        if (
            signature is None
            or not signature.isascii()  # compare_digest refuses the rest
            or not hmac.compare_digest(signature, _signature(key, request))
        ):
            raise _changed(request, "what was signed when it was held")

    def release(self, claim: Claim) -> None:
        """Undo *claim*: nothing ran, so the request is pending again."""
        request = claim.request
        inv = request.invocation_id
        with self._lock:
            if self._resumed.get(inv) is claim.memory:
                del self._resumed[inv]
            if claim.from_memory:
                memory = claim.memory
                memory.status = HELD
                self._held[inv] = memory
        if claim.session is not None:
            claim.session.hold(request)

    def finish(self, claim: Claim, status: str) -> None:
        """Remember how the resume of *claim* ended."""
        claim.memory.status = status

    def remembered(self) -> tuple[int, int]:
        """How many held and resumed requests are remembered (for tests)."""
        with self._lock:
            _forget(self._resumed, time.time(), keep_signed=True)
            return len(self._held), len(self._resumed)


def _forget(
    memory: OrderedDict[str, _Memory], now: float, *, keep_signed: bool
) -> None:
    """Drop expired entries, then the oldest past :data:`MAX_REMEMBERED`.

    With *keep_signed* (the resumed requests), a signed one is kept until
    it expires, since its signature would verify again (a dispatcher with
    a key gives every request a lifetime), and a running one is kept.
    """
    while memory:
        first = next(iter(memory.values()))
        expired = first.expires is not None and now >= first.expires
        if expired or (
            len(memory) > MAX_REMEMBERED
            and not (keep_signed and (first.signed or first.status == RUNNING))
        ):
            memory.popitem(last=False)
        else:
            break


def _with_signature(
    request: ApprovalRequest, signature: str
) -> ApprovalRequest:
    return attrs.evolve(request, signature=signature)


def _verified_in(
    session: Session, request: ApprovalRequest, given: bytes
) -> ApprovalRequest:
    """The session's own pending request, if *request* is the same."""
    held = session.pending.get(request.invocation_id)
    if held is None:
        raise _not_pending(request, session)
    if not hmac.compare_digest(request_digest(held), given):
        raise _changed(
            request, f"the request pending in session {session.id!r}"
        )
    return held


def _not_pending(request: ApprovalRequest, session: Session) -> ApprovalError:
    inv = request.invocation_id
    prefix = f"The call to {request.call.name!r} (invocation {inv}) "
    result = session.outcome(inv)
    if result is None:
        said = (
            f"is not pending in session {session.id!r}: it was resumed "
            "already (it may have run), or made in another session."
        )
    elif result.is_error:
        said = (
            "was resumed already and ended with an error: "
            f"{bounded(result.error or '', 300)}"
        )
    else:
        said = "was resumed already and ran; its result is in the session."
    return ApprovalError(f"{prefix}{said} This resume ran nothing.")


def _changed(request: ApprovalRequest, what: str) -> ApprovalError:
    return ApprovalError(
        f"The request for {request.call.name!r} (invocation "
        f"{request.invocation_id}) is not {what}: its tool, arguments, "
        "context or ids were changed, or it was signed with another key. "
        "Only the call that was held can be resumed. Nothing ran."
    )


_AGAIN: Final = {
    RUNNING: "is being resumed right now (its tool may be running)",
    DONE: "was resumed already",
    DECLINED: "was declined already",
    INTERRUPTED: (
        "was resumed already and interrupted while its tool ran, so it may "
        "have had effects; check them before asking again"
    ),
}


def _again(request: ApprovalRequest, status: str) -> ApprovalError:
    return ApprovalError(
        f"The call to {request.call.name!r} (invocation "
        f"{request.invocation_id}) {_AGAIN[status]}; a request is resumed "
        "once. This resume ran nothing."
    )


# -- resuming ----------------------------------------------------------------


def check_request(
    request: object, entry: ToolEntry | None, approved: object
) -> ApprovalRequest:
    """*request* if it can be resumed against *entry*, else a clear error."""
    if not isinstance(request, ApprovalRequest):
        msg = (
            "resume() takes the ApprovalRequest of a pending result "
            f"(result.approval), got {type(request).__name__}."
        )
        raise TypeError(msg)
    if type(approved) is not bool:
        msg = (
            f"resume() approved= must be True or False, got {approved!r:.40}."
        )
        raise TypeError(msg)
    name = request.call.name
    if entry is None:
        msg = (
            f"The tool {name!r} of this request is not registered here, so "
            "the call cannot be resumed. Register the same tool, or tell "
            "the model the call was not made."
        )
        raise ApprovalError(msg)
    if tool_fingerprint(entry.definition) != request.tool_fingerprint:
        msg = (
            f"The tool {name!r} changed since this call was requested (its "
            "definition is not the one the person approved): the call is "
            "refused. Ask for a new approval of a new call."
        )
        raise ApprovalError(msg)
    return request


def _held_text(request: ApprovalRequest, name: str) -> str | None:
    value = request.context.get(name)
    if value is None or isinstance(value, str):
        return value
    msg = (
        f"The request for {request.call.name!r} holds a bad {name}: "
        f"{type(value).__name__}. Nothing ran."
    )
    raise ApprovalError(msg)


def resumed_template(
    request: ApprovalRequest, context: ExecutionContext | Session | None
) -> ExecutionContext:
    """The resumed call's template: held identity, authority of now.

    Identity (user, session, agent, turn, lineage, call and invocation
    ids) is the held call's; metadata, typed values, state, prior results
    and scope come from *context* (a template or the session; None gives
    none). A *context* naming another user or session is refused.

    Raises:
        ApprovalError: *context* names another user or session.
        TypeError: *context* is of another type (a host bug).
    """
    user = _held_text(request, "user_id")
    session_id = _held_text(request, "session_id")
    turn = request.context.get("turn", 0)
    if type(turn) is not int:
        msg = f"The request for {request.call.name!r} holds a bad turn."
        raise ApprovalError(msg)
    given: object = context
    if given is None:
        now = _NO_AUTHORITY
        named_user, named_session = None, None
    elif isinstance(given, Session):
        now = given.context()
        named_user, named_session = given.user_id, given.id
    elif type(given) is ExecutionContext:
        now = given
        named_user, named_session = given.user_id, given.session_id
    else:
        msg = (
            "resume() context= takes an ExecutionContext or a Session (the "
            "authority to resume with), got "
            f"{type(given).__name__}."
        )
        raise TypeError(msg)
    for what, named, held in (
        ("user", named_user, user),
        ("session", named_session, session_id),
    ):
        if named is not None and named != held:
            msg = (
                f"The call to {request.call.name!r} was held for {what} "
                f"{held!r:.80}; the context given to resume names {what} "
                f"{named!r:.80}. A call resumes on behalf of the {what} it "
                "was made for: pass that one's context, or one naming no "
                f"{what}. Nothing ran."
            )
            raise ApprovalError(msg)
    return ExecutionContext(
        invocation_id=request.invocation_id,
        session_id=session_id,
        turn=turn,
        user_id=user,
        agent_id=_held_text(request, "agent_id"),
        tool_name=request.call.name,
        tool_call_id=request.call.id,
        parent_invocation_id=request.parent_invocation_id,
        metadata=now.metadata,
        state=now.state,
        prior_results=now.prior_results,
        values=now.values,
        scope=now.scope,
    )


_NO_AUTHORITY: Final = ExecutionContext(invocation_id="")


def denied_result(request: ApprovalRequest, reason: str | None) -> ToolResult:
    """The error result of a call a person declined, worded for the model."""
    name = request.call.name
    said = "" if reason is None else f" Reason: {bounded(reason, MAX_REASON)}"
    message = (
        f"The call to {name!r} was not approved by a person, so it did not "
        f"run.{said} Do not repeat it unless the user asks again."
    )
    return ToolResult(
        name=name,
        call_id=request.call.id,
        invocation_id=request.invocation_id,
        is_error=True,
        error=message,
        exception=ApprovalDenied(message, reason),
    )


def interrupted_result(
    request: ApprovalRequest, exc: BaseException
) -> ToolResult:
    """The result recorded for a resumed call interrupted while it ran."""
    name = request.call.name
    message = (
        f"The call to {name!r} was interrupted while it ran "
        f"({exception_text(exc, 200)}), after a person approved it: it may "
        "have had effects. Do not repeat it blindly; check first."
    )
    return ToolResult(
        name=name,
        call_id=request.call.id,
        invocation_id=request.invocation_id,
        is_error=True,
        error=message,
        exception=exc,
    )


@final
class Resumption:
    """One resume, claimed: run it, then :meth:`ended` or :meth:`interrupted`.

    Attributes:
        started: Whether the tool's body has started (set by the entry
            :meth:`watch` gives the prepared call).
    """

    __slots__ = ("_approvals", "_claim", "started")

    def __init__(self, approvals: Approvals, claim: Claim) -> None:
        self._approvals = approvals
        self._claim = claim
        self.started = False

    @property
    def session(self) -> Session | None:
        """The session the request was taken off, if any."""
        return self._claim.session

    @property
    def request(self) -> ApprovalRequest:
        """The request that runs."""
        return self._claim.request

    def release(self) -> None:
        """Nothing ran: the request is pending again."""
        self._approvals.release(self._claim)

    def ended(self, result: ToolResult) -> None:
        """The resume ended with *result* (recorded by the caller)."""
        declined = isinstance(result.exception, ApprovalDenied)
        self._approvals.finish(self._claim, DECLINED if declined else DONE)

    def interrupted(self, exc: BaseException) -> None:
        """The resume was interrupted by *exc* (which propagates).

        Before the body started, the claim is released and the request is
        pending again; after, the interruption is remembered and recorded
        in the session, so a retry is told the truth.
        """
        if not self.started:
            self.release()
            return
        self._approvals.finish(self._claim, INTERRUPTED)
        session = self._claim.session
        if session is not None:
            session.record(interrupted_result(self._claim.request, exc))

    def watch(self, entry: ToolEntry) -> ToolEntry:
        """A copy of *entry* whose body sets :attr:`started` when it starts."""
        watched = object.__new__(ToolEntry)
        for name in ToolEntry.__slots__:
            setattr(watched, name, getattr(entry, name))
        mode = entry.mode
        if mode == ASYNC:
            watched.fn = _watch_async(self, entry.fn)
        elif mode == ASYNC_STREAM:
            watched.fn = _watch_async_stream(self, entry.fn)
        else:
            watched.fn = _watch_sync(self, entry.fn)
        return watched


def _watch_sync(r: Resumption, fn: Callable[..., Any]) -> Callable[..., Any]:
    def body(*args: Any, **kwargs: Any) -> Any:
        r.started = True
        return fn(*args, **kwargs)

    return body


def _watch_async(
    r: Resumption, fn: Callable[..., Any]
) -> Callable[..., Awaitable[Any]]:
    async def body(*args: Any, **kwargs: Any) -> Any:
        r.started = True
        return await fn(*args, **kwargs)

    return body


def _watch_async_stream(
    r: Resumption, fn: Callable[..., Any]
) -> Callable[..., AsyncIterator[Any]]:
    async def body(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        r.started = True
        gen = fn(*args, **kwargs)
        try:
            async for item in gen:
                yield item
        finally:
            await gen.aclose()

    return body
