r"""What every provider shows the model of a result, and plain JSON copies.

Rendering reads exactly four fields of a :class:`~toolctx.ToolResult`:
``name``, ``call_id``, ``is_error`` with ``error``, and ``output``. The
host-only fields (``metadata``, ``state_changes``, ``exception``) and
anything from the context's ``scope`` are never read, so they cannot leak
into a message.

Every text written here is :func:`~toolctx._text.escaped`: a lone
surrogate (a model-chosen call id or name, an error message, output of a
``ToolResult`` built by hand) becomes the escape ``\udce9``, so the
message always encodes as JSON text in UTF-8.

A content output (a tuple of :mod:`toolctx.content` parts) is rendered by
each provider in its native form; where a format carries text only, each
part that is not text becomes a short :func:`notice` saying what it was
and how to send it instead.
"""

from __future__ import annotations

import base64
import json

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from toolctx._frozen import thaw
from toolctx._records import ToolResult
from toolctx._text import escaped
from toolctx.content import Audio, File, Image, Part, Text, parts_of
from toolctx.exceptions import ProviderPayloadError


plain = thaw
"""A plain dict/list copy of JSON data (:func:`toolctx._frozen.thaw`)."""


def plain_output(value: object) -> Any:
    """:func:`plain` of an output, its strings and keys :func:`escaped`."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, Mapping):
        return {
            escaped(key) if isinstance(key, str) else key: plain_output(item)
            for key, item in cast("Mapping[object, object]", value).items()
        }
    if isinstance(value, (tuple, list, frozenset)):
        return [plain_output(item) for item in cast("Iterable[object]", value)]
    return value


TEXT_ONLY: Final = "this API's tool messages carry text only"
"""Why a text-only format (Chat Completions) cannot carry a part."""


def check_result(result: object, function: str) -> ToolResult:
    """*result* if it is a ToolResult, else a TypeError saying what to pass."""
    if not isinstance(result, ToolResult):
        msg = (
            f"{function}() takes a toolctx.ToolResult (what "
            f"Dispatcher.dispatch returns), got {type(result).__name__}."
        )
        raise TypeError(msg)
    check_not_pending(result, function)
    return result


def check_not_pending(result: ToolResult, function: str) -> None:
    """Refuse a result still waiting for approval: nothing ran yet."""
    if result.approval is not None:
        msg = (
            f"{function}(): the call of tool {result.name!r} is waiting "
            "for approval (result.approval is set), so there is no result "
            "to send yet. Ask for approval, then send the result of "
            "dispatcher.resume(result.approval, approved=...)."
        )
        raise ValueError(msg)


def check_turn_results(results: object, empty: str) -> list[ToolResult]:
    """The results of one turn as a non-empty list of ToolResult.

    Args:
        results: What the caller passed to ``results_message()``.
        empty: Why the provider rejects an empty message.

    Raises:
        TypeError: A single ToolResult, or an item that is not one.
        ValueError: No results.
    """
    if isinstance(results, ToolResult):
        msg = (
            "results_message() takes an iterable of ToolResult; "
            "use result_message() for a single one."
        )
        raise TypeError(msg)
    checked = [
        check_result(r, "results_message")
        for r in cast("Iterable[object]", results)
    ]
    if not checked:
        msg = f"results_message() needs at least one ToolResult: {empty}"
        raise ValueError(msg)
    return checked


def content_text(result: ToolResult) -> str:
    """The text the model sees for *result*.

    The error message for an error result; otherwise the output itself
    when it is a ``str``, else the output as compact JSON (non-ASCII kept).
    A content output gives its text parts, one per line, with a
    :func:`notice` in place of each image, audio or file part.

    Raises:
        TypeError: The output is not JSON data (a host bug: the dispatcher
            only produces JSON-safe outputs).
    """
    check_not_pending(result, "content_text")
    if result.is_error:
        return error_text(result)
    output = result.output
    if isinstance(output, str):
        return escaped(output)
    parts = parts_of(output)
    if parts is not None:
        return escaped(
            "\n".join(
                part.text
                if isinstance(part, Text)
                else notice(part, TEXT_ONLY)
                for part in parts
            )
        )
    return escaped(compact_json(output, result.name))


def content_parts(result: ToolResult) -> tuple[Part, ...] | None:
    """The parts of a successful content result, else None."""
    if result.is_error:
        return None
    return parts_of(result.output)


def describe(part: Image | Audio | File) -> str:
    """``image image/png, 12,345 bytes`` (a file's name included)."""
    if isinstance(part, File):
        kind = f"file {part.name!r}" if part.name else "file"
    else:
        kind = "image" if isinstance(part, Image) else "audio"
    return f"{kind} {part.mime_type}, {len(part.data):,} bytes"


def notice(part: Image | Audio | File, why: str) -> str:
    """The text sent instead of a part a format cannot carry.

    ``[image image/png, 12,345 bytes: <why>; send it in a user message,
    see toolctx docs 'Content']`` -- bounded, and without the data.
    """
    return (
        f"[{describe(part)}: {why}; send it in a user message, see "
        "toolctx docs 'Content']"
    )


def b64(part: Image | Audio | File) -> str:
    """The part's bytes as standard base64 text."""
    return base64.b64encode(part.data).decode("ascii")


def data_url(part: Image | Audio | File) -> str:
    """The part as a ``data:`` URL (``data:image/png;base64,...``)."""
    return f"data:{part.mime_type};base64,{b64(part)}"


def file_name(part: File, index: int) -> str:
    """The part's name (escaped), or ``part-<index>`` with no name given."""
    return escaped(part.name) if part.name else f"part-{index}"


def error_text(result: ToolResult) -> str:
    """The error message of an error *result*, never empty."""
    return escaped(result.error or f"Tool {result.name!r} failed.")


_COMPACT: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode
"""One encoder for every rendering (``json.dumps`` with options builds
a new one per call)."""


def compact_json(value: object, tool_name: str) -> str:
    """*value* as compact JSON text, with a clear error if it is not JSON."""
    try:
        return _COMPACT(value)
    except (TypeError, ValueError) as exc:
        msg = (
            f"The output of tool {tool_name!r} is not JSON data ({exc}). "
            "Results from Dispatcher are always JSON-safe; a ToolResult "
            "built by hand must hold dicts, lists, str, int, finite float, "
            "bool or None."
        )
        raise TypeError(msg) from None


def require_call_id(result: ToolResult, *, provider: str, field: str) -> str:
    """*result*'s call id (escaped), or an error naming its field."""
    if result.call_id is None:
        msg = (
            f"The result of tool {result.name!r} has no call_id, but "
            f"{provider} needs the {field} of the call it answers. Parse "
            f"the calls with toolctx.providers.{provider}.parse_calls() "
            "(it keeps the provider's call ids), or build the ToolCall "
            "with id=... before dispatching it."
        )
        raise ProviderPayloadError(msg, provider=provider)
    return escaped(result.call_id)
