"""Typing cases: the context and its accessors."""

from __future__ import annotations

from typing_extensions import assert_type

from toolctx import (
    ContextKey,
    ExecutionContext,
    current_context,
    execution_context,
    use_context,
)


TENANT = ContextKey("typing_tenant", str)
LIMIT = ContextKey("typing_limit", int, default=5)
TAGS = ContextKey("typing_tags", list[str])

assert_type(TENANT, ContextKey[str])
assert_type(LIMIT, ContextKey[int])

ctx = ExecutionContext(user_id="ada", session_id="s", turn=1)
assert_type(execution_context(), ExecutionContext)
assert_type(current_context(), ExecutionContext | None)
assert_type(ctx.user_id, str | None)
assert_type(ctx.turn, int)
assert_type(ctx.invocation_id, str)
assert_type(ctx.get(TENANT), str | None)
assert_type(ctx.get(TENANT, "eu"), str)
assert_type(ctx.require(LIMIT), int)
assert_type(ctx.with_value(TENANT, "eu"), ExecutionContext)
assert_type(ctx.without(TENANT), ExecutionContext)
assert_type(ctx.with_metadata(a=1), ExecutionContext)
assert_type(ctx.child(agent_id="sub"), ExecutionContext)
assert_type(ctx.scope_as(int), int)

with use_context(ctx) as bound:
    assert_type(bound, ExecutionContext)
