"""OpenTelemetry tracing for tool calls: one span per call.

:class:`OpenTelemetryInterceptor` opens an ``execute_tool {tool name}``
span around every dispatched call, attributed per the OpenTelemetry GenAI
semantic conventions for tool execution plus the call's context under a
``toolctx.`` namespace, and makes it the *current* span while the tool
runs, so spans the tool starts itself (HTTP clients, databases, nested
tool calls) become its children.

:func:`inject_traceparent` copies the current span's W3C trace context
into an :class:`~toolctx.ExecutionContext`'s metadata; the interceptor
reads it back (``metadata["traceparent"]``) to continue a remote trace
when no span is active where the call is dispatched.

This module needs the ``otel`` extra (``pip install 'toolctx[otel]'``,
which installs ``opentelemetry-api``); ``import toolctx`` never imports
it, nor OpenTelemetry.

.. versionadded:: 0.1.0

The GenAI semantic conventions' attribute names are spelled out here, so
that only ``opentelemetry-api`` is needed at run time. Text from the
model (a tool name, a call id, arguments) is
:func:`~toolctx._text.escaped` before it becomes a span attribute, so that
an exporter can encode it. W3C trace context travels in a call's metadata
under the ``traceparent`` and ``tracestate`` keys.
"""

from __future__ import annotations

import json
import threading

from collections.abc import Callable, Mapping
from contextvars import Token
from typing import Any, TypeAlias, final

import attrs

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import (
    TraceContextTextMapPropagator,
)

from toolctx._context.execution import ExecutionContext
from toolctx._records import ToolCall, ToolResult
from toolctx._text import escaped
from toolctx._tools.registry import Registry


try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.util.types import AttributeValue
except ImportError as exc:  # pragma: no cover - exercised without the extra
    msg = (
        "toolctx.otel needs OpenTelemetry, which is not installed. Install "
        "the extra: pip install 'toolctx[otel]' (or opentelemetry-api)."
    )
    raise ImportError(msg) from exc


__all__ = [
    "TRACEPARENT",
    "TRACESTATE",
    "OpenTelemetryInterceptor",
    "SpanAttributes",
    "inject_traceparent",
]

SpanAttributes: TypeAlias = Callable[
    [ToolCall, ExecutionContext], Mapping[str, AttributeValue]
]
"""A hook returning extra attributes for a call's span.

.. versionadded:: 0.1.0
"""


def _scope_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolctx")
    except PackageNotFoundError:  # pragma: no cover - running from source
        return None


class _Open:
    """One started span: what ``after`` needs to end it."""

    __slots__ = ("outer", "span", "token")

    def __init__(
        self,
        span: trace.Span,
        token: Token[otel_context.Context],
        outer: _Open | None,
    ) -> None:
        self.span = span
        self.token = token
        # The same interceptor listed twice opens two spans for one call.
        self.outer = outer


