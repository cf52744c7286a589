"""What building one per-call record costs, old way against new, one run.

Run: ``python benchmarks/construction.py`` (add ``--quick`` for a smoke
run). Every dispatched call builds one ``ExecutionContext``
(``derive_call_context``) and one ``ToolResult`` (``new_result``). For
each, one run times:

- the class's own way: ``attrs.evolve(template, ...)`` for the context,
  ``ToolResult(...)`` for the result;
- slot stores: ``object.__new__`` and one slot descriptor ``__set__`` per
  field, what both functions did before #11 and what they still do on
  free-threaded builds (``builders(fn).slots``);
- plain stores: the fast builder, plain attribute stores into a private
  subclass, then ``__class__`` assignment (``builders(fn).fast``; what
  dispatch uses on GIL builds).

Ratios are to slot stores in the same run; report them, not the ns.
Every case is checked first: it must build a record equal to the class's
own, of the class's own type.
"""

from __future__ import annotations

import platform
import sys

from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).parent))

import attrs

import toolctx

from _harness import Case, measure, table
from toolctx import ExecutionContext, ToolResult
from toolctx._builders import builders
from toolctx._context.execution import CallRecorder, derive_call_context
from toolctx._frozen import freeze_mapping
from toolctx._records import new_result


TEMPLATE = ExecutionContext(
    session_id="chat-1",
    turn=3,
    user_id="ada",
    agent_id="planner",
    metadata={"channel": "web"},
    state={"count": 2},
    values={"region": "eu"},
    scope=object(),
)
RECORDER = CallRecorder()
CONTEXT_ARGS = (TEMPLATE, "inv-1", "delete_file", "call-1", None, RECORDER)
RESULT_ARGS = (
    "delete_file",
    "call-1",
    "inv-1",
    "deleted /home/ada/x",
    False,
    None,
    None,
    freeze_mapping({"rows": 3}, "ToolResult.metadata"),
    freeze_mapping({}, "ToolResult.state_changes"),
    1234,
)
RESULT_FIELDS = dict(
    zip((f.name for f in attrs.fields(ToolResult)), RESULT_ARGS, strict=True)
)


def evolve_context() -> ExecutionContext:
    template, invocation_id, name, call_id, parent, recorder = CONTEXT_ARGS
    return attrs.evolve(
        template,
        invocation_id=invocation_id,
        tool_name=name,
        tool_call_id=call_id,
        parent_invocation_id=parent,
        _recorder=recorder,
    )


def construct_result() -> ToolResult:
    return ToolResult(**RESULT_FIELDS)


def cases() -> tuple[list[Case], list[tuple[str, str, str]]]:
    """The timed cases and (record, label, case name) rows to print."""
    context = builders(derive_call_context)
    result = builders(new_result)
    timed: list[tuple[str, str, Any, Any]] = [
        ("ExecutionContext", "attrs.evolve", evolve_context, None),
        ("ExecutionContext", "slot stores", context.slots, CONTEXT_ARGS),
        ("ExecutionContext", "plain stores", context.fast, CONTEXT_ARGS),
        ("ToolResult", "ToolResult(...)", construct_result, None),
        ("ToolResult", "slot stores", result.slots, RESULT_ARGS),
        ("ToolResult", "plain stores", result.fast, RESULT_ARGS),
    ]
    expected = {
        "ExecutionContext": evolve_context(),
        "ToolResult": construct_result(),
    }
    out: list[Case] = []
    rows: list[tuple[str, str, str]] = []
    for record, label, fn, args in timed:
        if fn is None:
            print(f"{record} {label}: not available here (free-threaded)")
            continue
        name = f"{record} {label}"
        call = fn if args is None else (lambda fn=fn, args=args: fn(*args))
        built = call()
        if type(built) is not type(expected[record]) or (
            built != expected[record]
        ):
            sys.exit(f"{name} built {built!r}, not {expected[record]!r}")
        out.append(Case(name, call))
        rows.append((record, label, name))
    return out, rows


def main() -> None:
    quick = "--quick" in sys.argv
    number, rounds = (500, 2) if quick else (50_000, 9)
    timed, rows = cases()
    ns = measure(timed, number=number, rounds=rounds)
    fast = derive_call_context is builders(derive_call_context).fast
    print(
        f"toolctx {toolctx.__version__}, CPython {platform.python_version()},"
        f" {platform.machine()}, best of {rounds} rounds x {number} calls;"
        f" dispatch uses {'plain' if fast else 'slot'} stores\n"
    )
    print(
        table(
            [
                (
                    f"{record}: {label}",
                    ns[name],
                    "slot stores",
                    ns[f"{record} slot stores"],
                )
                for record, label, name in rows
            ]
        )
    )


if __name__ == "__main__":
    main()
