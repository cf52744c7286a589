"""The argument decoder: model text in, a dict out, or a refusal naming why.

``toolctx._types.decode.decode_arguments`` is the one decoder of every
dispatch path: the fast route (short ASCII objects, the C scanner without
the duplicate hook) must give exactly what the full decoder gives, and both
what strict ``json.loads`` gives.
"""

from __future__ import annotations

import json
import math
import pickle
import sys

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from hypothesis import given
from hypothesis import strategies as st

from toolctx import Dispatcher, Registry, ToolCall
from toolctx._types import decode
from toolctx._types.decode import (
    DEFAULT_LIMITS,
    ArgumentLimits,
    DecodeError,
    decode_arguments,
    decode_json,
)


DIGITS = 4300
"""CPython's limit on the digits of an int, which toolctx applies too."""

TOO_MANY_DIGITS = "a number has more than 4300 digits; send it as a string"


def refusal(raw: object, limits: ArgumentLimits = DEFAULT_LIMITS) -> Any:
    """The :class:`DecodeError` decoding *raw* raises (fails if none)."""
    with pytest.raises(DecodeError) as info:
        decode_arguments(raw, limits)
    return info.value


def sentence(tool: str, error: DecodeError, keys: list[str]) -> str:
    """The message the model reads, built as the module docstring shows."""
    expected = (
        " with the keys " + ", ".join(keys)
        if keys
        else " (this tool takes no arguments: send {})"
    )
    start = f"The arguments for tool {tool!r}"
    if error.kind == "size":
        return f"{start} are {error.problem}. Send less data."
    if error.kind == "json":
        return f"{start} are {error.problem}. Send one JSON object{expected}."
    return f"{start} must be a JSON object{expected}, got {error.detail}."


# -- acceptance ----------------------------------------------------------------


class TestAccepted:
    """What decodes, and to what."""

    @pytest.mark.parametrize(
        "raw", [None, "", "   ", "\n\t", "null", " null\n", b"", b"null"]
    )
    def test_nothing_means_no_arguments(self, raw: object) -> None:
        """None, blank text and JSON null all mean ``{}``."""
        assert decode_arguments(raw) == {}

    def test_a_fresh_dict_each_time(self) -> None:
        """The caller may add to the result: the next call is not affected."""
        for raw in (None, "", "{}", '{"a": 1}'):
            first = decode_arguments(raw)
            first["injected"] = True
            assert "injected" not in decode_arguments(raw)

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ('{"a": 1, "b": 2}', {"a": 1, "b": 2}),
            ('{"a":1,"b":"x","c":true,"d":null,"e":-2.5}', None),
            ('  {"a": 1}  ', {"a": 1}),
            ('{"a": [1, [2, {}]], "b": {}}', {"a": [1, [2, {}]], "b": {}}),
            ('{"a": {"b": {"c": 1}}}', {"a": {"b": {"c": 1}}}),
            (
                '{"to":"urn:bob:1","amount":5}',
                {"to": "urn:bob:1", "amount": 5},
            ),
            ('{"q": "say \\"hi\\": now"}', {"q": 'say "hi": now'}),
            ('{"e": "\\u00e9\\ud83d\\ude00"}', {"e": "\u00e9\U0001f600"}),
            ('{"e": "é"}', {"e": "é"}),
            ('{"p": "\\\\ud800"}', {"p": "\\ud800"}),
            (
                '{"a": 1e-999, "b": -0.0, "c": 1E3}',
                {"a": 0.0, "b": -0.0, "c": 1e3},
            ),
        ],
    )
    def test_json_objects(
        self, raw: str, expected: dict[str, Any] | None
    ) -> None:
        """Text and UTF-8 bytes of an object give the json.loads value."""
        want = json.loads(raw) if expected is None else expected
        for given_raw in (raw, raw.encode()):
            got = decode_arguments(given_raw)
            assert got == want
            assert repr(got) == repr(want)  # the same types: -0.0, 1 vs 1.0

    def test_a_valid_surrogate_pair(self) -> None:
        """A surrogate pair escape (an emoji) is one character, accepted."""
        assert decode_arguments('{"v": "\\ud83d\\ude00"}') == {"v": "😀"}

    def test_a_mapping_becomes_a_dict(self) -> None:
        """A decoded mapping (MCP, Anthropic, Gemini) is taken as a dict."""
        data = {"a": [1, (2, 3)], "b": {"c": "é"}}
        got = decode_arguments(MappingProxyType(data))
        assert type(got) is dict
        assert got == data
        assert decode_arguments(data) == data

    def test_the_limits_are_the_dispatchers_defaults(self) -> None:
        """A megabyte of text, 64 levels of nesting."""
        assert ArgumentLimits(1_000_000, 64) == DEFAULT_LIMITS


