"""The plain records that cross the dispatcher: definitions, calls, results.

The call, result, chunk, progress and approval records live here; the
definition records (``ToolDefinition``, ``ToolAnnotations``) live in
:mod:`toolctx._definition_records` and are re-exported.
"""

from __future__ import annotations

import functools

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple, final

import attrs

from toolctx._builders import record_builder
from toolctx._definition_records import ToolAnnotations, ToolDefinition
from toolctx._frozen import ENTRIES, depth_problem, freeze_mapping, thaw
from toolctx._types.output import to_json as output_to_json_data
from toolctx.content import part_from_dict, part_to_dict, parts_of
from toolctx.exceptions import ContextDataError


__all__ = [
    "APPROVAL_FORMAT",
    "NO_CHANGES",
    "NO_CONTEXT",
    "NO_METADATA",
    "ApprovalRequest",
    "ToolAnnotations",
    "ToolCall",
    "ToolChunk",
    "ToolDefinition",
    "ToolProgress",
    "ToolResult",
    "frozen_view",
    "new_result",
    "result_from_dict",
    "result_to_dict",
]


NO_METADATA: Mapping[str, Any] = freeze_mapping({}, "ToolResult.metadata")
"""The metadata of a result that published none (shared, read-only)."""
NO_CHANGES: Mapping[str, Any] = freeze_mapping({}, "ToolResult.state_changes")
"""The state changes of a result that made none (shared, read-only)."""


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


NO_CONTEXT: Mapping[str, Any] = freeze_mapping({}, "ApprovalRequest.context")
"""The context of a request made without one (shared, read-only)."""

APPROVAL_FORMAT: Final = "toolctx.approval/1"
"""The ``format`` of :meth:`ApprovalRequest.to_dict` data."""


