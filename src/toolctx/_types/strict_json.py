"""Strict JSON for tool arguments: the full parser and its checks.

:func:`parse` is the full decoder's parser: the C scanner with the hooks
that refuse duplicate keys, ``NaN``/``Infinity`` and numbers too large
for a float, then the checks of nesting depth, over-long integers and
lone UTF-16 surrogates; each refusal is a ``ValueError`` whose message
says what was wrong. :func:`decoded_problem` applies the same rules to
data a provider hands over already decoded, and :func:`json_kind` names
a value that is not an object. :mod:`toolctx._types.decode` turns these
into a :class:`~toolctx._types.decode.DecodeError` and builds its fast
route from :func:`no_constant` and :func:`finite_float`.
"""

from __future__ import annotations

import json
import json.scanner
import re

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

from toolctx._text import bounded
from toolctx._types.output_scalars import MAX_INT, MAX_INT_DIGITS


Scanner = Callable[[str, int], tuple[Any, int]]
"""A JSON scanner: text and a start index in, the value and its end out."""


# -- the strict decoder ------------------------------------------------------


def no_constant(name: str) -> NoReturn:
    """Refuse ``NaN``, ``Infinity`` or ``-Infinity`` (a ``parse_constant``).

    Raises:
        ValueError: Always, naming the constant.
    """
    msg = f"{name} is not valid JSON; send numbers as finite decimals"
    raise ValueError(msg)


def finite_float(text: str) -> float:
    """Return the float *text* spells, if finite (a ``parse_float``).

    Raises:
        ValueError: The number is too large for a float.
    """
    value = float(text)
    if value - value != 0:  # inf - inf is nan
        msg = f"the number {text[:20]} is too large; send a finite number"
        raise ValueError(msg)
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        counts = Counter(k for k, _ in pairs)
        dupes = sorted(k for k, n in counts.items() if n > 1)
        msg = (
            "duplicate key"
            + ("s " if len(dupes) > 1 else " ")
            + ", ".join(repr(k) for k in dupes)
            + "; send each key once"
        )
        raise ValueError(msg)
    return data


_DECODER: Final = json.JSONDecoder(
    parse_constant=no_constant,
    parse_float=finite_float,
    object_pairs_hook=_unique_pairs,
)
_scan: Final[Scanner] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]
decode_text: Final = _DECODER.decode
"""Decode JSON text strictly: every hook, the decoder's messages."""


def parse(raw: str | bytes, max_depth: int) -> Any:
    """Parse *raw* strictly; None for blank text; ValueError if refused.

    The scanner parses the common text (an object from its first
    character to its last) without the decoder's whitespace handling;
    anything else goes to the decoder, for its messages.
    """
    size = len(raw)
    text = raw if type(raw) is str else raw.decode()  # type: ignore[union-attr]
    try:
        data, end = _scan(text, 0)
        if end != len(text):
            data = decode_text(text)
    except StopIteration:
        if not text.strip():
            return None
        data = decode_text(text)
    if size > 2 * max_depth:
        _check_depth(text, data, max_depth)
    if "\\u" in text or not text.isascii():
        _check_surrogates(data)
    if size > MAX_INT_DIGITS and _LONG_DIGITS.search(text):
        _check_numbers(data)
    return data


def _check_depth(text: str, data: object, max_depth: int) -> None:
    """Raise ValueError if *data* nests deeper than *max_depth*."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    level: list[object] = [data]
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            raise ValueError(_too_deep(max_depth))
        nxt: list[object] = []
        for item in level:
            if isinstance(item, dict):
                nxt.extend(
                    v for v in item.values() if isinstance(v, (dict, list))
                )
            elif isinstance(item, list):
                nxt.extend(v for v in item if isinstance(v, (dict, list)))
        level = nxt


def _too_deep(max_depth: int) -> str:
    return f"nested deeper than {max_depth} levels; flatten the data"


TOO_MANY_DIGITS: Final = (
    f"a number has more than {MAX_INT_DIGITS} digits; send it as a string"
)
"""The refusal of an integer longer than CPython's digit limit."""
_LONG_DIGITS: Final = re.compile(rf"[0-9]{{{MAX_INT_DIGITS + 1}}}")


def _check_numbers(data: object) -> None:
    """Raise ValueError if an integer in *data* has too many digits.

    CPython 3.11+ refuses such a number while parsing; this holds the
    limit on 3.10, and where the process lifted CPython's own.
    """
    stack = [data]
    while stack:
        item = stack.pop()
        if type(item) is int and not -MAX_INT < item < MAX_INT:
            raise ValueError(TOO_MANY_DIGITS)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_surrogates(data: object) -> None:
    """Raise ValueError if any string holds a lone UTF-16 surrogate."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                msg = (
                    "a string holds a lone UTF-16 surrogate escape (such as "
                    "\\ud800); send valid Unicode text"
                )
                raise ValueError(msg) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# -- decoded data ------------------------------------------------------------


def decoded_problem(data: object, max_depth: int) -> str | None:
    """Return what makes decoded data unlike parsed JSON, or None.

    Providers such as MCP, Anthropic and Gemini hand over decoded
    mappings: depth, non-string keys, non-finite numbers, over-long
    integers and lone surrogates are checked on the data itself.
    """
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            if any(type(k) is not str for k in item):
                return "object keys must be strings"
            children: list[object] = [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            problem = _scalar_problem(item)
            if problem is not None:
                return problem
            continue
        if depth > max_depth:
            return _too_deep(max_depth)
        stack.extend((child, depth + 1) for child in children)
    return None


def _scalar_problem(item: object) -> str | None:
    if isinstance(item, float) and item - item != 0:
        return f"{item!r} is not a JSON number; send a finite number"
    if isinstance(item, int) and not -MAX_INT < item < MAX_INT:
        return TOO_MANY_DIGITS
    if isinstance(item, str) and not item.isascii():
        try:
            item.encode()
        except UnicodeEncodeError:
            return "a string holds a lone UTF-16 surrogate; send valid text"
    return None


def json_kind(value: object) -> str:
    """How a value that is not an object reads: ``"an array"``, ..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {bounded(type(value).__name__, 100)}"
