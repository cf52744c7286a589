"""Split a docstring into its description and per-parameter texts.

Three styles are understood, and may even be mixed in one docstring:

* Google: ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Params:``,
  ``Keyword Args:``, ``Keyword Arguments:``, ``Other Parameters:``) with
  ``name (type): text`` or ``name: text`` entries, continuation lines
  indented deeper than the entry.
* NumPy: a ``Parameters`` (or ``Other Parameters``) title underlined with
  dashes, then ``name : type`` lines with the text indented below.
* reST/Sphinx: ``:param name: text`` and ``:param type name: text``
  fields (also ``:parameter:``, ``:arg:``, ``:argument:``, ``:key:``,
  ``:keyword:``).

Class docstrings also describe fields: a Google ``Attributes:`` section,
a NumPy ``Attributes`` section and reST ``:ivar name:``/``:var name:``/
``:cvar name:`` fields fill :attr:`ParsedDocstring.attributes`.

Sections that describe the outcome rather than the inputs are dropped
from the summary: Google ``Returns:``, ``Return:``, ``Raises:``,
``Yields:``, ``Yield:``, ``Examples:``, ``Example:``, ``Note:``,
``Notes:``, ``Warns:``, ``See Also:``, ``References:``, ``Todo:``; the
NumPy sections of those names (plus ``Receives``); and the reST fields
``:returns:``, ``:return:``, ``:rtype:``, ``:raises ...:``, ``:raise
...:``, ``:except ...:``, ``:exception ...:``, ``:yields:``, ``:yield:``,
``:ytype:``, ``:type ...:``, ``:vartype ...:`` and ``:meta ...:``. A
Google section title must stand alone on its line (``Note: text`` is
ordinary text, as in Sphinx's napoleon). Every other line, directives such
as ``.. versionadded::`` included, stays in the summary.

A section's body is the text indented under its title. A body that is
not indented (``Args:`` then ``x: The x.`` at the same depth) runs to the
next blank line followed by unindented text, or to the next section. The
parser takes the docstring as written (``fn.__doc__``, not
``inspect.getdoc``): a title on the opening quotes' line keeps its body
indented under it, measured from the closing quotes' indentation.
"""

from __future__ import annotations

import inspect
import re
import textwrap

import attrs

from toolctx._docstring_sections import (
    consume_section,
    indent_of,
    opens_section,
)


__all__ = ["ParsedDocstring", "parse_docstring"]


@attrs.frozen
class ParsedDocstring:
    """What a docstring says, split for a JSON Schema.

    Attributes:
        summary: The description: everything but the parameter, attribute
            and outcome sections, ``inspect.cleandoc``-ed and stripped.
            Empty when the docstring is missing or has no description.
        params: Parameter name -> description, in docstring order, with
            multi-line descriptions joined by single spaces. Leading
            ``*``/``**`` are removed from ``*args``-style names.
        attributes: Attribute name -> description for class docstrings
            (Google/NumPy ``Attributes`` sections, reST ``:ivar:``), same
            rules as *params*.
    """

    summary: str = ""
    params: dict[str, str] = attrs.field(factory=dict)
    attributes: dict[str, str] = attrs.field(factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse *doc* (Google, NumPy or reST style) into a ParsedDocstring.

    Never raises: text it does not recognise stays in the summary. When a
    name is described twice, the first description wins.
    """
    if not doc or not doc.strip():
        return ParsedDocstring()
    lines = _clean_lines(doc)
    parsed = ParsedDocstring()
    kept: list[str] = []
    i = 0
    while i < len(lines):
        end = consume_section(lines, i, parsed.params, parsed.attributes)
        if end is None:
            kept.append(lines[i])
            i += 1
        else:
            i = end
    summary = textwrap.dedent("\n".join(kept)).strip("\n").rstrip()
    summary = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", summary)
    return attrs.evolve(parsed, summary=summary)


def _clean_lines(doc: str) -> list[str]:
    """The lines of *doc* without the docstring's own indentation.

    As :func:`inspect.cleandoc`, which dedents the lines after the first
    by their smallest indentation, except when the first line (on the
    quote line) opens a section and the line after it sits at that
    smallest indentation: the lines were then indented under the title,
    and cleandoc would pull them out of the section. The closing quotes'
    line, when blank, tells the docstring's own indentation; the lines are
    dedented by that instead.
    """
    lines = inspect.cleandoc(doc).splitlines()
    raw = doc.expandtabs().split("\n")
    rest = raw[1:]
    content = [line for line in rest if line.strip()]
    if not content or rest[-1].strip() or not opens_section([lines[0]], 0):
        return lines
    margin = min(indent_of(line) for line in content)
    base = len(rest[-1])
    if base >= margin or indent_of(content[0]) != margin:
        return lines
    body = [line[base:].rstrip() for line in rest]
    while body and not body[-1]:
        body.pop()
    return [lines[0], *body]


_TYPE_WORDS = {
    "int": "int",
    "integer": "int",
    "str": "str",
    "string": "str",
    "text": "str",
    "float": "float",
    "number": "float",
    "double": "float",
    "bool": "bool",
    "boolean": "bool",
    "list": "list",
    "array": "list",
    "sequence": "list",
    "dict": "dict",
    "mapping": "dict",
    "object": "dict",
}
_TYPE_EXPRESSION = re.compile(r"[A-Za-z_][\w.]*(\[[\w\s.,|\[\]]*\])?")


def documented_type(doc: str | None, name: str) -> str | None:
    """The annotation a docstring implies for parameter *name*, or None.

    Reads ``name (integer): ...`` (Google), ``name : int`` (NumPy) and
    ``:type name: int`` or ``:param int name:`` (reST); a word such as
    ``integer`` or ``string`` maps to its Python type, and a type
    expression (``list[int]``) is kept as written.
    """
    if not doc:
        return None
    word = re.escape(name)
    patterns = (
        rf"^\s*\*{{0,2}}{word}\s*\(([^)]*)\)\s*:",
        rf"^\s*\*{{0,2}}{word}\s+:\s*(\S[^\n]*?)\s*$",
        rf"^\s*:type\s+{word}\s*:\s*(\S[^\n]*?)\s*$",
        rf"^\s*:param\s+(\S[^:]*?)\s+{word}\s*:",
    )
    for pattern in patterns:
        match = re.search(pattern, doc, re.MULTILINE)
        if match is None:
            continue
        text = match.group(1).split(",")[0].strip()
        text = text.removesuffix(" optional").strip()
        mapped = _TYPE_WORDS.get(text.lower())
        if mapped is not None:
            return mapped
        if _TYPE_EXPRESSION.fullmatch(text):
            return text
    return None
