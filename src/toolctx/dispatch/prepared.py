"""A call checked and ready for its body to run, and its one constructor.

:meth:`Core.prepare <toolctx.dispatch.core.Core.prepare>` makes one per
call that can run; the shells of :mod:`toolctx.dispatch.run`, the streams
and the remote worker run its body, and :meth:`Core.finish
<toolctx.dispatch.core.Core.finish>` turns the outcome into the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final


if TYPE_CHECKING:
    from toolctx._records import ToolCall
    from toolctx.context.execution import ExecutionContext
    from toolctx.tools.function import ToolEntry


@final
class Prepared:
    """One call, checked and ready for its body to run.

    Attributes:
        call: The model's call.
        ctx: The call's context, as the interceptors left it.
        entry: The tool's call plan.
        args: What to call the body with: keyword arguments (context
            parameters included) for a function tool, else the decoded
            arguments mapping.
        decoded: The decoded arguments (what a remote worker receives).
        ran: How many interceptors' ``before`` ran.
        start: ``perf_counter_ns()`` when the dispatch began.
    """

    __slots__ = ("args", "call", "ctx", "decoded", "entry", "ran", "start")

    call: ToolCall
    ctx: ExecutionContext
    entry: ToolEntry
    args: dict[str, Any]
    decoded: dict[str, Any]
    ran: int
    start: int


def prepared(  # noqa: PLR0917 - built in one place, on every call
    call: ToolCall,
    ctx: ExecutionContext,
    entry: ToolEntry,
    args: dict[str, Any],
    decoded: dict[str, Any],
    ran: int,
    start: int,
) -> Prepared:
    """A :class:`Prepared` call, built without an ``__init__`` frame.

    ``object.__new__`` and plain slot stores cost half of a class call
    with an ``__init__`` (this runs on every dispatch).
    """
    p = _new(Prepared)
    p.call = call
    p.ctx = ctx
    p.entry = entry
    p.args = args
    p.decoded = decoded
    p.ran = ran
    p.start = start
    return p


_new = object.__new__
