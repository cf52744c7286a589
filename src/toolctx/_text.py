r"""Text toolctx writes: bounded, never failing, always valid UTF-8.

Text that leaves toolctx (an error message quoting an exception or a
model-chosen name, a progress message, a call id echoed into a provider's
message, a log line) must encode as UTF-8, or the JSON, the wire or the
log handler that carries it fails. Python strings can hold what UTF-8
cannot: a lone surrogate (``"\udce9"``), which ``os.listdir()`` and
``sys.argv`` produce for a file name that is not valid UTF-8
(``surrogateescape``). :func:`escaped` writes each such code point as the
six characters ``\udce9``, the JSON escape of the same code point; it is
the one escaping function of the package. :func:`surrogate_at` finds one,
for the places that refuse such text instead (a tool's output).
"""

from __future__ import annotations


def escaped(text: str) -> str:
    r"""*text*, with any lone surrogate written as ``\udxxx``.

    Such text cannot be encoded as UTF-8 (it raises
    ``UnicodeEncodeError``). Inside a JSON string the escape is the JSON
    escape of the same code point, so JSON text stays valid JSON. Other
    text is returned as it is (the same object), cheaply: ASCII text is
    recognised without encoding it.

    Example:
        >>> escaped("add\ud800")
        'add\\ud800'
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def surrogate_at(text: str) -> int | None:
    r"""The index of the first lone surrogate in *text*, None if none.

    Example:
        >>> surrogate_at("r\udce9sum\udce9.txt"), surrogate_at("résumé")
        (1, None)
    """
    if text.isascii():
        return None
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return exc.start
    return None


MAX_DETAIL = 2000
"""Most characters of an exception's text an error message carries."""


def bounded(text: str, limit: int = MAX_DETAIL) -> str:
    """*text*, cut to at most *limit* characters with a note of the rest.

    A lone surrogate is :func:`escaped` first, so the result always
    encodes as UTF-8.
    """
    text = escaped(text)
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
