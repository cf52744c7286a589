"""A tool's stdout never reaches the stdio wire, at the descriptor level.

``tests.mcp_app:lively`` has a tool, ``loud``, that writes to stdout in
every way a tool can: ``print`` (buffered: stdout is a pipe),
``sys.stdout.write`` without a flush (written only when the interpreter
exits), ``os.write(1, ...)`` and a child process printing. The server runs
in a subprocess (``python -m toolctx serve``), with ``PYTHONUNBUFFERED``
unset so that ``print`` really buffers, and the wire is checked with the
official client and byte by byte.
"""

from __future__ import annotations

import json
import os
import sys

from typing import Any

import pytest


pytest.importorskip("mcp")

import anyio

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from tests.test_mcp_server import (
    CLIENT,
    INITIALIZE,
    ROOT,
    _raw_stdio,
    run,
    text_of,
)


NOISE = ("print", "buffered", "fd1", "child")
"""How each of loud's writes starts."""

BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
"""The server's environment: stdout block-buffered, as for real clients."""


def test_the_official_client_sees_no_stray_output(tmp_path):
    """Calls of a tool writing to stdout (print, unflushed write, os.write(1), a child) reach the official client without a parse error; the writes go to stderr."""
    errors: list[Exception] = []

    async def handler(message: Any) -> None:
        if isinstance(message, Exception):
            errors.append(message)

    async def go() -> list[str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolctx", "serve", "tests.mcp_app:lively"],
            cwd=str(ROOT),
            env=BUFFERED,
        )
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(
                    read, write, client_info=CLIENT, message_handler=handler
                ) as session:
                    await session.initialize()
                    texts = []
                    for word in ("one", "two"):
                        result = await session.call_tool(
                            "loud", {"text": word}
                        )
                        texts.append(text_of(result))
                    # Another request after the noise still works.
                    await session.list_tools()
        return texts

    assert run(go) == ["one", "two"]
    assert errors == []
    stderr = (tmp_path / "stderr.txt").read_text()
    for word in ("one", "two"):
        for how in NOISE:
            assert f"{how} {word}" in stderr


def test_the_raw_wire_holds_only_json_rpc():
    """Every byte the server writes to stdout, until it exits, is a JSON-RPC message; the tool's writes (the one flushed at exit included) are on stderr."""

    def call(request_id: int, text: str) -> dict[str, Any]:
        return {
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "loud", "arguments": {"text": text}},
        }

    async def go() -> dict[str, Any]:
        with anyio.fail_after(60):
            return await _raw_stdio(
                "tests.mcp_app:lively",
                [*INITIALIZE, call(1, "alpha"), call(2, "beta")],
                env=BUFFERED,
            )

    out = anyio.run(go)
    lines = out["stdout"].splitlines()

    assert lines
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert out["answers"][2]["result"]["content"][0]["text"] == "beta"
    for word in ("alpha", "beta"):
        for how in NOISE:
            assert f"{how} {word}" in out["stderr"]
            assert f"{how} {word}" not in out["stdout"]
    assert out["returncode"] == 0
