"""Google Gemini: function calling in ``generateContent``, REST or SDK.

:func:`tools` gives the ``tools`` request field: one Tool holding every
function declaration. Parameters go in ``parameters_json_schema``, the
field that takes JSON Schema (the older ``parameters`` takes an OpenAPI
subset and is not used), rewritten to the subset Gemini documents:
non-recursive ``$ref`` are inlined, ``$defs`` are kept only for recursive
classes (which must recurse through an optional field), ``enum`` keeps
only strings and numbers, and keywords Gemini does not list are dropped
(a default is named in the description instead).

:func:`parse_calls` reads the ``functionCall`` parts of the first
candidate, and :func:`result_message` / :func:`results_message` build the
``user`` content with ``functionResponse`` parts. A response object
always holds ``{"output": ...}`` or, for errors, ``{"error": message}``,
the two keys Gemini documents, so a tool's own ``"error"`` key can never
be mistaken for a failure. The values are google-genai's dict forms
(:class:`ToolDict`, :class:`ContentDict`, :class:`PartDict`: snake_case
keys, which the REST API accepts too), typed so that they are the SDK's
arguments without a cast; its objects are accepted as payloads. The
package is never imported.

Each TypedDict here mirrors the ``google-genai`` TypedDict of the same name
(``types.ToolDict``, ``types.ContentDict``...: snake_case keys, every key
optional), so a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``google-genai`` is never imported.
Keys toolctx never writes are typed ``Any``, and the part lists
``list[Any]``, so that the classes fit the SDK versions of the ``gemini``
extra; :class:`FunctionResponsePart` says what toolctx puts in a function
response's ``parts``.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import gemini
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> [tool] = gemini.tools(registry)
    >>> tool["function_declarations"][0]["name"]
    'add'
    >>> response = {"candidates": [{"content": {"role": "model", "parts": [
    ...     {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}},
    ... ]}}]}
    >>> calls = gemini.parse_calls(response)
    >>> results = Dispatcher(registry).dispatch_all(calls)
    >>> gemini.results_message(results)
    {'role': 'user', 'parts': [{'function_response':
        {'name': 'add', 'response': {'output': 5}}}]}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import re

from collections.abc import Iterable, Mapping
from typing import Any, Final

from typing_extensions import TypedDict

from toolctx._records import ToolCall, ToolResult
from toolctx._text import escaped
from toolctx._tools.registry import Registry
from toolctx.content import File, Image, Part, Text
from toolctx.exceptions import InvalidToolNameError
from toolctx.providers._dialects_gemini import gemini as gemini_schema
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    first,
    keys_shown,
    load,
    make_call,
    refuse,
    unknown_dict,
)
from toolctx.providers._render import (
    check_result,
    check_turn_results,
    compact_json,
    content_parts,
    error_text,
    notice,
    plain_output,
)


__all__ = [
    "ContentDict",
    "FunctionDeclarationDict",
    "FunctionResponseBlob",
    "FunctionResponseDict",
    "FunctionResponsePart",
    "PartDict",
    "ToolDict",
    "parse_calls",
    "result_message",
    "result_part",
    "results_message",
    "tools",
]

_PROVIDER = "gemini"
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
_INPUT: Final = (
    "a GenerateContentResponse, a candidate, a Content, its parts list, "
    "one part, response.function_calls or one FunctionCall (REST dicts, "
    "google-genai objects or their model_dump())"
)
_CALL_KEYS: Final = ("functionCall", "function_call")
# What Gemini reads in a function response's parts.
_MEDIA: Final = frozenset(
    {"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}
)


def tools(registry: Registry) -> list[ToolDict]:
    """Return the ``tools`` list: one Tool with every declaration, in order.

    ``[{"function_declarations": [{"name", "description",
    "parameters_json_schema"}, ...]}]``, fresh copies; ``[]`` for an empty
    registry. Pass it as ``config={"tools": [*gemini.tools(registry)]}``
    (the SDK's ``tools`` is a ``list`` of a wider union, so under mypy
    unpack ours into a new list).

    Raises:
        InvalidToolNameError: A tool name starts with a digit or a dash,
            which Gemini refuses.
        ProviderSchemaError: A schema uses what Gemini cannot take: a
            recursive class that recurses only through required fields, or
            a keyword such as ``not`` or a multi-schema ``allOf``.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 google-genai's ``ToolDict`` (snake_case).
    """
    declarations: list[FunctionDeclarationDict] = []
    for definition in registry.definitions():
        if not _NAME.fullmatch(definition.name):
            msg = (
                f"Gemini refuses the tool name {definition.name!r}: names "
                "must start with a letter or an underscore. Register the "
                "tool under another name with @tool(name=...)."
            )
            raise InvalidToolNameError(msg)
        declarations.append(
            {
                "name": definition.name,
                "description": definition.description,
                "parameters_json_schema": gemini_schema(
                    definition.parameters, tool=definition.name
                ),
            }
        )
    return [{"function_declarations": declarations}] if declarations else []


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a response, in order.

    Args:
        payload: A whole ``GenerateContentResponse`` (the first candidate
            is read), a candidate, a ``Content`` (a dict with ``parts``),
            the parts list, one part, the SDK's
            ``response.function_calls`` list or one ``FunctionCall``; REST
            dicts (camelCase), google-genai objects or their
            ``model_dump()`` (snake_case).

    Returns:
        One :class:`~toolctx.ToolCall` per function call, with the
        ``args`` object as arguments and ``id`` set to the call's ``id``
        when the API sent one (the Gemini API often does not; Gemini
        matches responses by name and order then). Other parts are
        skipped; a response without candidates, or a candidate without
        content (blocked), gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is none of those (a list of
            contents, another API's payload): the message says what to
            pass; or a call has no name.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Also ``response.function_calls``, one part
       and one ``FunctionCall``; anything else is refused, never read as
       ``[]``.
    """
    data = load(payload)
    if isinstance(data, Mapping):
        data = _parts_of(data)
    items = as_list(data, _INPUT, _PROVIDER)
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        item = as_mapping(raw, f"parts[{index}]", _PROVIDER)
        call = first(item, *_CALL_KEYS)
        if call is not None:
            what = f"parts[{index}].function_call"
            call = as_mapping(call, what, _PROVIDER)
        elif _is_call(item):
            what = f"function_calls[{index}]"
            call = item
        elif any(key in item for key in ("parts", "role", "candidates")):
            raise refuse(
                "parse_calls",
                f"a list of contents or responses (item {index} has the "
                f"keys {keys_shown(item)})",
                _INPUT,
                _PROVIDER,
            )
        else:
            continue  # a text, thought or other part
        calls.append(
            make_call(
                call.get("name"),
                call.get("args"),
                call.get("id"),
                what=what,
                provider=_PROVIDER,
            )
        )
    return calls


