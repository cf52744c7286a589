"""What a check is, and how it reports every problem with its path.

A :data:`Check` takes one JSON value and returns the typed value, or
raises :class:`InvalidValueError` carrying *every* problem as ``(path,
message)`` pairs, the path relative to the value it was given;
containers prefix the paths of their items (:func:`prefixed`)::

    [1]: expected an integer, got the string "2"
    name: missing required property (expected a string)
    size: expected an integer >= 0, got -3
"""

from __future__ import annotations

import json
import re

from typing import TYPE_CHECKING, Any, Final

from toolctx._text import exception_text
from toolctx.exceptions import MAX_REPORTED_PROBLEMS


if TYPE_CHECKING:
    from collections.abc import Callable

    Check = Callable[[Any], Any]
    """Validate one JSON value; return the typed value."""

PathParts = tuple[str | int, ...]
"""Property names and array indices, outermost first."""
Problem = tuple[PathParts, str]
"""``(path, message)``: where a value is wrong, and how."""

MAX_DETAIL: Final = 500
"""The most characters of an exception's text a problem shows."""
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class InvalidValueError(ValueError):
    """A value does not fit its type; ``errors`` lists every problem.

    Attributes:
        errors: ``(path, message)`` pairs, the path a tuple of property
            names and array indices relative to the checked value.
    """

    def __init__(self, errors: list[Problem]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        return "; ".join(
            f"{render_path(p)}: {m}" if p else m for p, m in self.errors
        )


def render_path(parts: PathParts) -> str:
    """Render path parts: ``items[0].name``, ``tags[2]``, ``m["a b"]``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def problems_of(exc: BaseException) -> list[Problem]:
    """The ``(path, message)`` problems an exception from a check means."""
    if isinstance(exc, InvalidValueError):
        return exc.errors
    if isinstance(exc, RecursionError):
        return [((), "the value is nested too deeply")]
    return [((), f"invalid value ({exception_text(exc, MAX_DETAIL)})")]


def prefixed(key: str | int, exc: BaseException) -> list[Problem]:
    """The problems of *exc*, their paths prefixed with *key*."""
    return [((key, *path), msg) for path, msg in problems_of(exc)]


def fail(message: str) -> InvalidValueError:
    """One problem at the current value."""
    return InvalidValueError([((), message)])


def unexpected(
    keys: list[Any], message: str, what: str = "properties"
) -> list[Problem]:
    """One problem per unexpected key, for the first few of them.

    The rest are counted in one more problem, so that a flood of unknown
    keys cannot make a flood of text (and leaves room in the message for
    the other problems).
    """
    shown = MAX_REPORTED_PROBLEMS // 2
    problems: list[Problem] = [((str(key),), message) for key in keys[:shown]]
    more = len(keys) - shown
    if more > 0:
        problems.append(
            ((), f"{more} more unexpected {what}: send only the {what} listed")
        )
    return problems
