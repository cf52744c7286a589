"""The codec is strict: misspelled keys and wrong types are named errors.

Every record toolctx stores or sends (contexts, results, sessions,
approval requests, content parts, remote payloads) is read by one
configured cattrs converter (:mod:`toolctx.codec`). A key that is not a
field of the record, or a value of the wrong type, is a
:class:`~toolctx.exceptions.ContextDataError` that names it, instead of
being silently dropped or coerced. Hosts teach the converter their own
slot types with :func:`toolctx.codec.register_hooks`.
"""

from __future__ import annotations

import json

from decimal import Decimal
from typing import Any

import pytest

from toolctx import (
    ContextKey,
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolResult,
)
from toolctx._context.codec import result_from_dict, result_to_dict
from toolctx.codec import register_hooks
from toolctx.content import Text, part_from_dict
from toolctx.exceptions import ContextDataError
from toolctx.remote import RemoteCall, RemoteOutcome
from toolctx.sessions import session_from_dict, session_to_dict


def _context() -> dict[str, Any]:
    return ExecutionContext(session_id="s1", user_id="ada").to_dict()


def _approval() -> dict[str, Any]:
    registry = Registry()

    @registry.tool(needs_approval=True)
    def send(to: str) -> str:
        """Send a message."""
        return to

    held = Dispatcher(registry).dispatch(ToolCall("send", {"to": "bo"}))
    assert held.approval is not None
    return held.approval.to_dict()


class TestUnknownKeys:
    """A key that is not a field of the record is refused, by name."""

    @pytest.mark.parametrize("key", ["tunr", "usr_id"])
    def test_context(self, key: str) -> None:
        """A misspelled context field (``tunr`` for ``turn``) is named."""
        data = {**_context(), key: 3}
        with pytest.raises(ContextDataError, match=f"unknown field '{key}'"):
            ExecutionContext.from_dict(data)

    def test_the_message_lists_the_fields(self) -> None:
        """The error says which fields there are, so the fix is obvious."""
        with pytest.raises(ContextDataError, match=r"'turn'.*'user_id'"):
            ExecutionContext.from_dict({**_context(), "tunr": 3})

    def test_session(self) -> None:
        """A misspelled session field is named."""
        data = {**session_to_dict(Session("s1")), "usr_id": "ada"}
        with pytest.raises(ContextDataError, match="unknown field 'usr_id'"):
            session_from_dict(data)

    def test_a_result_inside_a_session(self) -> None:
        """A stored result's unknown key is named with where it is."""
        result = result_to_dict(ToolResult(name="t", output=1))
        data = session_to_dict(Session("s1"))
        data["results"] = [{**result, "outptu": 2}]
        with pytest.raises(
            ContextDataError, match=r"'results\[0\]'.*unknown field 'outptu'"
        ):
            session_from_dict(data)

    def test_result(self) -> None:
        """A misspelled result field is named."""
        data = {**result_to_dict(ToolResult(name="t")), "is_eror": True}
        with pytest.raises(ContextDataError, match="unknown field 'is_eror'"):
            result_from_dict(data)

    def test_approval_request(self) -> None:
        """A held call's request with an extra key is refused."""
        from toolctx import ApprovalRequest

        data = {**_approval(), "approved": True}
        with pytest.raises(ContextDataError, match="unknown field 'approved'"):
            ApprovalRequest.from_dict(data)

    def test_content_part(self) -> None:
        """A content part with an extra key is refused."""
        with pytest.raises(ContextDataError, match="unknown field 'txt'"):
            part_from_dict({"type": "text", "text": "a", "txt": "b"})

    def test_remote_payloads(self) -> None:
        """Remote calls and outcomes refuse unknown keys too."""
        call = RemoteCall(
            tool_ref="a:b", tool_name="b", context=_context()
        ).to_dict()
        with pytest.raises(ContextDataError, match="unknown field 'timout'"):
            RemoteCall.from_dict({**call, "timout": 3})
        outcome = RemoteOutcome(output=1).to_dict()
        with pytest.raises(ContextDataError, match="unknown field 'eror'"):
            RemoteOutcome.from_dict({**outcome, "eror": "x"})


