"""Griffe extension: render toolctx's reST bits of docstrings as Markdown.

toolctx's docstrings are Google style with a few reStructuredText habits
that Sybil and ``help()`` read well but Markdown does not:

- ``.. versionadded:: 0.1.0`` becomes an *Added in version 0.1.0* line;
- ``:class:`X``` (and ``:func:``, ``:meth:``, ``:mod:``, ``:attr:``,
  ``:data:``, ``:exc:``, ``:obj:``) becomes a cross-reference when the
  target is documented on the site, and inline code otherwise;
- an ``Example:`` heading becomes ``Examples:``, so the doctests are
  rendered as code;
- reST simple tables (``====  ====`` rules) become Markdown tables.

The source docstrings are left as they are: this runs only on the copy
griffe loads for the API reference (see ``mkdocs.yml``).
"""

from __future__ import annotations

import re

from pathlib import Path
from typing import Any

import griffe


_VERSION = re.compile(
    r"^(?P<indent>[ \t]*)\.\. (?P<kind>versionadded|versionchanged|"
    r"deprecated)::[ \t]*(?P<version>\S+)[ \t]*$",
    re.MULTILINE,
)
_VERSION_TEXT = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
}
_ROLE = re.compile(
    r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|exc|obj):"
    r"`(?P<target>[^`]+)`"
)
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$")
_EXAMPLE = re.compile(r"^(?P<indent>[ \t]*)Example:[ \t]*$", re.MULTILINE)
_RULE = re.compile(r"^[ \t]*=+(?:[ \t]+=+)+[ \t]*$")


class RestToMarkdown(griffe.Extension):
    """Rewrite the reST parts of every docstring in a loaded package."""

    def on_package(self, *, pkg: griffe.Module, **_: Any) -> None:
        """Convert the docstrings of *pkg* once it is fully loaded."""
        documented = _documented(pkg)
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = convert(
                    obj.docstring.value, obj, documented
                )


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    found = [obj]
    for member in obj.members.values():
        if member.is_alias:
            continue
        assert isinstance(member, griffe.Object)
        found.extend(_walk(member))
    return found


API_PAGES = Path(__file__).resolve().parent / "api"
_DIRECTIVE = re.compile(
    r"^::: (?P<path>[\w.]+)[ \t]*\n(?P<options>(?:[ \t]+\S.*\n?)*)",
    re.MULTILINE,
)
_NO_MEMBERS = re.compile(r"^\s*members:\s*false\s*$", re.MULTILINE)