# -- refusals --------------------------------------------------------------------


class TestSize:
    """Text over ``max_size`` is refused before it is parsed."""

    @pytest.mark.parametrize("value", ["x", "é"])
    def test_at_the_limit_and_one_past_it(self, value: str) -> None:
        """``max_size`` characters pass; one more is refused, both named."""
        text = json.dumps({"v": value * 100}, ensure_ascii=False)
        exact = ArgumentLimits(max_size=len(text))
        assert decode_arguments(text, exact) == {"v": value * 100}
        error = refusal(text, ArgumentLimits(max_size=len(text) - 1))
        assert error.kind == "size"
        assert error.detail == (
            f"{len(text)} characters; the limit is {len(text) - 1}"
        )
        assert error.problem == f"too large ({error.detail})"

    def test_a_short_object_is_held_to_a_small_limit(self) -> None:
        """The fast route for short text keeps the size limit."""
        error = refusal('{"a":1}', ArgumentLimits(max_size=5))
        assert error.problem == "too large (7 characters; the limit is 5)"

    def test_bytes_are_counted_in_bytes(self) -> None:
        """UTF-8 bytes are measured as sent: 'é' counts twice."""
        text = '{"a":"é"}'
        limits = ArgumentLimits(max_size=len(text))
        assert decode_arguments(text, limits) == {"a": "é"}
        error = refusal(text.encode(), limits)
        assert error.detail == "10 characters; the limit is 9"

    def test_refused_before_parsing(self) -> None:
        """Oversized text is refused as too large, not as bad JSON."""
        error = refusal("{" * 50, ArgumentLimits(max_size=10))
        assert error.kind == "size"


class TestDepth:
    """Nesting deeper than ``max_depth`` is refused, however it is spelled."""

    @pytest.mark.parametrize("opener", ["[", '{"k":'])
    def test_at_the_limit_and_one_past_it(self, opener: str) -> None:
        """``max_depth`` levels pass (the object counts); one more fails."""
        closer = "]" if opener == "[" else "}"
        limits = ArgumentLimits(max_depth=4)
        ok = '{"v": ' + opener * 3 + "1" + closer * 3 + "}"
        assert decode_arguments(ok, limits)
        deep = '{"v": ' + opener * 4 + "1" + closer * 4 + "}"
        error = refusal(deep, limits)
        assert error.kind == "json"
        assert error.problem == (
            "not valid JSON (nested deeper than 4 levels; flatten the data)"
        )

    def test_brackets_in_strings_do_not_count(self) -> None:
        """Only real nesting counts, not '[' and '{' inside strings."""
        text = json.dumps({"v": "[{" * 200, "w": ["[[[["]})
        assert decode_arguments(text, ArgumentLimits(max_depth=2))

    def test_a_short_text_is_held_to_a_small_limit(self) -> None:
        """The fast route for short text keeps the depth limit."""
        error = refusal('{"a":[1,[2]]}', ArgumentLimits(max_depth=2))
        assert "nested deeper than 2 levels" in error.problem

    def test_a_recursion_bomb(self) -> None:
        """Nesting that would break the parser is refused, not raised."""
        bomb = '{"v": ' + "[" * 100_000 + "]" * 100_000 + "}"
        limits = ArgumentLimits(max_size=10**7, max_depth=10**6)
        assert refusal(bomb, limits).kind == "json"
        assert refusal(bomb, ArgumentLimits(max_size=10**7)).kind == "json"

    def test_a_short_recursion_bomb(self) -> None:
        """Short enough for the fast route, deep enough to break a parser."""
        bomb = '{"v":' + "[" * 2000 + "]" * 2000 + "}"
        assert len(bomb) <= DIGITS
        assert refusal(bomb).kind == "json"

    def test_decoded_data_too(self) -> None:
        """Lists, tuples and mappings count as levels in decoded data."""
        limits = ArgumentLimits(max_depth=3)
        assert decode_arguments({"v": [(1,)]}, limits)
        error = refusal({"v": [({"w": 1},)]}, limits)
        assert error.detail == "nested deeper than 3 levels; flatten the data"
        assert error.cause is None


