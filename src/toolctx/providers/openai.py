"""OpenAI: the Chat Completions API and the Responses API.

Chat Completions
    :func:`tools` (the ``tools`` request parameter), :func:`parse_calls`
    (``choices[0].message.tool_calls``) and :func:`result_message` (a
    ``{"role": "tool"}`` message per result).
Responses API
    :func:`responses_tools`, :func:`parse_responses_calls` (the
    ``function_call`` items of ``output``) and :func:`responses_result_item`
    (a ``function_call_output`` input item per result).

Both accept plain dicts shaped as the API documents them and the
``openai`` package's response objects; the package itself is never
imported. The values returned are TypedDicts mirroring the SDK's request
params (:class:`ChatCompletionFunctionToolParam`,
:class:`ChatCompletionToolMessageParam`, :class:`FunctionToolParam`,
:class:`FunctionCallOutput`), so they type-check as the SDK's arguments
without a cast. With ``strict=True`` each tool's schema is rewritten for
Structured Outputs' strict mode: every property becomes required (the
model then always sends a value; a default is named in the description),
and schemas strict mode cannot express raise
:class:`~toolctx.providers.ProviderSchemaError`.

Each TypedDict here mirrors the ``openai`` package's TypedDict of the same
name (same keys, same ``Required``/``NotRequired``, equivalent value
types), so a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``openai`` is never imported. Keys
toolctx never writes keep the SDK's key but are typed loosely (``Any``)
where the SDK nests its own TypedDicts, so that the classes fit the SDK
versions of the ``openai`` extra. The content parts of a result are typed
``Any`` for the same reason; :class:`InputTextPart`,
:class:`InputImagePart` and :class:`InputFilePart` say what toolctx puts
there.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import openai
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> openai.tools(registry)[0]["function"]["name"]
    'add'
    >>> message = {
    ...     "role": "assistant",
    ...     "tool_calls": [{
    ...         "id": "call_1",
    ...         "type": "function",
    ...         "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
    ...     }],
    ... }
    >>> [call] = openai.parse_calls(message)
    >>> openai.result_message(Dispatcher(registry).dispatch(call))
    {'role': 'tool', 'tool_call_id': 'call_1', 'content': '5'}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from typing_extensions import Required, TypedDict

from toolctx._records import ToolCall, ToolDefinition, ToolResult
from toolctx._text import escaped
from toolctx._tools.registry import Registry
from toolctx.content import Audio, File, Image, Text
from toolctx.providers._dialects_openai import openai_strict
from toolctx.providers._openai_calls import (
    CHAT_INPUT,
    RESPONSES_INPUT,
    chat_calls,
    chat_items,
    responses_calls,
    responses_items,
)
from toolctx.providers._openai_calls import PROVIDER as _PROVIDER
from toolctx.providers._payload import as_list, load
from toolctx.providers._render import (
    check_result,
    content_parts,
    content_text,
    data_url,
    notice,
    plain,
    require_call_id,
)


__all__ = [
    "ChatCompletionFunctionToolParam",
    "ChatCompletionToolMessageParam",
    "FunctionCallOutput",
    "FunctionDefinition",
    "FunctionToolParam",
    "InputFilePart",
    "InputImagePart",
    "InputTextPart",
    "parse_calls",
    "parse_responses_calls",
    "responses_result_item",
    "responses_tools",
    "result_message",
    "tools",
]

# The image types the Responses API reads in an input_image part.
_RESPONSES_IMAGES: Final = frozenset(
    {"image/png", "image/jpeg", "image/webp", "image/gif"}
)


def _parameters(definition: ToolDefinition, *, strict: bool) -> Any:
    """The definition's parameters, rewritten for strict mode if asked."""
    if strict:
        return openai_strict(definition.parameters, tool=definition.name)
    return plain(definition.parameters)


# -- Chat Completions --------------------------------------------------------