def _directives() -> list[tuple[str, bool]]:
    """The ``::: path`` lines of the API pages, and whether members show."""
    found: list[tuple[str, bool]] = []
    for page in sorted(API_PAGES.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        found.extend(
            (m["path"], not _NO_MEMBERS.search(m["options"]))
            for m in _DIRECTIVE.finditer(text)
        )
    return found


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object | None:
    if not isinstance(obj, griffe.Alias):
        return obj
    try:
        return obj.final_target
    except griffe.AliasResolutionError:
        return None


def _lookup(pkg: griffe.Module, path: str) -> griffe.Object | None:
    if path == pkg.path:
        return pkg
    try:
        found = pkg[path.removeprefix(f"{pkg.path}.")]
    except (KeyError, griffe.AliasResolutionError):
        return None
    return _target(found)


def _shown(name: str, value: griffe.Object | griffe.Alias) -> bool:
    """Whether a class member is rendered (the filters in mkdocs.yml)."""
    public = not name.startswith("_") or name == "__call__"
    return public and not value.is_alias and value.docstring is not None


def _members(path: str, obj: griffe.Object) -> set[str]:
    """The anchors rendered under *obj*."""
    found: set[str] = set()
    if obj.is_module:
        names = [str(name) for name in (obj.exports or ())]
        for name in names:
            member = obj.members.get(name)
            child = None if member is None else _target(member)
            if child is not None:
                found.add(f"{path}.{name}")
                if child.is_class:
                    found |= _members(f"{path}.{name}", child)
    elif obj.is_class:
        found.update(
            f"{path}.{name}"
            for name, value in obj.members.items()
            if _shown(name, value)
        )
    return found


def _documented(pkg: griffe.Module) -> set[str]:
    """The identifiers the API pages render, with their public paths."""
    documented: set[str] = set()
    for path, with_members in _directives():
        obj = _lookup(pkg, path)
        if obj is None:
            continue
        documented.add(path)
        if with_members:
            documented |= _members(path, obj)
    return documented


def convert(text: str, obj: griffe.Object, documented: set[str]) -> str:
    """Return *text* with toolctx's reST habits turned into Markdown."""
    text = _VERSION.sub(_version, text)
    text = _EXAMPLE.sub(r"\g<indent>Examples:", text)
    text = _ROLE.sub(lambda m: _role(m, obj, documented), text)
    return _tables(text)


def _version(match: re.Match[str]) -> str:
    words = _VERSION_TEXT[match["kind"]]
    return f"{match['indent']}*{words} {match['version']}.*"


def _candidates(target: str, obj: griffe.Object) -> list[str]:
    """Paths *target* may mean, seen from the docstring of *obj*."""
    target = target.lstrip(".")
    if target.startswith("toolctx."):
        return [target]
    module = obj if obj.is_module else obj.module
    scopes = [module.path, "toolctx"]
    if obj.is_class:
        scopes.insert(0, obj.path)
    elif obj.parent is not None and obj.parent.is_class:
        scopes.insert(0, obj.parent.path)
    return [f"{scope}.{target}" for scope in scopes]


def _public_path(path: str, documented: set[str]) -> str | None:
    """Map a canonical ``toolctx._private.Name`` path to a documented one.

    The name re-exported at the root (``toolctx.Name``) or further up
    (``toolctx.x.Name`` for ``toolctx.x.y.Name``) first, then the path
    without its private modules (``toolctx.exceptions.Name`` for
    ``toolctx.exceptions._calls.Name``, a package re-exporting them).
    """
    if path in documented:
        return path
    parts = path.split(".")
    for start in range(1, len(parts)):
        candidate = "toolctx." + ".".join(parts[start:])
        if candidate in documented:
            return candidate
    public = ".".join(part for part in parts if not part.startswith("_"))
    return public if public in documented else None


def _role(
    match: re.Match[str], obj: griffe.Object, documented: set[str]
) -> str:
    raw = match["target"].strip()
    titled = _TITLED.match(raw)
    if titled is not None:
        shown, target = titled["title"], titled["target"].lstrip("~")
    else:
        target = raw.lstrip("~")
        short = raw.startswith("~")
        shown = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        if match["role"] in {"func", "meth"}:
            shown += "()"
    for candidate in _candidates(target, obj):
        path = _public_path(candidate, documented)
        if path is not None:
            return f"[`{shown}`][{path}]"
    return f"`{shown}`"


def _tables(text: str) -> str:
    """Turn reST simple tables (``===  ===`` rules) into Markdown tables."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _RULE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        end = _table_end(lines, i)
        if end is None:
            out.append(lines[i])
            i += 1
            continue
        out.extend(_table(lines[i : end + 1]))
        i = end + 1
    return "\n".join(out)


def _table_end(lines: list[str], start: int) -> int | None:
    """Index of the third rule line of a table starting at *start*."""
    rules = 1
    for j in range(start + 1, len(lines)):
        if not lines[j].strip():
            return None
        if _RULE.match(lines[j]):
            rules += 1
            if rules == 3:  # noqa: PLR2004 - top, under the header, bottom
                return j
    return None


def _table(block: list[str]) -> list[str]:
    rule = block[0]
    indent = rule[: len(rule) - len(rule.lstrip())]
    starts = [m.start() for m in re.finditer(r"=+", rule)]
    rows: list[list[str]] = []
    for line in block:
        if _RULE.match(line):
            continue
        cells = _cells(line, starts)
        if rows and not cells[0]:  # a continuation line of the row above
            rows[-1] = [
                f"{old} {new}".strip()
                for old, new in zip(rows[-1], cells, strict=True)
            ]
        else:
            rows.append(cells)
    header, body = rows[0], rows[1:]
    table = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in body),
    ]
    return ["", *(indent + line for line in table), ""]


def _cells(line: str, starts: list[int]) -> list[str]:
    """Split a table line into one text per column.

    Columns are separated by two or more spaces; text that overflows its
    column (as reST allows only in the last one) still lands in its own.
    """
    count = len(starts)
    if not line[: starts[1]].strip():  # empty first cell
        rest = re.split(
            r"\s{2,}", line[starts[1] :].strip(), maxsplit=count - 2
        )
        return ["", *rest, *[""] * (count - 1 - len(rest))]
    cells = re.split(r"\s{2,}", line.strip(), maxsplit=count - 1)
    return cells + [""] * (count - len(cells))
