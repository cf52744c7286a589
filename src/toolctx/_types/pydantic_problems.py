"""Pydantic's validation errors, in toolctx's words and paths.

Each error pydantic-core reports becomes a ``(path, message)`` problem,
as toolctx's own checks word them (``expected an integer, got the string
"1"``, ``expected at most 3 items, got 5``): the path is the error's
location in the data itself (:func:`data_path`, without pydantic's
union-member and dict-key parts), and type errors of a union's members
at one place are joined (:func:`merged_problems`).
:func:`not_json_problem` says where a value stops being JSON data.
"""

from __future__ import annotations

import math

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from toolctx._text import bounded
from toolctx._types.messages import show_value
from toolctx._types.output import MAX_INT, MAX_INT_DIGITS
from toolctx._types.pydantic_schema import children, resolved
from toolctx.exceptions import MAX_PROBLEM_LENGTH


if TYPE_CHECKING:
    from collections.abc import Iterator

    import pydantic_core

    from toolctx._types.problems import PathParts, Problem
    from toolctx._types.pydantic_schema import JSONSchema


_NO_INPUT: Final = object()

Found = tuple["PathParts", str | None, str | None, str]
"""``(path, expected, got, message)``: *expected*/*got* for type errors."""

_EXPECTED: Final = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "none_required": "null",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dict_type": "an object",
    "dataclass_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
    "set_type": "an array",
    "frozen_set_type": "an array",
    "iterable_type": "an array",
}
"""How type errors read: ``expected <text>, got <value>``."""

_SIDES: Final = {True: "at least", False: "at most"}
_BOUND_SYMBOLS: Final = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", ">="),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "<="),
}


def problems_of(
    errors: list[pydantic_core.ErrorDetails],
    data: object,
    schema: JSONSchema,
    defs: dict[str, JSONSchema],
    names: frozenset[str] = frozenset(),
) -> list[Problem]:
    """The errors pydantic found in *data* as problems, paths in *data*.

    *schema* and *defs* are the model's validation schema: an unknown
    key's problem lists the keys its object takes. *names* are field
    names the validator drops silently where only aliases are keys
    (:func:`named_keys`): they are refused too.
    """
    found: list[Found] = []
    extras: list[PathParts] = []
    for error in errors:
        kind = error["type"]
        ctx: dict[str, Any] = dict(error.get("ctx") or {})
        path = data_path(error["loc"], data, keep_last=kind == "missing")
        if kind in {"extra_forbidden", "unexpected_keyword_argument"}:
            extras.append(path)
        else:
            found.append(one_problem(error, kind, ctx, path))
    if names:
        extras.extend(named_keys(data, names, schema, defs))
    for path in dict.fromkeys(extras):  # in one place on every version
        found.insert(_place(found, path, data), _extra(path, schema, defs))
    return merged_problems(found)


def _place(found: list[Found], path: PathParts, data: object) -> int:
    """Where the unknown key at *path* goes among the problems *found*.

    After the other problems of its object (pydantic 2.11 and 2.14
    report unknown keys last), else before the first problem later in
    the data, else last.
    """
    parent = path[:-1]
    inside = [
        index
        for index, (other, *_) in enumerate(found)
        if other[: len(parent)] == parent
    ]
    if inside:
        return inside[-1] + 1
    where = _position(path, data)
    for index, (other, *_) in enumerate(found):
        if _position(other, data) > where:
            return index
    return len(found)


def _position(path: PathParts, data: object) -> tuple[int, ...]:
    """Where *path* is in *data*: indexes of keys and items (-1: absent)."""
    out: list[int] = []
    for part in path:
        if isinstance(data, dict) and part in data:
            out.append(list(data).index(part))
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int):
            out.append(part)
            data = data[part]
        else:
            out.append(-1)
            break
    return tuple(out)


