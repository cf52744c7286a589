"""The commands: ``list``, ``call`` and ``serve``."""

from __future__ import annotations

import argparse
import importlib
import sys

from functools import partial
from typing import Any, cast

from toolctx._context.execution import ExecutionContext
from toolctx._dispatch.dispatcher import Dispatcher
from toolctx._records import ToolCall, ToolProgress, ToolResult
from toolctx._types.decode import decode_json
from toolctx.cli._report import (
    UsageError,
    counted,
    describe,
    error_line,
    note,
    print_json,
)
from toolctx.cli._target import load_target
from toolctx.content import part_to_dict, parts_of
from toolctx.exceptions import McpUnavailableError, ToolctxError
from toolctx.providers._render import plain


_HTTP_DEFAULTS = {"host": "127.0.0.1", "port": 8000, "path": "/mcp"}
_HTTP_FLAGS = ("stateless", "json_response")


def _target(args: argparse.Namespace) -> Dispatcher:
    dispatcher = load_target(args.target, app_dir=args.app_dir)
    if not dispatcher.registry:
        note(
            f"warning: {args.target} has no tools (are they registered in "
            "a module it does not import?)"
        )
    return dispatcher


def list_tools(args: argparse.Namespace) -> int:
    """``toolctx list``: print the tool list in one of the formats."""
    registry = _target(args).registry
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
            error_line(f"cannot list the tools for {fmt}: {exc}")
            return 1
    print_json(listed)
    return 0


def call_tool(args: argparse.Namespace) -> int:
    """``toolctx call``: dispatch one call, print the result as JSON."""
    dispatcher = _target(args)
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
    stop = dispatcher.on_progress(_show_progress)
    try:
        result = dispatcher.dispatch(call, context)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported
        # A tool's failures are results; this is the host's code (an
        # interceptor) raising, or an exit escaping it: never the exit code.
        error_line(f"calling tool {args.name!r} failed: {describe(exc)}")
        return 1
    finally:
        stop()
    print_json(_result_json(result, show_metadata=args.show_metadata))
    return 1 if result.is_error else 0


def _show_progress(report: ToolProgress) -> None:
    """One progress line on stderr: ``toolctx: progress: NAME 1/4: msg``."""
    done = f"{report.progress:g}"
    if report.total is not None:
        done += f"/{report.total:g}"
    message = "" if report.message is None else f": {report.message}"
    note(" ".join(f"progress: {report.name} {done}{message}".split()))


def _json_object(text: str) -> dict[str, Any]:
    """Parse the call's arguments as one JSON object, strictly.

    The same decoder as the dispatcher's: duplicate keys, ``NaN`` and
    ``Infinity`` and numbers too large for a float are refused.

    Raises:
        UsageError: The text is not one JSON object.
    """
    try:
        arguments = decode_json(text)
    except (ValueError, RecursionError) as exc:
        msg = f"the arguments are not valid JSON ({exc}); pass one object"
        raise UsageError(msg) from None
    if not isinstance(arguments, dict):
        msg = (
            "the arguments must be a JSON object such as '{\"a\": 1}', got "
            f"{type(arguments).__name__}"
        )
        raise UsageError(msg)
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
            raise UsageError(msg)
        metadata[key] = value
    return metadata


def _result_json(result: ToolResult, *, show_metadata: bool) -> dict[str, Any]:
    parts = parts_of(result.output)
    data: dict[str, Any] = {
        "name": result.name,
        "call_id": result.call_id,
        "invocation_id": result.invocation_id,
        "output": (
            result.output
            if parts is None
            else [part_to_dict(part) for part in parts]
        ),
        "is_error": result.is_error,
        "error": result.error,
        "duration_ns": result.duration_ns,
    }
    if result.approval is not None:
        # The call waits for a person: nothing ran; the request says what.
        data["approval"] = result.approval.to_dict()
    if show_metadata:
        data["metadata"] = dict(result.metadata)
        data["state_changes"] = dict(result.state_changes)
    return data


def serve(args: argparse.Namespace) -> int:
    """``toolctx serve``: serve the tools over MCP until stopped."""
    http = _http_options(args)
    dispatcher = _target(args)
    try:
        from toolctx.mcp.server import create_server, run_http, run_stdio

        server = create_server(
            dispatcher,
            name=args.name,
            trust_meta_identity=args.trust_meta_identity,
        )
    except McpUnavailableError:
        msg = (
            "serve needs the MCP SDK, which is not installed: "
            "pip install 'toolctx[mcp]'"
        )
        raise UsageError(msg) from None
    import anyio

    tools = counted(len(dispatcher.registry), "tool")
    announced: list[str] = []

    async def run() -> None:
        if http is None:
            note(f"serving {tools} over MCP on stdio")
            await run_stdio(server)
            return
        async with anyio.create_task_group() as group:
            url = await group.start(partial(run_http, server, **http))
            announced.append(url)
            note(f"serving {tools} over MCP at {url}")

    try:
        anyio.run(run)
    except BaseException as exc:
        failed = None if http is None or announced else _os_error(exc)
        if http is None or failed is None:
            raise
        msg = (
            f"cannot serve HTTP on {http['host']} port {http['port']}: "
            f"{failed.strerror or failed}; pick another --port (0 picks a "
            "free one) or --host"
        )
        raise UsageError(msg) from None
    return 0


def _os_error(exc: BaseException | None) -> OSError | None:
    """The OSError behind a failed start (uvicorn exits when it cannot bind).

    Searched in exception groups and in what each exception happened
    while handling.
    """
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError):
            return current
        todo.extend(getattr(current, "exceptions", ()))
        todo.extend((current.__cause__, current.__context__))
    return None


def _http_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The HTTP options given, with defaults; None for stdio.

    Raises:
        UsageError: An HTTP option is given with the stdio transport.
    """
    given = {
        name: getattr(args, name)
        for name in (*_HTTP_DEFAULTS, *_HTTP_FLAGS)
        if getattr(args, name) is not None
    }
    if args.transport == "stdio":
        if given:
            flag = "--" + next(iter(given)).replace("_", "-")
            msg = (
                f"argument {flag}: an HTTP option, and the transport is "
                "stdio; add --transport http"
            )
            raise UsageError(msg)
        return None
    return {**_HTTP_DEFAULTS, **given}
