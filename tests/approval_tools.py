"""Tools that wait for approval, importable by a resuming subprocess."""

from __future__ import annotations

import attrs

from toolctx import (
    ExecutionContext,
    Registry,
    ToolCall,
    execution_context,
    set_state,
)


@attrs.frozen
class Bank:
    """A runtime-only handle: rebuilt in every process, never stored."""

    tenant_id: str
    secret: str = attrs.field(repr=False)


def over_limit(call: ToolCall, context: ExecutionContext) -> bool:
    """Transfers above 1,000 need a person."""
    return call.arguments["amount"] > 1000  # type: ignore[index,no-any-return]


registry = Registry()


@registry.tool(needs_approval=over_limit)
def transfer(to: str, amount: int) -> dict[str, object]:
    """Move money to someone."""
    ctx = execution_context()
    bank = ctx.scope_as(Bank)
    set_state("last_transfer", amount)
    return {
        "to": to,
        "amount": amount,
        "by": ctx.user_id,
        "tenant": bank.tenant_id,
        "secret_seen": bank.secret == "s3cr3t",
        "invocation_id": ctx.invocation_id,
    }
