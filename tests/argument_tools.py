"""A tool that refuses its arguments itself, for tests/test_argument_problems.

Module-level so that a spawned worker process finds it by importing this
module.
"""

from __future__ import annotations

from toolctx import Registry, ToolArgumentsError


registry = Registry()


@registry.tool
def halve(n: int) -> int:
    """Halve an even number.

    Args:
        n: The number to halve.
    """
    if n % 2:
        msg = "n must be even"
        raise ToolArgumentsError(msg)
    return n // 2