@final
class OpenTelemetryInterceptor:
    """An interceptor that traces every tool call as an OpenTelemetry span.

    Each call gets one span named ``execute_tool {tool name}`` (kind
    ``INTERNAL``) with the GenAI semantic conventions' attributes
    ``gen_ai.operation.name`` (``"execute_tool"``), ``gen_ai.tool.name``,
    ``gen_ai.tool.call.id`` (the model's call id), ``gen_ai.tool.type``
    (``"function"``) and, given a *registry*, ``gen_ai.tool.description``;
    plus the context's ids: ``toolctx.invocation_id``,
    ``toolctx.parent_invocation_id``, ``toolctx.session_id``,
    ``toolctx.user_id``, ``toolctx.agent_id`` and ``toolctx.turn`` (each
    only when set).

    The span is a child of the span that is current where the call is
    dispatched; with none, of the remote parent in the context's
    ``metadata["traceparent"]`` (see :func:`inject_traceparent`), if any.
    It is the current span while the tool runs (also in the worker thread
    of a sync tool under ``adispatch``), so the tool's own spans and nested
    tool calls nest under it; the previous OpenTelemetry context is
    restored when the call ends.

    A failed call (the tool raised, bad arguments, unknown tool, a denial
    by an interceptor after this one) sets the span status to ``ERROR``
    with the model-readable error as description, ``error.type`` to the
    exception's class name (``"tool_error"`` when there is none), and
    records the exception as a span event.

    Put it *first* in the dispatcher's interceptors: it then traces every
    call, including the ones a later interceptor denies, and the others
    run inside its span.

    Args:
        tracer_provider: Where the spans go; the global provider when
            omitted (set up by your OpenTelemetry SDK configuration).
        tracer: A tracer to use instead of one from *tracer_provider*.
        registry: Read each tool's description from it for
            ``gen_ai.tool.description``.
        record_arguments: Record the model's arguments as
            ``gen_ai.tool.call.arguments`` (JSON text). Off by default:
            arguments may hold personal or secret data.
        record_output: Record a successful call's output as
            ``gen_ai.tool.call.result`` (JSON text). Off by default, for
            the same reason.
        record_user_id: Record ``toolctx.user_id``. The user id is the
            host's opaque identifier, so it is on by default; turn it off
            when your user ids are personal data (emails, names).
        continue_traceparent: With no span active, continue the trace in
            the context's ``metadata["traceparent"]``.
        propagate_traceparent: Add the tool span's ``traceparent`` (and
            ``tracestate``) to the metadata of the context the tool runs
            with, so a tool that forwards its metadata (a remote worker, an
            MCP request's ``_meta``) carries the trace along.
        span_attributes: A hook returning more attributes for a call's
            span, called before the span starts.

    Raises:
        ValueError: Both *tracer* and *tracer_provider* were given.

    .. versionadded:: 0.1.0
    """

    __slots__ = (
        "_lock",
        "_open",
        "_registry",
        "_span_attributes",
        "_tracer",
        "continue_traceparent",
        "propagate_traceparent",
        "record_arguments",
        "record_output",
        "record_user_id",
    )

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        tracer: trace.Tracer | None = None,
        registry: Registry | None = None,
        record_arguments: bool = False,
        record_output: bool = False,
        record_user_id: bool = True,
        continue_traceparent: bool = True,
        propagate_traceparent: bool = False,
        span_attributes: SpanAttributes | None = None,
    ) -> None:
        if tracer is not None and tracer_provider is not None:
            msg = (
                "Pass either tracer or tracer_provider to "
                "OpenTelemetryInterceptor, not both."
            )
            raise ValueError(msg)
        if tracer is None:
            tracer = trace.get_tracer(
                "toolctx",
                _scope_version(),
                tracer_provider=tracer_provider,
            )
        self._tracer = tracer
        self._registry = registry
        self._span_attributes = span_attributes
        self.record_arguments = record_arguments
        self.record_output = record_output
        self.record_user_id = record_user_id
        self.continue_traceparent = continue_traceparent
        self.propagate_traceparent = propagate_traceparent
        self._open: dict[str, _Open] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            "<toolctx.otel.OpenTelemetryInterceptor("
            f"record_arguments={self.record_arguments}, "
            f"record_output={self.record_output}, "
            f"record_user_id={self.record_user_id})>"
        )

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Start the call's span and make it the current span.

        .. versionadded:: 0.1.0
        """
        attributes = self._start_attributes(call, context)
        parent = otel_context.get_current()
        if self.continue_traceparent and not _has_valid_span(parent):
            parent = _remote_parent(context.metadata, parent)
        span = self._tracer.start_span(
            f"{_EXECUTE_TOOL} {escaped(call.name)}",
            context=parent,
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
        )
        current = trace.set_span_in_context(span, parent)
        if self.propagate_traceparent:
            context = _with_trace_headers(context, current)
        token = otel_context.attach(current)
        key = context.invocation_id
        with self._lock:
            self._open[key] = _Open(span, token, self._open.get(key))
        return context

    def after(
        self,
        call: ToolCall,  # noqa: ARG002 - the Interceptor protocol
        context: ExecutionContext,
        result: ToolResult,
    ) -> ToolResult:
        """End the call's span and restore the previous current span.

        .. versionadded:: 0.1.0
        """
        key = context.invocation_id
        with self._lock:
            entry = self._open.pop(key, None)
            if entry is not None and entry.outer is not None:
                self._open[key] = entry.outer
        if entry is None:
            return result
        span = entry.span
        try:
            if span.is_recording():
                _record_result(span, result, output=self.record_output)
        finally:
            otel_context.detach(entry.token)
            span.end()
        return result

    def on_approval(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> None:
        """Trace a call held for approval, or declined, as a short span.

        The span is named ``tool_approval {tool name}``, carries the
        call's ids (``toolctx.invocation_id`` is the one the approved run's
        ``execute_tool`` span will have) and ``toolctx.approval``:
        ``"requested"`` or ``"declined"``. Nothing ran, so it has no
        ``gen_ai.operation.name``.

        .. versionadded:: 0.2.0
        """
        attributes = self._start_attributes(call, context)
        del attributes[_OPERATION_NAME]
        attributes["toolctx.approval"] = (
            "requested" if result.approval is not None else "declined"
        )
        self._tracer.start_span(
            f"tool_approval {escaped(call.name)}",
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
        ).end()

    def _start_attributes(
        self, call: ToolCall, context: ExecutionContext
    ) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {
            _OPERATION_NAME: _EXECUTE_TOOL,
            _TOOL_NAME: escaped(call.name),
            _TOOL_TYPE: "function",
        }
        if call.id is not None:
            attributes[_TOOL_CALL_ID] = escaped(call.id)
        if self._registry is not None:
            entry = self._registry.entry(call.name)
            if entry is not None and entry.definition.description:
                attributes[_TOOL_DESCRIPTION] = entry.definition.description
        if self.record_arguments:
            attributes[_TOOL_CALL_ARGUMENTS] = _arguments_text(call.arguments)
        attributes["toolctx.invocation_id"] = context.invocation_id
        ids = {
            "toolctx.parent_invocation_id": context.parent_invocation_id,
            "toolctx.session_id": context.session_id,
            "toolctx.user_id": context.user_id
            if self.record_user_id
            else None,
            "toolctx.agent_id": context.agent_id,
        }
        attributes.update({k: v for k, v in ids.items() if v is not None})
        attributes["toolctx.turn"] = context.turn
        if self._span_attributes is not None:
            attributes.update(self._span_attributes(call, context))
        return attributes


def inject_traceparent(
    context: ExecutionContext,
    *,
    otel: otel_context.Context | None = None,
) -> ExecutionContext:
    """Return *context* with the current span's W3C trace context added.

    The span's ``traceparent`` (and ``tracestate``, when there is one) go
    into the metadata under :data:`TRACEPARENT` and :data:`TRACESTATE`, so
    whoever receives the context (a remote worker, an MCP server through
    the request's ``_meta``) can continue the trace; an
    :class:`OpenTelemetryInterceptor` there does so by itself when no span
    is active. Without a valid current span, *context* comes back as is.

    Args:
        context: The context to annotate (usually a host's template).
        otel: The OpenTelemetry context whose span to use; the current one
            when omitted.

    Returns:
        A new context with the trace headers merged into its metadata, or
        *context* itself.

    .. versionadded:: 0.1.0
    """
    return _with_trace_headers(context, otel)


# The GenAI semantic conventions' names (the string values of
# opentelemetry.semconv._incubating.attributes.gen_ai_attributes).
_OPERATION_NAME = "gen_ai.operation.name"
_EXECUTE_TOOL = "execute_tool"
_TOOL_NAME = "gen_ai.tool.name"
_TOOL_CALL_ID = "gen_ai.tool.call.id"
_TOOL_DESCRIPTION = "gen_ai.tool.description"
_TOOL_TYPE = "gen_ai.tool.type"
_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
_ERROR_TYPE = "error.type"  # opentelemetry.semconv.attributes
_TOOL_ERROR = "tool_error"


def _record_result(
    span: trace.Span, result: ToolResult, *, output: bool
) -> None:
    """Set *result* on *span*: its output (if *output*) or its failure."""
    if not result.is_error:
        if output:
            span.set_attribute(_TOOL_CALL_RESULT, _json_text(result.output))
        return
    exception = result.exception
    error_type = (
        type(exception).__qualname__ if exception is not None else _TOOL_ERROR
    )
    span.set_attribute(_ERROR_TYPE, error_type)
    if exception is not None:
        span.record_exception(exception)
    span.set_status(trace.Status(trace.StatusCode.ERROR, result.error))


def _arguments_text(arguments: str | bytes | Mapping[str, Any] | None) -> str:
    """The model's *arguments* as JSON text, as a span attribute."""
    if isinstance(arguments, str):
        return escaped(arguments)
    if isinstance(arguments, bytes):
        return arguments.decode(errors="replace")
    if arguments is None:
        return "{}"
    return _json_text(dict(arguments))


def _json_text(value: Any) -> str:
    """*value* as JSON text (a string as is), as a span attribute."""
    if isinstance(value, str):
        return escaped(value)
    return escaped(json.dumps(value, ensure_ascii=False, default=repr))


TRACEPARENT = "traceparent"
"""The metadata key holding a W3C ``traceparent`` header value.

.. versionadded:: 0.1.0
"""

TRACESTATE = "tracestate"
"""The metadata key holding a W3C ``tracestate`` header value.

.. versionadded:: 0.1.0
"""

_W3C = TraceContextTextMapPropagator()


def _with_trace_headers(
    context: ExecutionContext, otel: otel_context.Context | None
) -> ExecutionContext:
    """*context* with *otel*'s span headers in its metadata, if valid.

    Without a valid span in *otel* (the current context when None),
    *context* itself.
    """
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, context=otel)
    if not carrier:
        return context
    metadata = {k: v for k, v in context.metadata.items() if k != TRACESTATE}
    metadata.update(carrier)  # a stale tracestate must not outlive its span
    return attrs.evolve(context, metadata=metadata)


def _has_valid_span(ctx: otel_context.Context) -> bool:
    """Whether *ctx* holds a valid span (a local or remote parent)."""
    return trace.get_current_span(ctx).get_span_context().is_valid


def _remote_parent(
    metadata: Mapping[str, object], ctx: otel_context.Context
) -> otel_context.Context:
    """*ctx* with the remote span of ``metadata["traceparent"]``, if valid."""
    traceparent = metadata.get(TRACEPARENT)
    if not isinstance(traceparent, str):
        return ctx
    carrier = {TRACEPARENT: traceparent}
    tracestate = metadata.get(TRACESTATE)
    if isinstance(tracestate, str):
        carrier[TRACESTATE] = tracestate
    # An invalid header leaves ctx as it was: the span starts a new trace.
    return _W3C.extract(carrier, context=ctx)
