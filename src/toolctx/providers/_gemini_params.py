"""The Gemini request values toolctx builds: google-genai's dict forms.

Each class mirrors the ``google-genai`` TypedDict of the same name
(``types.ToolDict``, ``types.ContentDict``...: snake_case keys, every key
optional), so a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``google-genai`` is never
imported. Keys toolctx never writes are typed ``Any``, and the part lists
``list[Any]``, so that the classes fit the SDK versions of the ``gemini``
extra; :class:`FunctionResponsePart` says what toolctx puts in a function
response's ``parts``.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


__all__ = [
    "ContentDict",
    "FunctionDeclarationDict",
    "FunctionResponseBlob",
    "FunctionResponseDict",
    "FunctionResponsePart",
    "PartDict",
    "ToolDict",
]


class FunctionDeclarationDict(TypedDict, total=False):
    """One function declaration (``types.FunctionDeclarationDict``).

    .. versionadded:: 0.2.0
    """

    description: str | None
    name: str | None
    parameters: Any
    parameters_json_schema: Any
    response: Any
    response_json_schema: Any
    behavior: Any


class ToolDict(TypedDict, total=False):
    """A Tool holding function declarations (``types.ToolDict``).

    .. versionadded:: 0.2.0
    """

    retrieval: Any
    computer_use: Any
    file_search: Any
    google_search: Any
    google_maps: Any
    code_execution: Any
    enterprise_web_search: Any
    function_declarations: list[FunctionDeclarationDict] | None
    google_search_retrieval: Any
    parallel_ai_search: Any
    url_context: Any
    mcp_servers: Any
    exa_ai_search: Any


class FunctionResponseDict(TypedDict, total=False):
    """A function response (``types.FunctionResponseDict``).

    .. versionadded:: 0.2.0
    """

    will_continue: bool | None
    scheduling: Any
    parts: list[Any] | None
    id: str | None
    name: str | None
    response: dict[str, Any] | None


class PartDict(TypedDict, total=False):
    """A part of a content (``types.PartDict``).

    toolctx writes ``function_response`` only.

    .. versionadded:: 0.2.0
    """

    media_resolution: Any
    code_execution_result: Any
    executable_code: Any
    file_data: Any
    function_call: Any
    function_response: FunctionResponseDict | None
    inline_data: Any
    text: str | None
    thought: bool | None
    thought_signature: bytes | None
    video_metadata: Any
    tool_call: Any
    tool_response: Any
    part_metadata: dict[str, Any] | None
    audio_transcription: Any
    media_processing: Any
    speech_metadata: Any
    document_metadata: Any
    spreadsheet_metadata: Any
    audio_metadata: Any


class ContentDict(TypedDict, total=False):
    """A content: a role and its parts (``types.ContentDict``).

    .. versionadded:: 0.2.0
    """

    parts: list[Any] | None
    role: str | None


class FunctionResponseBlob(TypedDict):
    """The inline data of a function response part.

    ``data`` is the raw bytes (google-genai base64-encodes them on the
    wire); ``display_name`` is what the response's ``{"$ref": name}``
    points to.

    .. versionadded:: 0.2.0
    """

    mime_type: str
    data: bytes
    display_name: str


class FunctionResponsePart(TypedDict):
    """A part of a function response: an image, PDF or text file.

    .. versionadded:: 0.2.0
    """

    inline_data: FunctionResponseBlob