def named_keys(
    data: object,
    names: frozenset[str],
    schema: JSONSchema,
    defs: dict[str, JSONSchema],
) -> list[PathParts]:
    """The paths of keys in *names* that no object schema there takes.

    pydantic-core 2.41 to 2.46 (pydantic 2.12, 2.13) drop an aliased
    field's name given as a key silently, where other versions refuse
    it as an unknown key; the data is walked along the schema to refuse
    it on every version.
    """
    found: list[PathParts] = []
    pending: list[tuple[object, list[object], PathParts]]
    pending = [(data, [schema], ())]
    while pending:  # depth first, in the data's order
        value, schemas, path = pending.pop()
        nodes = [n for s in schemas for n in resolved(s, defs)]
        if isinstance(value, dict):
            items: list[tuple[str | int, object]] = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            continue
        objects = [n for n in nodes if isinstance(n.get("properties"), dict)]
        inside: list[tuple[object, list[object], PathParts]] = []
        for part, item in items:
            if (
                objects
                and part in names
                and all(
                    part not in n["properties"]
                    and n.get("additionalProperties") is False
                    for n in objects
                )
            ):
                found.append((*path, part))
                continue
            inner = [c for n in nodes for c in children(n, part)]
            inside.append((item, inner, (*path, part)))
        pending.extend(reversed(inside))
    return found


def _extra(
    path: PathParts, schema: JSONSchema, defs: dict[str, JSONSchema]
) -> Found:
    """The problem of the unexpected key at *path*."""
    nodes = list(resolved(schema, defs))
    for part in path[:-1]:
        nodes = [
            found
            for node in nodes
            for child in children(node, part)
            for found in resolved(child, defs)
        ]
    options = {
        tuple(node["properties"])
        for node in nodes
        if isinstance(node.get("properties"), dict)
        and node.get("additionalProperties") is False
    }
    if len(options) != 1:
        return (path, None, None, "unexpected property")
    allowed = ", ".join(options.pop()) or "none"
    return (path, None, None, f"unexpected property (allowed: {allowed})")


def is_scalar(value: object) -> bool:
    """Whether *value* is None, a string or a number (a bool too)."""
    return value is None or isinstance(value, (str, int, float))


def one_problem(
    error: pydantic_core.ErrorDetails,
    kind: str,
    ctx: dict[str, Any],
    path: PathParts,
) -> Found:
    """The problem of a pydantic error, in toolctx's words where known."""
    given = error.get("input", _NO_INPUT)
    if kind == "missing":
        return (path, None, None, "missing required property")
    if kind in _TAG_ERRORS:
        return _tag_problem(kind, ctx, path)
    expected = _EXPECTED.get(kind)
    if expected is not None:
        style = "json" if kind == "string_type" else None
        return (path, expected, _shown(given, style), f"expected {expected}")
    if kind in {"literal_error", "enum"}:
        text = str(ctx.get("expected", "one of the listed values"))
        return (path, text, _shown(given, "repr"), f"expected {text}")
    if kind == "json_invalid":  # the text is toolctx's own: not shown
        detail = bounded(str(ctx.get("error", "")), 100)
        return (path, None, None, f"unreadable value ({detail})")
    if kind in {"value_error", "assertion_error"}:
        text = error["msg"].removeprefix("Value error, ")
        return (path, None, None, text or "invalid value")
    constraint = _constraint_text(kind, ctx, given)
    if constraint is not None:
        text, got = constraint
    else:
        text = error["msg"]
        if text.startswith("Input should be "):
            text = "expected " + text.removeprefix("Input should be ")
        got = _shown(given, "json") if is_scalar(given) else None
    if got is not None:
        text += f", got {got}"
    return (path, None, None, text)


def _constraint_text(
    kind: str, ctx: dict[str, Any], given: object
) -> tuple[str, str | None] | None:
    """``(expected, got)`` of a constraint error, None for another error."""
    bound = _BOUND_SYMBOLS.get(kind)
    got = _shown(given, "json")
    if bound is not None:
        edge = show_value(ctx.get(bound[0]), None)
        return f"expected a number {bound[1]} {edge}", got
    if kind == "multiple_of":
        step = show_value(ctx.get("multiple_of"), None)
        return f"expected a multiple of {step}", got
    if kind in {"string_too_short", "string_too_long"}:
        short = kind == "string_too_short"
        limit = ctx.get("min_length" if short else "max_length")
        size = str(len(given)) if isinstance(given, str) else got
        return f"expected {_SIDES[short]} {_counted(limit, 'character')}", size
    if kind in {"too_short", "too_long"}:
        short = kind == "too_short"
        limit = ctx.get("min_length" if short else "max_length")
        noun = "property" if ctx.get("field_type") == "Dictionary" else "item"
        size = ctx.get("actual_length")
        count = _counted(limit, noun)
        return f"expected {_SIDES[short]} {count}", _text(size)
    if kind == "string_pattern_mismatch":
        pattern = bounded(str(ctx.get("pattern")), 60)
        return f"expected a string matching {pattern!r}", got
    return None