class TestNumbers:
    """Numbers JSON cannot carry never get in."""

    @pytest.mark.parametrize(
        ("text", "detail"),
        [
            ('{"v": NaN}', "NaN is not valid JSON"),
            ('{"v":Infinity}', "Infinity is not valid JSON"),
            ('{"v": [-Infinity]}', "-Infinity is not valid JSON"),
            ('{"v": 1e999}', "the number 1e999 is too large"),
            ('{"v":-1e999}', "the number -1e999 is too large"),
            ('{"v": {"w": [2E400]}}', "the number 2E400 is too large"),
        ],
    )
    def test_non_finite_numbers(self, text: str, detail: str) -> None:
        """NaN, infinities and floats that overflow are refused by name."""
        error = refusal(text)
        assert error.kind == "json"
        assert error.detail.startswith(detail)
        assert "send" in error.detail  # says what to send instead

    @pytest.mark.parametrize("sign", ["", "-"])
    def test_the_digit_limit(self, sign: str) -> None:
        """4,300 digits pass; 4,301 fail, the model told to send a string."""
        ok = f'{{"v": {sign}{"7" * DIGITS}}}'
        assert decode_arguments(ok) == {"v": int(sign + "7" * DIGITS)}
        error = refusal(f'{{"v": {sign}{"7" * (DIGITS + 1)}}}')
        assert error.problem == f"not valid JSON ({TOO_MANY_DIGITS})"

    def test_long_digit_runs_in_strings_are_text(self) -> None:
        """Only numbers are limited: a string of 5,000 digits is fine."""
        assert decode_arguments(json.dumps({"v": "9" * 5000})) == {
            "v": "9" * 5000
        }

    @pytest.fixture
    def cpython_limit_off(self) -> Iterator[None]:
        """CPython's own int-to-text limit lifted (3.11+), as a host may."""
        if sys.version_info < (3, 11):  # pragma: no cover - no such limit
            yield
            return
        before = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            yield
        finally:
            sys.set_int_max_str_digits(before)

    @pytest.mark.usefixtures("cpython_limit_off")
    def test_the_digit_limit_is_toolctxs_own(self) -> None:
        """The limit holds where the process lifted CPython's (and on 3.10).

        A number accepted can always be written out again.
        """
        error = refusal('{"v": [' + "7" * (DIGITS + 1) + "]}")
        assert error.detail == TOO_MANY_DIGITS

    @pytest.mark.parametrize(
        ("value", "detail"),
        [
            (math.nan, "nan is not a JSON number; send a finite number"),
            (-math.inf, "-inf is not a JSON number; send a finite number"),
            (10**DIGITS, TOO_MANY_DIGITS),
            (-(10**DIGITS), TOO_MANY_DIGITS),
        ],
        ids=["nan", "-inf", "10**4300", "-10**4300"],
    )
    def test_decoded_numbers(self, value: object, detail: str) -> None:
        """Decoded data gets the same number checks as text."""
        assert refusal({"v": {"w": [value]}}).detail == detail

    def test_decoded_numbers_at_the_limit(self) -> None:
        """The largest 4,300-digit numbers are accepted as data too."""
        data = {"v": [10**DIGITS - 1, -(10**DIGITS - 1), 1.5]}
        assert decode_arguments(data) == data


