"""Argument text -> dict under limits (size, depth, duplicates, numbers).

:func:`decode_arguments` is the one decoder of a tool call's arguments,
on every dispatch path. It takes what a provider hands over: JSON text
(``str`` or UTF-8 ``bytes``), an already-decoded mapping (MCP, Anthropic,
Gemini), or ``None``. ``None``, empty text and JSON ``null`` mean ``{}``.
Refused, with a :class:`DecodeError` saying what was wrong:

* text longer than ``limits.max_size`` (``kind == "size"``);
* text that is not strict JSON: bad syntax, bytes that are not UTF-8,
  ``NaN``/``Infinity`` and numbers too large for a float, integers of
  more than 4,300 digits, a key sent twice in one object, a lone UTF-16
  surrogate, nesting deeper than ``limits.max_depth``; a decoded mapping
  with non-string keys or values no JSON text could have produced
  (``kind == "json"``);
* a JSON value that is not an object (``kind == "shape"``).

The common call is fast. Text of at most 4,300 ASCII characters without
a backslash (no escapes, so no surrogates; too short for an over-long
integer) is parsed by the C scanner without the duplicate-key hook, and
taken as it is if it is an object whose text holds exactly as many ``:``
as the object has keys. Every member of every object puts one ``:``
outside the strings, so equal counts mean no member was dropped as a
duplicate and no nested object has members; colons inside strings only
send the text to the full decoder. The scanner keeps the number hooks
(called only for a float or a ``NaN``), and nesting is checked as the full
decoder does. Anything else takes the full decoder, which gives the same
values and every refusal.

The package knows no toolctx domain class: the dispatcher turns a
:class:`DecodeError` into the sentence the model reads, adding the tool's
name and the keys it expects. The sentences, for example:

>>> def sentence(tool, error, keys):
...     keys = (
...         " with the keys " + ", ".join(keys)
...         if keys
...         else " (this tool takes no arguments: send {})"
...     )
...     start = f"The arguments for tool {tool!r}"
...     if error.kind == "size":
...         return f"{start} are {error.problem}. Send less data."
...     if error.kind == "json":
...         return f"{start} are {error.problem}. Send one JSON object{keys}."
...     return f"{start} must be a JSON object{keys}, got {error.detail}."
>>> try:
...     decode_arguments('{"a": 1, "a": 2}')
... except DecodeError as exc:
...     print(sentence("add", exc, ["a", "b"]))
The arguments for tool 'add' are not valid JSON (duplicate key 'a'; send
each key once). Send one JSON object with the keys a, b.
>>> try:
...     decode_arguments("[1, 2]")
... except DecodeError as exc:
...     print(sentence("now", exc, []))
The arguments for tool 'now' must be a JSON object (this tool takes no
arguments: send {}), got an array.
"""

from __future__ import annotations

import json
import json.scanner
import re

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, NoReturn, final

import attrs

from toolctx._text import bounded, message_of
from toolctx._types.output import MAX_INT, MAX_INT_DIGITS


DecodeKind = Literal["size", "json", "shape"]
"""What a :class:`DecodeError` refused: the size, the JSON, or its shape."""

_PROBLEMS: Final[Mapping[str, str]] = {
    "size": "too large ({})",
    "json": "not valid JSON ({})",
    "shape": "not a JSON object (got {})",
}


@final
class DecodeError(ValueError):
    """Argument text or data refused by :func:`decode_arguments`.

    Attributes:
        kind: ``"size"`` (over ``max_size``), ``"json"`` (not strict
            JSON, or decoded data unlike it) or ``"shape"`` (a JSON
            value other than an object).
        detail: What was wrong, at most about 200 characters: for
            ``"size"`` ``"N characters; the limit is M"``, for ``"json"``
            the decoder's message (``"Expecting ',' delimiter: line 1
            column 9 (char 8)"``, ``"duplicate key 'a'; send each key
            once"``), for ``"shape"`` the JSON kind (``"an array"``).
        problem: The short text a message is built from: ``"too large
            (...)"``, ``"not valid JSON (...)"`` or ``"not a JSON object
            (got an array)"``; also ``str()`` of the error.
        cause: The exception the parser raised (a ``JSONDecodeError``,
            ``UnicodeDecodeError``, ``RecursionError``, ...), or None.
    """

    def __init__(
        self,
        kind: DecodeKind,
        detail: str,
        cause: BaseException | None = None,
    ) -> None:
        self.kind: DecodeKind = kind
        self.detail = detail
        self.problem = _PROBLEMS[kind].format(detail)
        self.cause = cause
        super().__init__(self.problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.kind, self.detail, self.cause)


def _positive_int(
    _instance: object, attribute: attrs.Attribute[int], value: object
) -> None:
    if type(value) is not int or value < 1:
        msg = (
            f"ArgumentLimits.{attribute.name} must be a positive int, got "
            f"{bounded(repr(value), 100)}."
        )
        raise ValueError(msg)


