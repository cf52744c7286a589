r"""JSON Schema ``pattern``: ECMA-262 regular expressions, run by ``re``.

JSON Schema says a ``pattern`` is an ECMA-262 regular expression, and
every JSON Schema validator reads it so (with the ``u`` flag, as JSON
Schema's own test suite does). Python's ``re`` reads the same text
differently: ``$`` also matches before a final line break, ``\d``,
``\w`` and ``\b`` are Unicode-aware, ``\s`` and ``.`` have other
sets. :func:`compile_pattern` parses the pattern as ECMA-262 (``u``
flag, no other flag) and writes an equivalent Python expression:

=====================  =============================================
ECMA-262               Python
=====================  =============================================
``^`` / ``$``          ``\A`` / ``\Z`` (start / end of the input)
``.``                  ``[^\n\r\u2028\u2029]``
``\d`` ``\w`` ``\b``   ASCII: ``[0-9]``, ``[0-9A-Za-z_]``, a
                       boundary of that set (and the negations)
``\s`` / ``\S``        ECMA's WhiteSpace and LineTerminator set
literal, escape        the code point, escaped
``(...)``              ``(?:...)`` (a test needs no captures)
=====================  =============================================

What ``re`` cannot run the same way is a :class:`PatternError`, raised
when the tool is built: backreferences (``\1``, ``\k<name>``),
Unicode property escapes (``\p{L}``), a lookbehind of variable
length. Syntax ECMA-262 does not accept is a :class:`PatternError` too,
Python's own among it: ``\A``, ``\Z``, ``\z``, ``(?P<name>...)``,
inline flags (``(?i)``), atomic groups, possessive quantifiers,
comments, conditionals, a lone ``{`` or ``]``.
"""

from __future__ import annotations

import functools
import re

from typing import Final


class PatternError(ValueError):
    """A ``pattern`` toolctx cannot run with ECMA-262's meaning.

    The message says what and where (a position in the pattern).
    """


_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|")
"""ECMA-262's SyntaxCharacter: escaped to stand for themselves."""
_MAX: Final = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]

_DIGITS: Final[Ranges] = ((0x30, 0x39),)
_WORD: Final[Ranges] = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Final[Ranges] = (
    (0x09, 0x0D),  # TAB LF VT FF CR
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),  # LS PS
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
"""``\\s``: WhiteSpace (TAB, VT, FF, SP, NBSP, ZWNBSP, the Space_Separator
code points) and LineTerminator (LF, CR, LS, PS)."""
_LINE_ENDS: Final[Ranges] = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))


def _complement(ranges: Ranges) -> Ranges:
    """The code points not in the sorted, disjoint *ranges*."""
    out: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= _MAX:
        out.append((start, _MAX))
    return tuple(out)


_CLASS_ESCAPES: Final[dict[str, Ranges]] = {
    "d": _DIGITS,
    "D": _complement(_DIGITS),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}
_CONTROL: Final = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_DECIMAL: Final = frozenset("0123456789")
_BRACES: Final = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_NAME: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_W: Final = "[0-9A-Za-z_]"
_BOUNDARY: Final = f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"
_NOT_BOUNDARY: Final = f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))"
_ALNUM: Final = frozenset(
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)


