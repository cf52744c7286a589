"""Tools whose text is not valid Unicode: a file name ``os.listdir()`` gave.

Module-level on purpose: ``python -m toolctx serve
tests.surrogate_tools:registry`` imports this module in a subprocess, and a
process-pool worker imports the tools by reference
(tests/test_surrogates.py). :data:`NAME` is what ``os.listdir()`` returns
for ``résumé.txt`` written in Latin-1 on a UTF-8 system: each ``é`` byte
that is not UTF-8 becomes a lone surrogate.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolctx import Registry, report_progress
from toolctx.content import Text


NAME = "r\udce9sum\udce9.txt"
"""A file name as ``os.listdir()`` decodes invalid UTF-8: lone surrogates."""

registry = Registry()


@registry.tool
def name() -> str:
    """Return the undecodable file name itself."""
    return NAME


@registry.tool
def listing() -> dict[str, list[str]]:
    """List a folder holding the file: the name nested in a value."""
    return {"files": ["notes.txt", NAME]}


@registry.tool
def sizes() -> dict[str, int]:
    """Map each file name to its size: the name as a key."""
    return {"notes.txt": 12, NAME: 34}


@registry.tool
def preview() -> list[Text | str]:
    """Return content parts, one naming the file."""
    return [Text("Files:"), Text(NAME)]


@registry.tool
def walk() -> Iterator[str]:
    """Stream the folder's names, one chunk each."""
    yield "notes.txt"
    yield NAME


@registry.tool
def opening() -> str:
    """Fail to open the file, quoting its name in the exception."""
    msg = f"No such file: {NAME}"
    raise FileNotFoundError(msg)


@registry.tool
def scanning() -> str:
    """Report progress naming the file, then finish."""
    report_progress(1, 2, f"scanning {NAME}")
    return "done"


@registry.tool
def echo(text: str) -> str:
    """Return *text*."""
    return text
