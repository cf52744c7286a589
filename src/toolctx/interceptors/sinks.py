"""Where :class:`~toolctx.interceptors.AuditLog` records go.

A list in memory, a logger, a JSON-lines file; any ``sink(record)``
callable works too.
"""

from __future__ import annotations

import json
import logging
import os
import threading

from collections.abc import Mapping
from typing import IO, Any, final

from toolctx._frozen import freeze_mapping
from toolctx._text import escaped
from toolctx.interceptors.audit import AuditRecord


_NO_PERMISSIONS: frozenset[str] = frozenset()
_NO_EXTRA: Mapping[str, object] = freeze_mapping({}, "AuditRecord.extra")
_MAX_JSON_DEPTH = 64
_log = logging.getLogger("toolctx")


# -- sinks ------------------------------------------------------------------


@final
class MemoryAuditSink:
    """Keep audit records in a list, for tests.

    Attributes:
        records: The records, in the order they arrived.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_lock", "records")

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []
        self._lock = threading.Lock()

    def __call__(self, record: AuditRecord) -> None:
        """Append *record*."""
        with self._lock:
            self.records.append(record)

    def __repr__(self) -> str:
        count = len(self.records)
        return f"<toolctx.interceptors.MemoryAuditSink(num_records={count})>"

    def clear(self) -> None:
        """Forget all records.

        .. versionadded:: 0.1.0
        """
        with self._lock:
            self.records.clear()


@final
class LoggerAuditSink:
    r"""Log each audit record as one structured :mod:`logging` record.

    The message reads ``tool call add: ok in 0.12 ms`` (plus the error for
    failed calls); every field of the record is attached with ``extra=``
    as an attribute named *prefix* + field (``record.audit_user_id``...),
    ready for a JSON formatter. Text that cannot be written as UTF-8 (a
    lone surrogate in a model-chosen tool name or call id) is escaped, as
    ``\ud800``, in the message and in the text fields, so that no handler
    fails on it.

    Args:
        logger: A logger or a logger name.
        level: The level for successful calls.
        error_level: The level for errors and denials.
        prefix: Prefix of the attributes added to the log record.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("error_level", "level", "logger", "prefix")

    def __init__(
        self,
        logger: logging.Logger | str | None = None,
        *,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        prefix: str = "audit_",
    ) -> None:
        if logger is None or isinstance(logger, str):
            logger = logging.getLogger(logger or "toolctx.audit")
        self.logger = logger
        self.level = level
        self.error_level = error_level
        self.prefix = prefix

    def __repr__(self) -> str:
        name = self.logger.name
        return f"<toolctx.interceptors.LoggerAuditSink(logger={name!r})>"

    def __call__(self, record: AuditRecord) -> None:
        """Log *record* (skipped cheaply if the level is disabled)."""
        level = self.level if record.outcome == "ok" else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        fields = {
            k: escaped(v) if type(v) is str else v
            for k, v in record.to_dict().items()
        }
        msg = "tool call %s: %s in %.2f ms"
        args: tuple[object, ...] = (
            fields["tool"],
            record.outcome,
            record.duration_ns / 1e6,
        )
        if record.error is not None:
            msg += ": %s"
            args = (*args, fields["error"])
        self.logger.log(
            level,
            msg,
            *args,
            extra={self.prefix + k: v for k, v in fields.items()},
        )


@final
class JsonLinesAuditSink:
    r"""Append each audit record as one JSON line to a file or stream.

    With a path, the file is opened in append mode for each record and
    closed again, so no handle stays open and rotation tools can move the
    file. With a text stream, the line is written and the stream flushed;
    the caller keeps ownership of it. Thread-safe.

    Every line is valid JSON and valid UTF-8, whatever the record holds:
    a lone surrogate (which a model can put in a tool name, a call id or
    the arguments) is written as the JSON escape ``\ud800``; values that
    are not JSON (odd argument types) are written with ``str()``; and
    what JSON cannot carry (``NaN``, infinities, integers too long to
    print, keys that are not strings, cycles, nesting too deep to write)
    is written as text.

    Args:
        target: A file path, or a text stream such as ``sys.stdout``.

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_lock", "target")

    def __init__(self, target: str | os.PathLike[str] | IO[str]) -> None:
        self.target = target
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        target = self.target
        return f"<toolctx.interceptors.JsonLinesAuditSink(target={target!r})>"

    def __call__(self, record: AuditRecord) -> None:
        """Write *record* as one line of JSON."""
        line = json_line(record.to_dict()) + "\n"
        target = self.target
        with self._lock:
            if isinstance(target, (str, os.PathLike)):
                with open(target, "a", encoding="utf-8") as f:  # noqa: PTH123
                    f.write(line)
            else:
                target.write(line)
                target.flush()


def json_line(data: Mapping[str, Any]) -> str:
    """One line of JSON for *data*, valid UTF-8; never fails on values.

    Readable text (``ensure_ascii=False``), objects JSON does not know as
    ``str()``; if that still fails (``NaN``, an integer too long to print,
    a key that is not text, deep or circular nesting, a ``__str__`` that
    raises), the parts that fail are written as text.
    """
    try:
        line = _dumps(data)
    except Exception:  # noqa: BLE001 - any value: fall back to safe data
        line = _dumps(_json_safe(data, 0, set()))
    return escaped(line)


def _dumps(data: object) -> str:
    return json.dumps(
        data,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
        default=str,
    )


def _json_safe(value: object, depth: int, path: set[int]) -> Any:
    """*value* as data :func:`json.dumps` accepts; odd parts as text."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        try:
            int.__repr__(value)  # what json.dumps writes
        except ValueError:  # over sys.get_int_max_str_digits()
            return f"<int of {value.bit_length()} bits>"
        return value
    if isinstance(value, float):
        return value if value - value == 0 else repr(value)
    if not isinstance(value, (Mapping, list, tuple)):
        return _text(value)
    if id(value) in path:
        return "<cycle>"
    if depth >= _MAX_JSON_DEPTH:
        return "<nested too deep>"
    path.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {
                (k if type(k) is str else _text(k)): _json_safe(
                    v, depth + 1, path
                )
                for k, v in value.items()
            }
        return [_json_safe(v, depth + 1, path) for v in value]
    finally:
        path.discard(id(value))


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a value's text must never fail
        return f"<{type(value).__name__}>"
