"""What the command prints: error lines, JSON, counted nouns."""

from __future__ import annotations

import importlib
import json
import sys

from pathlib import Path
from typing import TextIO

from toolctx._types.output import to_json


PROG = "toolctx"
MAX_LINE = 500  # most characters of an error line, its prefix included
_ERROR_PREFIX = f"{PROG}: error: "
# Frames that say nothing about the user's code: the import machinery and
# this package (where every traceback starts).
_IMPORTLIB = str(Path(importlib.__file__).parent)
_OURS = str(Path(__file__).parent)


class UsageError(Exception):
    """A usage error: printed as one line on stderr, exit code 2."""


def error_line(message: str) -> None:
    """Write ``toolctx: error: MESSAGE`` to stderr as one bounded line."""
    line = _ERROR_PREFIX + " ".join(message.split())
    if len(line) > MAX_LINE:
        line = line[: MAX_LINE - 3] + "..."
    sys.stderr.write(line + "\n")


def note(message: str) -> None:
    """Write ``toolctx: MESSAGE`` to stderr (stdout is for results)."""
    sys.stderr.write(f"{PROG}: {message}\n")
    sys.stderr.flush()


def counted(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``0 tools``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def describe(exc: BaseException) -> str:
    """``Type: message (at file:line)``: the exception and where it was.

    The place is the innermost frame outside the import machinery and
    this package, so an import error points at the user's line; none is
    given when only those frames remain (a ``SyntaxError`` names its file
    and line in its message).
    """
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (
            name.startswith(("<frozen ", _IMPORTLIB, _OURS))
            or name.endswith("runpy.py")
        ):
            where = f" (at {name}:{tb.tb_lineno})"
        tb = tb.tb_next
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - describing an error must not fail
        text = "(its message could not be read)"
    kind = type(exc).__name__
    return f"{kind}: {text}{where}" if text else f"{kind}{where}"


def print_json(data: object, stream: TextIO | None = None) -> None:
    """Print *data* as indented JSON (non-ASCII kept as it is)."""
    out = sys.stdout if stream is None else stream
    out.write(
        json.dumps(data, indent=2, ensure_ascii=False, default=_json_default)
    )
    out.write("\n")


def _json_default(value: object) -> object:
    try:
        return to_json(value)
    except TypeError:
        return repr(value)
