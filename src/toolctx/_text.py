"""Bounded, never-failing text for messages built from exceptions."""

from __future__ import annotations


MAX_DETAIL = 2000
"""Most characters of an exception's text an error message carries."""


def bounded(text: str, limit: int = MAX_DETAIL) -> str:
    """*text*, cut to at most *limit* characters with a note of the rest."""
    if len(text) <= limit:
        return text
    note = f"... ({len(text) - limit} more characters)"
    return text[: max(limit - len(note), 0)] + note


UNREADABLE = "(its message could not be read)"


def message_of(exc: BaseException, limit: int = MAX_DETAIL) -> str:
    """The message of *exc* (may be empty), bounded; never raises.

    An exception whose ``__str__`` raises or returns something other than
    a string reads as ``(its message could not be read)``.
    """
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - building a message must never fail
        return UNREADABLE
    return bounded(text, limit)


def exception_text(exc: BaseException, limit: int = MAX_DETAIL) -> str:
    """``Type: message`` of *exc* (``Type`` alone if it has no message)."""
    text = message_of(exc, limit)
    name = type(exc).__name__
    if not text:
        return name
    return f"{name} {text}" if text is UNREADABLE else f"{name}: {text}"