def _is_call(data: Mapping[str, Any]) -> bool:
    """Whether *data* is a FunctionCall itself (not a part holding one)."""
    return ("name" in data or "args" in data) and not any(
        key in data for key in _CALL_KEYS
    )


def _parts_of(data: Mapping[str, Any]) -> object:
    """The parts of a response, candidate or content; or the one given."""
    if "candidates" in data:
        candidates = as_list(data["candidates"], "'candidates'", _PROVIDER)
        if not candidates:
            return []
        data = as_mapping(candidates[0], "candidates[0]", _PROVIDER)
        if "parts" not in data and "content" not in data:
            return []  # a candidate without content: blocked, say
    if "parts" in data:
        return data["parts"]
    if "content" in data:
        content = data["content"]
        if content is None:
            return []  # e.g. a candidate blocked for safety
        content = as_mapping(content, "the candidate's content", _PROVIDER)
        return content.get("parts")
    if any(key in data for key in _CALL_KEYS) or _is_call(data):
        return [data]  # one part, or one FunctionCall
    if "finish_reason" in data or "finishReason" in data:
        return []  # a candidate without content
    raise refuse("parse_calls", _foreign(data), _INPUT, _PROVIDER)


def _foreign(data: Mapping[str, Any]) -> str:
    """How a refusal names a dict that is not Gemini's."""
    if "choices" in data or "output" in data:
        return "another API's payload (OpenAI's: use toolctx.providers.openai)"
    if data.get("type") == "message" or "stop_reason" in data:
        return (
            "another API's payload (an Anthropic message: use "
            "toolctx.providers.anthropic)"
        )
    return unknown_dict(data)


