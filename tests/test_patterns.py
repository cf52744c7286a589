r"""``pattern`` constraints mean what the JSON Schema says: ECMA-262.

The schema a tool publishes carries the pattern as written; every JSON
Schema validator (and the model reading it) takes it as an ECMA-262
regular expression, where ``$`` is the end of the input, ``\d`` is
``[0-9]`` and ``.`` stops at every line terminator. toolctx enforces
that meaning on every path, its own validator and pydantic's alike, and
refuses at decoration a pattern it cannot run so.

The expected answers below are ECMA-262's, checked against Node.js; the
property test compares with Node.js itself when it is installed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import subprocess

from collections.abc import Iterator
from typing import Annotated, Any

import attrs
import pydantic
import pytest

from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, StringConstraints
from typing_extensions import TypedDict

from strategies import ECMA_PATTERNS, ECMA_TEXT_ALPHABET
from toolctx import Dispatcher, Registry, ToolCall, ToolResult, tool
from toolctx._types.patterns import PatternError, compile_pattern
from toolctx.exceptions import SchemaError


LOWER = r"^[a-z0-9]+$"


class Login(TypedDict):
    """A login in a TypedDict."""

    name: Annotated[str, Field(pattern=LOWER)]


@dataclasses.dataclass
class LoginData:
    """A login in a dataclass."""

    name: Annotated[str, StringConstraints(pattern=LOWER)]


@attrs.define
class LoginAttrs:
    """A login in an attrs class."""

    name: Annotated[str, Field(pattern=LOWER)]


class LoginModel(pydantic.BaseModel):
    """A login in a pydantic model."""

    name: str = Field(pattern=LOWER)


class LoginKeys(pydantic.BaseModel):
    """Scores by a login, in a pydantic model."""

    scores: dict[Annotated[str, Field(pattern=LOWER)], int]


class CasedModel(pydantic.BaseModel):
    """A pattern that pydantic checks before it changes the case."""

    code: Annotated[str, StringConstraints(pattern="^[a-z]+$", to_upper=True)]


@tool
def plain(name: Annotated[str, Field(pattern=LOWER)]) -> str:
    """Take a login as a parameter."""
    return name


@tool
def in_typeddict(login: Login) -> str:
    """Take a login in a TypedDict."""
    return login["name"]


@tool
def in_dataclass(login: LoginData) -> str:
    """Take a login in a dataclass."""
    return login.name


@tool
def in_attrs(login: LoginAttrs) -> str:
    """Take a login in an attrs class."""
    return login.name


@tool
def in_model(login: LoginModel) -> str:
    """Take a login in a pydantic model."""
    return login.name


@tool
def in_keys(login: LoginKeys) -> str:
    """Take scores keyed by login."""
    return ",".join(login.scores)


TOOLS = (plain, in_typeddict, in_dataclass, in_attrs, in_model, in_keys)


def arguments(name: str, login: str) -> dict[str, Any]:
    """The arguments of the tool *name* that carry the login *login*."""
    if name == "plain":
        return {"name": login}
    if name == "in_keys":
        return {"login": {"scores": {login: 1}}}
    return {"login": {"name": login}}


@pytest.fixture(name="dispatcher")
def _dispatcher() -> Dispatcher:
    return Dispatcher(Registry(list(TOOLS)))


def calls(login: str) -> list[ToolCall]:
    """One call of every tool with *login*."""
    return [
        ToolCall(t.name, json.dumps(arguments(t.name, login)), t.name)
        for t in TOOLS
    ]


def refused(results: list[ToolResult]) -> list[str]:
    """The names of the tools whose call was refused for its arguments."""
    return [
        r.name
        for r in results
        if r.is_error and "expected a string matching" in (r.error or "")
    ]


NAMES = [t.name for t in TOOLS]


class TestEveryPath:
    """The same ECMA-262 meaning wherever a pattern is checked."""

    @pytest.mark.parametrize("login", ["admin\n", "\u0661\u0662", "a\r"])
    def test_dispatch_refuses_what_ecma_refuses(
        self, dispatcher: Dispatcher, login: str
    ) -> None:
        """A final line break or a non-ASCII digit fails ``^[a-z0-9]+$``."""
        results = [dispatcher.dispatch(call) for call in calls(login)]
        assert refused(results) == NAMES

    def test_adispatch_refuses_too(self, dispatcher: Dispatcher) -> None:
        """``adispatch`` checks the same way."""

        async def run() -> list[ToolResult]:
            return [await dispatcher.adispatch(c) for c in calls("admin\n")]

        assert refused(asyncio.run(run())) == NAMES

    def test_batches_refuse_too(self, dispatcher: Dispatcher) -> None:
        """``dispatch_all`` and ``adispatch_all`` check the same way."""
        assert refused(dispatcher.dispatch_all(calls("admin\n"))) == NAMES
        batch = asyncio.run(dispatcher.adispatch_all(calls("admin\n")))
        assert refused(batch) == NAMES

    def test_a_good_login_passes_everywhere(
        self, dispatcher: Dispatcher
    ) -> None:
        """A value the pattern matches reaches every tool."""
        results = dispatcher.dispatch_all(calls("admin7"))
        assert [r.output for r in results] == ["admin7"] * len(TOOLS)

    def test_the_message_names_the_argument_and_the_pattern(
        self, dispatcher: Dispatcher
    ) -> None:
        """The model learns which argument broke which pattern."""
        [call, *_] = calls("admin\n")
        error = dispatcher.dispatch(call).error or ""
        assert "name: expected a string matching '^[a-z0-9]+$'" in error
        model = dispatcher.dispatch(calls("admin\n")[4]).error or ""
        assert "login.name: expected a string matching" in model

    def test_the_schema_keeps_the_pattern_as_written(self) -> None:
        """The published pattern is the author's text, unchanged."""
        schema = plain.definition().parameters
        assert schema["properties"]["name"]["pattern"] == LOWER

    def test_pydantic_checks_the_pattern_before_the_case_change(
        self,
    ) -> None:
        """``to_upper`` applies after the pattern, as in pydantic."""

        @tool
        def cased(value: CasedModel) -> str:
            """Take a code."""
            return value.code

        dispatcher = Dispatcher(Registry([cased]))
        good = dispatcher.dispatch(
            ToolCall("cased", '{"value": {"code": "abc"}}', "c1")
        )
        assert good.output == "ABC"
        bad = dispatcher.dispatch(
            ToolCall("cased", '{"value": {"code": "abc\\n"}}', "c2")
        )
        assert bad.is_error