class TestDuplicateKeys:
    """A key sent twice is refused, however it is spaced or nested."""

    @pytest.mark.parametrize(
        "text",
        [
            '{"to":"bob","amount":1,"amount":5000}',
            '{"to":"bob","amount":1,"amount" :5000}',
            '{"to":"bob","amount":1,"amount"\n:5000}',
            '{"to":"bob","amount":1,"amount"\t :5000}',
            '{"to":"bob", "amount": 1, "amount": 5000}',
            '{"amount" :1,"to":"bob","amount":5000}',
            '{"to":"a:b","amount":1,"amount":5000}',
            '{"x": {"amount": 1, "amount": 2}}',
            '{"x": [{"amount": 1, "amount": 2}]}',
            '{"amount": "\\u00e9", "amount": 2}',
            '{"amount": "é", "amount": 2}',
        ],
    )
    def test_refused_naming_the_key(self, text: str) -> None:
        """The second value never silently replaces the first."""
        for raw in (text, text.encode()):
            error = refusal(raw)
            assert error.kind == "json"
            assert error.detail == "duplicate key 'amount'; send each key once"

    def test_several_are_all_named(self) -> None:
        """Every key sent twice is named, sorted."""
        error = refusal('{"b": 1, "a": 1, "b": 2, "a": 2}')
        assert error.detail == "duplicate keys 'a', 'b'; send each key once"

    def test_the_message_is_bounded(self) -> None:
        """Thousands of duplicates give a short message, not a huge one."""
        pairs = [f'"k{i}": 1, "k{i}": 2' for i in range(5000)]
        error = refusal("{" + ", ".join(pairs) + "}")
        assert error.detail.startswith("duplicate keys 'k0', 'k1'")
        assert len(error.problem) < 300


class TestSurrogates:
    """Text with a lone UTF-16 surrogate cannot be stored or sent on."""

    @pytest.mark.parametrize(
        "raw",
        [
            '{"v": "\\ud800"}',
            '{"v": "\\udc00x"}',
            '{"\\ud800": 1}',
            '{"v": ["ok", "\\ud83d"]}',
            '{"v": "\ud800"}',  # the character itself, not an escape
        ],
    )
    def test_refused_in_text(self, raw: str) -> None:
        """Escaped or not, in keys or values, nested or not."""
        error = refusal(raw)
        assert error.detail == (
            "a string holds a lone UTF-16 surrogate escape (such as "
            "\\ud800); send valid Unicode text"
        )

    @pytest.mark.parametrize(
        "data", [{"v": "\ud800"}, {"\udfff": 1}, {"v": [("x\ud800",)]}]
    )
    def test_refused_in_decoded_data(self, data: object) -> None:
        """Keys and values of decoded data are checked too."""
        error = refusal(data)
        assert error.detail == (
            "a string holds a lone UTF-16 surrogate; send valid text"
        )

    def test_invalid_utf8_bytes(self) -> None:
        """Bytes that are not UTF-8 are refused with the codec's reason."""
        error = refusal(b'{"v": "\xff"}')
        assert error.kind == "json"
        assert "can't decode byte 0xff" in error.detail
        assert isinstance(error.cause, UnicodeDecodeError)


class TestSyntax:
    """Text that is not JSON is refused with the parser's own position."""

    @pytest.mark.parametrize(
        ("text", "detail"),
        [
            ('{"a": 1', "Expecting ',' delimiter: line 1 column 8 (char 7)"),
            ("{'a': 1}", "Expecting property name enclosed in double quotes"),
            ('{"a": 1} x', "Extra data: line 1 column 10 (char 9)"),
            ('{"a": 1}{}', "Extra data: line 1 column 9 (char 8)"),
            ("nul", "Expecting value: line 1 column 1 (char 0)"),
            ('{"a": 01}', "Expecting ',' delimiter"),
            ('{"a": "x\ny"}', "Invalid control character"),
        ],
    )
    def test_refused(self, text: str, detail: str) -> None:
        """The detail is the decoder's message; the cause its exception."""
        error = refusal(text)
        assert error.kind == "json"
        assert error.detail.startswith(detail)
        assert error.problem == f"not valid JSON ({error.detail})"
        assert isinstance(error.cause, json.JSONDecodeError)

    def test_non_string_keys_in_decoded_data(self) -> None:
        """JSON object keys are strings; decoded data must agree."""
        for data in ({1: "x"}, {"v": {None: 1}}, {"v": [{(1,): 2}]}):
            error = refusal(data)
            assert error.detail == "object keys must be strings"


class TestShape:
    """Arguments are one JSON object: anything else is named."""

    @pytest.mark.parametrize(
        ("raw", "kind"),
        [
            ("[1, 2]", "an array"),
            ('"x"', "a string"),
            ("3", "a number"),
            ("-1.5", "a number"),
            ("true", "a boolean"),
            (b"[]", "an array"),
            ([1], "an array"),
            ((1, 2), "an array"),
            (7, "a number"),
            (False, "a boolean"),
            (bytearray(b"{}"), "a bytearray"),
        ],
    )
    def test_refused_naming_the_kind(self, raw: object, kind: str) -> None:
        """Text of another JSON value, or another Python value."""
        error = refusal(raw)
        assert error.kind == "shape"
        assert error.detail == kind
        assert error.problem == f"not a JSON object (got {kind})"


# -- the error ---------------------------------------------------------------


class TestDecodeError:
    """What the dispatcher needs to tell the model, and nothing secret."""

    def test_a_value_error_whose_text_is_the_problem(self) -> None:
        """``str()`` of the error is its problem."""
        error = refusal("[")
        assert isinstance(error, ValueError)
        assert str(error) == error.problem

    def test_pickles(self) -> None:
        """An error crosses a process boundary with what it says."""
        for raw in ("[", "x" * 20, "[]", {"v": math.nan}):
            error = refusal(raw, ArgumentLimits(max_size=10))
            copy = pickle.loads(pickle.dumps(error))
            assert (copy.kind, copy.detail, copy.problem) == (
                error.kind,
                error.detail,
                error.problem,
            )

    @pytest.mark.parametrize(
        ("tool", "raw"),
        [
            ("add", '{"a": 1' + " " * 10_000 + "}"),
            ("add", b"x" * 20_000),
            ("add", '{"a": 1'),
            ("add", '{"a": 1, "a": 2}'),
            ("add", '{"a": NaN}'),
            ("add", '{"a": "\\ud800"}'),
            ("add", b'{"a": "\xff"}'),
            ("add", '{"a": [[[[1]]]]}'),
            ("add", '{"a": ' + "1" * 4301 + "}"),
            ("add", "[1, 2]"),
            ("add", "true"),
            ("add", {1: 2}),
            ("add", {"a": math.inf}),
            ("add", {"a": "\ud800"}),
            ("add", [1]),
            ("now", '{"a": 1'),
            ("now", '"now"'),
        ],
    )
    def test_reproduces_the_dispatchers_messages(
        self, tool: str, raw: object
    ) -> None:
        """The dispatcher's messages follow from the error, name and keys.

        Word for word, and the exception the result keeps is the error's
        cause.
        """
        registry = Registry()

        @registry.tool
        def add(a: int, b: int = 0) -> int:
            """Add."""
            return a + b

        @registry.tool
        def now() -> str:
            """The time."""
            return "noon"

        dispatcher = Dispatcher(
            registry, max_argument_size=10_000, max_argument_depth=3
        )
        limits = ArgumentLimits(max_size=10_000, max_depth=3)
        keys = {"add": ["a", "b"], "now": []}[tool]
        result = dispatcher.dispatch(ToolCall(tool, raw))
        error = refusal(raw, limits)
        assert result.error == sentence(tool, error, keys)
        assert type(result.exception) is type(error.cause)