def tools(
    registry: Registry, *, strict: bool = False
) -> list[ChatCompletionFunctionToolParam]:
    """Return the Chat Completions ``tools`` list, in registration order.

    Each entry is ``{"type": "function", "function": {"name",
    "description", "parameters"}}``, plus ``"strict": true`` inside
    ``function`` when *strict* is set. The dicts are fresh copies. An empty
    registry gives ``[]``: leave ``tools`` out of the request then.

    Args:
        registry: The tools to offer.
        strict: Enable Structured Outputs for the calls, rewriting every
            schema for strict mode (all properties required, defaults named
            in descriptions, unsupported annotations dropped).

    Raises:
        ProviderSchemaError: *strict* is set and a schema cannot be made
            strict (free-form ``dict[str, T]`` or ``Any`` values, tuples);
            the message names the tool and the place.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``ChatCompletionToolParam``.
    """
    entries: list[ChatCompletionFunctionToolParam] = []
    for definition in registry.definitions():
        function: FunctionDefinition = {
            "name": definition.name,
            "description": definition.description,
            "parameters": _parameters(definition, strict=strict),
        }
        if strict:
            function["strict"] = True
        entries.append({"type": "function", "function": function})
    return entries


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a Chat Completions response, in order.

    Args:
        payload: A whole ``ChatCompletion`` (``choices[0]`` is read), a
            choice, the assistant message (a dict with ``tool_calls``),
            the ``tool_calls`` list itself or a single tool call; plain
            dicts or the ``openai`` package's objects. Each call's
            ``arguments`` JSON text is kept as is: the dispatcher
            validates it.

    Returns:
        One :class:`~toolctx.ToolCall` per ``function`` tool call, with
        ``id`` set to the call's ``id``; calls of other types (custom
        tools) are skipped. A message without tool calls gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is none of those (a streamed
            chunk, a Responses API response...): the message says what to
            pass; or a call has no name.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Also a choice, a list of choices and a single
       tool call; anything else is refused, never read as ``[]``.
    """
    data = load(payload)
    if isinstance(data, Mapping):
        return chat_calls(chat_items(data))
    items = as_list(data, CHAT_INPUT, _PROVIDER)
    if items:
        first_item = load(items[0])
        if isinstance(first_item, Mapping) and (
            "message" in first_item or "delta" in first_item
        ):
            return chat_calls(chat_items(first_item))  # completion.choices
    return chat_calls(items)


def result_message(result: ToolResult) -> ChatCompletionToolMessageParam:
    """Return the Chat Completions tool message answering one call.

    ``{"role": "tool", "tool_call_id": result.call_id, "content": text}``
    where *text* is the error message for an error result, else the output
    (a ``str`` as is, anything else as compact JSON). Tool messages carry
    text only: a content result sends its text parts, and a short notice
    in place of each image, audio or file part (send those in a user
    message, see the docs' *Content* section). Host-only fields
    (metadata, state changes, the exception) never appear.

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's
       ``ChatCompletionToolMessageParam``; content results.
    """
    result = check_result(result, "result_message")
    return {
        "role": "tool",
        "tool_call_id": require_call_id(
            result, provider=_PROVIDER, field="tool_call_id"
        ),
        "content": content_text(result),
    }


# -- Responses API -----------------------------------------------------------


def responses_tools(
    registry: Registry, *, strict: bool = False
) -> list[FunctionToolParam]:
    """Return the Responses API ``tools`` list, in registration order.

    Each entry is ``{"type": "function", "name", "description",
    "parameters", "strict"}``. ``strict`` is always written out, because
    the Responses API turns strict mode *on* when it is omitted.

    Args:
        registry: The tools to offer.
        strict: Enable strict mode, rewriting every schema as
            :func:`tools` does.

    Raises:
        ProviderSchemaError: *strict* is set and a schema cannot be made
            strict.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``FunctionToolParam``.
    """
    return [
        {
            "type": "function",
            "name": definition.name,
            "description": definition.description,
            "parameters": _parameters(definition, strict=strict),
            "strict": strict,
        }
        for definition in registry.definitions()
    ]


def parse_responses_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a Responses API response, in order.

    Args:
        payload: A whole ``Response`` (its ``output`` is read), the
            ``output`` list itself or one ``function_call`` item; plain
            dicts or the ``openai`` package's objects.

    Returns:
        One :class:`~toolctx.ToolCall` per ``function_call`` item, with
        ``id`` set to the item's ``call_id`` (not its ``id``). Other items
        (messages, reasoning, built-in tool calls) are skipped.

    Raises:
        ProviderPayloadError: The payload is none of those (a stream
            event, a Chat Completions payload...): the message says what to
            pass; or a call has no name.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Also a single ``function_call`` item;
       anything else is refused, never read as ``[]``.
    """
    data = load(payload)
    if isinstance(data, Mapping):
        items = responses_items(data)
    else:
        items = as_list(data, RESPONSES_INPUT, _PROVIDER)
    return responses_calls(items)


def responses_result_item(result: ToolResult) -> FunctionCallOutput:
    """Return the Responses API input item answering one call.

    ``{"type": "function_call_output", "call_id": result.call_id,
    "output": text}`` with the same text as :func:`result_message`. For a
    content result ``output`` is a list of parts instead: ``input_text``
    for text, ``input_image`` (a ``data:`` URL) for PNG, JPEG, WebP and
    GIF images, ``input_file`` (a ``data:`` URL and a file name) for
    files, and an ``input_text`` notice for what the API cannot take
    (audio, other image types).

    Raises:
        ProviderPayloadError: The result has no ``call_id``.
        TypeError: *result* is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 Typed as the SDK's ``FunctionCallOutput``;
       content results as ``input_image``/``input_file`` parts.
    """
    result = check_result(result, "responses_result_item")
    call_id = require_call_id(result, provider=_PROVIDER, field="call_id")
    parts = content_parts(result)
    output: str | list[Any]
    if parts is None:
        output = content_text(result)
    else:
        output = [_responses_part(p, i) for i, p in enumerate(parts, 1)]
    return {
        "type": "function_call_output",
        "call_id": call_id,
        "output": output,
    }


def _responses_part(
    part: Text | Image | Audio | File, index: int
) -> InputTextPart | InputImagePart | InputFilePart:
    """One part of a function call output."""
    if isinstance(part, Text):
        return {"type": "input_text", "text": escaped(part.text)}
    if isinstance(part, Image) and part.mime_type in _RESPONSES_IMAGES:
        return {"type": "input_image", "image_url": data_url(part)}
    if isinstance(part, File):
        return {
            "type": "input_file",
            "file_data": data_url(part),
            "filename": escaped(part.name) if part.name else f"file-{index}",
        }
    why = (
        "function call outputs carry no audio"
        if isinstance(part, Audio)
        else "function call outputs take PNG, JPEG, WebP and GIF images"
    )
    return {"type": "input_text", "text": notice(part, why)}


class FunctionDefinition(TypedDict, total=False):
    """The ``function`` of a Chat Completions tool (``FunctionDefinition``).

    .. versionadded:: 0.2.0
    """

    name: Required[str]
    description: str
    parameters: dict[str, object]
    strict: bool | None


class ChatCompletionFunctionToolParam(TypedDict, total=False):
    """One entry of the Chat Completions ``tools`` parameter.

    Assignable to the SDK's ``ChatCompletionToolParam``
    (``ChatCompletionFunctionToolParam``).

    .. versionadded:: 0.2.0
    """

    function: Required[FunctionDefinition]
    type: Required[Literal["function"]]


class ChatCompletionToolMessageParam(TypedDict, total=False):
    """A ``{"role": "tool"}`` message answering one call.

    toolctx always writes ``content`` as a ``str``.

    .. versionadded:: 0.2.0
    """

    content: Required[str | Iterable[Any]]
    role: Required[Literal["tool"]]
    tool_call_id: Required[str]


_FunctionToolReserved = TypedDict(
    "_FunctionToolReserved", {"async": bool}, total=False
)


class FunctionToolParam(_FunctionToolReserved, total=False):
    """One entry of the Responses API ``tools`` parameter.

    .. versionadded:: 0.2.0
    """

    name: Required[str]
    parameters: Required[dict[str, object] | None]
    strict: Required[bool | None]
    type: Required[Literal["function"]]
    allowed_callers: Any
    defer_loading: bool
    description: str | None
    output_schema: dict[str, object] | None


class FunctionCallOutput(TypedDict, total=False):
    """A ``function_call_output`` input item answering one call.

    ``output`` is the result's text, or for a content result a list of
    :class:`InputTextPart`, :class:`InputImagePart` and
    :class:`InputFilePart`.

    .. versionadded:: 0.2.0
    """

    output: Required[str | list[Any]]
    type: Required[Literal["function_call_output"]]
    id: str | None
    call_id: str | None
    caller: Any
    name: str | None
    namespace: str | None
    status: Any


class InputTextPart(TypedDict):
    """An ``input_text`` part of a function call output.

    .. versionadded:: 0.2.0
    """

    type: Literal["input_text"]
    text: str


class InputImagePart(TypedDict):
    """An ``input_image`` part: the image as a ``data:`` URL.

    .. versionadded:: 0.2.0
    """

    type: Literal["input_image"]
    image_url: str


class InputFilePart(TypedDict):
    """An ``input_file`` part: the file as a ``data:`` URL and its name.

    .. versionadded:: 0.2.0
    """

    type: Literal["input_file"]
    file_data: str
    filename: str
