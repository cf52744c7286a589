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

Here too are the titles of Google and NumPy sections and the names of
reST fields this parser knows (parameters, attributes, and the outcome
sections it drops), where a section's body ends, and the ``name -> text``
entries of a body.
"""

from __future__ import annotations

import inspect
import re
import textwrap

import attrs


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


_GOOGLE_PARAMS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_GOOGLE_ATTRIBUTES = frozenset({"attributes"})
_GOOGLE_DROPPED = frozenset(
    {
        "returns",
        "return",
        "raises",
        "yields",
        "yield",
        "examples",
        "example",
        "note",
        "notes",
        "warns",
        "see also",
        "references",
        "todo",
    }
)
_NUMPY_PARAMS = frozenset({"parameters", "other parameters"})
_NUMPY_ATTRIBUTES = frozenset({"attributes"})
_NUMPY_DROPPED = frozenset(
    {
        "returns",
        "yields",
        "receives",
        "raises",
        "warns",
        "see also",
        "notes",
        "references",
        "examples",
    }
)
_REST_PARAMS = frozenset(
    {
        "param",
        "parameter",
        "arg",
        "argument",
        "key",
        "keyword",
    }
)
_REST_ATTRIBUTES = frozenset({"ivar", "var", "cvar"})
_REST_DROPPED = frozenset(
    {
        "returns",
        "return",
        "rtype",
        "raises",
        "raise",
        "except",
        "exception",
        "yields",
        "yield",
        "ytype",
        "type",
        "vartype",
        "meta",
    }
)

_GOOGLE_HEADER = re.compile(r"([A-Za-z][A-Za-z ]*?)\s*:\s*")
_GOOGLE_ENTRY = re.compile(
    r"\*{0,2}([A-Za-z_]\w*)\s*(?:\(.*?\))?\s*:(?:\s+(.*))?"
)
_NUMPY_UNDERLINE = re.compile(r"-{3,}\s*")
_NUMPY_ENTRY = re.compile(
    r"(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?"
)
_REST_FIELD = re.compile(r":([A-Za-z_][\w-]*)((?:\s+[^:\s][^:]*)?):\s*(.*)")


def consume_section(
    lines: list[str],
    i: int,
    params: dict[str, str],
    attributes: dict[str, str],
) -> int | None:
    """Parse the section or field starting at line *i* into the entries.

    Parameter entries go to *params*, attribute entries to *attributes*
    (an earlier entry of the same name is kept).

    Returns the index of the first line after it, or None when line *i*
    starts no section (it is then description text).
    """
    header = _numpy_header(lines, i)
    if header is not None:
        end = _numpy_section_end(lines, i + 2)
        body = lines[i + 2 : end]
        if header in _NUMPY_PARAMS:
            _merge(params, _numpy_entries(body))
        elif header in _NUMPY_ATTRIBUTES:
            _merge(attributes, _numpy_entries(body))
        return end
    google = _google_header(lines[i])
    if google is not None:
        end = _body_end(lines, i + 1)
        body = lines[i + 1 : end]
        if google in _GOOGLE_PARAMS:
            _merge(params, _google_entries(body))
        elif google in _GOOGLE_ATTRIBUTES:
            _merge(attributes, _google_entries(body))
        return end
    field = _rest_field(lines[i])
    if field is None:
        return None
    end = _body_end(lines, i + 1)
    kind = field.group(1)
    words = field.group(2).split()
    text = _join([field.group(3), *lines[i + 1 : end]])
    if words and kind in _REST_PARAMS:
        params.setdefault(words[-1].lstrip("*"), text)
    elif words and kind in _REST_ATTRIBUTES:
        attributes.setdefault(words[-1].lstrip("*"), text)
    return end


def opens_section(lines: list[str], i: int) -> bool:
    """Whether line *i* is a section title or a field this parser reads."""
    return (
        _numpy_header(lines, i) is not None
        or _google_header(lines[i]) is not None
        or _rest_field(lines[i]) is not None
    )


def _rest_field(line: str) -> re.Match[str] | None:
    """The match of a reST field this parser consumes, else None."""
    field = _REST_FIELD.fullmatch(line)
    if field is None or not _rest_known(field.group(1)):
        return None
    return field


def _rest_known(kind: str) -> bool:
    """Whether *kind* is a reST field name this parser consumes."""
    return (
        kind in _REST_PARAMS
        or kind in _REST_ATTRIBUTES
        or kind in _REST_DROPPED
    )


def _google_header(line: str) -> str | None:
    """The lower-cased name of the Google section *line* opens, if any."""
    if line[:1].isspace():
        return None
    match = _GOOGLE_HEADER.fullmatch(line)
    if match is None:
        return None
    name = " ".join(match.group(1).lower().split())
    known = _GOOGLE_PARAMS | _GOOGLE_ATTRIBUTES | _GOOGLE_DROPPED
    return name if name in known else None


def _numpy_header(lines: list[str], i: int) -> str | None:
    """The lower-cased NumPy section title at *i*, if one is there."""
    if i + 1 >= len(lines) or lines[i][:1].isspace():
        return None
    if not _NUMPY_UNDERLINE.fullmatch(lines[i + 1]):
        return None
    name = " ".join(lines[i].lower().split())
    known = _NUMPY_PARAMS | _NUMPY_ATTRIBUTES | _NUMPY_DROPPED
    return name if name in known else None


def _numpy_section_end(lines: list[str], start: int) -> int:
    """Index of the next NumPy title or Google header at or after *start*."""
    i = start
    while i < len(lines):
        if _numpy_header(lines, i) is not None:
            return i
        if _google_header(lines[i]) is not None:
            return i
        i += 1
    return i


def indent_of(line: str) -> int:
    """The number of leading whitespace characters of *line*."""
    return len(line) - len(line.lstrip())


def _body_end(lines: list[str], start: int) -> int:
    """Index of the first line after the body of the title at *start* - 1.

    The body is the block indented under the title; when the line after
    the title is not indented, it is the unindented text up to a blank
    line followed by unindented text, or up to the next section.
    """
    if (
        start >= len(lines)
        or not lines[start].strip()
        or lines[start][:1].isspace()
    ):
        return _indented_block_end(lines, start, 0)
    i = start
    while i < len(lines):
        if not lines[i].strip():
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j == len(lines) or not lines[j][:1].isspace():
                return i  # a new unindented paragraph, or the end
            i = j
            continue
        if not lines[i][:1].isspace() and opens_section(lines, i):
            return i
        i += 1
    return i


def _indented_block_end(lines: list[str], start: int, base: int) -> int:
    """Index of the first line from *start* on indented at most *base*.

    Blank lines belong to the block when more indented lines follow them.
    """
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j == len(lines) or indent_of(lines[j]) <= base:
                return j
            i = j
            continue
        if indent_of(line) <= base:
            return i
        i += 1
    return i


def _google_entries(body: list[str]) -> dict[str, str]:
    """``name -> text`` for the entries of a Google section *body*."""
    entries: dict[str, list[str]] = {}
    base: int | None = None
    current: list[str] | None = None
    for line in body:
        if not line.strip():
            continue
        indent = indent_of(line)
        if base is None:
            base = indent
        match = (
            _GOOGLE_ENTRY.fullmatch(line.strip()) if indent <= base else None
        )
        if match is not None:
            current = entries.setdefault(match.group(1), [])
            current.append(match.group(2) or "")
        elif current is not None:
            current.append(line)
    return {name: _join(parts) for name, parts in entries.items()}


def _numpy_entries(body: list[str]) -> dict[str, str]:
    """``name -> text`` for the entries of a NumPy section *body*."""
    entries: dict[str, list[str]] = {}
    current: list[list[str]] = []
    for line in body:
        if not line.strip():
            continue
        match = (
            _NUMPY_ENTRY.fullmatch(line) if not line[:1].isspace() else None
        )
        if match is not None:
            names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
            current = [entries.setdefault(n, []) for n in names]
        else:
            for parts in current:
                parts.append(line)
    return {name: _join(parts) for name, parts in entries.items()}


def _merge(target: dict[str, str], new: dict[str, str]) -> None:
    """Add *new* entries to *target* without replacing earlier ones."""
    for name, text in new.items():
        target.setdefault(name, text)


def _join(parts: list[str]) -> str:
    """Join description lines with single spaces."""
    return " ".join(" ".join(parts).split())
