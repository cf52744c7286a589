"""What a class declares: its docstrings, ``__init__`` fields, enum values.

Read once per class by :class:`~toolctx._types.model.Analysis`, and by
pydantic's schema (:mod:`toolctx._types.pydantic_schema`): the summary
and field texts of docstrings (an ``Attributes``/``Args`` section,
attribute docstrings), the fields an attrs class or dataclass takes in
``__init__``, an enum's member values as JSON scalars.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import itertools
import textwrap

from typing import TYPE_CHECKING, Any

import attrs

from toolctx._docstrings import ParsedDocstring, parse_docstring
from toolctx._types.jsonvalues import json_scalar
from toolctx._types.nodes import MISSING


if TYPE_CHECKING:
    from collections.abc import Mapping


def enum_values(cls: type[enum.Enum]) -> tuple[object, ...]:
    """The member values of an enum, as JSON scalars."""
    return tuple(json_scalar(member.value) for member in cls)


def class_doc(cls: type) -> ParsedDocstring:
    """What *cls*'s docstrings say: its own docstring and field texts.

    Field texts (:attr:`~toolctx._docstrings.ParsedDocstring.attributes`)
    come from the docstring's ``Attributes`` section (Google, NumPy,
    reST ``:ivar:``), then its ``Args``/``Parameters`` section (the
    ``__init__`` arguments a dataclass or attrs class takes: its fields)
    and, for fields neither describes, from attribute docstrings (a
    string right below the field in the class body).
    """
    doc = _own_doc(cls)
    texts = {**doc.params, **doc.attributes}
    for name, text in attribute_docstrings(cls).items():
        texts.setdefault(name, text)
    if texts == doc.attributes:
        return doc
    return attrs.evolve(doc, attributes=texts)


@functools.lru_cache(maxsize=512)
def attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal that follows it in *cls*'s body.

    Read from the class's source with :mod:`ast`; empty when the source is
    not available (built in a REPL, ``exec``, a compiled module).
    """
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return {}
    body = next(
        (
            node.body
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__
        ),
        [],
    )
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        target = None
        if isinstance(statement, ast.AnnAssign) and isinstance(
            statement.target, ast.Name
        ):
            target = statement.target.id
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            target = statement.targets[0].id
        if (
            target is not None
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            text = inspect.cleandoc(following.value.value).strip()
            if text:
                found[target] = " ".join(text.split())
    return found


def _own_doc(cls: type) -> ParsedDocstring:
    """The parsed docstring *cls* defines itself (not inherited/generated)."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc == "An enumeration.":
        return ParsedDocstring()
    if any(doc == getattr(base, "__doc__", None) for base in cls.__mro__[1:]):
        return ParsedDocstring()
    if (
        dataclasses.is_dataclass(cls)
        and "\n" not in doc
        and doc.startswith(f"{cls.__name__}(")
        and doc.endswith(")")
    ):
        return ParsedDocstring()  # dataclasses write "Name(x: int)"
    return parse_docstring(doc)


def init_fields(
    cls: Any,
) -> list[tuple[str, str, object, bool, Mapping[Any, Any]]]:
    """``(name, key, default, required, metadata)`` per ``__init__`` field.

    For attrs classes or dataclasses. *key* is the JSON name (the attrs
    alias); *default* is ``MISSING`` when there is none or a factory.
    """
    if attrs.has(cls):
        return [
            (
                f.name,
                f.alias or f.name.lstrip("_"),
                MISSING
                if f.default is attrs.NOTHING
                or isinstance(f.default, attrs.Factory)  # type: ignore[arg-type]
                else f.default,
                f.default is attrs.NOTHING,
                f.metadata,
            )
            for f in attrs.fields(cls)
            if f.init
        ]
    return [
        (
            f.name,
            f.name,
            MISSING if f.default is dataclasses.MISSING else f.default,
            f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING,
            f.metadata,
        )
        for f in dataclasses.fields(cls)
        if f.init
    ]
