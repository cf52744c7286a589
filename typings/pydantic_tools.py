"""Typing cases: tools with pydantic models and ``Annotated`` parameters."""

from __future__ import annotations

from typing import Annotated

import annotated_types as at

from pydantic import BaseModel, Field
from typing_extensions import assert_type

from toolctx import tool


class Item(BaseModel):
    """An item to order."""

    name: str
    quantity: int = 1


@tool
def order(item: Item, copies: Annotated[int, at.Ge(1)] = 1) -> Item:
    """Order an item."""
    return item.model_copy(update={"quantity": item.quantity * copies})


@tool
def repeat(text: str, n: int = Field(5, ge=0)) -> str:
    """Repeat a text."""
    return text * n


assert_type(order(Item(name="pen")), Item)
assert_type(order(Item(name="pen"), copies=2).quantity, int)
assert_type(repeat("a"), str)