@final
@attrs.frozen
class ArgumentLimits:
    """Bounds on the model's argument text, checked before a tool runs.

    Attributes:
        max_size: Most characters (or bytes) of argument text.
        max_depth: Deepest nesting of arrays and objects.

    Raises:
        ValueError: A limit is not a positive int.

    .. versionadded:: 0.1.0
    """

    max_size: int = attrs.field(default=1_000_000, validator=_positive_int)
    max_depth: int = attrs.field(default=64, validator=_positive_int)


DEFAULT_LIMITS: Final = ArgumentLimits()
"""The limits of a ``Dispatcher`` given none."""


# -- the strict decoder ------------------------------------------------------


def _no_constant(name: str) -> NoReturn:
    msg = f"{name} is not valid JSON; send numbers as finite decimals"
    raise ValueError(msg)


def _finite_float(text: str) -> float:
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
    parse_constant=_no_constant,
    parse_float=_finite_float,
    object_pairs_hook=_unique_pairs,
)
_Scanner = Callable[[str, int], tuple[Any, int]]
_scan: Final[_Scanner] = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]
# The same refusals of numbers (hooks called only for a float or a NaN),
# but objects built in C, without the duplicate check:
_fast_scan: Final[_Scanner] = json.scanner.make_scanner(
    json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)  # type: ignore[arg-type]
)
_decode_text: Final = _DECODER.decode

_FAST_SIZE: Final = MAX_INT_DIGITS  # no longer text can hold a too-long int


def decode_json(text: str) -> Any:
    """Parse JSON text the way tool arguments are parsed.

    Refused with a ``ValueError`` (a ``json.JSONDecodeError`` for syntax):
    duplicate keys, ``NaN``/``Infinity`` and numbers too large for a
    float. Size, depth, digit and surrogate limits are
    :func:`decode_arguments`' own.
    """
    return _decode_text(text)


# -- arguments ---------------------------------------------------------------


def decode_arguments(
    raw: object, limits: ArgumentLimits = DEFAULT_LIMITS
) -> dict[str, Any]:
    """Return the arguments *raw* as a dict, checked against *limits*.

    *raw* is JSON text (``str``, or ``bytes`` in UTF-8), a decoded
    mapping (returned as is if it is a ``dict``, else copied into one) or
    None; None, empty text and JSON ``null`` mean ``{}``. See the module
    docstring for what is refused.

    Raises:
        DecodeError: *raw* is too large, not strict JSON, or not an
            object.
    """
    if type(raw) is not str:
        return _from_object(raw, limits)
    # The C scanner without the duplicate hook, for a short ASCII object
    # without escapes: see the module docstring for why the colon count
    # rules out a duplicate key. Anything unusual takes the full decoder.
    size = len(raw)
    if (
        size <= _FAST_SIZE
        and size <= limits.max_size
        and raw.isascii()
        and "\\" not in raw
    ):
        try:
            data, end = _fast_scan(raw, 0)
        except (StopIteration, ValueError, RecursionError):
            pass
        else:
            if (
                end == size
                and type(data) is dict
                and raw.count(":") == len(data)
                and (
                    size <= 2 * limits.max_depth
                    or raw.count("[") + raw.count("{") <= limits.max_depth
                )
            ):
                return data
    return _from_text(raw, limits)


def _from_object(raw: object, limits: ArgumentLimits) -> dict[str, Any]:
    """Decode arguments that are not ``str``: bytes, a mapping, None."""
    if type(raw) is bytes:
        if raw.isascii():  # the same text: the fast route may take it
            return decode_arguments(raw.decode("ascii"), limits)
        return _from_text(raw, limits)
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        problem = _decoded_problem(raw, limits.max_depth)
        if problem is not None:
            raise DecodeError("json", problem)
        return raw if type(raw) is dict else dict(raw)
    raise DecodeError("shape", _json_kind(raw))


def _from_text(raw: str | bytes, limits: ArgumentLimits) -> dict[str, Any]:
    """Decode argument text with the full decoder: every rule, in order."""
    size = len(raw)
    if size > limits.max_size:
        raise DecodeError(
            "size", f"{size} characters; the limit is {limits.max_size}"
        )
    try:
        data = _parse(raw, limits.max_depth)
    except (ValueError, RecursionError) as exc:
        detail = message_of(exc, 200) or type(exc).__name__
        if "integer string conversion" in detail:  # CPython's digit limit
            detail = _TOO_MANY_DIGITS
        raise DecodeError("json", detail, exc) from None
    if type(data) is dict:
        return data
    if data is None:
        return {}
    raise DecodeError("shape", _json_kind(data))


def _parse(raw: str | bytes, max_depth: int) -> Any:
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
            data = _decode_text(text)
    except StopIteration:
        if not text.strip():
            return None
        data = _decode_text(text)
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


_TOO_MANY_DIGITS: Final = (
    f"a number has more than {MAX_INT_DIGITS} digits; send it as a string"
)
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
            raise ValueError(_TOO_MANY_DIGITS)
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


def _decoded_problem(data: object, max_depth: int) -> str | None:
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
        return _TOO_MANY_DIGITS
    if isinstance(item, str) and not item.isascii():
        try:
            item.encode()
        except UnicodeEncodeError:
            return "a string holds a lone UTF-16 surrogate; send valid text"
    return None


def _json_kind(value: object) -> str:
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
