"""Strings of formatted types, parsed strictly: dates, times, UUIDs, bytes.

One parser per JSON Schema ``format`` (``date-time``, ``date``,
``time``, ``uuid``, ``duration``, ``path``; None for base64 ``bytes``),
``(type, text) -> value``, raising ``ValueError`` for text that is not
exactly that format (RFC 3339 / ISO 8601, canonical UUIDs, strict
base64).
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import uuid

from typing import TYPE_CHECKING, Any, Final


if TYPE_CHECKING:
    from collections.abc import Callable


_OFFSET = r"(?P<tz>[Zz]|[+-][0-9]{2}:[0-9]{2})?"
_CLOCK = (
    r"(?P<H>[0-9]{2}):(?P<M>[0-9]{2})"
    r"(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?"
)
_DATE_RE: Final = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
)
_TIME_RE: Final = re.compile(_CLOCK + _OFFSET)
_DATETIME_RE: Final = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})[Tt ]" + _CLOCK + _OFFSET
)
_UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{12}"
)
_DURATION_RE: Final = re.compile(
    r"(?P<sign>-)?P(?!$)"
    r"(?:(?P<w>[0-9]+)W)?(?:(?P<d>[0-9]+)D)?"
    r"(?:T(?=[0-9])(?:(?P<h>[0-9]+)H)?(?:(?P<m>[0-9]+)M)?"
    r"(?:(?P<s>[0-9]+)(?:\.(?P<f>[0-9]+))?S)?)?"
)


def _micros(fraction: str | None) -> int:
    """The microseconds of a decimal fraction of a second (truncated)."""
    return int((fraction or "")[:6].ljust(6, "0"))


def _clock(
    match: re.Match[str],
) -> tuple[int, int, int, int, dt.tzinfo | None]:
    """Hour, minute, second, microsecond and zone of a matched clock."""
    zone = match["tz"]
    tz: dt.tzinfo | None = None
    if zone in {"Z", "z"}:
        tz = dt.timezone.utc
    elif zone:
        sign = -1 if zone[0] == "-" else 1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if minutes >= 60:  # noqa: PLR2004
            raise ValueError(zone)
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    return (
        int(match["H"]),
        int(match["M"]),
        int(match["S"] or 0),
        _micros(match["f"]),
        tz,
    )


def _parse_datetime(_: type, text: str) -> dt.datetime:
    """RFC 3339 / ISO 8601 ``YYYY-MM-DDTHH:MM[:SS[.f]][Z|±HH:MM]``."""
    match = _DATETIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    hour, minute, second, micro, tz = _clock(match)
    return dt.datetime(
        int(match["y"]),
        int(match["m"]),
        int(match["d"]),
        hour,
        minute,
        second,
        micro,
        tzinfo=tz,
    )


def _parse_date(_: type, text: str) -> dt.date:
    """``YYYY-MM-DD``."""
    match = _DATE_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    return dt.date(int(match["y"]), int(match["m"]), int(match["d"]))


def _parse_time(_: type, text: str) -> dt.time:
    """``HH:MM[:SS[.f]][Z|±HH:MM]``."""
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    hour, minute, second, micro, tz = _clock(match)
    return dt.time(hour, minute, second, micro, tzinfo=tz)


def _parse_uuid(_: type, text: str) -> uuid.UUID:
    """The canonical hyphenated form, any case."""
    if _UUID_RE.fullmatch(text) is None:
        raise ValueError(text)
    return uuid.UUID(text)


def _parse_duration(_: type, text: str) -> dt.timedelta:
    """ISO 8601 ``[-]PnWnDTnHnMn[.f]S`` (no years or months: not exact)."""
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        raise ValueError(text)
    try:
        value = dt.timedelta(
            weeks=int(match["w"] or 0),
            days=int(match["d"] or 0),
            hours=int(match["h"] or 0),
            minutes=int(match["m"] or 0),
            seconds=int(match["s"] or 0),
            microseconds=_micros(match["f"]),
        )
    except OverflowError:
        raise ValueError(text) from None
    return -value if match["sign"] else value


def _parse_path(tp: type, text: str) -> object:
    """A ``pathlib`` path of the declared class."""
    return tp(text)


def _parse_base64(_: type, text: str) -> bytes:
    """Strict base64 (padding required, no whitespace)."""
    return base64.b64decode(text, validate=True)


PARSERS: Final[dict[str | None, Callable[[Any, str], Any]]] = {
    "date-time": _parse_datetime,
    "date": _parse_date,
    "time": _parse_time,
    "uuid": _parse_uuid,
    "duration": _parse_duration,
    "path": _parse_path,
    None: _parse_base64,
}
"""The parser of each string format (None: base64 bytes)."""
