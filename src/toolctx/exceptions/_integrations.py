"""The exceptions of the integrations: MCP and the providers' formats.

The ``mcp`` package missing, a parameter schema a provider's dialect
cannot express, and a response payload not shaped the way the
provider documents.
"""

from __future__ import annotations

from toolctx.exceptions._base import PUBLIC_MODULE, ToolctxError
from toolctx.exceptions._tools import SchemaError


class McpUnavailableError(ToolctxError, ImportError):
    """The ``mcp`` package is not installed.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE


class ProviderSchemaError(SchemaError):
    """A tool's parameter schema cannot be written in a provider's dialect.

    Raised by ``tools()`` when a schema uses something the provider
    rejects: a free-form object under OpenAI strict mode, say, or a
    recursive type that only recurses through required fields under
    Gemini. The message names the tool, the place in the schema and what
    to change. A subclass of :class:`toolctx.SchemaError`.

    Attributes:
        provider: The provider module's name, e.g. ``"gemini"``.
        tool: The tool's name.
        path: Where in the schema, as a JSON Pointer (``""`` for the root).

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(
        self, message: str, *, provider: str, tool: str, path: str
    ) -> None:
        self.provider = provider
        self.tool = tool
        self.path = path
        super().__init__(message, function=tool)


class ProviderPayloadError(ToolctxError, ValueError):
    """A response payload is not shaped the way the provider documents.

    Raised by ``parse_calls`` for a payload of the wrong type or structure
    (for example a tool call without a name), and by ``result_message``
    when a result lacks what the provider requires (such as the call id
    OpenAI and Anthropic match results by).

    Attributes:
        provider: The provider module's name, e.g. ``"openai"``.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __init__(self, message: str, *, provider: str) -> None:
        self.provider = provider
        super().__init__(message)