class TestLimits:
    """Limits are positive ints, or nothing could be decoded."""

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("max_size", 0),
            ("max_depth", 0),
            ("max_depth", -1),
            ("max_size", 1.5),
            ("max_depth", True),
        ],
    )
    def test_refused(self, field: str, value: object) -> None:
        """The message names the field and the value."""
        with pytest.raises(ValueError, match=f"{field} must be a positive"):
            ArgumentLimits(**{field: value})


class TestDecodeJSON:
    """The strict decoder other readers of model text use."""

    @pytest.mark.parametrize(
        "text", ['{"a": 1, "a": 2}', "[NaN]", "1e999", "[1"]
    )
    def test_refused(self, text: str) -> None:
        """Duplicates, non-finite numbers and bad syntax are ValueErrors."""
        with pytest.raises(ValueError):
            decode_json(text)

    def test_any_json_value(self) -> None:
        """Any JSON value, not only objects, and no depth limit."""
        deep = "[" * 100 + "]" * 100
        assert decode_json(f' [1, "x", {deep}] ') == [1, "x", json.loads(deep)]


# -- the fast route and the reference ----------------------------------------


class _RefusedError(Exception):
    """A strict hook of the reference decoder refused."""


def _ref_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _RefusedError("duplicate")
    return dict(pairs)


def _ref_constant(name: str) -> None:
    raise _RefusedError("finite")


def _ref_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _RefusedError("finite")
    return value


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _ints(value: object) -> Iterator[int]:
    if type(value) is int:
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _ints(v)
    elif isinstance(value, list):
        for v in value:
            yield from _ints(v)


def _floats(value: object) -> Iterator[float]:
    if type(value) is float:
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _floats(v)
    elif isinstance(value, list):
        for v in value:
            yield from _floats(v)


def _lone_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


_KINDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "an array",
}


def reference(raw: str | bytes, limits: ArgumentLimits) -> tuple[Any, ...]:
    """The rules written out plainly over ``json.loads`` with strict hooks.

    ``("ok", repr(value))`` or ``("refused", kind, reason)``.
    """
    if len(raw) > limits.max_size:
        return ("refused", "size", "size")
    try:
        text = raw.decode() if isinstance(raw, bytes) else raw
        if not text.strip():
            return ("ok", "{}")
        value = json.loads(
            text,
            object_pairs_hook=_ref_pairs,
            parse_constant=_ref_constant,
            parse_float=_ref_float,
        )
    except _RefusedError as exc:
        return ("refused", "json", str(exc))
    except (ValueError, RecursionError) as exc:
        digits = "integer string conversion" in str(exc)
        return ("refused", "json", "digits" if digits else "syntax")
    if _depth(value) > limits.max_depth:
        return ("refused", "json", "depth")
    if any(_lone_surrogate(s) for s in _strings(value)):
        return ("refused", "json", "surrogate")
    if any(abs(i) >= 10**DIGITS for i in _ints(value)):
        return ("refused", "json", "digits")
    if value is None:
        return ("ok", "{}")
    if not isinstance(value, dict):
        return ("refused", "shape", _KINDS[type(value)])
    return ("ok", repr(value))