ECMA_CASES = [
    (r"^[a-z0-9]+$", "admin\n", False),
    (r"^[a-z0-9]+$", "admin", True),
    (r"^\d+$", "\u0661\u0662", False),
    (r"^\d+$", "12", True),
    (r"^\D$", "\u0661", True),
    (r"^\w+$", "\u00e9", False),
    (r"^\W$", "\u00e9", True),
    (r"\b", "\u00e9", False),
    (r"a\b", "a\u00e9", True),
    (r"a\B", "a\u00e9", False),
    (r"^\s$", "\u0085", False),
    (r"^\s$", "\u00a0", True),
    (r"^\s$", "\ufeff", True),
    (r"^\s$", "\u2028", True),
    (r"^\s$", "\u180e", False),
    (r"^\S$", "\u0085", True),
    (r"^[\S]$", "\u00a0", False),
    (r"^.$", "\r", False),
    (r"^.$", "\u2028", False),
    (r"^.$", "\u0085", True),
    (r"^.$", "\U0001f600", True),
    (r"^[^a]$", "\n", True),
    (r"[]", "", False),
    (r"^[^]$", "\n", True),
    (r"^\u{1F600}$", "\U0001f600", True),
    (r"^\uD83D\uDE00$", "\U0001f600", True),
    (r"^\cJ$", "\n", True),
    (r"^[\b]$", "\b", True),
    (r"^\0$", "\x00", True),
    (r"a$", "a\n", False),
    (r"^a", "\na", False),
    (r"^[\d-]+$", "1-2", True),
    (r"^(?<year>\d{4})-\d{2}$", "2024-01", True),
    (r"(?<=a)b", "ab", True),
    (r"^(?:a|ab)(?!c)", "abc", True),
    (r"^a{2,3}$", "aaaa", False),
    ("", "anything", True),
]
"""``(pattern, text, ECMA-262's answer)``, as Node.js answers."""


