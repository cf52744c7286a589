"""What :mod:`toolctx.otel` writes on a tool call's span.

The GenAI semantic conventions' attribute names, spelled out so that only
``opentelemetry-api`` is needed at run time, and how a call's result, its
arguments and its output become span attributes and status. Imported by
:mod:`toolctx.otel` only, after its check that OpenTelemetry is installed.
Text from the model (a tool name, a call id, arguments) is
:func:`~toolctx._text.escaped`, so that an exporter can encode it.
"""

from __future__ import annotations

import json

from collections.abc import Mapping
from typing import Any

from opentelemetry import trace

from toolctx._records import ToolResult
from toolctx._text import escaped


# The GenAI semantic conventions' names (the string values of
# opentelemetry.semconv._incubating.attributes.gen_ai_attributes).
OPERATION_NAME = "gen_ai.operation.name"
EXECUTE_TOOL = "execute_tool"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"  # opentelemetry.semconv.attributes
TOOL_ERROR = "tool_error"


def record_result(
    span: trace.Span, result: ToolResult, *, output: bool
) -> None:
    """Set *result* on *span*: its output (if *output*) or its failure."""
    if not result.is_error:
        if output:
            span.set_attribute(TOOL_CALL_RESULT, json_text(result.output))
        return
    exception = result.exception
    error_type = (
        type(exception).__qualname__ if exception is not None else TOOL_ERROR
    )
    span.set_attribute(ERROR_TYPE, error_type)
    if exception is not None:
        span.record_exception(exception)
    span.set_status(trace.Status(trace.StatusCode.ERROR, result.error))


def arguments_text(arguments: str | bytes | Mapping[str, Any] | None) -> str:
    """The model's *arguments* as JSON text, as a span attribute."""
    if isinstance(arguments, str):
        return escaped(arguments)
    if isinstance(arguments, bytes):
        return arguments.decode(errors="replace")
    if arguments is None:
        return "{}"
    return json_text(dict(arguments))


def json_text(value: Any) -> str:
    """*value* as JSON text (a string as is), as a span attribute."""
    if isinstance(value, str):
        return escaped(value)
    return escaped(json.dumps(value, ensure_ascii=False, default=repr))
