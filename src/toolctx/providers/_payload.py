"""Read provider payloads: plain JSON dicts or the official SDKs' models.

An SDK object (anything with a ``model_dump()`` method, as the pydantic
models of the openai, anthropic, google-genai and mcp packages have) is
read through its ``model_dump()``; everything else must already be a
mapping or a list. Nothing here imports an SDK.
"""

from __future__ import annotations

import json

from collections.abc import Mapping, Sequence
from typing import Any

from toolctx._records import ToolCall
from toolctx.exceptions import ProviderPayloadError


def load(value: object) -> object:
    """*value*, or its ``model_dump()`` when it is an SDK model."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump()
    return value


def as_mapping(value: object, what: str, provider: str) -> Mapping[str, Any]:
    """*value* (loaded) as a mapping, or a ProviderPayloadError."""
    value = load(value)
    if isinstance(value, Mapping):
        return value
    msg = (
        f"Expected {what} (a dict or an SDK object), got "
        f"{type(value).__name__}."
    )
    raise ProviderPayloadError(msg, provider=provider)


def as_list(value: object, what: str, provider: str) -> list[Any]:
    """*value* (loaded) as a list of items; None counts as empty."""
    value = load(value)
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(
        value, (str, bytes, bytearray)
    ):
        return list(value)
    msg = f"Expected {what} (a list), got {type(value).__name__}."
    raise ProviderPayloadError(msg, provider=provider)


def first(data: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of *keys* present in *data* and not None."""
    for key in keys:
        value = data.get(key)
        if value is not None:
            return value
    return None


def make_call(
    name: object,
    arguments: object,
    call_id: object,
    *,
    what: str,
    provider: str,
) -> ToolCall:
    """A ToolCall from a provider's fields, checking only the name.

    *arguments* pass through when they are text, bytes, a mapping or None;
    any other JSON value becomes its JSON text, so the dispatcher answers
    with an error result ("must be a JSON object") instead of raising.
    A non-string *call_id* (JSON-RPC allows numbers) becomes its ``str``.
    """
    if not isinstance(name, str) or not name:
        msg = f"{what} has no tool name (got {name!r})."
        raise ProviderPayloadError(msg, provider=provider)
    args: str | bytes | Mapping[str, Any] | None
    if arguments is None or isinstance(arguments, (str, bytes)):
        args = arguments
    elif isinstance(arguments, Mapping):
        args = dict(arguments)
    else:
        args = json.dumps(load(arguments), default=repr)
    ident = None if call_id is None else str(call_id)
    return ToolCall(name, args, ident)


def keys_shown(data: Mapping[str, Any]) -> str:
    """The first keys of *data*, for an error message."""
    return ", ".join(repr(k) for k in list(data)[:10]) or "none"


def unknown_dict(data: Mapping[str, Any]) -> str:
    """How a refusal names a dict of no known shape."""
    return f"a dict with the keys {keys_shown(data)} (another API's payload?)"


def refuse(
    function: str, got: str, expected: str, provider: str
) -> ProviderPayloadError:
    """A ProviderPayloadError saying what was passed and what to pass."""
    msg = f"{function}() got {got}. Pass {expected}."
    return ProviderPayloadError(msg, provider=provider)
