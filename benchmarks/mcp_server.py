"""MCP tool calls per second over streamable HTTP, from one run.

Run: ``python benchmarks/mcp_server.py`` (``--quick`` for a smoke run;
``--calls N --rounds R``). The same tool, ``add(a: int, b: int) -> int``,
is served on 127.0.0.1 by

- ``toolctx``: :func:`toolctx.mcp.create_server` + :func:`run_http`;
- ``mcp MCPServer``: the official SDK's high-level server (mcp 2.x's name
  for what was FastMCP 1), which toolctx's low-level server is built on;
- ``fastmcp``: FastMCP (``pip install fastmcp``; skipped when missing).

Each server runs in its own process, in its default configuration
(stateful sessions, SSE responses), under uvicorn. Each measurement is a
fresh client process (the official ``mcp`` client: ``ClientSession`` over
``streamable_http_client``) that connects, warms up, then times *calls*
sequential ``tools/call`` requests; rounds alternate between the servers
and the best round counts. Prints a Markdown table with ratios to the
official server. Every process is bounded in time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import time

from pathlib import Path
from typing import Any


HERE = Path(__file__).resolve()
SERVERS = ("toolctx", "mcp MCPServer", "fastmcp")
WARMUP = 50
START_TIMEOUT = 60.0
CLIENT_TIMEOUT = 300.0


# -- servers (run in child processes) ----------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def serve(kind: str, port: int) -> None:
    """Serve ``add`` with server *kind* on 127.0.0.1:*port* until killed."""
    import anyio

    if kind == "toolctx":
        from toolctx import Registry
        from toolctx.mcp import create_server, run_http

        registry = Registry()
        registry.register(add)
        server = create_server(registry, name="bench")
        anyio.run(lambda: run_http(server, port=port))
        return
    import uvicorn

    if kind == "mcp MCPServer":
        from mcp.server.mcpserver import MCPServer

        official = MCPServer("bench")
        official.tool()(add)
        app: Any = official.streamable_http_app()
    else:
        from fastmcp import FastMCP

        fast = FastMCP("bench")
        fast.tool(add)
        app = fast.http_app(path="/mcp")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def available(kind: str) -> str | None:
    """None if server *kind* can run here, else why not."""
    module = {"toolctx": "toolctx.mcp", "mcp MCPServer": "mcp"}.get(
        kind, "fastmcp"
    )
    try:
        __import__(module)
    except ImportError:
        return "not installed"
    return None


# -- the client (runs in a child process) -------------------------------------


def client(url: str, calls: int) -> None:
    """Time *calls* tools/call requests to *url*; print ns per call as JSON."""
    import anyio

    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> float:
        with anyio.fail_after(CLIENT_TIMEOUT):
            return await timed()

    async def timed() -> float:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for _ in range(WARMUP):
                await _checked(session)
            start = time.perf_counter_ns()
            for _ in range(calls):
                await _checked(session)
            return (time.perf_counter_ns() - start) / calls

    print(json.dumps({"ns": anyio.run(go)}))


async def _checked(session: Any) -> None:
    result = await session.call_tool("add", {"a": 1, "b": 2})
    text = result.content[0].text
    if result.is_error or text != "3":
        msg = f"add(1, 2) answered {text!r}"
        raise SystemExit(msg)


# -- the parent ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            msg = f"the server exited with {proc.returncode}"
            raise SystemExit(msg)
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        time.sleep(0.1)
    msg = f"no server listening on port {port} after {START_TIMEOUT} s"
    raise SystemExit(msg)


def _measure(url: str, calls: int) -> float:
    out = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(HERE), "--client", url, "--calls", str(calls)],
        capture_output=True,
        check=False,
        timeout=CLIENT_TIMEOUT + 30,
    )
    if out.returncode != 0:
        msg = f"the client failed against {url}:\n{out.stderr.decode()}"
        raise SystemExit(msg)
    return float(json.loads(out.stdout)["ns"])


def main() -> None:
    """Start the servers, measure interleaved rounds, print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=0)
    parser.add_argument("--serve", choices=SERVERS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.client:
        client(args.client, args.calls)
        return
    calls = args.calls or (200 if args.quick else 2_000)
    rounds = args.rounds or (2 if args.quick else 5)
    calls, rounds = min(calls, 20_000), min(rounds, 20)

    skipped = {k: why for k in SERVERS if (why := available(k)) is not None}
    running: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for kind in SERVERS:
            if kind in skipped:
                continue
            port = _free_port()
            proc = subprocess.Popen(  # noqa: S603 - our own script
                [
                    sys.executable,
                    str(HERE),
                    "--serve",
                    kind,
                    "--port",
                    str(port),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
            running[kind] = (proc, f"http://127.0.0.1:{port}/mcp")
            _wait_listening(port, proc)
        best = {kind: float("inf") for kind in running}
        for _ in range(rounds):
            for kind, (_, url) in running.items():
                best[kind] = min(best[kind], _measure(url, calls))
    finally:
        for proc, _ in running.values():
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            if proc.poll() is None:
                proc.kill()
    _report(best, skipped, calls, rounds)


def _report(
    best: dict[str, float], skipped: dict[str, str], calls: int, rounds: int
) -> None:
    import mcp

    versions = {"mcp": getattr(mcp, "__version__", "")}
    with contextlib.suppress(ImportError):
        import fastmcp

        versions["fastmcp"] = fastmcp.__version__
    from importlib.metadata import version

    versions["mcp"] = version("mcp")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Python {platform.python_version()}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items())
        + f"; {calls} sequential calls per round, best of {rounds}; "
        f"load {load:.2f}\n"
    )
    base = best.get("mcp MCPServer")
    print("| server | calls/s | µs per call | vs mcp MCPServer |")
    print("|---|---:|---:|---:|")
    for kind in SERVERS:
        if kind in skipped:
            print(f"| {kind} | {skipped[kind]} | | |")
            continue
        ns = best[kind]
        ratio = "" if base is None else f"{base / ns:.2f}x"
        print(f"| {kind} | {1e9 / ns:,.0f} | {ns / 1e3:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
