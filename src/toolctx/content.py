r"""Content results: text, images, audio and files a tool returns.

A tool may return one part or a list/tuple of parts (a ``str`` item is
:class:`Text`); :attr:`ToolResult.output <toolctx.ToolResult.output>` is
then the tuple of parts, and every renderer sends them in the provider's
native form (MCP image/audio/embedded resource content, Anthropic image and
document blocks, OpenAI Responses ``input_image``/``input_file`` parts,
Gemini function-response parts). A format that cannot carry a part (Chat
Completions tool messages carry text only) gets a short text saying so.

Example:
    >>> from toolctx import Dispatcher, Registry, ToolCall
    >>> registry = Registry()
    >>> @registry.tool
    ... def chart() -> list[Text | Image]:
    ...     '''Draw the chart.'''
    ...     return ["Sales", Image(b"<png bytes>", "image/png")]
    >>> result = Dispatcher(registry).dispatch(ToolCall("chart"))
    >>> text, image = result.output
    >>> text, image
    (Text(text='Sales'), Image(data=<11 bytes>, mime_type='image/png'))

Parts are frozen and compare by value; sessions, ``result_to_dict`` and
remote outcomes store them losslessly (:func:`part_to_dict`). A part
cannot sit inside JSON data (a dict holding an ``Image``) or be a chunk of
a streaming tool: that is an error result saying so.

.. versionadded:: 0.2.0
"""

from __future__ import annotations

import base64
import functools
import mimetypes
import re

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final, TypeAlias, cast, final

import attrs

from typing_extensions import Self

from toolctx._types.output import refuse


__all__ = [
    "Audio",
    "File",
    "Image",
    "Part",
    "Text",
    "part_from_dict",
    "part_to_dict",
    "parts_of",
]

_MIME: Final = re.compile(r"^[a-zA-Z0-9][\w.+-]*/[\w.+-]+(;.*)?$")


def _as_bytes(value: object) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    msg = (
        f"Content data must be bytes, got {type(value).__name__}; "
        "read the file in binary mode, or use .from_path(path)."
    )
    raise TypeError(msg)


def _mime_check(cls: str, family: str | None, value: object) -> None:
    if not isinstance(value, str) or not _MIME.match(value):
        like = "image/png" if family is None else f"{family}/..."
        msg = f"{cls} needs a MIME type like {like}, got {value!r:.80}."
        raise ValueError(msg)
    if family is not None and not value.lower().startswith(family + "/"):
        msg = (
            f"{cls} takes a {family}/* MIME type, got {value!r:.80}; "
            "use File for other kinds of data."
        )
        raise ValueError(msg)


def _data_repr(data: bytes) -> str:
    return f"<{len(data)} bytes>"


def _guess(path: Path, mime_type: str | None, cls: str) -> str:
    if mime_type is not None:
        return mime_type
    guessed, _ = mimetypes.guess_type(path.name)
    if guessed is None:
        msg = (
            f"{cls}.from_path() cannot tell the MIME type of {path.name!r}; "
            "pass mime_type=, e.g. mime_type='application/octet-stream'."
        )
        raise ValueError(msg)
    return guessed


@final
@attrs.frozen
class Text:
    """A text part.

    Attributes:
        text: The text.

    .. versionadded:: 0.2.0
    """

    text: str = attrs.field(validator=attrs.validators.instance_of(str))


@attrs.frozen
class _Binary:
    """What the binary parts share: bytes, a MIME type, ``from_path``."""

    _family: ClassVar[str | None] = None
    data: bytes = attrs.field(converter=_as_bytes, repr=_data_repr)
    mime_type: str = attrs.field()

    @mime_type.validator
    def _check_mime(self, _: object, value: object) -> None:
        _mime_check(type(self).__name__, self._family, value)

    @classmethod
    def from_path(cls, path: str | Path, mime_type: str | None = None) -> Self:
        """Read a file; the MIME type is guessed from its name.

        A :class:`File` keeps the file's name.

        Raises:
            ValueError: The type cannot be guessed and is not given.
            OSError: The file cannot be read.

        .. versionadded:: 0.2.0
        """
        p = Path(path)
        data, mime = p.read_bytes(), _guess(p, mime_type, cls.__name__)
        if cls is File:
            return cls(data, mime, name=p.name)  # type: ignore[call-arg]
        return cls(data, mime)


@final
@attrs.frozen
class Image(_Binary):
    """An image part: its bytes and MIME type (``image/png``, ...).

    Attributes:
        data: The encoded image.
        mime_type: Its ``image/*`` MIME type.

    .. versionadded:: 0.2.0
    """

    _family: ClassVar[str | None] = "image"


@final
@attrs.frozen
class Audio(_Binary):
    """An audio part: its bytes and MIME type (``audio/wav``, ...).

    Attributes:
        data: The encoded audio.
        mime_type: Its ``audio/*`` MIME type.

    .. versionadded:: 0.2.0
    """

    _family: ClassVar[str | None] = "audio"


@final
@attrs.frozen
class File(_Binary):
    """A file part: bytes, MIME type and an optional file name.

    Attributes:
        data: The file's bytes.
        mime_type: Its MIME type (``application/pdf``, ``text/csv``...).
        name: The file name to show, or None.

    .. versionadded:: 0.2.0
    """

    name: str | None = attrs.field(
        default=None,
        kw_only=True,
        validator=attrs.validators.optional(attrs.validators.instance_of(str)),
    )


