"""Opt-in diagnostics for contexts lost on the way to another thread."""

from __future__ import annotations


def lost_context_hint() -> str | None:
    """Return a more specific NoExecutionContextError message, if any."""
    return None
