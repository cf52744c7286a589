"""The MCP values toolctx builds, as TypedDicts of the JSON on the wire.

The ``mcp`` package has pydantic models, not TypedDicts; these describe
the camelCase JSON its models validate (``types.Tool.model_validate``,
``types.CallToolResult.model_validate``). ``mcp`` is never imported.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict


__all__ = [
    "AudioContentDict",
    "BlobResourceContentsDict",
    "CallToolResultDict",
    "ContentBlockDict",
    "EmbeddedResourceDict",
    "ImageContentDict",
    "TextContentDict",
    "TextResourceContentsDict",
    "ToolAnnotationsDict",
    "ToolDict",
]


class ToolAnnotationsDict(TypedDict, total=False):
    """A tool's ``annotations``: only the hints its definition sets.

    .. versionadded:: 0.2.0
    """

    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class ToolDict(TypedDict):
    """One entry of a ``tools/list`` result.

    ``title``, ``outputSchema`` and ``annotations`` are present when the
    tool's definition has them.

    .. versionadded:: 0.2.0
    """

    name: str
    title: NotRequired[str]
    description: str
    inputSchema: dict[str, Any]
    outputSchema: NotRequired[dict[str, Any]]
    annotations: NotRequired[ToolAnnotationsDict]


class TextContentDict(TypedDict):
    """A ``text`` content block.

    .. versionadded:: 0.2.0
    """

    type: Literal["text"]
    text: str


class ImageContentDict(TypedDict):
    """An ``image`` content block (``data`` is base64 text).

    .. versionadded:: 0.2.0
    """

    type: Literal["image"]
    data: str
    mimeType: str


class AudioContentDict(TypedDict):
    """An ``audio`` content block (``data`` is base64 text).

    .. versionadded:: 0.2.0
    """

    type: Literal["audio"]
    data: str
    mimeType: str


class TextResourceContentsDict(TypedDict):
    """The contents of a text resource (a UTF-8 ``text/*`` file).

    .. versionadded:: 0.2.0
    """

    uri: str
    mimeType: str
    text: str


class BlobResourceContentsDict(TypedDict):
    """The contents of a binary resource (``blob`` is base64 text).

    .. versionadded:: 0.2.0
    """

    uri: str
    mimeType: str
    blob: str


class EmbeddedResourceDict(TypedDict):
    """A ``resource`` content block embedding a file.

    .. versionadded:: 0.2.0
    """

    type: Literal["resource"]
    resource: TextResourceContentsDict | BlobResourceContentsDict


ContentBlockDict = (
    TextContentDict
    | ImageContentDict
    | AudioContentDict
    | EmbeddedResourceDict
)
"""One content block of a ``CallToolResult``."""


class CallToolResultDict(TypedDict):
    """The result of a ``tools/call`` request.

    ``resultType`` is always ``"complete"``: the 2026-07-28 protocol
    requires it, and clients of earlier versions ignore it (the SDK drops
    it for them).

    .. versionadded:: 0.2.0
    """

    content: list[ContentBlockDict]
    isError: bool
    resultType: Literal["complete"]
    structuredContent: NotRequired[dict[str, Any]]
