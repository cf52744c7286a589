"""The exceptions of defining, registering and finding tools.

A type hint with no JSON Schema, a tool name the providers reject, a
name registered twice or not at all, an import reference that does
not resolve.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolctx._text import bounded
from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError


class DuplicateToolError(ToolctxError, ValueError):
    """A tool with this name is already registered.

    Attributes:
        name: The tool name.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"A tool named {name!r} is already registered. Pick another "
            f"name with @tool(name=...), unregister the old one first, or "
            f"pass replace=True to swap it in place."
        )


MAX_LISTED_TOOLS = 30
"""Most tool names an unknown-tool message lists."""


class UnknownToolError(ToolctxError, KeyError):
    """No tool with this name is registered.

    Attributes:
        name: The name that was asked for.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = tuple(available)
        listed = self.available[:MAX_LISTED_TOOLS]
        shown = ", ".join(repr(n) for n in listed)
        more = len(self.available) - len(listed)
        more_text = f" and {more} more" if more else ""
        super().__init__(
            f"No tool named {bounded(repr(name), 200)} is registered. "
            + (
                f"Registered tools: {shown}{more_text}."
                if self.available
                else "The registry is empty."
            )
        )

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidToolNameError(ToolctxError, ValueError):
    """A tool name breaks the providers' rule ``^[a-zA-Z0-9_-]{1,64}$``.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class SchemaError(ToolctxError, TypeError):
    """A type hint that cannot become JSON Schema, raised at decoration.

    Attributes:
        function: The qualified name of the decorated function.
        parameter: The parameter whose hint failed, or None.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(
        self,
        message: str,
        *,
        function: str | None = None,
        parameter: str | None = None,
    ) -> None:
        self.function = function
        self.parameter = parameter
        super().__init__(message)


class ToolReferenceError(ToolctxError, LookupError):
    """An import reference (``"package.module:name"``) does not resolve.

    Raised in the worker process when the module cannot be imported or has
    no such attribute, or when the object found is not what was expected.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE
