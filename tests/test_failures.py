"""How failed calls are reported, to the model and to the host (#19).

A ``SystemExit`` raised while the arguments are checked is a bad
argument (#19.7); a timed-out call tells the truth about whether it may
still be running (#19.6); a crashed process-pool worker is replaced and
the call that died is reported as such (#19.8); and every failed call is
logged once, on the ``toolctx`` logger, whichever path ran it (#19,
"Also").
"""

import argparse
import asyncio
import dataclasses
import logging

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import attrs
import pytest

from toolctx import (
    Dispatcher,
    Registry,
    ToolArgumentsError,
    ToolCall,
    ToolResult,
)


BOUND = 30.0  # seconds before a call that should return is called a hang


def _bounded(work: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(work, BOUND))


async def _drain(items: Any) -> list[Any]:
    return [item async for item in items]


Runner = Callable[[Dispatcher, ToolCall], ToolResult]

RUNNERS: dict[str, Runner] = {
    "dispatch": lambda d, call: d.dispatch(call),
    "dispatch_all": lambda d, call: d.dispatch_all([call])[0],
    "adispatch": lambda d, call: _bounded(d.adispatch(call)),
    "adispatch_all": lambda d, call: _bounded(d.adispatch_all([call]))[0],
    "stream": lambda d, call: list(d.stream(call))[-1],
    "astream": lambda d, call: _bounded(_drain(d.astream(call)))[-1],
}


@pytest.fixture(params=sorted(RUNNERS), name="run")
def _run(request: pytest.FixtureRequest) -> Runner:
    """Each public way to run one call."""
    return RUNNERS[request.param]


# -- #19.7: SystemExit while checking the arguments ----------------------------


def _exit_like_argparse(text: str) -> None:
    """What argparse does with a bad value: print usage, SystemExit(2)."""
    parser = argparse.ArgumentParser(prog="when", exit_on_error=False)
    parser.add_argument("n", type=int)
    try:
        parser.parse_args([text])
    except argparse.ArgumentError:
        raise SystemExit(2) from None


@dataclasses.dataclass
class Window:
    """A dataclass whose ``__post_init__`` exits on a bad value."""

    spec: str

    def __post_init__(self) -> None:
        _exit_like_argparse(self.spec)


@attrs.define
class Slot:
    """An attrs class whose validator exits on a bad value."""

    spec: str = attrs.field()

    @spec.validator
    def _check(self, _: object, value: str) -> None:
        _exit_like_argparse(value)


def _exiting_registry() -> Registry:
    pydantic = pytest.importorskip("pydantic")

    class Period(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        """A pydantic model whose validator exits on a bad value."""

        spec: str

        @pydantic.field_validator("spec")
        @classmethod
        def _check(cls, value: str) -> str:
            _exit_like_argparse(value)
            return value

    registry = Registry()

    @registry.tool
    def by_model(period: Period) -> str:
        """Take a pydantic model."""
        return period.spec

    @registry.tool
    def by_dataclass(window: Window) -> str:
        """Take a dataclass."""
        return window.spec

    @registry.tool
    def by_attrs(slot: Slot) -> str:
        """Take an attrs class."""
        return slot.spec

    return registry


EXITING = {
    "pydantic validator": ("by_model", "period"),
    "dataclass __post_init__": ("by_dataclass", "window"),
    "attrs validator": ("by_attrs", "slot"),
}


class TestSystemExitInArgumentChecks:
    """A validator's SystemExit is an argument error like any other."""

    @pytest.mark.parametrize("kind", sorted(EXITING))
    def test_is_an_argument_error_naming_the_argument(self, run, kind):
        """The call becomes a ToolArgumentsError result naming the argument, on every path; a good value still runs."""
        name, argument = EXITING[kind]
        dispatcher = Dispatcher(_exiting_registry())

        bad = run(dispatcher, ToolCall(name, {argument: {"spec": "x"}}))
        good = run(dispatcher, ToolCall(name, {argument: {"spec": "7"}}))

        assert bad.is_error
        assert isinstance(bad.exception, ToolArgumentsError)
        assert [e.path for e in bad.exception.errors] == [argument]
        assert f"{argument}: invalid value (SystemExit: 2)" in (
            bad.error or ""
        )
        assert good.output == "7"

    def test_adispatch_all_keeps_the_other_results(self):
        """One call whose validator exits does not cost the batch the other calls' results."""
        dispatcher = Dispatcher(_exiting_registry())
        calls = [
            ToolCall("by_dataclass", {"window": {"spec": "1"}}),
            ToolCall("by_attrs", {"slot": {"spec": "x"}}),
            ToolCall("by_dataclass", {"window": {"spec": "3"}}),
        ]

        results = _bounded(dispatcher.adispatch_all(calls))

        assert [r.output for r in results] == ["1", None, "3"]
        assert isinstance(results[1].exception, ToolArgumentsError)

    def test_keyboard_interrupt_still_propagates(self):
        """KeyboardInterrupt in a validator is not an argument error: it stops the host."""
        registry = Registry()

        @dataclasses.dataclass
        class Stop:
            spec: str

            def __post_init__(self) -> None:
                raise KeyboardInterrupt

        @registry.tool
        def stop(s: Stop) -> str:
            """Never runs."""
            return s.spec

        with pytest.raises(KeyboardInterrupt):
            Dispatcher(registry).dispatch(
                ToolCall("stop", {"s": {"spec": ""}})
            )

    def test_mcp_answers_with_an_error_result(self):
        """Over MCP the call is an isError result naming the argument, not a JSON-RPC -32603."""
        pytest.importorskip("mcp")
        from tests.test_mcp_server import call, text_of
        from toolctx.mcp import create_server

        server = create_server(Dispatcher(_exiting_registry()))

        result = call(server, "by_model", {"period": {"spec": "x"}})

        assert result.is_error is True
        assert "period: invalid value (SystemExit: 2)" in text_of(result)
