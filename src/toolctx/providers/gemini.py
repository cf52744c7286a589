"""Google Gemini: function calling in ``generateContent``, REST or SDK.

:func:`tools` gives the ``tools`` request field: one Tool holding every
function declaration. Parameters go in ``parametersJsonSchema``, the
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
be mistaken for a failure. Keys are the REST API's camelCase; the
google-genai package's pydantic types accept them as they are
(``types.Tool.model_validate(entry)``), and its objects are accepted as
payloads. The package is never imported.

Example:
    >>> from toolctx import Dispatcher, Registry
    >>> from toolctx.providers import gemini
    >>> registry = Registry()
    >>> @registry.tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> [tool] = gemini.tools(registry)
    >>> tool["functionDeclarations"][0]["name"]
    'add'
    >>> response = {"candidates": [{"content": {"role": "model", "parts": [
    ...     {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}},
    ... ]}}]}
    >>> calls = gemini.parse_calls(response)
    >>> results = Dispatcher(registry).dispatch_all(calls)
    >>> gemini.results_message(results)
    {'role': 'user', 'parts': [{'functionResponse':
        {'name': 'add', 'response': {'output': 5}}}]}

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import re

from collections.abc import Iterable, Mapping
from typing import Any, Final

from toolctx._records import ToolCall, ToolResult
from toolctx.exceptions import InvalidToolNameError
from toolctx.providers._dialects import gemini as gemini_schema
from toolctx.providers._payload import (
    as_list,
    as_mapping,
    expect_keys,
    first,
    load,
    make_call,
)
from toolctx.providers._render import (
    check_result,
    check_turn_results,
    compact_json,
    error_text,
    plain,
)
from toolctx.tools.registry import Registry


__all__ = [
    "parse_calls",
    "result_message",
    "result_part",
    "results_message",
    "tools",
]

_PROVIDER = "gemini"
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")


def tools(registry: Registry) -> list[dict[str, Any]]:
    """Return the ``tools`` list: one Tool with every declaration, in order.

    ``[{"functionDeclarations": [{"name", "description",
    "parametersJsonSchema"}, ...]}]``, fresh copies; ``[]`` for an empty
    registry.

    Raises:
        InvalidToolNameError: A tool name starts with a digit or a dash,
            which Gemini refuses.
        ProviderSchemaError: A schema uses what Gemini cannot take: a
            recursive class that recurses only through required fields, or
            a keyword such as ``not`` or a multi-schema ``allOf``.

    .. versionadded:: 0.1.0
    """
    declarations: list[dict[str, Any]] = []
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
                "parametersJsonSchema": gemini_schema(
                    definition.parameters, tool=definition.name
                ),
            }
        )
    return [{"functionDeclarations": declarations}] if declarations else []


def parse_calls(payload: object) -> list[ToolCall]:
    """Return the function calls of a response, in order.

    Args:
        payload: A whole ``GenerateContentResponse`` (the first candidate
            is read), a candidate, a ``Content`` (a dict with ``parts``),
            or the parts list itself; REST dicts (camelCase), google-genai
            objects or their ``model_dump()`` (snake_case).

    Returns:
        One :class:`~toolctx.ToolCall` per ``functionCall`` part, with the
        ``args`` object as arguments and ``id`` set to the call's ``id``
        when the API sent one (the Gemini API often does not; Gemini
        matches responses by name and order then). Other parts are
        skipped; a response without candidates gives ``[]``.

    Raises:
        ProviderPayloadError: The payload is not shaped like a response,
            a content or a parts list, or a call has no name.

    .. versionadded:: 0.1.0
    """
    data = load(payload)
    if isinstance(data, Mapping):
        expect_keys(
            data,
            ("candidates", "content", "parts"),
            "a GenerateContentResponse, a candidate or a Content",
            _PROVIDER,
        )
        if "candidates" in data:
            candidates = as_list(data["candidates"], "'candidates'", _PROVIDER)
            if not candidates:
                return []
            data = as_mapping(candidates[0], "candidates[0]", _PROVIDER)
        if "parts" not in data:
            content = data.get("content")
            if content is None:
                return []  # e.g. a candidate blocked for safety
            data = as_mapping(content, "the candidate's content", _PROVIDER)
        data = data.get("parts")
    parts = as_list(data, "a response, a content or parts", _PROVIDER)
    calls: list[ToolCall] = []
    for index, raw in enumerate(parts):
        part = as_mapping(raw, f"parts[{index}]", _PROVIDER)
        call = first(part, "functionCall", "function_call")
        if call is None:
            continue
        call = as_mapping(call, f"parts[{index}].functionCall", _PROVIDER)
        calls.append(
            make_call(
                call.get("name"),
                call.get("args"),
                call.get("id"),
                what=f"parts[{index}].functionCall",
                provider=_PROVIDER,
            )
        )
    return calls


def result_part(result: ToolResult) -> dict[str, Any]:
    """Return the ``functionResponse`` part answering one call.

    ``{"functionResponse": {"name", "response", "id"?}}`` where
    ``response`` is ``{"output": output}`` (the output as JSON data, not
    text) or ``{"error": message}`` for an error result. ``id`` is the
    call's id when it had one. Host-only fields never appear.

    Raises:
        TypeError: *result* is not a :class:`~toolctx.ToolResult`, or its
            output is not JSON data.

    .. versionadded:: 0.1.0
    """
    result = check_result(result, "result_part")
    if result.is_error:
        response: dict[str, Any] = {"error": error_text(result)}
    else:
        compact_json(result.output, result.name)  # fails early if not JSON
        response = {"output": plain(result.output)}
    function_response: dict[str, Any] = {
        "name": result.name,
        "response": response,
    }
    if result.call_id is not None:
        function_response["id"] = result.call_id
    return {"functionResponse": function_response}


def result_message(result: ToolResult) -> dict[str, Any]:
    """Return a ``user`` content with one ``functionResponse`` part.

    For several calls of one turn send :func:`results_message`: Gemini
    expects all the responses together, in the order of the calls.

    .. versionadded:: 0.1.0
    """
    return results_message([result])


def results_message(results: Iterable[ToolResult]) -> dict[str, Any]:
    """Return one ``user`` content with a part per result, in order.

    Raises:
        ValueError: *results* is empty.
        TypeError: An item is not a :class:`~toolctx.ToolResult`.

    .. versionadded:: 0.1.0
    """
    checked = check_turn_results(
        results, "Gemini rejects a content without parts."
    )
    return {"role": "user", "parts": [result_part(r) for r in checked]}
