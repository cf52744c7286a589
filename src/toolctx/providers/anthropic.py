"""Anthropic: the Messages API's client tools.

:func:`tools` gives the ``tools`` request parameter, :func:`parse_calls`
reads the ``tool_use`` blocks of a response, and :func:`result_message` /
:func:`results_message` build the ``user`` message carrying
``tool_result`` blocks. Anthropic wants *all* results of one assistant
turn in a single user message, in any order, so use
:func:`results_message` for parallel calls. Plain dicts and the
``anthropic`` package's objects are both accepted; the package is never
imported. The values returned are TypedDicts mirroring the SDK's params
(:class:`ToolParam`, :class:`ToolResultBlockParam`,
:class:`UserMessageParam`), so they type-check as the SDK's arguments
without a cast.

Each TypedDict here mirrors the ``anthropic`` package's TypedDict of the
same name (same keys, same ``Required``/``NotRequired``, equivalent value
types), so a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``anthropic`` is never imported.
Keys toolctx never writes keep the SDK's key but are typed ``Any`` where
the SDK nests its own TypedDicts, so that the classes fit the SDK versions
of the ``anthropic`` extra. Block lists are typed ``Iterable[Any]`` for the
same reason; :class:`TextBlock`, :class:`ImageBlock` and
:class:`DocumentBlock` say what toolctx puts there.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import anthropic
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> sorted(anthropic.tools(registry)[0])
    ['description', 'input_schema', 'name']
    >>> response = {
    ...     "role": "assistant",
    ...     "content": [
    ...         {"type": "text", "text": "Adding."},
    ...         {"type": "tool_use", "id": "toolu_1", "name": "add",
    ...          "input": {"a": 2, "b": 3}},
    ...     ],
    ... }
    >>> calls = anthropic.parse_calls(response)
    >>> results = Dispatcher(registry).dispatch_all(calls)
    >>> anthropic.results_message(results)
    {'role': 'user', 'content': [{'type': 'tool_result',
        'tool_use_id': 'toolu_1', 'content': '5'}]}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from typing_extensions import Required, TypedDict

from toolctx._records import ToolCall, ToolResult
from toolctx._text import escaped
from toolctx._tools.registry import Registry
from toolctx.content import File, Image, Part, Text
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    keys_shown,
    load,
    make_call,
    refuse,
    unknown_dict,
)
from toolctx.providers._render import (
    b64,
    check_result,
    check_turn_results,
    content_parts,
    content_text,
    notice,
    plain,
    require_call_id,
)


__all__ = [
    "Base64Source",
    "DocumentBlock",
    "ImageBlock",
    "InputSchemaTyped",
    "TextBlock",
    "ToolParam",
    "ToolResultBlockParam",
    "UserMessageParam",
    "parse_calls",
    "result_block",
    "result_message",
    "results_message",
    "tools",
]

_PROVIDER = "anthropic"
_INPUT: Final = (
    "a Message (the response), its content block list or one tool_use "
    "block (dicts or anthropic objects)"
)
# The image types Anthropic reads in an image block.
_IMAGES: Final = frozenset(
    {"image/jpeg", "image/png", "image/gif", "image/webp"}
)
_STREAM_EVENTS: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


def tools(registry: Registry) -> list[ToolParam]:
    """Return the Messages API ``tools`` list, in registration order.

    Each entry is ``{"name", "description", "input_schema"}``, a fresh
    copy: add ``"cache_control": {"type": "ephemeral"}`` to the last one
    to cache the tool definitions.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``ToolParam``.
    """
    return [
        {
            "name": definition.name,
            "description": definition.description,
            "input_schema": plain(definition.parameters),
        }
        for definition in registry.definitions()
    ]


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the ``tool_use`` blocks of a response as calls, in order.

    Args:
        payload: A whole ``Message`` response or an assistant message
            (a dict with ``content``), the ``content`` block list itself
            or one ``tool_use`` block; plain dicts or the ``anthropic``
            package's objects.

    Returns:
        One :class:`~toolctx.ToolCall` per ``tool_use`` block, with ``id``
        set to the block's ``id`` and the ``input`` object as arguments.
        Other blocks (text, thinking, server tools) are skipped; a string
        ``content`` gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is none of those (a stream
            event, a list of messages, another API's payload): the message
            says what to pass; or a ``tool_use`` block has no name.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Also a single ``tool_use`` block; anything
       else is refused, never read as ``[]``.
    """
    data = load(payload)
    if isinstance(data, Mapping):
        data = _blocks_of(data)
        if isinstance(data, str):
            return []
    blocks = as_list(data, _INPUT, _PROVIDER)
    calls: list[ToolCall] = []
    for index, raw in enumerate(blocks):
        block = as_mapping(raw, f"content[{index}]", _PROVIDER)
        kind = block.get("type")
        if kind is None or "role" in block:
            got = (
                "a list of messages"
                if "role" in block
                else f"content[{index}] without a 'type' (keys "
                f"{keys_shown(block)})"
            )
            raise refuse("parse_calls", got, _INPUT, _PROVIDER)
        if kind != "tool_use":
            continue
        calls.append(
            make_call(
                block.get("name"),
                block.get("input"),
                block.get("id"),
                what=f"content[{index}]",
                provider=_PROVIDER,
            )
        )
    return calls


def _blocks_of(data: Mapping[str, Any]) -> object:
    """The content of a message, or the one block given."""
    kind = data.get("type")
    if kind == "tool_use":
        return [data]
    if "content" in data and (kind in {None, "message"} or "role" in data):
        return data["content"]
    if kind in _STREAM_EVENTS:
        got = f"a stream event ({kind!r}); its tool input arrives in pieces"
        expected = (
            "the final message: with the SDK's stream helper, "
            "stream.get_final_message()"
        )
    else:
        got = unknown_dict(data)
        expected = _INPUT
    raise refuse("parse_calls", got, expected, _PROVIDER)


