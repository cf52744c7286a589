"""Test doubles shared by the test modules."""

from __future__ import annotations

from toolctx import ExecutionContext, ToolCall, ToolResult


class PassThrough:
    """An interceptor that changes nothing but the path a call takes.

    Any interceptor sends calls down the dispatcher's general path instead
    of the fast one, so tests use this one to compare the two.
    """

    def before(
        self, call: ToolCall, context: ExecutionContext
    ) -> ExecutionContext:
        """Let the call run with its context."""
        return context

    def after(
        self, call: ToolCall, context: ExecutionContext, result: ToolResult
    ) -> ToolResult:
        """Hand the result back unchanged."""
        return result