class TestWrongTypes:
    """A value of the wrong type is refused, never coerced."""

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"is_error": "yes"}, "'is_error' must be a boolean"),
            ({"duration_ns": 1.5}, "'duration_ns' must be an integer"),
            ({"invocation_id": None}, "'invocation_id' must be a string"),
        ],
    )
    def test_result_fields(self, change: dict[str, Any], message: str) -> None:
        """A result's flag, duration and id keep their JSON types."""
        data = {**result_to_dict(ToolResult(name="t")), **change}
        with pytest.raises(ContextDataError, match=message):
            result_from_dict(data)

    def test_a_bool_is_not_an_integer(self) -> None:
        """``true`` is not turn 1."""
        with pytest.raises(ContextDataError, match="'turn' must be an int"):
            ExecutionContext.from_dict({**_context(), "turn": True})

    def test_prior_results_must_be_a_list(self) -> None:
        """An object where a list belongs is named, not read as its keys."""
        with pytest.raises(ContextDataError, match="'prior_results'"):
            ExecutionContext.from_dict({**_context(), "prior_results": {}})

    def test_include_exception_messages_is_a_boolean(self) -> None:
        """A remote call's flag is a boolean, not any value that is truthy."""
        call = RemoteCall(
            tool_ref="a:b", tool_name="b", context=_context()
        ).to_dict()
        with pytest.raises(
            ContextDataError, match="'include_exception_messages'"
        ):
            RemoteCall.from_dict({**call, "include_exception_messages": 0})

    def test_every_problem_is_reported(self) -> None:
        """Two wrong fields are both named in the one error."""
        data = {**_context(), "turn": "1", "user_id": 5}
        with pytest.raises(ContextDataError, match=r"'turn'.*'user_id'"):
            ExecutionContext.from_dict(data)


class Money:
    """A host's own slot type, not one toolctx knows how to store."""

    def __init__(self, amount: Decimal, currency: str) -> None:
        self.amount, self.currency = amount, currency

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and (
            (self.amount, self.currency) == (other.amount, other.currency)
        )

    __hash__ = None  # type: ignore[assignment]


def _money_from_json(data: Any, _: type[Money]) -> Money:
    amount, currency = data.split(" ")
    return Money(Decimal(amount), currency)


register_hooks(Money, lambda m: f"{m.amount} {m.currency}", _money_from_json)
PRICE = ContextKey("test_codec_strict_price", Money)


class TestHostHooks:
    """register_hooks teaches the codec a host's slot type."""

    def test_context_round_trip(self) -> None:
        """A slot of the host's type is stored by its hooks and read back."""
        ctx = ExecutionContext().with_value(
            PRICE, Money(Decimal("9.5"), "EUR")
        )
        data = json.loads(json.dumps(ctx.to_dict()))
        assert data["values"][PRICE.name] == "9.5 EUR"
        assert ExecutionContext.from_dict(data).get(PRICE) == ctx.get(PRICE)

    def test_session_round_trip(self) -> None:
        """Sessions use the same hooks."""
        session = Session("s1", values={PRICE.name: Money(Decimal(1), "USD")})
        back = session_from_dict(
            json.loads(json.dumps(session_to_dict(session)))
        )
        assert back.values[PRICE.name] == Money(Decimal(1), "USD")

    def test_data_the_hook_refuses_names_the_slot(self) -> None:
        """A hook's ValueError is a ContextDataError naming the slot."""
        data = {**_context(), "values": {PRICE.name: "nonsense"}}
        with pytest.raises(ContextDataError, match=PRICE.name):
            ExecutionContext.from_dict(data)


def test_parts_still_round_trip() -> None:
    """Content parts keep their wire form (``type`` tag, base64 data)."""
    assert part_from_dict({"type": "text", "text": "hi"}) == Text("hi")
