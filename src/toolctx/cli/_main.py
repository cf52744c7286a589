"""The argument parser and ``main()``: exit codes and error lines."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys

from collections.abc import Sequence
from typing import NoReturn, cast

from toolctx.cli import _commands
from toolctx.cli._report import PROG, UsageError, error_line


_FORMATS = ("json", "openai", "anthropic", "gemini", "mcp", "names")
_TRANSPORTS = ("stdio", "http", "streamable-http")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Raise the usage error: one line, with where to find the usage."""
        raise UsageError(f"{message} (see '{self.prog} --help')")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolctx`` command line; return the exit code.

    ``sys.path`` is restored when it returns, so that calling it from
    Python (a script, a test) leaves no folder of the target behind.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` by
            default.

    Returns:
        0 on success, 1 when the call's result is an error (or the host's
        code failed), 2 for usage errors (reported on stderr, without a
        traceback), 130 when interrupted.

    .. versionadded:: 0.1.0
    """
    parser = _parser()
    saved_path = list(sys.path)
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        code = cast("int", args.run(args))
        sys.stdout.flush()  # here, so that a closed pipe is reported here
    except UsageError as exc:
        error_line(str(exc))
        return 2
    except BrokenPipeError:
        # The reader went away (toolctx list | head): stop quietly, and
        # keep the interpreter's last flush from failing too.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 1
    except BaseException as exc:
        if _interrupted(exc):
            return 130
        raise
    else:
        return code
    finally:
        sys.path[:] = saved_path


def _interrupted(exc: BaseException) -> bool:
    """A KeyboardInterrupt, or an exception group of nothing else.

    On Python 3.10, anyio (under the MCP server) reports Ctrl-C as a
    backported ``BaseExceptionGroup`` holding the ``KeyboardInterrupt``,
    or as the main task's ``CancelledError``.
    """
    if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
        return True
    inner = getattr(exc, "exceptions", None)
    return (
        isinstance(inner, tuple)
        and bool(inner)
        and all(
            isinstance(e, BaseException) and _interrupted(e) for e in inner
        )
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="List, call and serve the tools of a toolctx registry.",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, parser_class=_Parser
    )
    target = _Parser(add_help=False)
    target.add_argument(
        "target",
        metavar="TARGET",
        help="MODULE:ATTRIBUTE or path/to/file.py:ATTRIBUTE naming a "
        "toolctx Registry, a Dispatcher, or a function that returns one "
        "(called with no arguments), e.g. app:registry",
    )
    target.add_argument(
        "--app-dir",
        metavar="DIR",
        default=".",
        help="import MODULE from DIR: put first on sys.path (default: "
        "the current directory)",
    )

    listing = commands.add_parser(
        "list", parents=[target], help="print the tool list"
    )
    listing.add_argument(
        "--format",
        choices=_FORMATS,
        default="json",
        help="json: toolctx definitions (default); a provider name: that "
        "provider's tool list; names: one name per line",
    )
    listing.set_defaults(run=_commands.list_tools)

    calling = commands.add_parser(
        "call",
        parents=[target],
        help="dispatch one call and print its result as JSON",
    )
    calling.add_argument("name", help="the tool's name")
    calling.add_argument(
        "arguments",
        nargs="?",
        default="{}",
        help="the arguments as a JSON object (default {}); - reads stdin",
    )
    calling.add_argument("--user", help="the context's user_id")
    calling.add_argument("--session", help="the context's session_id")
    calling.add_argument(
        "--turn", type=_turn, default=0, help="the turn number (default 0)"
    )
    calling.add_argument("--agent", help="the context's agent_id")
    calling.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_meta_item,
        help="a metadata entry (a string value); repeat for more",
    )
    calling.add_argument("--call-id", help="the call id (tool_call_id)")
    calling.add_argument(
        "--show-metadata",
        action="store_true",
        help="also print the host-only metadata and state changes",
    )
    calling.set_defaults(run=_commands.call_tool)

    serving = commands.add_parser(
        "serve", parents=[target], help="serve the tools over MCP"
    )
    serving.add_argument(
        "--transport",
        choices=_TRANSPORTS,
        default="stdio",
        help="stdio (default): one client on stdin and stdout; http: "
        "streamable HTTP (streamable-http is the same)",
    )
    serving.add_argument(
        "--host", help="HTTP: the interface to bind (default 127.0.0.1)"
    )
    serving.add_argument(
        "--port",
        type=_port,
        help="HTTP: the TCP port (default 8000; 0 picks a free one)",
    )
    serving.add_argument("--path", help="HTTP: the endpoint (default /mcp)")
    serving.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="HTTP: no sessions, every request stands alone",
    )
    serving.add_argument(
        "--json-response",
        action="store_true",
        default=None,
        help=(
            "HTTP: answer with JSON instead of an SSE stream (no progress "
            "notifications)"
        ),
    )
    serving.add_argument(
        "--name", default="toolctx", help="the server name sent to clients"
    )
    serving.add_argument(
        "--trust-meta-identity",
        action="store_true",
        help="take session and user ids from the request _meta (only "
        "for clients you control)",
    )
    serving.set_defaults(run=_commands.serve)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PROG} {version('toolctx')}"
    except PackageNotFoundError:  # pragma: no cover - running from source
        return f"{PROG} (not installed)"


def _turn(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f"expected an integer, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 0:
        msg = f"expected a non-negative integer, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:  # noqa: PLR2004
        msg = f"expected a port number from 0 to 65535, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _meta_item(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        msg = f"expected KEY=VALUE, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return key, value
