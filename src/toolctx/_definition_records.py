"""What a model is told about a tool: its definition and behaviour hints.

:class:`ToolDefinition` (name, description, the JSON Schema of the
arguments and of the output, title) and :class:`ToolAnnotations`, the
hints clients read about what the tool does. Plain data with no other
record in it; :mod:`toolctx._records` re-exports both with the call and
result records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import attrs


_HINT: Final = attrs.validators.optional(attrs.validators.instance_of(bool))


@final
@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """Hints about a tool's behaviour, for clients and people (not rules).

    Each hint is ``None`` when unsaid. MCP clients see them as
    ``readOnlyHint``, ``destructiveHint``, ``idempotentHint`` and
    ``openWorldHint``; they are hints only: nothing enforces them, so
    never base a security decision on a tool's own annotations.

    Attributes:
        read_only: The tool does not change its environment.
        destructive: The tool may delete or overwrite (meaningful when
            not read-only).
        idempotent: Calling it again with the same arguments has no
            further effect (meaningful when not read-only).
        open_world: The tool reaches outside systems (the web, email);
            false for a closed domain such as a local database.

    Example:
        >>> ToolAnnotations(read_only=True).to_dict()
        {'read_only': True}

    .. versionadded:: 0.2.0
    """

    read_only: bool | None = attrs.field(default=None, validator=_HINT)
    destructive: bool | None = attrs.field(default=None, validator=_HINT)
    idempotent: bool | None = attrs.field(default=None, validator=_HINT)
    open_world: bool | None = attrs.field(default=None, validator=_HINT)

    def to_dict(self) -> dict[str, bool]:
        """Return the hints that are set, by their Python names.

        .. versionadded:: 0.2.0
        """
        return {
            key: value
            for key, value in (
                ("read_only", self.read_only),
                ("destructive", self.destructive),
                ("idempotent", self.idempotent),
                ("open_world", self.open_world),
            )
            if value is not None
        }


@final
@attrs.frozen(kw_only=True)
class ToolDefinition:
    """What a model is told about a tool.

    Attributes:
        name: The tool's name, ``^[a-zA-Z0-9_-]{1,64}$``.
        description: What the tool does, for the model.
        parameters: A JSON Schema (Draft 2020-12) object describing the
            arguments. Keys are in a deterministic order.
        output_schema: The JSON Schema of the tool's output, from its
            return annotation (for a streaming tool: the array of its
            chunks); None when the return is unannotated, ``Any``, ``None``
            or of a type without a JSON Schema.
        title: A short human-readable name for user interfaces, or None.
        annotations: Hints about the tool's behaviour
            (:class:`ToolAnnotations`), or None.

    .. versionadded:: 0.1.0
    .. versionchanged:: 0.2.0 ``title`` and ``annotations``.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = attrs.field(
        factory=lambda: {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
    )
    output_schema: Mapping[str, Any] | None = None
    title: str | None = None
    annotations: ToolAnnotations | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the definition as plain JSON data.

        ``{"name", "description", "parameters"}``, and ``"output_schema"``,
        ``"title"`` and ``"annotations"`` (the hints that are set) when
        the tool has them.

        .. versionadded:: 0.1.0
        """
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.output_schema is not None:
            data["output_schema"] = self.output_schema
        if self.title is not None:
            data["title"] = self.title
        if self.annotations is not None:
            data["annotations"] = self.annotations.to_dict()
        return data