Part: TypeAlias = Text | Image | Audio | File
"""One part of a content result."""

PART_TYPES: Final[tuple[type, ...]] = (Text, Image, Audio, File)
"""The part classes, for ``isinstance``."""


def parts_of(output: object) -> tuple[Part, ...] | None:
    """The parts of a result's output if it is content, else None.

    Example:
        >>> parts_of((Text("hi"),))
        (Text(text='hi'),)
        >>> parts_of({"a": 1}) is None
        True

    .. versionadded:: 0.2.0
    """
    if type(output) is tuple and output:
        for part in output:
            if type(part) not in PART_TYPES:
                return None
        return output
    return None


def as_content(value: object) -> tuple[Part, ...] | None:
    """What a tool returned as parts, None if it is not content.

    A part, or a list/tuple holding at least one part (``str`` items
    become :class:`Text`). A list mixing parts with anything else is a
    :class:`~toolctx.exceptions.ToolOutputError`.
    """
    cls = type(value)
    if cls in PART_TYPES:
        return (value,)  # type: ignore[return-value]
    if cls is not list and cls is not tuple:
        return None
    items: list[Any] | tuple[Any, ...] = value  # type: ignore[assignment]
    if not any(type(item) in PART_TYPES for item in items):
        return None
    parts: list[Part] = []
    for index, item in enumerate(items):
        if type(item) in PART_TYPES:
            parts.append(item)
        elif type(item) is str:
            parts.append(Text(item))
        else:
            from toolctx.exceptions import ToolOutputError

            msg = (
                "A content result holds parts (Text, Image, Audio, File) "
                f"and strings only; item {index} is of type "
                f"{type(item).__name__}. Return the data as a Text part "
                "(e.g. Text(json.dumps(data))) or return it alone."
            )
            raise ToolOutputError(msg)
    return tuple(parts)


_TAGS: Final[dict[type, str]] = {cl: cl.__name__.lower() for cl in PART_TYPES}


def part_to_dict(part: Part) -> dict[str, Any]:
    """Return *part* as JSON-safe data (``data`` as base64 text).

    Example:
        >>> part_to_dict(Image(b"abc", "image/png"))
        {'type': 'image', 'data': 'YWJj', 'mime_type': 'image/png'}

    .. versionadded:: 0.1.0
    """
    if type(part) is Text:
        return {"type": "text", "text": part.text}
    data = {
        "type": _TAGS[type(part)],
        "data": base64.b64encode(part.data).decode("ascii"),
        "mime_type": part.mime_type,
    }
    if type(part) is File and part.name is not None:
        data["name"] = part.name
    return data


@functools.cache
def _part_hooks() -> dict[object, Callable[..., Part]]:
    """The codec's strict structure hook of each part, by its tag."""
    from toolctx.codec import record_hooks

    return {
        tag: record_hooks(cl, None, "A content part")
        for cl, tag in _TAGS.items()
    }


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """Rebuild a part from :func:`part_to_dict` output.

    Raises:
        ContextDataError: *data* is not a part (a ``ValueError``; names
            what is wrong, a key that is not a field included).

    .. versionadded:: 0.1.0
    """
    from toolctx.exceptions import ContextDataError

    if not isinstance(cast("object", data), Mapping):
        msg = f"A content part must be a mapping, got {type(data).__name__}."
        raise ContextDataError(msg)
    hook = _part_hooks().get(data.get("type"))
    if hook is None:
        msg = (
            "A content part's 'type' must be 'text', 'image', 'audio' or "
            f"'file', got {data.get('type')!r:.40}."
        )
        raise ContextDataError(msg)
    part: Part = hook({k: v for k, v in data.items() if k != "type"})
    return part


def may_carry_content(hint: object) -> bool:
    """Whether a return annotation names a part class anywhere in it."""
    if hint in PART_TYPES:
        return True
    args = getattr(hint, "__args__", None)
    if not isinstance(args, tuple):
        return False
    return any(may_carry_content(arg) for arg in args)


def content_output(step: Any) -> Any:
    """Wrap an output step so that parts pass through as parts."""

    def convert(value: Any) -> Any:
        cls = type(value)
        if cls in PART_TYPES or cls is list or cls is tuple:
            parts = as_content(value)
            if parts is not None:
                _check_text(parts, single=cls in PART_TYPES)
                return parts
        return step(value)

    return convert


def _check_text(parts: tuple[Part, ...], *, single: bool) -> None:
    """Refuse a part whose text UTF-8 cannot carry (a lone surrogate).

    Raises:
        NotJSONError: A :class:`Text` part's text or a :class:`File`
            part's name holds one; the path names the part and field.
    """
    from toolctx._types.output_scalars import NotJSONError, checked_text

    for index, part in enumerate(parts):
        if type(part) is Text:
            field, text = "text", part.text
        elif type(part) is File and part.name is not None:
            field, text = "name", part.name
        else:
            continue
        if text.isascii():
            continue
        try:
            checked_text(text, f"The {field} of a {type(part).__name__} part")
        except NotJSONError as exc:
            exc.path[:0] = [field] if single else [index, field]
            raise


def _part_in_json(cls: type) -> str:
    return (
        f"A content part ({cls.__name__}) can only be a tool's whole "
        "result (return it, or a list of parts and strings), not a value "
        "inside JSON data or a chunk of a streaming tool."
    )


refuse(PART_TYPES, _part_in_json)
