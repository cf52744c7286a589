"""The ``toolctx`` command: list, call and serve a registry's tools.

``toolctx list app:registry`` prints the tool list (ours or a provider's),
``toolctx call app:registry NAME '{"a": 1}'`` dispatches one call and
prints the result, ``toolctx serve app:registry`` serves the tools over
MCP. ``MODULE:ATTRIBUTE`` names a :class:`~toolctx.Registry` or a
:class:`~toolctx.Dispatcher` (whose interceptors then run); the current
directory is importable, as with ``python -m``.

Exit codes: 0 success, 1 the call returned an error result (or a tool list
cannot be rendered, or the dispatcher itself raised), 2 a usage error (bad
target, bad JSON, missing extra), 130 interrupted. Usage errors and a
dispatcher that raises are reported as one line on stderr, without a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from toolctx._records import ToolCall, ToolResult
from toolctx._types.decode import decode_json
from toolctx.context.execution import ExecutionContext
from toolctx.dispatch.dispatcher import Dispatcher
from toolctx.exceptions import ToolctxError
from toolctx.providers._render import plain
from toolctx.tools.arguments import unstructure_output
from toolctx.tools.registry import Registry


__all__ = ["main"]

_FORMATS = ("json", "openai", "anthropic", "gemini", "mcp", "names")
_PROG = "toolctx"
_MAX_LINE = 500  # most characters of an error line, its prefix included
_ERROR_PREFIX = f"{_PROG}: error: "


class _UsageError(Exception):
    """A usage error: printed as one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Raise the usage error: one line, with where to find the usage."""
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolctx`` command line; return the exit code.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` by
            default.

    Returns:
        0 on success, 1 when the call's result is an error, 2 for usage
        errors (reported on stderr, without a traceback), 130 when
        interrupted.

    .. versionadded:: 0.1.0
    """
    parser = _parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        _add_cwd_to_path()
        return cast("int", args.run(args))
    except _UsageError as exc:
        _error_line(str(exc))
        return 2
    except BaseException as exc:
        if _interrupted(exc):
            return 130
        raise


def _error_line(message: str) -> None:
    """Write ``toolctx: error: MESSAGE`` to stderr as one bounded line."""
    line = _ERROR_PREFIX + " ".join(message.split())
    if len(line) > _MAX_LINE:
        line = line[: _MAX_LINE - 3] + "..."
    sys.stderr.write(line + "\n")


def _interrupted(exc: BaseException) -> bool:
    """A KeyboardInterrupt, or an exception group of nothing else.

    On Python 3.10, anyio (under the MCP server) reports Ctrl-C as a
    backported ``BaseExceptionGroup`` holding the ``KeyboardInterrupt``.
    """
    if isinstance(exc, KeyboardInterrupt):
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
        prog=_PROG,
        description="List, call and serve the tools of a toolctx registry.",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, parser_class=_Parser
    )
    target_help = (
        "MODULE:ATTRIBUTE naming a toolctx Registry or Dispatcher, "
        "e.g. app:registry"
    )

    listing = commands.add_parser("list", help="print the tool list")
    listing.add_argument("target", help=target_help)
    listing.add_argument(
        "--format",
        choices=_FORMATS,
        default="json",
        help="json: toolctx definitions (default); a provider name: that "
        "provider's tool list; names: one name per line",
    )
    listing.set_defaults(run=_list)

    calling = commands.add_parser(
        "call", help="dispatch one call and print its result as JSON"
    )
    calling.add_argument("target", help=target_help)
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
    calling.set_defaults(run=_call)

    serving = commands.add_parser("serve", help="serve the tools over MCP")
    serving.add_argument("target", help=target_help)
    serving.add_argument(
        "--transport",
        choices=("stdio", "streamable-http"),
        default="stdio",
        help="stdio (default) or streamable-http",
    )
    serving.add_argument(
        "--host", default="127.0.0.1", help="HTTP interface (127.0.0.1)"
    )
    serving.add_argument(
        "--port", type=_port, default=8000, help="HTTP port (8000)"
    )
    serving.add_argument("--path", default="/mcp", help="HTTP path (/mcp)")
    serving.add_argument(
        "--name", default="toolctx", help="the server name sent to clients"
    )
    serving.add_argument(
        "--trust-meta-identity",
        action="store_true",
        help="take session and user ids from the request _meta (only "
        "for clients you control)",
    )
    serving.set_defaults(run=_serve)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{_PROG} {version('toolctx')}"
    except PackageNotFoundError:  # pragma: no cover - running from source
        return f"{_PROG} (not installed)"


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


def _add_cwd_to_path() -> None:
    """Make modules in the working directory importable, as ``-m`` does."""
    cwd = str(Path.cwd())
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)


# -- targets ---------------------------------------------------------------


