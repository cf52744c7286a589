"""The leaves of output conversion: scalars, their limits and errors.

:class:`NotJSONError`, the error of a value with no JSON form; the
longest integer output may hold (:data:`MAX_INT_DIGITS`); how the values
JSON writes as strings are written (ISO 8601 dates and durations,
decimals, UUIDs, paths, base64 bytes: :func:`text_converter`); and the
errors of a number or a type with no JSON form.
:mod:`toolctx._types.output` converts the rest and re-exports these.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid

from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from toolctx._text import surrogate_at
from toolctx._types.problems import render_path
from toolctx.exceptions import ToolOutputError


if TYPE_CHECKING:
    from collections.abc import Callable

    Convert = Callable[[Any], Any]

MAX_INT_DIGITS: Final = 4300
"""Most decimal digits of an integer, in arguments and in output.

CPython's default limit for converting ints to and from text
(``sys.get_int_max_str_digits()``, 3.11+); applied on 3.10 too, so a
number accepted on the way in can always be written out.
"""
MAX_INT: Final = 10**MAX_INT_DIGITS
"""The smallest integer too long to convert (its negative likewise)."""

_MICROSECOND: Final = dt.timedelta(microseconds=1)


class NotJSONError(ToolOutputError):
    """A value (or one nested in it) has no JSON form.

    Attributes:
        path: Where the value sits inside the one being converted.
    """

    # Named after the module it is imported from: remote outcomes and
    # spans report the error's type by this name, pickles look it up there.
    __module__ = "toolctx._types.output"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.path: list[str | int] = []

    def __str__(self) -> str:
        where = f" (at {render_path(tuple(self.path))})" if self.path else ""
        return f"{self.args[0]}{where}"


def text_converter(cls: type) -> Convert | None:
    """The types JSON writes as strings: dates, durations, UUIDs..."""
    if issubclass(cls, (dt.date, dt.time)):
        return lambda v: v.isoformat()
    if issubclass(cls, dt.timedelta):
        return duration_text
    if issubclass(cls, decimal.Decimal):
        return _decimal
    if issubclass(cls, (uuid.UUID, PurePath)):
        return str
    if issubclass(cls, bytes):
        return _base64
    return None


def _base64(value: bytes) -> str:
    """Bytes as standard base64 text (with padding)."""
    return base64.b64encode(value).decode("ascii")


def _decimal(value: decimal.Decimal) -> str:
    """A finite decimal as its exact text (``"0.1"``, ``"1E+3"``)."""
    if not value.is_finite():
        msg = (
            f"The decimal {value} has no JSON form (a decimal is written "
            "as a string that reads back as a number). Return a finite "
            "decimal, or None for a missing value."
        )
        raise NotJSONError(msg)
    return str(value)


def duration_text(value: dt.timedelta) -> str:
    """A ``timedelta`` as an ISO 8601 duration: ``P1DT2H3M4.5S``, ``-PT30S``.

    Days, hours, minutes and seconds (with a fraction for microseconds);
    a negative duration has a leading ``-``; zero is ``PT0S``.
    """
    total = value // _MICROSECOND
    sign = "-" if total < 0 else ""
    seconds, micros = divmod(abs(total), 1_000_000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    clock = ""
    if hours:
        clock += f"{hours}H"
    if minutes:
        clock += f"{minutes}M"
    if seconds or micros or not (days or clock):
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        clock += f"{seconds}{fraction}S"
    text = f"{sign}P{days}D" if days else f"{sign}P"
    return f"{text}T{clock}" if clock else text


def not_finite(value: float) -> NotJSONError:
    """The error for NaN or an infinity in output."""
    return NotJSONError(
        f"The number {value!r} has no JSON form (JSON has no NaN or "
        "infinities). Return a finite number, or None for a missing value."
    )


def too_long(value: int) -> NotJSONError:
    """The error for an integer too long to write out."""
    digits = int(value.bit_length() * 0.30103) + 1
    return NotJSONError(
        f"An integer of about {digits} digits is too large (the limit is "
        f"{MAX_INT_DIGITS} digits). Return it as a string, or in a "
        "scientific notation of your own."
    )


def checked_text(value: str, what: str = "A string") -> str:
    """*value* if UTF-8 can carry it, else :func:`lone_surrogate` raised.

    Called for text that is not ASCII (ASCII text is always fine).
    """
    index = surrogate_at(value)
    if index is None:
        return value
    raise lone_surrogate(value, index, what)


def lone_surrogate(value: str, index: int, what: str) -> NotJSONError:
    """The error for output text holding a lone surrogate, like NaN."""
    return NotJSONError(
        f"{what} holds a lone surrogate (U+{ord(value[index]):04X} at "
        f"index {index}), which JSON text cannot carry: such text comes "
        "from a file name that is not valid UTF-8 (os.listdir(), "
        "sys.argv, os.environ). Return valid text, e.g. "
        "name.encode('utf-8', 'surrogateescape').decode('utf-8', "
        "'replace'), or the raw bytes (os.fsencode(name)), or a File "
        "part."
    )


def not_json(value: object) -> Any:
    """Raise: *value* has no JSON form."""
    cls = type(value)
    msg = (
        f"Cannot convert a value of type {cls.__module__}.{cls.__qualname__} "
        f"to JSON. Return JSON data (dict, list, str, int, float, bool, "
        f"None), an attrs class or dataclass, an Enum, a datetime, date, "
        f"time, timedelta, UUID, Path, Decimal or bytes, or convert the "
        f"value yourself."
    )
    raise NotJSONError(msg)