class TestTranslation:
    """The expression toolctx runs answers as ECMA-262 does."""

    @pytest.mark.parametrize(("pattern", "text", "expected"), ECMA_CASES)
    def test_matches_as_ecma_does(
        self, pattern: str, text: str, expected: bool
    ) -> None:
        """Each case gets ECMA-262's answer, not Python's."""
        assert bool(compile_pattern(pattern).search(text)) is expected


REFUSED = [
    (r"\A[a-z]+", "invalid escape '\\A'"),
    (r"[a-z]+\Z", "invalid escape '\\Z'"),
    (r"[a-z]+\z", "invalid escape '\\z'"),
    (r"(?P<name>a)", "invalid group"),
    (r"(?i)abc", "invalid group"),
    (r"(?>a+)b", "invalid group"),
    (r"(?#comment)a", "invalid group"),
    (r"a*+", "nothing to repeat"),
    (r"a{,3}", "incomplete quantifier"),
    (r"a{", "incomplete quantifier"),
    (r"a]", "lone ']'"),
    (r"a{3,1}", "out of order"),
    (r"[z-a]", "out of order"),
    (r"[\d-z]", "class escape cannot bound a range"),
    (r"^*", "nothing to repeat"),
    (r"(?=a)+", "nothing to repeat"),
    (r"\-", "invalid escape"),
    (r"\p{L}", "Unicode property escape"),
    (r"(a)\1", "backreference"),
    (r"(?<n>a)\k<n>", "backreference"),
    (r"(?<=a+)b", "Python's re"),
    (r"(a", "missing ')'"),
    (r"a)", "unmatched ')'"),
    (r"[a", "missing ']'"),
    (r"(?<n>a)(?<n>b)", "duplicate group name"),
    ("\\", "at end of pattern"),
]
"""Patterns toolctx refuses, and what its message says."""


class TestRefused:
    """A pattern toolctx cannot run as ECMA-262 fails at decoration."""

    @pytest.mark.parametrize(("pattern", "reason"), REFUSED)
    def test_translation_refuses(self, pattern: str, reason: str) -> None:
        """The error says what is wrong and where."""
        with pytest.raises(PatternError, match=re.escape(reason)):
            compile_pattern(pattern)

    @pytest.mark.parametrize("pattern", [r"\Aadmin\Z", r"\p{L}", r"(a)\1"])
    def test_a_parameter_pattern_is_a_schema_error(self, pattern: str) -> None:
        """``Field(pattern=...)`` on a parameter: SchemaError naming it."""

        def take(code: str) -> None:
            """Take a code."""

        take.__annotations__ = {
            "code": Annotated[str, Field(pattern=pattern)],
            "return": None,
        }
        with pytest.raises(SchemaError) as info:
            tool(take)
        assert info.value.parameter == "code"
        assert repr(pattern) in str(info.value)

    def test_a_model_pattern_is_a_schema_error(self) -> None:
        """A model field's pattern is refused when the tool is built."""

        class Code(pydantic.BaseModel):
            """A code."""

            value: str = Field(pattern=r"(?P<x>a)")

        def take(code: str) -> None:
            """Take a code."""

        take.__annotations__ = {"code": Code, "return": None}
        with pytest.raises(SchemaError, match=re.escape("'(?P<x>a)'")):
            tool(take)

    def test_a_compiled_pattern_with_flags_is_refused(self) -> None:
        """Flags of a compiled ``re`` pattern cannot reach the schema."""
        with pytest.raises(SchemaError, match="flags"):

            @tool
            def take(
                code: Annotated[
                    str,
                    StringConstraints(pattern=re.compile("a", re.IGNORECASE)),
                ],
            ) -> None:
                """Take a code."""

    def test_a_compiled_pattern_without_flags_is_its_text(self) -> None:
        """``re.compile(text)`` without flags is the pattern *text*."""

        @tool
        def take(
            code: Annotated[str, StringConstraints(pattern=re.compile("^a$"))],
        ) -> str:
            """Take a code."""
            return code

        schema = take.definition().parameters
        assert schema["properties"]["code"]["pattern"] == "^a$"
        result = Dispatcher(Registry([take])).dispatch(
            ToolCall("take", '{"code": "a\\n"}', "c1")
        )
        assert result.is_error