def result_part(result: ToolResult) -> PartDict:
    """Return the ``function_response`` part answering one call.

    ``{"function_response": {"name", "response", "id"?}}`` where
    ``response`` is ``{"output": output}`` (the output as JSON data, not
    text) or ``{"error": message}`` for an error result. ``id`` is the
    call's id when it had one. For a content result ``output`` is a list
    holding each text part's text and, for each image (PNG, JPEG, WebP),
    PDF or plain-text part, a ``{"$ref": display_name}`` pointing to the
    function response's ``parts`` entry that carries its bytes; other
    parts become a text notice. Host-only fields never appear.

    Raises:
        TypeError: *result* is not a :class:`~toolctx.ToolResult`, or its
            output is not JSON data.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 google-genai's ``PartDict`` (snake_case);
       content results as function response parts.
    """
    result = check_result(result, "result_part")
    function_response: FunctionResponseDict = {"name": escaped(result.name)}
    parts = content_parts(result)
    if result.is_error:
        function_response["response"] = {"error": error_text(result)}
    elif parts is not None:
        output, media = _content(parts)
        function_response["response"] = {"output": output}
        if media:
            function_response["parts"] = media
    else:
        compact_json(result.output, result.name)  # fails early if not JSON
        function_response["response"] = {"output": plain_output(result.output)}
    if result.call_id is not None:
        function_response["id"] = escaped(result.call_id)
    return {"function_response": function_response}


def _content(
    parts: tuple[Part, ...],
) -> tuple[list[object], list[FunctionResponsePart]]:
    """The response's output list and the media parts it refers to."""
    output: list[object] = []
    media: list[FunctionResponsePart] = []
    names: set[str] = set()
    for index, part in enumerate(parts, 1):
        if isinstance(part, Text):
            output.append(escaped(part.text))
            continue
        mime = part.mime_type.split(";", 1)[0].strip().lower()
        if mime not in _MEDIA:
            why = (
                "Gemini function responses take PNG, JPEG and WebP "
                "images, PDF and plain text"
            )
            output.append(notice(part, why))
            continue
        name = (
            escaped(part.name) if isinstance(part, File) and part.name else ""
        )
        if not name or name in names:
            kind = "image" if isinstance(part, Image) else "file"
            name = f"{kind}-{index}"
        names.add(name)
        blob: FunctionResponseBlob = {
            "mime_type": mime,
            "data": part.data,
            "display_name": name,
        }
        media.append({"inline_data": blob})
        output.append({"$ref": name})
    return output, media


def result_message(result: ToolResult) -> ContentDict:
    """Return a ``user`` content with one ``function_response`` part.

    For several calls of one turn send :func:`results_message`: Gemini
    expects all the responses together, in the order of the calls.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 google-genai's ``ContentDict``.
    """
    return results_message([result])


def results_message(results: Iterable[ToolResult]) -> ContentDict:
    """Return one ``user`` content with a part per result, in order.

    Raises:
        ValueError: *results* is empty.
        TypeError: An item is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 google-genai's ``ContentDict``.
    """
    checked = check_turn_results(
        results, "Gemini rejects a content without parts."
    )
    return {"role": "user", "parts": [result_part(r) for r in checked]}


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
