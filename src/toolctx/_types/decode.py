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
values and every refusal (its parser and checks are
:mod:`toolctx._types.strict_json`).

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

from collections.abc import Mapping
from typing import Any, Final, Literal, final

import attrs

from toolctx._text import bounded, message_of
from toolctx._types.output_scalars import MAX_INT_DIGITS
from toolctx._types.strict_json import (
    TOO_MANY_DIGITS,
    Scanner,
    decode_text,
    decoded_problem,
    finite_float,
    json_kind,
    no_constant,
    parse,
)


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


def decode_json(text: str) -> Any:
    """Parse JSON text the way tool arguments are parsed.

    Refused with a ``ValueError`` (a ``json.JSONDecodeError`` for syntax):
    duplicate keys, ``NaN``/``Infinity`` and numbers too large for a
    float. Size, depth, digit and surrogate limits are
    :func:`decode_arguments`' own.
    """
    return decode_text(text)


# -- the fast route ----------------------------------------------------------


# The full decoder's refusals of numbers (hooks called only for a float or a
# NaN), but objects built in C, without the duplicate check:
_fast_scan: Final[Scanner] = json.scanner.make_scanner(
    json.JSONDecoder(parse_constant=no_constant, parse_float=finite_float)  # type: ignore[arg-type]
)
_FAST_SIZE: Final = MAX_INT_DIGITS  # no longer text can hold a too-long int


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
        problem = decoded_problem(raw, limits.max_depth)
        if problem is not None:
            raise DecodeError("json", problem)
        return raw if type(raw) is dict else dict(raw)
    raise DecodeError("shape", json_kind(raw))


def _from_text(raw: str | bytes, limits: ArgumentLimits) -> dict[str, Any]:
    """Decode argument text with the full decoder: every rule, in order."""
    size = len(raw)
    if size > limits.max_size:
        raise DecodeError(
            "size", f"{size} characters; the limit is {limits.max_size}"
        )
    try:
        data = parse(raw, limits.max_depth)
    except (ValueError, RecursionError) as exc:
        detail = message_of(exc, 200) or type(exc).__name__
        if "integer string conversion" in detail:  # CPython's digit limit
            detail = TOO_MANY_DIGITS
        raise DecodeError("json", detail, exc) from None
    if type(data) is dict:
        return data
    if data is None:
        return {}
    raise DecodeError("shape", json_kind(data))