@final
@attrs.frozen(kw_only=True)
class ApprovalRequest:
    """A call that waits for a person: everything needed to resume it.

    What dispatching a tool declared ``@tool(needs_approval=...)`` returns
    on :attr:`ToolResult.approval` instead of running it. JSON-safe
    through :meth:`to_dict` (store it, show it, send it to the person);
    :meth:`Dispatcher.resume <toolctx.Dispatcher.resume>` runs the call
    later, in this process or another, as the same invocation.

    Attributes:
        call: The call, its arguments decoded and checked (a read-only
            mapping).
        invocation_id: The invocation the call will run as.
        parent_invocation_id: The invocation it was made from, if nested.
        context: The call's context as JSON data
            (:meth:`ExecutionContext.to_dict
            <toolctx.ExecutionContext.to_dict>`): who asked, session,
            turn, metadata, values; never the scope.
        tool_fingerprint: A digest of the tool's definition when asked;
            resuming refuses a request whose tool has changed since.
        requested_at: When the call was made (UTC, ISO 8601).
        expires_at: When the request stops being resumable (UTC, ISO
            8601), or None: set by ``Dispatcher(approval_lifetime=...)``.
        signature: With ``Dispatcher(approval_key=...)``, an HMAC-SHA256
            of everything above, in hex, so that a request changed on its
            way (a review UI, a queue) is refused; else None.

    .. versionadded:: 0.2.0
    .. versionchanged:: 0.1.0 ``expires_at`` and ``signature``.
    """

    call: ToolCall
    invocation_id: str
    parent_invocation_id: str | None = None
    context: Mapping[str, Any] = attrs.field(default=NO_CONTEXT, repr=False)
    tool_fingerprint: str = ""
    requested_at: str = ""
    expires_at: str | None = None
    signature: str | None = attrs.field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the request as JSON data (format ``toolctx.approval/1``).

        .. versionadded:: 0.1.0
        """
        return approval_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalRequest:
        """Rebuild a request from :meth:`to_dict` output (possibly via JSON).

        The invocation id must be one a dispatcher makes (32 lowercase
        hex digits); the other ids must be non-empty single lines.
        Rebuilding checks the data's shape only: :meth:`Dispatcher.resume
        <toolctx.Dispatcher.resume>` decides whether it is a request that
        was really held.

        Raises:
            ContextDataError: *data* is not a request of this format: a
                field is missing, unknown or of the wrong type, or an id
                is not one a dispatcher makes; the message names the
                field.

        .. versionadded:: 0.1.0
        """
        request = approval_from_dict(data)
        _check_ids(request)
        return request


_MAX_ID = 256
"""Longest call or parent invocation id a request may carry."""
_HEX_DIGITS = frozenset("0123456789abcdef")


def _check_ids(request: ApprovalRequest) -> None:
    """Refuse ids a dispatcher would not have made or could not log.

    Raises:
        ContextDataError: An id is empty, spans lines or is too long, the
            invocation id is not a dispatcher's (32 lowercase hex digits),
            the context names another invocation, or ``expires_at`` is
            not an ISO 8601 time with a zone.
    """
    import datetime as dt

    what = "ApprovalRequest"
    inv = request.invocation_id
    context = request.context
    if len(inv) != 32 or not set(inv) <= _HEX_DIGITS:  # noqa: PLR2004
        msg = (
            f"{what} field 'invocation_id' must be a dispatcher's "
            f"invocation id (32 lowercase hex digits), got {inv!r:.40}."
        )
        raise ContextDataError(msg)
    for key, value in (
        ("id", request.call.id),
        ("parent_invocation_id", request.parent_invocation_id),
    ):
        if value is not None and not (
            0 < len(value) <= _MAX_ID and value.isprintable()
        ):
            msg = (
                f"{what} field {key!r} must be a non-empty single line of "
                f"at most {_MAX_ID} printable characters, got {value!r:.40}."
            )
            raise ContextDataError(msg)
    if context.get("invocation_id", inv) != inv:
        msg = (
            f"{what} field 'context' names another invocation than "
            "'invocation_id'."
        )
        raise ContextDataError(msg)
    expires = request.expires_at
    if expires is not None:
        try:
            when = dt.datetime.fromisoformat(expires)
        except ValueError:
            when = None
        if when is None or when.tzinfo is None:
            msg = (
                f"{what} field 'expires_at' must be an ISO 8601 time with "
                f"a zone, got {expires!r:.40}."
            )
            raise ContextDataError(msg)


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
        approval: For a call that waits for a person, the
            :class:`ApprovalRequest` to resume it with (nothing ran:
            ``output`` is None and ``is_error`` false); else None.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 ``approval``.
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
    metadata: Mapping[str, Any] = attrs.field(default=NO_METADATA, repr=False)
    state_changes: Mapping[str, Any] = attrs.field(
        default=NO_CHANGES, repr=False
    )
    duration_ns: int = attrs.field(default=0, eq=False)
    approval: ApprovalRequest | None = None

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


@final
@attrs.frozen(kw_only=True)
class ToolProgress:
    """One progress report of a running call (:func:`toolctx.report_progress`).

    :meth:`Dispatcher.stream` and :meth:`Dispatcher.astream` yield these in
    order with the :class:`ToolChunk` records; listeners registered with
    :meth:`Dispatcher.on_progress` receive them as they are reported; the
    MCP server sends them as ``notifications/progress``.

    Attributes:
        name: The tool's name.
        call_id: The model's call id.
        invocation_id: The invocation reporting.
        progress: How far the call is (grows with each report).
        total: The value ``progress`` reaches when done, or None.
        message: A short human-readable status, or None.

    .. versionadded:: 0.2.0
    """

    name: str
    call_id: str | None = None
    invocation_id: str = ""
    progress: float = 0.0
    total: float | None = None
    message: str | None = None


@record_builder(ToolResult)
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
    approval: ApprovalRequest | None,
) -> ToolResult:
    """Build a ToolResult from already-frozen parts, skipping ``__init__``.

    The dispatcher makes one per call. The result is the same as
    ``ToolResult(name=name, ...)`` (there are no converters to skip);
    callers pass read-only mappings. The body is generated by
    :func:`record_builder`.
    """
    raise NotImplementedError  # pragma: no cover - replaced by the builder


def frozen_view(result: ToolResult) -> ToolResult:
    """Return *result* as later calls see it in ``prior_results``.

    Output, metadata and state changes are deep-frozen copies, so a later
    tool cannot change what the host renders for an earlier call.
    """
    from toolctx._frozen import deep_freeze

    return new_result(
        result.name,
        result.call_id,
        result.invocation_id,
        deep_freeze(result.output, "A prior result's output"),
        result.is_error,
        result.error,
        result.exception,
        _frozen_copy(result.metadata, "A prior result's metadata"),
        _frozen_copy(result.state_changes, "A prior result's state_changes"),
        result.duration_ns,
        result.approval,
    )


_NO_PRIOR_METADATA = freeze_mapping({}, "A prior result's metadata")
_NO_PRIOR_CHANGES = freeze_mapping({}, "A prior result's state_changes")


def _frozen_copy(data: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    """A deep-frozen copy of *data*; one shared empty one when it is empty."""
    if not data:
        return (
            _NO_PRIOR_METADATA
            if label == "A prior result's metadata"
            else _NO_PRIOR_CHANGES
        )
    return freeze_mapping(dict(data), label)


# -- the codec of results and approval requests ------------------------------

_FLATTEN: Final = " Flatten the data."


def json_data(value: object, where: str, *, envelope: int = 0) -> Any:
    """Return *value* as JSON data; a ContextDataError names *where*.

    Uses the tools' compiled output step (faster than a converter walk
    for arbitrary data); data nested past the limit is refused too, so
    that what is written can be read back.
    """
    try:
        data = output_to_json_data(value)
    except TypeError as exc:
        msg = f"Cannot serialize {where}: {exc}"
        raise ContextDataError(msg) from None
    subject = f"Cannot serialize {where}:" + ("" if envelope else " it")
    problem = depth_problem(data, subject, envelope=envelope)
    if problem is not None:
        raise ContextDataError(problem + _FLATTEN)
    return data


def content_from_json(data: dict[str, Any], what: str) -> None:
    """Move stored parts (``"content"``) into ``"output"``, in place.

    Raises:
        ContextDataError: ``"content"`` is not a list of parts.
    """
    content = data.pop("content", None)
    if content is None:
        return
    if not isinstance(content, list) or not content:
        msg = f"{what} field 'content' must be a non-empty list of parts."
        raise ContextDataError(msg)
    try:
        data["output"] = tuple(part_from_dict(item) for item in content)
    except ContextDataError as exc:
        msg = f"{what} field 'content' holds a bad part: {exc}"
        raise ContextDataError(msg) from None


def output_to_json(output: object, data: dict[str, Any], where: str) -> None:
    """Store *output* in *data*: parts under ``"content"``, else JSON."""
    parts = parts_of(output)
    if parts is None:
        data["output"] = json_data(output, where)
    else:
        data["output"] = None
        data["content"] = [part_to_dict(part) for part in parts]


RESULT_FORMAT: Final = "toolctx.result/1"
"""The ``format`` of :func:`result_to_dict` data."""


def result_to_dict(result: ToolResult) -> dict[str, Any]:
    """Return *result* as JSON-safe data; ``exception`` is dropped.

    A content output (a tuple of parts) is stored under ``"content"``
    (:func:`~toolctx.content.part_to_dict` each), ``"output"`` then None.

    Raises:
        ContextDataError: The output, metadata or state changes have no
            JSON form or nest deeper than 200 levels.
    """
    data: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": None,
        "is_error": result.is_error,
        "error": result.error,
        "metadata": json_data(
            result.metadata, "the result metadata", envelope=ENTRIES
        ),
        "state_changes": json_data(
            result.state_changes, "the state changes", envelope=ENTRIES
        ),
        "duration_ns": result.duration_ns,
    }
    output_to_json(result.output, data, "the result output")
    return data


def result_from_dict(data: Mapping[str, Any]) -> ToolResult:
    """Rebuild a result from :func:`result_to_dict` output.

    Raises:
        ContextDataError: *data* is not a stored result: a field is
            unknown, missing or of the wrong type, or nests too deeply.
    """
    return codec_hooks().result(data)


def approval_to_dict(request: ApprovalRequest) -> dict[str, Any]:
    """Return *request* as JSON data (format ``toolctx.approval/1``)."""
    call = request.call
    return {
        "format": APPROVAL_FORMAT,
        "call": {
            "name": call.name,
            "arguments": thaw(call.arguments),
            "id": call.id,
        },
        "invocation_id": request.invocation_id,
        "parent_invocation_id": request.parent_invocation_id,
        "context": thaw(request.context),
        "tool_fingerprint": request.tool_fingerprint,
        "requested_at": request.requested_at,
        "expires_at": request.expires_at,
        "signature": request.signature,
    }


_APPROVAL_KEYS: Final = (
    "call",
    "invocation_id",
    "context",
    "tool_fingerprint",
    "requested_at",
)


def approval_from_dict(data: Any) -> ApprovalRequest:
    """Rebuild a request from :func:`approval_to_dict` output (shape only).

    Every field is required, as written; :meth:`ApprovalRequest.from_dict`
    then checks the ids.
    """
    if isinstance(data, Mapping):
        missing = [name for name in _APPROVAL_KEYS if name not in data]
        if missing:
            msg = f"ApprovalRequest data lacks the field {missing[0]!r}."
            raise ContextDataError(msg)
    return codec_hooks().approval(data)


class _Hooks(NamedTuple):
    result: Callable[..., ToolResult]
    approval: Callable[..., ApprovalRequest]


@functools.cache
def codec_hooks() -> _Hooks:
    """Register the codec's strict hooks of results and requests, once.

    Built on first use, so that importing toolctx does not import cattrs;
    records that hold these (contexts, sessions) call this first.
    """
    from cattrs.gen import override

    from toolctx._frozen import CONTEXT_ENVELOPE
    from toolctx.codec import data_hook, record_hooks

    what = "ToolResult"
    result = record_hooks(
        ToolResult,
        RESULT_FORMAT,
        what,
        before=lambda body: content_from_json(body, what),
        exception=override(omit=True),
        approval=override(omit=True),
        output=override(struct_hook=data_hook(what, "output")),
        metadata=override(
            struct_hook=data_hook(what, "metadata", envelope=ENTRIES)
        ),
        state_changes=override(
            struct_hook=data_hook(what, "state_changes", envelope=ENTRIES)
        ),
    )
    what = "ApprovalRequest"
    record_hooks(
        ToolCall,
        None,
        "ApprovalRequest call",
        arguments=override(
            struct_hook=data_hook(
                what,
                "arguments",
                envelope=ENTRIES,
                finish=lambda d: freeze_mapping(
                    d, "ApprovalRequest.call.arguments"
                ),
            )
        ),
    )
    approval = record_hooks(
        ApprovalRequest,
        APPROVAL_FORMAT,
        what,
        context=override(
            struct_hook=data_hook(
                what,
                "context",
                envelope=CONTEXT_ENVELOPE,
                finish=lambda d: freeze_mapping(d, "ApprovalRequest.context"),
            )
        ),
    )
    return _Hooks(result, approval)
