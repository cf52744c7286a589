"""The fast path of ``Dispatcher.dispatch``: the common call, inlined.

Most calls are a typed ``@tool`` function (sync, or async without a
timeout), JSON text arguments that
form one flat ASCII object, and a dispatcher without interceptors or an
executor. Such a call is handled here in one function: fewer Python calls,
the argument text parsed by the plain C scanner, and the result built with
slot stores. Anything else — nested or non-ASCII arguments, escapes, a
possible duplicate key, a non-finite number, any failure — is handed to
the general path (``_calls``), which produces the same results and errors.
"""

from __future__ import annotations

import json
import json.scanner

from typing import TYPE_CHECKING, Any

from toolctx import _calls
from toolctx._arguments import (
    _NO_TYPES,
    ArgumentStructurer,
    unstructure_output,
)
from toolctx._calls import Failure
from toolctx._context import (
    ExecutionContext,
)
from toolctx._current import reset_current, set_current
from toolctx._records import ToolCall, ToolResult
from toolctx._registry import ToolEntry
from toolctx._tool import FunctionTool
from toolctx._types.output import MAX_INT_DIGITS


if TYPE_CHECKING:
    from toolctx._dispatch import Dispatcher

# toolctx._diagnostics swaps set_current/reset_current in this module while
# lost-context diagnostics are on: bind call contexts only through them.

_plain_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def flat_kwargs(  # noqa: C901 - one pass over the values, on purpose
    raw: str, max_size: int, structurer: ArgumentStructurer
) -> dict[str, Any] | None:
    """Parse *raw* into ready keyword arguments if it is plain; else None.

    Plain means: within the size limit, ASCII without escapes, one flat
    JSON object whose every key is seen exactly once (the text holds as
    many ``:`` as the object has keys, so no key was dropped as a
    duplicate), and whose values are finite scalars that already have a
    type their parameter takes unchanged, with every required parameter
    present. Anything else returns None and takes the general path.
    """
    if (
        len(raw) > max_size
        or len(raw) > MAX_INT_DIGITS  # may hold an over-long number
        or not raw.isascii()
        or "\\" in raw
    ):
        return None
    try:
        data, end = _plain_scan(raw, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != len(raw) or type(data) is not dict:
        return None
    # Every member of an object has a colon outside strings, and strings
    # may hold more: as many colons as keys proves no key came twice
    # (whatever whitespace surrounds them).
    if raw.count(":") != len(data):
        return None
    fast_get = structurer._fast_get  # noqa: SLF001
    for name, value in data.items():
        kind = type(value)
        if kind is dict or kind is list:
            return None
        if kind is float and value - value != 0:
            return None
        if kind not in fast_get(name, _NO_TYPES):
            literals = structurer._fast_literals.get(name)  # noqa: SLF001
            if literals is None or kind is not str or value not in literals:
                return None
    if len(data) == structurer._count or structurer._required <= data.keys():  # noqa: SLF001
        return data
    return None


def _kwargs(
    dispatcher: Dispatcher,
    call: ToolCall,
    entry: ToolEntry,
    ft: FunctionTool[Any, Any],
    ctx: ExecutionContext,
) -> dict[str, Any]:
    """Decode and validate; raise :class:`Failure` for bad arguments."""
    raw = call.arguments
    structurer = ft._structurer  # noqa: SLF001
    kwargs = (
        flat_kwargs(raw, dispatcher._limits.max_size, structurer)  # noqa: SLF001
        if type(raw) is str
        else None
    )
    if kwargs is None:
        args = _calls.decode_arguments(call, entry, dispatcher._limits)  # noqa: SLF001
        kwargs = _calls.structure(call, ft, args)
    for name in ft.context_parameters:
        kwargs[name] = ctx
    return kwargs


def dispatch_flat(  # noqa: PLR0917 - hot path, positional on purpose
    dispatcher: Dispatcher,
    call: ToolCall,
    template: ExecutionContext,
    bound: ExecutionContext | None,
    start: int,
    entry: ToolEntry,
) -> ToolResult:
    """Run a sync function tool without interceptors; see module docs."""
    ft = entry.function_tool
    assert ft is not None  # noqa: S101 - the caller checked
    ctx = _calls.call_context(call, template, bound)
    try:
        kwargs = _kwargs(dispatcher, call, entry, ft, ctx)
        token = set_current(ctx)
        try:
            output = unstructure_output(ft.fn(**kwargs))
        except BaseException as exc:  # noqa: BLE001 - _failure re-raises
            raise dispatcher._failure(call, exc) from None  # noqa: SLF001
        finally:
            reset_current(token)
    except Failure as failure:
        return _calls.error_result(call, ctx, failure, start)
    return _calls.ok_result(call, ctx, output, start)


async def adispatch_flat(  # noqa: PLR0917 - hot path, positional on purpose
    dispatcher: Dispatcher,
    call: ToolCall,
    template: ExecutionContext,
    bound: ExecutionContext | None,
    start: int,
    entry: ToolEntry,
) -> ToolResult:
    """Run an async function tool (no timeout, no interceptors) inline."""
    ft = entry.function_tool
    assert ft is not None  # noqa: S101 - the caller checked
    ctx = _calls.call_context(call, template, bound)
    try:
        kwargs = _kwargs(dispatcher, call, entry, ft, ctx)
        token = set_current(ctx)
        try:
            output = unstructure_output(
                await _calls.await_tool(ft.fn(**kwargs))
            )
        except BaseException as exc:  # noqa: BLE001 - _failure re-raises
            raise dispatcher._failure(call, exc, awaited=True) from None  # noqa: SLF001
        finally:
            reset_current(token)
    except Failure as failure:
        return _calls.error_result(call, ctx, failure, start)
    return _calls.ok_result(call, ctx, output, start)