# -- against a reference engine ---------------------------------------------

_ORACLE = """
const rl = require("readline").createInterface({input: process.stdin});
rl.on("line", (line) => {
  const [pattern, texts] = JSON.parse(line);
  let out = null;
  try {
    const regex = new RegExp(pattern, "u");
    out = texts.map((text) => regex.test(text));
  } catch (e) {}
  process.stdout.write(JSON.stringify(out) + "\\n");
});
"""


MODIFIERS = re.compile(r"\(\?(?:[ims]+(?:-[ims]*)?|-[ims]+):")
"""ES2025 pattern modifiers (``(?s:.)``), which a newer Node.js takes
and toolctx refuses (their case-folding is not ``re``'s)."""


class Oracle:
    """Node.js's ``RegExp`` (``u`` flag), asked one pattern at a time."""

    def __init__(self, node: str) -> None:
        self.process = subprocess.Popen(
            [node, "-e", _ORACLE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, pattern: str, texts: list[str]) -> list[bool] | None:
        """Whether each text matches, or None for an invalid pattern."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps([pattern, texts]) + "\n")
        self.process.stdin.flush()
        answer: list[bool] | None = json.loads(self.process.stdout.readline())
        return answer

    def close(self) -> None:
        """End the Node.js process."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


@pytest.fixture(name="oracle", scope="module")
def _oracle() -> Iterator[Oracle]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: no reference ECMA-262 engine")
    oracle = Oracle(node)
    yield oracle
    oracle.close()


class TestAgainstNode:
    """Random patterns and strings: toolctx answers as Node.js does."""

    @pytest.mark.parametrize(("pattern", "text", "expected"), ECMA_CASES)
    def test_the_cases_are_ecmas(
        self, oracle: Oracle, pattern: str, text: str, expected: bool
    ) -> None:
        """The hand-written answers are Node.js's."""
        assert oracle.ask(pattern, [text]) == [expected]

    @pytest.mark.parametrize(("pattern", "reason"), REFUSED)
    def test_refused_patterns(
        self, oracle: Oracle, pattern: str, reason: str
    ) -> None:
        """What ECMA-262 accepts among the refused, toolctx cannot run."""
        if oracle.ask(pattern, []) is not None:
            assert reason in {
                "Unicode property escape",
                "backreference",
                "Python's re",
            }

    @given(
        pattern=ECMA_PATTERNS,
        texts=st.lists(st.text(ECMA_TEXT_ALPHABET, max_size=5), max_size=8),
    )
    def test_agrees_with_node(
        self, oracle: Oracle, pattern: str, texts: list[str]
    ) -> None:
        """Valid patterns match the same strings; invalid ones fail both."""
        expected = oracle.ask(pattern, texts)
        try:
            regex = compile_pattern(pattern)
        except PatternError:
            assert expected is None, pattern
            return
        assert expected is not None, pattern
        assert [bool(regex.search(t)) for t in texts] == expected, pattern

    @given(
        pattern=st.text(
            "ab()[]{}^$\\.*+?|-,0123dDwsSbBkpPuxc<>=!:/\n", max_size=9
        ),
        texts=st.lists(st.text("ab01-\n{}[]()\\.$^ ", max_size=5), max_size=6),
    )
    def test_random_syntax_agrees_with_node(
        self, oracle: Oracle, pattern: str, texts: list[str]
    ) -> None:
        """What ECMA-262 refuses, toolctx refuses; the rest matches alike.

        toolctx refuses a valid pattern only for a reason it names:
        property escapes, backreferences, what ``re`` cannot run.
        """
        expected = oracle.ask(pattern, texts)
        try:
            regex = compile_pattern(pattern)
        except PatternError as exc:
            refusal = str(exc)
        else:
            assert expected is not None, pattern
            assert [bool(regex.search(t)) for t in texts] == expected
            return
        if expected is not None and not MODIFIERS.search(pattern):
            reasons = ("property escape", "backreference", "Python's re")
            assert any(r in refusal for r in reasons), pattern
