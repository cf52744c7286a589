"""Serve a registry's tools over MCP, and carry toolctx ids in ``_meta``.

- :func:`create_server`, :func:`serve`, :func:`run_stdio`,
  :func:`run_http`: the registry's tools over the official ``mcp`` SDK
  (the ``mcp`` extra; imported only when a server is made).
- :func:`context_meta` / :func:`context_from_meta`: the ``_meta`` entries
  that link a call made over MCP to the caller's invocation.
"""

from __future__ import annotations

from toolctx.exceptions import McpUnavailableError
from toolctx.mcp.meta import META_PREFIX, context_from_meta, context_meta
from toolctx.mcp.request import ContextFactory, McpRequestInfo
from toolctx.mcp.server import create_server, run_http, run_stdio, serve


__all__ = [
    "META_PREFIX",
    "ContextFactory",
    "McpRequestInfo",
    "McpUnavailableError",
    "context_from_meta",
    "context_meta",
    "create_server",
    "run_http",
    "run_stdio",
    "serve",
]
