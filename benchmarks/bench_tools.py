"""Tools the benchmarks send to worker processes (importable by workers)."""

from __future__ import annotations

from toolctx import execution_context, tool


def raw_add(a: int, b: int) -> int:
    """Add two integers, no toolctx."""
    return a + b


@tool
def add(a: int, b: int) -> int:
    """Add two integers, reading the caller from the context."""
    execution_context()
    return a + b
