"""W3C trace context in a call's metadata, for :mod:`toolctx.otel`.

The metadata keys of the ``traceparent`` and ``tracestate`` headers, and
the two directions: the current span's headers written into a context's
metadata, and a remote parent read back from them. Imported by
:mod:`toolctx.otel` only, after its check that OpenTelemetry is installed.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import (
    TraceContextTextMapPropagator,
)

from toolctx.context.execution import ExecutionContext


TRACEPARENT = "traceparent"
"""The metadata key holding a W3C ``traceparent`` header value.

.. versionadded:: 0.1.0
"""

TRACESTATE = "tracestate"
"""The metadata key holding a W3C ``tracestate`` header value.

.. versionadded:: 0.1.0
"""

_W3C = TraceContextTextMapPropagator()


def with_trace_headers(
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


def has_valid_span(ctx: otel_context.Context) -> bool:
    """Whether *ctx* holds a valid span (a local or remote parent)."""
    return trace.get_current_span(ctx).get_span_context().is_valid


def remote_parent(
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
