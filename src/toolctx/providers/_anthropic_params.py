"""The Anthropic request params toolctx builds, as TypedDicts.

Each class mirrors the ``anthropic`` package's TypedDict of the same name
(same keys, same ``Required``/``NotRequired``, equivalent value types), so
a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``anthropic`` is never imported.
Keys toolctx never writes keep the SDK's key but are typed ``Any`` where
the SDK nests its own TypedDicts, so that the classes fit the SDK versions
of the ``anthropic`` extra. Block lists are typed ``Iterable[Any]`` for the
same reason; :class:`TextBlock`, :class:`ImageBlock` and
:class:`DocumentBlock` say what toolctx puts there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from typing_extensions import Required, TypedDict


__all__ = [
    "Base64Source",
    "DocumentBlock",
    "ImageBlock",
    "InputSchemaTyped",
    "TextBlock",
    "ToolParam",
    "ToolResultBlockParam",
    "UserMessageParam",
]


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
