"""Run the examples in README.md, docs/*.md and docstrings as tests (Sybil)."""

from __future__ import annotations

from doctest import ELLIPSIS, NORMALIZE_WHITESPACE

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser
from sybil.parsers.rest import DocTestParser


_markdown = Sybil(
    parsers=[
        PythonCodeBlockParser(
            doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE
        ),
        SkipParser(),
    ],
    patterns=["*.md"],
    excludes=["CHANGELOG.md", "SECURITY.md"],
)
_docstrings = Sybil(
    parsers=[DocTestParser(optionflags=ELLIPSIS | NORMALIZE_WHITESPACE)],
    patterns=["*.py"],
    path="src",
)

pytest_collect_file = (_markdown + _docstrings).pytest()