def result_block(result: ToolResult) -> ToolResultBlockParam:
    """Return the ``tool_result`` content block answering one call.

    ``{"type": "tool_result", "tool_use_id", "content": text}`` plus
    ``"is_error": true`` for an error result; *text* is the error message,
    or the output (a ``str`` as is, anything else as compact JSON).
    For a content result ``content`` is a block list: ``text`` blocks,
    ``image`` blocks (JPEG, PNG, GIF, WebP) and ``document`` blocks (PDF,
    and UTF-8 ``text/*`` files as plain text), and a text notice for what
    Anthropic cannot take (audio, other files). Host-only fields never
    appear.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``ToolResultBlockParam``;
       content results as image and document blocks.
    """
    result = check_result(result, "result_block")
    block: ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": require_call_id(
            result, provider=_PROVIDER, field="tool_use_id"
        ),
    }
    parts = content_parts(result)
    if parts is None:
        block["content"] = content_text(result)
    else:
        block["content"] = [_content_block(p) for p in parts]
    if result.is_error:
        block["is_error"] = True
    return block


def _content_block(part: Part) -> TextBlock | ImageBlock | DocumentBlock:
    """One block of a tool result's content."""
    if isinstance(part, Text):
        return {"type": "text", "text": escaped(part.text)}
    if isinstance(part, Image):
        if part.mime_type in _IMAGES:
            source: Base64Source = {
                "type": "base64",
                "media_type": part.mime_type,
                "data": b64(part),
            }
            return {"type": "image", "source": source}
        why = "Anthropic takes JPEG, PNG, GIF and WebP images"
    elif isinstance(part, File):
        document = _document(part)
        if document is not None:
            return document
        why = "Anthropic documents are PDF or UTF-8 text"
    else:
        why = "Anthropic tool results carry no audio"
    return {"type": "text", "text": notice(part, why)}


def _document(part: File) -> DocumentBlock | None:
    """A document block for a PDF or a text file, else None."""
    mime = part.mime_type.split(";", 1)[0].strip().lower()
    if mime == "application/pdf":
        source = {"type": "base64", "media_type": mime, "data": b64(part)}
    elif mime.startswith("text/"):
        try:
            text = part.data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        return None
    block: DocumentBlock = {"type": "document", "source": source}
    if part.name:
        block["title"] = escaped(part.name)
    return block


def result_message(result: ToolResult) -> UserMessageParam:
    """Return a ``user`` message carrying one ``tool_result`` block.

    When the assistant made several calls in one turn, send
    :func:`results_message` instead: Anthropic expects every result of the
    turn in one message.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``MessageParam``.
    """
    return results_message([result])


def results_message(results: Iterable[ToolResult]) -> UserMessageParam:
    """Return one ``user`` message with a ``tool_result`` block per result.

    Blocks follow the order of *results* (as
    :meth:`~toolctx.Dispatcher.dispatch_all` returns them). Append text
    blocks to ``content`` after them if you have more to say.

    Raises:
        ProviderPayloadError: A result has no ``call_id``.
        ValueError: *results* is empty (Anthropic rejects an empty
            message).
        TypeError: An item is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``MessageParam``.
    """
    checked = check_turn_results(
        results, "Anthropic rejects a user message without content."
    )
    return {"role": "user", "content": [result_block(r) for r in checked]}


class InputSchemaTyped(TypedDict, total=False):
    """The typed form of ``input_schema`` (toolctx sends a plain dict).

    .. versionadded:: 0.2.0
    """

    type: Required[Literal["object"]]
    properties: dict[str, object] | None
    required: Any


class ToolParam(TypedDict, total=False):
    """One entry of the Messages API ``tools`` parameter.

    .. versionadded:: 0.2.0
    """

    input_schema: Required[InputSchemaTyped | dict[str, object]]
    name: Required[str]
    allowed_callers: Any
    cache_control: Any
    defer_loading: bool
    description: str
    eager_input_streaming: bool | None
    input_examples: Iterable[dict[str, object]]
    strict: bool
    type: Any


class ToolResultBlockParam(TypedDict, total=False):
    """A ``tool_result`` content block answering one call.

    ``content`` is the result's text, or for a content result a list of
    :class:`TextBlock`, :class:`ImageBlock` and :class:`DocumentBlock`.

    .. versionadded:: 0.2.0
    """

    tool_use_id: Required[str]
    type: Required[Literal["tool_result"]]
    cache_control: Any
    content: str | Iterable[Any]
    is_error: bool
    toolset_name: str | None


class UserMessageParam(TypedDict, total=False):
    """A ``user`` message; toolctx fills ``content`` with result blocks.

    .. versionadded:: 0.2.0
    """

    content: Required[str | Iterable[Any]]
    role: Required[Literal["user"]]


class TextBlock(TypedDict):
    """A ``text`` block inside a tool result.

    .. versionadded:: 0.2.0
    """

    type: Literal["text"]
    text: str


class Base64Source(TypedDict):
    """The ``base64`` source of an image or PDF block.

    .. versionadded:: 0.2.0
    """

    type: Literal["base64"]
    media_type: str
    data: str


class ImageBlock(TypedDict):
    """An ``image`` block inside a tool result.

    .. versionadded:: 0.2.0
    """

    type: Literal["image"]
    source: Base64Source


class DocumentBlock(TypedDict, total=False):
    """A ``document`` block inside a tool result (PDF or plain text).

    .. versionadded:: 0.2.0
    """

    type: Required[Literal["document"]]
    source: Required[dict[str, str]]
    title: str
