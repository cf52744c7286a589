"""Provider formats: a registry's tools, calls and results on the wire.

One module per API, each with the same three functions:

- ``tools(registry)`` -- the provider's tool list, in registration order;
- ``parse_calls(payload)`` -- the :class:`~toolctx.ToolCall` list of a
  response (parallel calls included), from plain JSON dicts or the
  official SDK's objects;
- ``result_message(result)`` -- the provider's tool-result message for a
  :class:`~toolctx.ToolResult`. Only the name, call id, output and error
  are rendered: host-only fields (``metadata``, ``state_changes``,
  ``exception``, the context's ``scope``) never appear.

=================  ==========================================================
module             API
=================  ==========================================================
:mod:`.openai`     Chat Completions; Responses API (``responses_*``)
:mod:`.anthropic`  Messages API (``results_message`` for parallel calls)
:mod:`.gemini`     Gemini ``generateContent`` (REST and google-genai)
:mod:`.mcp`        Model Context Protocol ``tools/list`` and ``tools/call``
=================  ==========================================================

No SDK is imported: the modules build and read plain data.
"""

from __future__ import annotations

from toolctx.exceptions import (
    ProviderPayloadError,
    ProviderSchemaError,
)
from toolctx.providers import anthropic, gemini, mcp, openai


__all__ = [
    "ProviderPayloadError",
    "ProviderSchemaError",
    "anthropic",
    "gemini",
    "mcp",
    "openai",
]
