"""The OpenAI request params toolctx builds, as TypedDicts.

Each class mirrors the ``openai`` package's TypedDict of the same name
(same keys, same ``Required``/``NotRequired``, equivalent value types), so
a value of ours is assignable to the SDK's parameter under
``mypy --strict`` without a cast, while ``openai`` is never imported.
Keys toolctx never writes keep the SDK's key but are typed loosely
(``Any``) where the SDK nests its own TypedDicts, so that the classes fit
the SDK versions of the ``openai`` extra. The content parts of a result
are typed ``Any`` for the same reason; :class:`InputTextPart`,
:class:`InputImagePart` and :class:`InputFilePart` say what toolctx puts
there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from typing_extensions import Required, TypedDict


__all__ = [
    "ChatCompletionFunctionToolParam",
    "ChatCompletionToolMessageParam",
    "FunctionCallOutput",
    "FunctionDefinition",
    "FunctionToolParam",
    "InputFilePart",
    "InputImagePart",
    "InputTextPart",
]


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
