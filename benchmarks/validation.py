"""Argument validation cost per call, against json.loads and pydantic.

Run: ``python benchmarks/validation.py`` (add ``--quick`` for a smoke run).
For each tool — ``add(a: int, b: int)``, a 10-parameter tool, a nested
TypedDict and a pydantic model — one run times, on the same argument text:

- ``json.loads`` alone (the floor: decoding is never free);
- toolctx: decode under the dispatcher's limits, then validate with the
  tool's validator compiled at registration (what every dispatch path
  does before the tool runs);
- pydantic's ``TypeAdapter.validate_json`` of the same signature as a
  TypedDict (or of the model), when pydantic is installed.

Ratios are to ``json.loads`` in the same run; report them, not the ns.
"""

from __future__ import annotations

import json
import platform
import sys

from pathlib import Path
from typing import Any, Literal

from typing_extensions import TypedDict


sys.path.insert(0, str(Path(__file__).parent))

import toolctx

from _harness import Case, measure
from toolctx import Registry, ToolCall
from toolctx._dispatch import core as _calls


registry = Registry()


@registry.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@registry.tool
def search(  # noqa: PLR0917 - a wide tool on purpose
    query: str,
    limit: int,
    offset: int,
    language: Literal["en", "de", "fr"],
    safe: bool,
    min_score: float,
    max_score: float,
    tags: list[str],
    owner: str | None,
    sort: Literal["asc", "desc"],
) -> int:
    """Search with ten parameters."""
    return limit


class Address(TypedDict):
    """A postal address."""

    street: str
    city: str
    zip: str


class Customer(TypedDict):
    """A customer with addresses."""

    name: str
    age: int
    addresses: list[Address]


@registry.tool
def register(customer: Customer) -> str:
    """Register a customer (a nested TypedDict)."""
    return customer["name"]


try:
    import pydantic
except ImportError:  # pragma: no cover - the bench extra installs it
    pydantic = None  # type: ignore[assignment]

if pydantic is not None:

    class Line(pydantic.BaseModel):
        """An order line."""

        sku: str
        quantity: int = pydantic.Field(ge=1)

    class Order(pydantic.BaseModel):
        """An order (a pydantic model)."""

        customer: str
        lines: list[Line]

    @registry.tool
    def place(order: Order) -> str:
        """Place an order (a pydantic model)."""
        return order.customer


ARGS = {
    "add": {"a": 1, "b": 2},
    "search": {
        "query": "contextvars",
        "limit": 10,
        "offset": 0,
        "language": "en",
        "safe": True,
        "min_score": 0.1,
        "max_score": 0.9,
        "tags": ["python", "agents"],
        "owner": None,
        "sort": "desc",
    },
    "place": {
        "order": {
            "customer": "Ada",
            "lines": [
                {"sku": "pen", "quantity": 2},
                {"sku": "ink", "quantity": 1},
            ],
        }
    },
    "register": {
        "customer": {
            "name": "Ada",
            "age": 36,
            "addresses": [
                {"street": "1 Main St", "city": "London", "zip": "N1"},
                {"street": "2 High St", "city": "Oxford", "zip": "OX1"},
            ],
        }
    },
}


def _toolctx_case(name: str, text: str) -> Any:
    """Decode and validate *text* exactly as dispatch does."""
    entry = registry.entry(name)
    assert entry is not None
    structurer = entry.structurer
    assert structurer is not None
    call = ToolCall(name, text)

    def run() -> object:
        return _calls.structure(
            call, structurer, _calls.decode_arguments(call, entry)
        )

    return run


def _pydantic_cases(cases: list[Case], texts: dict[str, str]) -> list[str]:
    """Add pydantic's ``validate_json`` of each signature; their names."""
    try:
        import pydantic
    except ImportError:
        return []

    class AddArgs(TypedDict):
        a: int
        b: int

    class SearchArgs(TypedDict):
        query: str
        limit: int
        offset: int
        language: Literal["en", "de", "fr"]
        safe: bool
        min_score: float
        max_score: float
        tags: list[str]
        owner: str | None
        sort: Literal["asc", "desc"]

    class RegisterArgs(TypedDict):
        customer: Customer

    class PlaceArgs(TypedDict):
        order: Order

    adapters = {
        "add": pydantic.TypeAdapter(AddArgs),
        "search": pydantic.TypeAdapter(SearchArgs),
        "register": pydantic.TypeAdapter(RegisterArgs),
        "place": pydantic.TypeAdapter(PlaceArgs),
    }
    names = []
    for name, adapter in adapters.items():
        text = texts[name]
        adapter.validate_json(text)
        cases.append(
            Case(
                f"{name}: pydantic",
                lambda a=adapter, t=text: a.validate_json(t),
            )
        )
        names.append(name)
    return names


def main() -> None:
    """Print the table of one run."""
    quick = "--quick" in sys.argv
    number, rounds = (300, 2) if quick else (10_000, 7)
    texts = {
        name: json.dumps(args)
        for name, args in ARGS.items()
        if name in registry
    }
    cases: list[Case] = []
    for name, text in texts.items():
        run = _toolctx_case(name, text)
        run()  # verified once before timing
        cases.append(Case(f"{name}: json.loads", lambda t=text: json.loads(t)))
        cases.append(Case(f"{name}: toolctx", run))
    with_pydantic = _pydantic_cases(cases, texts)
    ns = measure(cases, number=number, rounds=rounds)
    print(
        f"toolctx {toolctx.__version__}, CPython "
        f"{platform.python_version()}, {platform.machine()}, best of "
        f"{rounds} rounds x {number} calls\n"
    )
    print(
        "| tool | json.loads ns | toolctx ns | toolctx / json.loads "
        "| pydantic ns | pydantic / json.loads |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name in texts:
        floor = ns[f"{name}: json.loads"]
        ours = ns[f"{name}: toolctx"]
        theirs = ns.get(f"{name}: pydantic") if name in with_pydantic else None
        print(
            f"| {name} | {floor:,.0f} | {ours:,.0f} | {ours / floor:.2f}x | "
            + (
                f"{theirs:,.0f} | {theirs / floor:.2f}x |"
                if theirs is not None
                else "- | - |"
            )
        )


if __name__ == "__main__":
    main()