def _char(point: int) -> str:
    """One code point as ``re`` reads it literally, in or out of a class."""
    if chr(point) in _ALNUM:
        return chr(point)
    if point <= 0xFFFF:  # noqa: PLR2004
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def _class(ranges: Ranges, *, negate: bool = False) -> str:
    """A Python character class of *ranges* (or of the rest)."""
    merged: list[list[int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    if not merged:
        return f"[\\u0000-\\U{_MAX:08x}]" if negate else "(?!)"
    body = "".join(
        _char(low) if low == high else f"{_char(low)}-{_char(high)}"
        for low, high in merged
    )
    return f"[{'^' if negate else ''}{body}]"


class _Parser:
    """ECMA-262 ``Pattern`` (``u`` flag) -> a Python regular expression."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.names: set[str] = set()

    def fail(self, what: str, at: int | None = None) -> PatternError:
        where = self.pos if at is None else at
        return PatternError(f"{what} at position {where}")

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.source[index] if index < len(self.source) else ""

    def looking_at(self, text: str) -> bool:
        return self.source.startswith(text, self.pos)

    def parse(self) -> str:
        out = self.disjunction()
        if self.pos < len(self.source):  # only a ")" stops a disjunction
            raise self.fail("unmatched ')'")
        return out

    def disjunction(self) -> str:
        alternatives = [self.alternative()]
        while self.peek() == "|":
            self.pos += 1
            alternatives.append(self.alternative())
        return "|".join(alternatives)

    def alternative(self) -> str:
        parts: list[str] = []
        while self.peek() not in {"", "|", ")"}:
            parts.append(self.term())
        return "".join(parts)

    def term(self) -> str:
        """An assertion (never quantified), or an atom and its quantifier."""
        char = self.peek()
        if char == "^":
            self.pos += 1
            return "\\A"
        if char == "$":
            self.pos += 1
            return "\\Z"
        if char == "\\" and self.peek(1) in {"b", "B"}:
            boundary = self.peek(1) == "b"
            self.pos += 2
            return _BOUNDARY if boundary else _NOT_BOUNDARY
        for opener in ("(?=", "(?!", "(?<=", "(?<!"):
            if self.looking_at(opener):
                self.pos += len(opener)
                return opener + self.group_body()
        atom = self.atom()
        return atom + self.quantifier()

    def group_body(self) -> str:
        """The rest of a group after its opener, closing ``)`` included."""
        start = self.pos - 1
        inner = self.disjunction()
        if self.peek() != ")":
            raise self.fail("missing ')' for the group opened", start)
        self.pos += 1
        return inner + ")"

    def quantifier(self) -> str:
        char = self.peek()
        if char in {"*", "+", "?"}:
            self.pos += 1
            out = char
        elif char == "{":
            out = self.braces()
        else:
            return ""
        if self.peek() == "?":
            self.pos += 1
            out += "?"
        return out

    def braces(self) -> str:
        """``{n}``, ``{n,}`` or ``{n,m}``; anything else is an error."""
        start = self.pos
        match = _BRACES.match(self.source, self.pos)
        if match is None:
            raise self.fail("incomplete quantifier '{'", start)
        self.pos = match.end()
        low = int(match[1])
        if match[2] is None:
            return f"{{{low}}}"
        if not match[3]:
            return f"{{{low},}}"
        high = int(match[3])
        if high < low:
            raise self.fail("numbers out of order in {} quantifier", start)
        return f"{{{low},{high}}}"

    def atom(self) -> str:
        char = self.peek()
        if char == ".":
            self.pos += 1
            return _class(_LINE_ENDS, negate=True)
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class()
        if char == "\\":
            escaped = self.escape(in_class=False)
            if isinstance(escaped, int):
                return _char(escaped)
            return _class(escaped)
        if char in {"*", "+", "?"}:
            raise self.fail(f"nothing to repeat before {char!r}")
        if char in _SYNTAX:  # "{", "}" or "]"
            raise self.fail(
                f"lone {char!r} (write \\{char} for the character)"
            )
        self.pos += 1
        return _char(ord(char))

    def group(self) -> str:
        start = self.pos
        self.pos += 1
        if self.looking_at("?:"):
            self.pos += 2
        elif self.looking_at("?<"):
            self.pos += 2
            match = _NAME.match(self.source, self.pos)
            end = match.end() if match else self.pos
            if match is None or self.source[end : end + 1] != ">":
                msg = "invalid group name (toolctx takes [A-Za-z_$][\\w$]*)"
                raise self.fail(msg, start)
            name = match[0]
            if name in self.names:
                raise self.fail(f"duplicate group name {name!r}", start)
            self.names.add(name)
            self.pos = end + 1
        elif self.peek() == "?":
            raise self.fail("invalid group '(?' (not ECMA-262)", start)
        return "(?:" + self.group_body()

    def char_class(self) -> str:
        start = self.pos
        self.pos += 1
        negate = self.peek() == "^"
        if negate:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        while self.peek() != "]":
            if not self.peek():
                raise self.fail("missing ']' for the class opened", start)
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in {"]", ""}:
                self.pos += 1
                last = self.class_atom()
                if not (isinstance(first, int) and isinstance(last, int)):
                    raise self.fail("a class escape cannot bound a range")
                if last < first:
                    raise self.fail("range out of order in character class")
                ranges.append((first, last))
            elif isinstance(first, int):
                ranges.append((first, first))
            else:
                ranges.extend(first)
        self.pos += 1
        return _class(tuple(ranges), negate=negate)

    def class_atom(self) -> int | Ranges:
        char = self.peek()
        if char == "\\":
            return self.escape(in_class=True)
        self.pos += 1
        return ord(char)

    def escape(self, *, in_class: bool) -> int | Ranges:  # noqa: C901 - one branch per escape
        r"""The code point or the set an escape (``\`` here) stands for."""
        start = self.pos
        self.pos += 1
        char = self.peek()
        self.pos += 1
        if not char:
            raise self.fail("'\\' at end of pattern", start)
        if char in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[char]
        if char in _CONTROL:
            return _CONTROL[char]
        if in_class and char == "b":
            return 0x08
        if in_class and char == "-":
            return ord("-")
        if char in _SYNTAX or char == "/":
            return ord(char)
        if char == "0" and self.peek() not in _DECIMAL:
            return 0
        if char == "c" and self.peek().isascii() and self.peek().isalpha():
            self.pos += 1
            return ord(self.source[self.pos - 1]) % 32
        if char == "x":
            return self.hex_digits(2, start)
        if char == "u":
            return self.unicode_escape(start)
        if char in {"p", "P"}:
            msg = (
                f"Unicode property escape '\\{char}' (toolctx cannot run "
                f"it as ECMA-262 does)"
            )
            raise self.fail(msg, start)
        if not in_class and (char in _DECIMAL - {"0"} or char == "k"):
            msg = "backreference (toolctx cannot run it as ECMA-262 does)"
            raise self.fail(msg, start)
        raise self.fail(f"invalid escape '\\{char}' (not ECMA-262)", start)

    def hex_digits(self, count: int, start: int) -> int:
        digits = self.source[self.pos : self.pos + count]
        if len(digits) != count or not set(digits) <= _HEX:
            raise self.fail("invalid escape: expected hex digits", start)
        self.pos += count
        return int(digits, 16)

    def unicode_escape(self, start: int) -> int:
        r"""``\uHHHH`` (a surrogate pair: one code point) or ``\u{H...}``."""
        if self.peek() == "{":
            end = self.source.find("}", self.pos)
            digits = self.source[self.pos + 1 : end] if end > 0 else ""
            if not digits or not set(digits) <= _HEX or int(digits, 16) > _MAX:
                raise self.fail("invalid escape '\\u{...}'", start)
            self.pos = end + 1
            return int(digits, 16)
        point = self.hex_digits(4, start)
        if 0xD800 <= point <= 0xDBFF and self.looking_at("\\u"):  # noqa: PLR2004
            save = self.pos
            self.pos += 2
            try:
                low = self.hex_digits(4, start)
            except PatternError:
                low = -1
            if 0xDC00 <= low <= 0xDFFF:  # noqa: PLR2004
                return 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00)
            self.pos = save
        return point


def translate(pattern: str) -> str:
    """The Python regular expression that means what *pattern* means.

    Raises:
        PatternError: *pattern* is not ECMA-262 (``u`` flag), or ``re``
            cannot run it the same way.
    """
    try:
        return _Parser(pattern).parse()
    except RecursionError:
        msg = "groups nested too deeply"
        raise PatternError(msg) from None


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """*pattern* (ECMA-262) compiled for ``re``: ``.search`` tests it.

    Raises:
        PatternError: See :func:`translate`; also a lookbehind of
            variable length and other forms ``re`` refuses.
    """
    python = translate(pattern)
    try:
        return re.compile(python)
    except re.error as exc:
        detail = str(exc).split(" at position", 1)[0]
        msg = f"toolctx cannot run it with Python's re ({detail})"
        raise PatternError(msg) from None
    except (OverflowError, RecursionError):
        msg = "toolctx cannot run it with Python's re (too large)"
        raise PatternError(msg) from None


def pattern_text(value: object) -> str:
    """The text of a ``pattern`` constraint given as a string or ``re``.

    Raises:
        PatternError: A compiled expression with flags (JSON Schema's
            ``pattern`` has none), or bytes.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, re.Pattern):
        text: object = value.pattern
        if isinstance(text, str):
            if value.flags & ~re.UNICODE:
                msg = (
                    "a compiled pattern with flags (re.I, re.M...), which "
                    "a JSON Schema pattern cannot carry; give the pattern "
                    "as a string"
                )
                raise PatternError(msg)
            return text
    msg = f"a pattern must be text, not {type(value).__name__}"
    raise PatternError(msg)
