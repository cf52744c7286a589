"""Keep everything but the protocol off the stdio wire.

Over stdio, fd 1 *is* the protocol: one stray byte there (a ``print`` in
a tool, a C library writing to ``stdout``, a child process inheriting fd
1, a buffered ``print`` flushed when the interpreter exits) is a parse
error for the client. :func:`claimed_stdio` therefore works at the
file-descriptor level:

- the protocol gets private duplicates of fd 0 and fd 1 (close-on-exec,
  so child processes never hold the wire open);
- fd 1 is pointed at stderr and fd 0 at the null device, for good: they
  are not pointed back at the wire when serving ends, because a tool's
  thread, an ``atexit`` handler or the interpreter's final flush of a
  buffered ``print`` may still write to them.

The SDK's own ``stdio_server()`` diverts the descriptors while it serves
but points them back at the wire when it returns, so output buffered
until exit still reaches the client's pipe.
"""

from __future__ import annotations

import os
import sys

from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, BinaryIO


if TYPE_CHECKING:
    from collections.abc import Iterator


def _private(fd: int) -> int:
    """A close-on-exec duplicate of *fd* above the standard range."""
    if sys.platform == "win32":  # pragma: no cover - POSIX CI
        return os.dup(fd)  # not inheritable (PEP 446)
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO] | None]:
    """Take fd 0 and fd 1 for the protocol; yield the wire's two ends.

    Yields ``(wire_in, wire_out)``, binary files on private duplicates of
    fd 0 and fd 1, or None when the descriptors cannot be duplicated (then
    the caller serves on the standard streams as they are). On exit the
    Python-level ``stdout`` and ``stderr`` buffers are flushed (to stderr)
    and the wire's write end closed, which ends the client's stream; fd 0
    and fd 1 stay diverted.
    """
    try:
        wire_in = _private(0)
    except OSError:
        yield None
        return
    try:
        wire_out = _private(1)
    except OSError:
        os.close(wire_in)
        yield None
        return
    try:
        _divert()
        # Output buffered before serving started now goes to stderr too.
        _flush()
        # The reader is never closed: after serving, a worker thread may
        # still block reading it, and a closed descriptor could be reused
        # under that thread. Closing the writer ends the client's stream.
        read = os.fdopen(wire_in, "rb", closefd=False)
        with os.fdopen(wire_out, "wb") as write:
            yield read, write
    finally:
        _flush()


def _divert() -> None:
    """Point fd 1 at stderr (else the null device), fd 0 at the null device."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # pragma: no cover - no stderr either
            os.dup2(null, 1)
    finally:
        os.close(null)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            if stream is not None:
                stream.flush()
