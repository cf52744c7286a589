"""Fast, unique invocation ids.

An id is a 64-bit random per-process prefix followed by a 64-bit counter,
as 32 hex digits. Unique across processes (the prefix is drawn again in a
forked child) and about seven times cheaper than ``uuid4().hex``.
"""

from __future__ import annotations

import itertools
import os

from collections.abc import Callable
from typing import Any


_state: list[Any] = []


# Starting at 2**60 keeps every counter at exactly 16 hex digits, so
# ``hex()`` (much cheaper than a padded format) gives fixed-width ids.
_FIRST = 1 << 60


def _reseed() -> None:
    _state[:] = [os.urandom(8).hex(), itertools.count(_FIRST).__next__]


_reseed()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed)


def new_invocation_id() -> str:
    """Return a fresh invocation id (32 lowercase hex digits)."""
    prefix: str
    counter: Callable[[], int]
    prefix, counter = _state
    return prefix + hex(counter())[2:]  # noqa: FURB116 - 2x faster here