def _reason(error: DecodeError) -> str:
    """The reference's name for what a refusal refused."""
    if error.kind != "json":
        return error.detail if error.kind == "shape" else error.kind
    detail = error.detail
    for start, reason in [
        ("duplicate key", "duplicate"),
        ("nested deeper", "depth"),
        ("a string holds a lone", "surrogate"),
        (TOO_MANY_DIGITS, "digits"),
        ("NaN is not", "finite"),
        ("Infinity is not", "finite"),
        ("-Infinity is not", "finite"),
        ("the number ", "finite"),
    ]:
        if detail.startswith(start):
            return reason
    if " is not a JSON number" in detail:
        return "finite"
    return "syntax"


def outcome(raw: str | bytes, limits: ArgumentLimits, *, full: bool) -> Any:
    """What decoding *raw* gives: the value's repr, or the refusal."""
    try:
        if full:
            value = decode._from_text(raw, limits)
        else:
            value = decode_arguments(raw, limits)
    except DecodeError as exc:
        return ("refused", exc.kind, exc.problem, _reason(exc))
    return ("ok", repr(value))


# JSON-ish documents: trees rendered with chosen spacing, keys drawn from a
# small pool (so duplicates are common) holding ':', '"', '\\' and more.
CHARS = st.sampled_from(
    ["a", "b", ":", '"', "\\", " ", "{", "[", "é", "\ud800", "\x00"]
)
KEYS = st.sampled_from(["a", "b", "a:b", '"', ":", "é"]) | st.text(
    CHARS, max_size=3
)
NUMBERS = st.sampled_from(
    [
        "0",
        "-0",
        "-0.0",
        "1.5e3",
        "1E400",
        "-1e999",
        "NaN",
        "Infinity",
        "-Infinity",
        "7" * (DIGITS + 1),
        "-" + "7" * DIGITS,
        "01",
        "1.",
        ".5",
    ]
)
LEAVES = st.one_of(
    st.just(("lit", "null")),
    st.booleans().map(lambda b: ("lit", json.dumps(b))),
    st.integers(-(10**20), 10**20).map(lambda i: ("lit", str(i))),
    st.floats().map(lambda f: ("lit", json.dumps(f))),
    NUMBERS.map(lambda n: ("lit", n)),
    st.text(CHARS, max_size=5).map(lambda s: ("str", s)),
)
TREES = st.recursive(
    LEAVES,
    lambda kids: (
        st.lists(kids, max_size=3).map(lambda items: ("arr", items))
        | st.lists(st.tuples(KEYS, kids), max_size=4).map(
            lambda pairs: ("obj", pairs)
        )
    ),
    max_leaves=10,
)
OBJECTS = st.lists(st.tuples(KEYS, TREES), max_size=5).map(
    lambda pairs: ("obj", pairs)
)
STYLES = st.fixed_dictionaries(
    {
        "item": st.sampled_from([",", ", ", " ,\n"]),
        "key": st.sampled_from([":", ": ", " :", "\t:\n"]),
        "ascii": st.booleans(),
        "pad": st.sampled_from(["", " ", "\n", "\x0b"]),
    }
)


