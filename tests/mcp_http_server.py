"""Serve a registry over streamable HTTP in a subprocess, for end-to-end tests.

``python -m tests.mcp_http_server MODULE:ATTRIBUTE [--stateless]`` serves
the target with :func:`toolctx.mcp.server.run_http` on a free local port
and announces ``serving at URL`` on stderr, like ``toolctx serve`` (which
has no stateless mode). It serves until it is interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from functools import partial

import anyio

from toolctx.mcp import create_server, run_http


def main() -> None:
    """Serve the target named on the command line until interrupted."""
    parser = argparse.ArgumentParser(prog="mcp_http_server")
    parser.add_argument("target")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    module, _, attribute = args.target.partition(":")
    server = create_server(getattr(importlib.import_module(module), attribute))

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            url = await group.start(
                partial(run_http, server, port=0, stateless=args.stateless)
            )
            sys.stderr.write(f"serving at {url}\n")
            sys.stderr.flush()

    anyio.run(serve)


if __name__ == "__main__":
    main()