def _load_target(spec: str) -> Dispatcher:
    """Import ``MODULE:ATTRIBUTE`` and return a dispatcher for it.

    A Registry gets a plain :class:`~toolctx.Dispatcher`; a Dispatcher is
    used as it is. The attribute may be dotted (``app:tools.registry``).

    Raises:
        _UsageError: The spec, the import or the attribute is wrong; the
            message says which and how to fix it.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        msg = (
            f"{spec!r} is not a MODULE:ATTRIBUTE target; write the module "
            "and the variable holding the registry, e.g. app:registry"
        )
        raise _UsageError(msg)
    module = _import(module_name)
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            msg = (
                f"module {module_name!r} has no attribute {attribute!r}"
                f"{_candidates(module)}"
            )
            raise _UsageError(msg) from None
    if isinstance(value, Dispatcher):
        return value
    if isinstance(value, Registry):
        return Dispatcher(value)
    msg = (
        f"{spec} is a {type(value).__name__}, not a toolctx Registry or "
        f"Dispatcher{_candidates(module)}"
    )
    raise _UsageError(msg)


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (
            name == exc.name or name.startswith(exc.name + ".")
        ):
            msg = (
                f"cannot import module {name!r}: {exc}. Run toolctx from "
                "the folder that contains it, or install its package."
            )
        else:
            msg = f"importing module {name!r} failed: {_describe(exc)}"
        raise _UsageError(msg) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module
        # SystemExit too: a script that parses sys.argv when imported.
        msg = f"importing module {name!r} failed: {_describe(exc)}"
        raise _UsageError(msg) from None


def _describe(exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        code = tb.tb_frame.f_code
        where = f" (at {code.co_filename}:{tb.tb_lineno})"
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - describing an error must not fail
        text = "(its message could not be read)"
    return (
        f"{type(exc).__name__}: {text}{where}"
        if text
        else (f"{type(exc).__name__}{where}")
    )


def _candidates(module: Any) -> str:
    names = sorted(
        name
        for name, value in vars(module).items()
        if isinstance(value, (Registry, Dispatcher))
        and not name.startswith("_")
    )
    if not names:
        return ""
    return "; registries and dispatchers there: " + ", ".join(names)


# -- commands --------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    registry = _load_target(args.target).registry
    fmt: str = args.format
    if fmt == "names":
        sys.stdout.writelines(f"{name}\n" for name in registry)
        return 0
    if fmt == "json":
        listed: Any = [plain(d.to_dict()) for d in registry.definitions()]
    else:
        module = importlib.import_module(f"toolctx.providers.{fmt}")
        try:
            listed = module.tools(registry)
        except ToolctxError as exc:
            _error_line(f"cannot list the tools for {fmt}: {exc}")
            return 1
    _print_json(listed, sys.stdout)
    return 0


def _call(args: argparse.Namespace) -> int:
    dispatcher = _load_target(args.target)
    text: str = sys.stdin.read() if args.arguments == "-" else args.arguments
    arguments = _json_object(text)
    context = ExecutionContext(
        user_id=args.user,
        session_id=args.session,
        turn=args.turn,
        agent_id=args.agent,
        metadata=_metadata(args.meta),
    )
    call = ToolCall(args.name, arguments, id=args.call_id)
    try:
        result = dispatcher.dispatch(call, context)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported
        # A tool's failures are results; this is the host's code (an
        # interceptor) raising, or an exit escaping it: never the exit code.
        _error_line(f"calling tool {args.name!r} failed: {_describe(exc)}")
        return 1
    _print_json(_result_json(result, show_metadata=args.show_metadata))
    return 1 if result.is_error else 0


def _json_object(text: str) -> dict[str, Any]:
    """Parse the call's arguments as one JSON object, strictly.

    The same decoder as the dispatcher's: duplicate keys, ``NaN`` and
    ``Infinity`` and numbers too large for a float are refused.

    Raises:
        _UsageError: The text is not one JSON object.
    """
    try:
        arguments = decode_json(text)
    except (ValueError, RecursionError) as exc:
        msg = f"the arguments are not valid JSON ({exc}); pass one object"
        raise _UsageError(msg) from None
    if not isinstance(arguments, dict):
        msg = (
            "the arguments must be a JSON object such as '{\"a\": 1}', got "
            f"{type(arguments).__name__}"
        )
        raise _UsageError(msg)
    return cast("dict[str, Any]", arguments)


def _metadata(items: list[tuple[str, str]]) -> dict[str, str]:
    """The ``--meta`` entries as a dict; a key given twice is refused."""
    metadata: dict[str, str] = {}
    for key, value in items:
        if key in metadata:
            msg = (
                f"argument --meta: the key {key!r} is given twice; pass "
                "each key once"
            )
            raise _UsageError(msg)
        metadata[key] = value
    return metadata


def _result_json(result: ToolResult, *, show_metadata: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": result.output,
        "is_error": result.is_error,
        "error": result.error,
        "duration_ns": result.duration_ns,
    }
    if show_metadata:
        data["metadata"] = dict(result.metadata)
        data["state_changes"] = dict(result.state_changes)
    return data


def _serve(args: argparse.Namespace) -> int:
    dispatcher = _load_target(args.target)
    from toolctx.exceptions import McpUnavailableError
    from toolctx.mcp.server import serve

    try:
        serve(
            dispatcher,
            transport=args.transport,
            host=args.host,
            port=args.port,
            path=args.path,
            name=args.name,
            trust_meta_identity=args.trust_meta_identity,
            ready=partial(_announce, len(dispatcher.registry)),
        )
    except McpUnavailableError:
        msg = (
            "serve needs the MCP SDK, which is not installed: "
            "pip install 'toolctx[mcp]'"
        )
        raise _UsageError(msg) from None
    return 0


def _announce(count: int, url: str) -> None:
    sys.stderr.write(f"{_PROG}: serving {count} tools over MCP at {url}\n")
    sys.stderr.flush()


def _print_json(data: object, stream: TextIO | None = None) -> None:
    out = sys.stdout if stream is None else stream
    out.write(
        json.dumps(data, indent=2, ensure_ascii=False, default=_json_default)
    )
    out.write("\n")


def _json_default(value: object) -> object:
    try:
        return unstructure_output(value)
    except TypeError:
        return repr(value)