def render(node: tuple[str, Any], style: dict[str, Any]) -> str:
    """The JSON-ish text of a generated tree."""
    tag, value = node
    if tag == "lit":
        return value
    if tag == "str":
        return json.dumps(value, ensure_ascii=style["ascii"])
    if tag == "arr":
        return "[" + style["item"].join(render(v, style) for v in value) + "]"
    return (
        "{"
        + style["item"].join(
            json.dumps(k, ensure_ascii=style["ascii"])
            + style["key"]
            + render(v, style)
            for k, v in value
        )
        + "}"
    )


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Argument text: mostly objects, some other JSON, some broken."""
    style = draw(STYLES)
    text = render(draw(OBJECTS | TREES), style)
    if draw(st.booleans()):
        text = style["pad"] + text + style["pad"]
    if draw(st.integers(0, 9)) == 0 and text:  # broken: cut or spliced
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["", ",", "}", '"', "\\"]))
    return text


LIMITS = st.builds(
    ArgumentLimits,
    max_size=st.integers(1, 200) | st.just(1_000_000),
    max_depth=st.integers(1, 4) | st.just(64),
)


def _variants(text: str) -> list[str | bytes]:
    """The text as str, and as the bytes a provider could send."""
    return [text, text.encode("utf-8", "surrogatepass")]


class TestAgreement:
    """Every route gives the same answer as the rules written out."""

    @given(texts(), LIMITS)
    def test_the_fast_route_agrees_with_the_full_decoder(
        self, text: str, limits: ArgumentLimits
    ) -> None:
        """Same value or same refusal, word for word, for any text."""
        for raw in _variants(text):
            assert outcome(raw, limits, full=False) == outcome(
                raw, limits, full=True
            )

    @given(texts(), LIMITS)
    def test_the_decoder_agrees_with_strict_json_loads(
        self, text: str, limits: ArgumentLimits
    ) -> None:
        """The value json.loads gives, or a refusal for the same reason."""
        for raw in _variants(text):
            got = outcome(raw, limits, full=False)
            want = reference(raw, limits)
            if want[0] == "ok":
                assert got == want
            else:
                assert (got[0], got[1], got[3]) == want

    @given(OBJECTS, STYLES, LIMITS)
    def test_short_flat_objects(
        self,
        node: tuple[str, Any],
        style: dict[str, Any],
        limits: ArgumentLimits,
    ) -> None:
        """The texts the fast route takes agree with json.loads too."""
        flat = ("obj", [(k, v) for k, v in node[1] if v[0] in {"lit", "str"}])
        text = render(flat, {**style, "ascii": True})
        got = outcome(text, limits, full=False)
        assert got == outcome(text, limits, full=True)
        want = reference(text, limits)
        assert (got if want[0] == "ok" else (got[0], got[1], got[3])) == want

    def test_near_the_fast_routes_length(self) -> None:
        """Objects just under, at and over 4,300 characters decode alike."""
        for size in (DIGITS - 1, DIGITS, DIGITS + 1):
            text = '{"a":1,"b":"' + "x" * (size - 14) + '"}'
            assert len(text) == size
            assert decode_arguments(text) == json.loads(text)
            dupe = text[:-1] + ',"a":2}'
            assert "duplicate key 'a'" in refusal(dupe).problem

    @given(
        st.dictionaries(
            st.text(max_size=3) | st.text("a\ud800é:", max_size=3),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers(-(10**30), 10**30)
                | st.floats()
                | st.text(max_size=4)
                | st.text("a\udc00é:", max_size=3),
                lambda kids: (
                    st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=3), kids, max_size=3)
                ),
                max_leaves=10,
            ),
            max_size=4,
        ),
        LIMITS,
    )
    def test_decoded_data_is_held_to_the_rules_of_its_text(
        self, data: dict[str, Any], limits: ArgumentLimits
    ) -> None:
        """Decoded data passes exactly when its JSON text would (size aside).

        It is then the same data; refused, both name a problem it has (which
        one, if it has several, depends on the order each looks in).
        """
        text = json.dumps(data)
        unlimited = ArgumentLimits(max_depth=limits.max_depth)
        as_text = outcome(text, unlimited, full=False)
        try:
            as_data = ("ok", repr(decode_arguments(data, limits)))
        except DecodeError as exc:
            as_data = ("refused", exc.kind, "", _reason(exc))
        assert as_data[0] == as_text[0]
        if as_data[0] == "ok":
            assert as_data == as_text
            return
        problems = set()
        if _depth(data) > limits.max_depth:
            problems.add("depth")
        if any(_lone_surrogate(s) for s in _strings(data)):
            problems.add("surrogate")
        if any(not math.isfinite(f) for f in _floats(data)):
            problems.add("finite")
        assert {as_data[3], as_text[3]} <= problems