def _shown(given: object, style: str | None) -> str | None:
    """*given* as a message shows it; None when pydantic hid the input."""
    return None if given is _NO_INPUT else show_value(given, style)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


_TAG_ERRORS: Final = frozenset({"union_tag_invalid", "union_tag_not_found"})


def _tag_problem(kind: str, ctx: dict[str, Any], path: PathParts) -> Found:
    """A discriminated union's tag: wrong or missing, at the tag's key."""
    discriminator = str(ctx.get("discriminator", ""))
    quoted = len(discriminator) > 2 and discriminator[0] == discriminator[-1]  # noqa: PLR2004
    if quoted and discriminator[0] in {"'", '"'}:
        path = (*path, discriminator[1:-1])
    if kind == "union_tag_not_found":
        return (path, None, None, "missing required property")
    tags = str(ctx.get("expected_tags", ""))
    got = show_value(ctx.get("tag"), "repr")
    return (path, None, None, f"expected one of {tags}, got {got}")


def _counted(count: object, noun: str) -> str:
    """``1 item``, ``2 items``, ``3 properties``."""
    if count == 1:
        return f"1 {noun}"
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{count} {plural}"


def merged_problems(found: list[Found]) -> list[Problem]:
    """Problems in order; type errors at one path and value joined.

    A union's members each report a type error at the same place:
    ``expected an integer or a string, got 1.5`` reads better than two.
    """
    merged: dict[tuple[PathParts, str], list[str]] = {}
    order: list[tuple[PathParts, str, bool]] = []
    for path, expected, got, message in found:
        if expected is None or got is None:
            order.append((path, message, False))
            continue
        texts = merged.get((path, got))
        if texts is None:
            texts = merged[path, got] = []
            order.append((path, got, True))
        if expected not in texts:
            texts.append(expected)
    problems: list[Problem] = []
    for path, text, joined in order:
        message = text
        if joined:
            texts = merged[path, text]
            shown = ", ".join(texts[:-1]) + " or " + texts[-1]
            message = f"expected {texts[0] if len(texts) == 1 else shown}"
            message += f", got {text}"
        problems.append((path, bounded(message, MAX_PROBLEM_LENGTH)))
    return problems


def data_path(
    loc: tuple[str | int, ...], data: object, *, keep_last: bool
) -> PathParts:
    """The path of an error's location in the data itself.

    pydantic's locations also name the union member that failed (``int``,
    ``Item``, ``function-after[...]``) and dict keys (``[key]``); those
    are not in the data and are left out. A missing key (*keep_last*)
    is the last location item.
    """
    path: list[str | int] = []
    current: object = data
    last = len(loc) - 1
    for position, item in enumerate(loc):
        if isinstance(current, Mapping):
            key = item if isinstance(item, str) else str(item)
            if key in current:
                path.append(key)
                current = current[key]
                continue
        elif (
            isinstance(current, (list, tuple))
            and isinstance(item, int)
            and 0 <= item < len(current)
        ):
            path.append(item)
            current = current[item]
            continue
        if keep_last and position == last:
            path.append(item)
    return tuple(path)


def not_json_problem(data: object) -> Problem:
    """Where *data* stops being JSON data, and why."""
    try:
        found = _find_not_json(data)
    except RecursionError:
        return ((), "the value is nested too deeply or holds a cycle")
    return found or ((), "the value is not JSON data")


def _find_not_json(value: object) -> Problem | None:
    if value is None or isinstance(value, (str, bool)):
        return None
    if isinstance(value, int):
        if -MAX_INT < value < MAX_INT:
            return None
        return ((), f"the integer has more than {MAX_INT_DIGITS} digits")
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        shown = show_value(value, None)
        return ((), f"expected a finite number, got {shown}")
    items: Iterator[tuple[str | int, object]]
    if isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, Mapping):
        items = iter(value.items())
    else:
        return ((), f"expected JSON data, got {show_value(value, None)}")
    for key, item in items:
        found = _find_not_json(item)
        if found is not None:
            return ((key, *found[0]), found[1])
    return None
