"""Every public dispatch path keeps the same promises (issue 9).

The same tool call must give the same result whichever way the host sends
it: ``dispatch``, ``adispatch``, ``dispatch_all``, ``adispatch_all``,
``stream`` or ``astream``; without interceptors (the fast paths) or with a
pass-through one; for a tool marked ``@tool(inline=True)`` or one that runs
in a worker thread; with a :class:`Session` or an
:class:`ExecutionContext` as the template; in this process or in a spawned
worker process (``Dispatcher(executor=...)``).

Each *run* sends one batch of three calls through one path: a control
call, the call under test, another control call, so that a batch path
that loses its siblings' results shows too. The runs of one example run
at once, each sync path in a thread of its own and the async paths as
tasks on one event loop in another thread, under one hard time limit: a
hung path is a failure, not a stuck CI, and an example waits for at most
one limit. The runs must agree on every result's ``is_error``,
``output``, ``error``, ``metadata`` and ``state_changes``; no path may
raise for a tool-level failure or leave a context bound; a stream's
chunks must be its output; a session's state must be the successful
calls' changes, applied in order.

Deliberate differences, left out of the comparison (docs/concurrency.md
should list them):

* ``invocation_id`` and ``duration_ns``: fresh or measured per call;
* ``exception``: host-only; through an executor it is the original only
  when it pickles, else None (docs/scale-out.md);
* ``ToolChunk``s through an executor: a remote stream arrives whole, as
  its result only (docs/scale-out.md);
* the ``output`` of a streamed call's error result: the chunks the
  consumer already got (None if none), where ``dispatch`` has None
  (docs/concurrency.md); it is checked against the stream's chunks;
* what a tool sees of ``prior_results`` and of the session state set by
  earlier calls of the batch: ``dispatch_all`` runs the calls in turn,
  ``adispatch_all`` at once (docs/concurrency.md), so the tools here do
  not report them.

The tools' outputs and published values are JSON data, which is what
crosses a process boundary unchanged (a tuple comes back from a worker
as a list, docs/scale-out.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import enum
import json
import multiprocessing
import pathlib
import subprocess
import sys
import threading
import time
import uuid

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import paths_tools as pt

from doubles import PassThrough
from strategies import (
    DEFAULT,
    JSON_VALUES,
    MUTATIONS,
    Signature,
    from_schema,
    mutate,
    parameter_list,
    signatures,
)
from toolctx import (
    Dispatcher,
    ExecutionContext,
    Registry,
    Session,
    ToolCall,
    ToolChunk,
    ToolResult,
    current_context,
    tool,
)


GUARD = 10.0
"""Seconds one run may take before it counts as hung."""
GUARD_AFTER_A_HANG = 2.0
"""The limit once a run has hung in this process.

The test has failed by then; a shorter limit keeps Hypothesis's shrinking
of a hanging example from taking minutes. A passing run never sees it.
"""
_hangs: list[str] = []

SLOW = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
]

METHODS = (
    "dispatch",
    "adispatch",
    "dispatch_all",
    "adispatch_all",
    "stream",
    "astream",
)
ASYNC_METHODS = frozenset({"adispatch", "adispatch_all", "astream"})
STREAM_METHODS = frozenset({"stream", "astream"})


# -- paths --------------------------------------------------------------------


@attrs.frozen
class Path:
    """One way of sending calls to a tool.

    Attributes:
        method: The Dispatcher method.
        interceptor: Whether a pass-through interceptor is installed
            (which also turns the fast paths off).
        template: ``"session"`` or ``"context"``: what the host passes.
        inline: Whether the tool is the ``@tool(inline=True)`` variant.
        remote: Whether the tool runs in a spawned worker process.
    """

    method: str
    interceptor: bool
    template: str
    inline: bool
    remote: bool = False

    def __str__(self) -> str:
        return "+".join(
            [
                self.method,
                "interceptor" if self.interceptor else "bare",
                self.template,
                "inline" if self.inline else "thread",
                *(["pool"] if self.remote else []),
            ]
        )


LOCAL_PATHS = tuple(
    Path(method, interceptor, template, inline)
    for method in METHODS
    for interceptor in (False, True)
    for template in ("context", "session")
    for inline in (False, True)
)
"""Every in-process path: 6 methods x interceptor x template x inline."""

REMOTE_PATHS = tuple(
    Path(method, interceptor, template, inline=False, remote=True)
    for method in METHODS
    for interceptor, template in ((False, "context"), (True, "session"))
)
"""Every method through the process pool (``inline`` does not apply);
interceptors and templates run in this process whatever the executor, so
two of their combinations suffice there."""


def _template(kind: str) -> ExecutionContext | Session:
    """A fresh host template; both kinds give the tool the same view."""
    fields: dict[str, Any] = {
        "user_id": "ada",
        "turn": 2,
        "agent_id": "planner",
        "metadata": {"channel": "paths"},
        "state": {"seed": 7},
    }
    if kind == "session":
        return Session("s-paths", **fields)
    return ExecutionContext(session_id="s-paths", **fields)


BEFORE = ToolCall("control", '{"tag":"before"}', "call-before")
AFTER = ToolCall("control", '{"tag":"after"}', "call-after")


# -- what a run saw -----------------------------------------------------------


def canon(value: object) -> object:
    """*value* as a hashable tree that tells every JSON type apart.

    ``1``, ``1.0`` and ``True`` differ; NaN equals NaN; ints too long to
    print are summarised (``repr`` of one raises past 4,300 digits).
    """
    cls = type(value)
    if cls is float:
        return ("float", repr(value))
    if cls is int:
        bits = value.bit_length()  # type: ignore[attr-defined]
        return ("int", value if bits <= 1000 else f"<{bits}-bit int>")
    if value is None or cls in {str, bool, bytes}:
        return (cls.__name__, value)
    if isinstance(value, (list, tuple)):
        return (cls.__name__, tuple(map(canon, value)))
    if isinstance(value, Mapping):
        return (
            "mapping",
            tuple((canon(k), canon(v)) for k, v in value.items()),
        )
    return ("object", cls.__qualname__)


def summary(result: ToolResult, *, streamed: bool = False) -> tuple[Any, ...]:
    """The fields every path must agree on (see the module docstring).

    Deliberate difference: the error result of a *streamed* call holds the
    chunks its consumer already got, where ``dispatch`` (which hands
    nothing over before the end) has None (docs/concurrency.md); so a
    streamed error's output is left out here and checked against the
    stream's own chunks instead (``_check_stream``).
    """
    hidden = streamed and result.is_error
    return (
        result.name,
        result.call_id,
        result.is_error,
        canon(None if hidden else result.output),
        result.error,
        canon(dict(result.metadata)),
        canon(dict(result.state_changes)),
    )


def plain(tree: object) -> str:
    """A canonical tree written back as Python-like text (types kept)."""
    if not isinstance(tree, tuple) or len(tree) != 2:
        return repr(tree)
    kind, value = tree
    if kind in {"int", "float"}:
        return str(value)
    if kind == "mapping":
        items = ", ".join(f"{plain(k)}: {plain(v)}" for k, v in value)
        return "{" + items + "}"
    if kind in {"list", "tuple"}:
        inner = ", ".join(map(plain, value))
        return f"[{inner}]" if kind == "list" else f"({inner})"
    if kind == "object":
        return f"<{value} object>"
    return repr(value)


def clip(text: str, limit: int = 300) -> str:
    """*text*, cut to at most *limit* characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(item: object, limit: int = 300) -> str:
    """A bounded ``repr``."""
    return clip(repr(item), limit)


def describe_exception(exc: BaseException) -> str:
    """``Type: message``, even when the message cannot be built."""
    try:
        text = str(exc)
    except Exception as err:
        text = f"<str() raised {type(err).__name__}>"
    return f"{type(exc).__name__}: {text[:200]}"


class Run:
    """One path's run of a batch.

    Attributes:
        path: The path.
        results: The results it returned, or None.
        raised: What escaped the dispatcher (or that it hung), if anything.
        problems: Broken promises other than the results' fields.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results: list[ToolResult] | None = None
        self.raised: str | None = None
        self.problems: list[str] = []
        self.done = False

    def check_unbound(self, where: str) -> None:
        """Nothing may stay bound where the host called the dispatcher."""
        bound = current_context()
        if bound is not None:
            self.problems.append(
                f"a context stays bound in the {where} afterwards: "
                f"{bound.tool_name!r}"
            )

    def outcome(self) -> Any:
        """What the caller saw, canonical: the results or the exception."""
        if self.results is None:
            return ("raised", self.raised or "hung: no result in time")
        streamed = self.path.method in STREAM_METHODS
        return tuple(summary(r, streamed=streamed) for r in self.results)


def _guard() -> float:
    return GUARD_AFTER_A_HANG if _hangs else GUARD


class HungError(Exception):
    """A call did not finish within the time limit."""


async def _bounded(work: Any, run: Run) -> Any:
    """Await *work* under the time limit, then check nothing is bound."""
    limit = _guard()
    try:
        value = await asyncio.wait_for(work, limit)
    except asyncio.TimeoutError:
        _hangs.append(str(run.path))
        msg = f"hung: no result within {limit:g} seconds"
        raise HungError(msg) from None
    run.check_unbound("task")
    return value


def _check_stream(
    run: Run,
    items: Sequence[object],
    streaming: bool,
) -> ToolResult:
    """Check one stream's items and return its final result."""
    if not items or not isinstance(items[-1], ToolResult):
        msg = f"the stream did not end with a ToolResult: {items!r:.200}"
        raise AssertionError(msg)
    *chunks, result = items
    if not all(isinstance(c, ToolChunk) for c in chunks):
        run.problems.append("a stream item before the result is no chunk")
        return result
    typed: list[ToolChunk] = chunks  # type: ignore[assignment]
    if [c.index for c in typed] != list(range(len(typed))):
        run.problems.append("chunk indexes are not 0, 1, 2...")
    if any(c.invocation_id != result.invocation_id for c in typed):
        run.problems.append("a chunk names another invocation")
    data = [c.data for c in typed]
    if run.path.remote or not streaming:
        # Deliberate: a stream through an executor arrives whole, as one
        # result (docs/scale-out.md); a tool that is no generator streams
        # just its result (docs/concurrency.md).
        if typed:
            run.problems.append(f"{len(typed)} chunks from a non-stream")
    else:
        # The result holds the chunks the consumer got: all of them, or on
        # error those before the failure, None if there were none.
        expected = data if data or not result.is_error else None
        if canon(expected) != canon(result.output):
            run.problems.append(
                f"the output {clip(plain(canon(result.output)))} is not "
                f"the chunks the consumer got, {clip(plain(canon(expected)))}"
            )
    return result


@attrs.define
class Batch:
    """The calls of one example and the dispatchers that send them."""

    calls: list[ToolCall]
    dispatchers: dict[tuple[bool, bool, bool], Dispatcher]
    streaming: str | None

    def dispatcher(self, path: Path) -> Dispatcher:
        """The dispatcher for *path*."""
        return self.dispatchers[path.inline, path.interceptor, path.remote]

    def run_sync(self, run: Run) -> None:
        """Run a sync path in this thread; record what happened."""
        try:
            run.results = self._sync(run)
        except BaseException as exc:
            run.raised = "raised " + describe_exception(exc)
        run.check_unbound("thread")
        run.done = True

    def _sync(self, run: Run) -> list[ToolResult]:
        dispatcher = self.dispatcher(run.path)
        template = _template(run.path.template)
        method = run.path.method
        if method == "dispatch":
            results = [dispatcher.dispatch(c, template) for c in self.calls]
        elif method == "dispatch_all":
            results = dispatcher.dispatch_all(self.calls, template)
        else:
            results = []
            for c in self.calls:
                # contextlib.closing is how docs/concurrency.md says to
                # stop a stream early; it must work for every tool.
                with contextlib.closing(dispatcher.stream(c, template)) as s:
                    items = list(s)
                results.append(
                    _check_stream(run, items, c.name == self.streaming)
                )
        _check_session(run, template, results)
        return results

    async def run_async(self, run: Run) -> None:
        """Run an async path in the running loop; record what happened."""
        try:
            run.results = await self._async(run)
        except HungError as exc:
            run.raised = str(exc)
        except BaseException as exc:
            run.raised = "raised " + describe_exception(exc)
        run.check_unbound("task")
        run.done = True

    async def _async(self, run: Run) -> list[ToolResult]:
        dispatcher = self.dispatcher(run.path)
        template = _template(run.path.template)
        method = run.path.method
        if method == "adispatch_all":
            work = dispatcher.adispatch_all(self.calls, template)
            results = list(await _bounded(work, run))
        else:
            results = []
            for c in self.calls:
                if method == "adispatch":
                    got = await _bounded(
                        dispatcher.adispatch(c, template), run
                    )
                else:
                    items = await _bounded(
                        _consume(dispatcher, c, template), run
                    )
                    got = _check_stream(run, items, c.name == self.streaming)
                results.append(got)
        _check_session(run, template, results)
        return results

    def run_async_group(self, runs: list[Run]) -> None:
        """Run async paths concurrently on one event loop (this thread's).

        An exception that escapes a task of the dispatcher's own (SystemExit
        out of a gathered task) stops the whole loop, and the loop then
        cancels every other run; so all of them run again, each on a loop
        of its own, which pins what stopped the loop on the path that
        raised it.
        """

        async def together() -> None:
            await asyncio.gather(*map(self.run_async, runs))

        try:
            asyncio.run(together())
        except BaseException:
            for run in runs:
                run.results, run.raised, run.problems = None, None, []
                try:
                    asyncio.run(self.run_async(run))
                except BaseException as exc:
                    run.results = None
                    run.raised = (
                        f"raised {describe_exception(exc)}, which stopped "
                        "the event loop"
                    )
                    run.done = True


async def _consume(
    dispatcher: Dispatcher, call: ToolCall, template: Any
) -> list[object]:
    stream = dispatcher.astream(call, template)
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        return [item async for item in stream]


def _check_session(
    run: Run, template: object, results: list[ToolResult]
) -> None:
    """A session holds the batch's results and their changes, in order."""
    if not isinstance(template, Session):
        return
    if list(map(summary, template.results)) != list(map(summary, results)):
        run.problems.append("the session's results are not the results")
    expected: dict[str, object] = {"seed": 7}
    for r in results:
        if not r.is_error:
            expected.update(r.state_changes)
    if canon(template.state) != canon(expected):
        run.problems.append(
            f"session state {clip(plain(canon(template.state)))} is not "
            f"the successful calls' changes {clip(plain(canon(expected)))}"
        )


# -- running every path -------------------------------------------------------


@attrs.frozen
class Subject:
    """The tool under test: one per ``inline`` value, same name.

    Attributes:
        tools: ``{inline: tool}``.
        streaming: Whether it is a generator tool (its stream has chunks).
        inline_applies: Whether ``@tool(inline=True)`` changes how the
            tool runs (sync function tools only); if not, the inline
            variants are skipped.
        label: How the failure report names it.
    """

    tools: Mapping[bool, Any]
    streaming: bool
    inline_applies: bool
    label: str

    @property
    def name(self) -> str:
        """The tool's registered name."""
        return str(self.tools[False].definition().name)


def fixed_subject(kind: str, with_ctx: bool, behaviour: str) -> Subject:
    """A tool from tests/paths_tools.py (importable by worker processes)."""
    tools = {
        i: pt.tool_for(kind, with_ctx, behaviour, i) for i in (False, True)
    }
    name = pt.tool_name(kind, with_ctx and kind != "plain", behaviour)
    return Subject(
        tools,
        streaming=kind in {"gen", "agen"},
        inline_applies=kind == "sync",
        label=f"paths_tools.{name}",
    )


def run_paths(
    subject: Subject,
    call: ToolCall,
    paths: Sequence[Path],
    pool: concurrent.futures.Executor | None = None,
) -> list[Run]:
    """Send ``[BEFORE, call, AFTER]`` through every path, all at once.

    Each sync path runs in a thread of its own, the async paths together
    on one event loop in another thread; one time limit covers them all.
    """
    batch = Batch(
        [BEFORE, call, AFTER],
        {},
        subject.name if subject.streaming else None,
    )
    runs = [Run(p) for p in paths if subject.inline_applies or not p.inline]
    for run in runs:
        p = run.path
        key = (p.inline, p.interceptor, p.remote)
        if key not in batch.dispatchers:
            batch.dispatchers[key] = Dispatcher(
                Registry([subject.tools[p.inline], pt.control]),
                interceptors=[PassThrough()] if p.interceptor else [],
                executor=pool if p.remote else None,
            )
    async_runs = [r for r in runs if r.path.method in ASYNC_METHODS]
    threads = [
        threading.Thread(target=batch.run_sync, args=(r,), daemon=True)
        for r in runs
        if r.path.method not in ASYNC_METHODS
    ]
    threads.append(
        threading.Thread(
            target=batch.run_async_group, args=(async_runs,), daemon=True
        )
    )
    deadline = time.monotonic() + _guard() + 5.0
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for run in runs:
        if not run.done:
            _hangs.append(str(run.path))
    return runs


def _describe_outcome(outcome: Any, shown: Sequence[int]) -> list[str]:
    """The results *shown* (by index in the batch) of one outcome."""
    if outcome[0] == "raised":
        return [f"    {outcome[1]}"]
    lines = []
    for i in shown:
        _, call_id, is_error, output, error, metadata, changes = outcome[i]
        lines.append(
            f"    {call_id}: is_error={is_error}, "
            f"output={clip(plain(output), 400)}, error={show(error, 400)}, "
            f"metadata={clip(plain(metadata))}, "
            f"state_changes={clip(plain(changes))}"
        )
    return lines


def _compact(paths: Sequence[Path], every: Mapping[str, int]) -> str:
    """Path names, a method written once when all its variants agree."""
    by_method: dict[str, list[str]] = {}
    for p in paths:
        method, _, variant = str(p).partition("+")
        if p.remote:
            method, variant = f"{method}+pool", variant.removesuffix("+pool")
        by_method.setdefault(method, []).append(variant)
    out = []
    for method, variants in by_method.items():
        if len(variants) == every[method] > 1:
            out.append(f"{method} (all {len(variants)})")
        else:
            out.extend(f"{method}+{v}" for v in variants)
    return ", ".join(out)


def report(subject: Subject, call: ToolCall, runs: Sequence[Run]) -> str:
    """What went wrong, for the failure message (bounded)."""
    groups: dict[Any, list[Path]] = {}
    every: dict[str, int] = {}
    for run in runs:
        groups.setdefault(run.outcome(), []).append(run.path)
        method = run.path.method + ("+pool" if run.path.remote else "")
        every[method] = every.get(method, 0) + 1
    lines = [
        f"tool: {subject.label}",
        f"arguments: {clip(plain(canon(call.arguments)), 200)}",
    ]
    if len(groups) > 1:
        returned = [o for o in groups if o[0] != "raised"]
        # Show the calls whose results differ (the one under test if
        # only exceptions differ).
        shown = [i for i in range(3) if len({o[i] for o in returned}) > 1]
        shown = shown or [1]
        lines.append(f"{len(groups)} different outcomes:")
        for outcome, paths in groups.items():
            lines.append(
                f"  from {len(paths)} paths: {_compact(paths, every)}"
            )
            lines.extend(_describe_outcome(outcome, shown))
    for run in runs:
        lines.extend(f"  {run.path}: {p}" for p in run.problems)
    if len(groups) == 1:
        for run in runs:
            if run.results is None:
                lines.append(f"  {run.path}: {run.outcome()[1]}")
    return "\n".join(lines)


def assert_paths_agree(
    subject: Subject,
    call: ToolCall,
    paths: Sequence[Path] = LOCAL_PATHS,
    pool: concurrent.futures.Executor | None = None,
) -> list[ToolResult]:
    """Every path returns the same results and keeps every promise."""
    runs = run_paths(subject, call, paths, pool)
    outcomes = {run.outcome() for run in runs}
    broken = any(run.results is None or run.problems for run in runs)
    if len(outcomes) > 1 or broken:
        pytest.fail(report(subject, call, runs), pytrace=False)
    assert runs[0].results is not None
    return runs[0].results


# -- the hostile cases, listed ------------------------------------------------


def _nested(depth: int) -> str:
    """``data`` nested *depth* arrays deep (the arguments object is 1)."""
    return '{"n":3,"data":' + "[" * depth + "]" * depth + "}"


def _nested_list(depth: int) -> list[Any]:
    """A list nested *depth* deep."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


HOSTILE_ARGUMENTS: dict[str, object] = {
    "valid": '{"n":3}',
    "valid_every_key": '{"n":3,"text":"hi","x":1.5,"data":[1,{"a":null}]}',
    "valid_spaced": '{ "n" : 3 , "text" : "hi" }',
    "valid_surrounding_whitespace": ' \n{"n":3}\t ',
    "int_for_float": '{"n":3,"x":2}',
    "integral_float_for_int": '{"n":3.0}',
    "escaped_text": '{"n":3,"text":"a\\"b\\u00e9"}',
    "non_ascii_text": '{"n":3,"text":"\u00e9t\u00e9 \u2603"}',
    "surrogate_pair_escape": '{"n":3,"text":"\\ud83d\\ude00"}',
    "colon_in_text": '{"n":3,"text":":\\":"}',
    "string_for_int": '{"n":"3"}',
    "bool_for_int": '{"n":true}',
    "fraction_for_int": '{"n":1.5}',
    "null_for_int": '{"n":null}',
    "int_for_str": '{"n":3,"text":5}',
    "unknown_key": '{"n":3,"extra":1}',
    "only_unknown_keys": '{"m":1,"o":2}',
    "missing_key": "{}",
    "missing_key_other_given": '{"text":"a"}',
    "duplicate_key": '{"n":1,"n":2}',
    "duplicate_key_space_before_colon": '{"n":1,"n" :5000}',
    "duplicate_key_newline_before_colon": '{"n":1,"n"\n:5000}',
    "duplicate_key_spaced": '{"n" : 1 , "n" : 2}',
    "duplicate_optional_key": '{"n":1,"text":"a","text" :"b"}',
    "duplicate_key_nested": '{"n":1,"data":{"a":1,"a" :2}}',
    "bad_json_truncated": '{"n":',
    "bad_json_trailing_text": '{"n":3}x',
    "bad_json_single_quotes": "{'n': 3}",
    "bad_json_trailing_comma": '{"n":3,}',
    "json_array": "[1]",
    "json_string": '"n"',
    "json_number": "3",
    "json_null": "null",
    "empty_text": "",
    "blank_text": "   ",
    "lone_surrogate_escape": '{"n":3,"text":"\\ud800"}',
    "lone_low_surrogate_escape": '{"n":3,"text":"x\\udfff"}',
    "lone_surrogate_escape_in_key": '{"n":3,"\\ud800":1}',
    "lone_surrogate_escape_nested": '{"n":3,"data":["\\ud800"]}',
    "lone_surrogate_character": '{"n":3,"text":"\ud800"}',
    "int_of_5000_digits": '{"n":' + "9" * 5000 + "}",
    "int_of_4000_digits": '{"n":' + "9" * 4000 + "}",
    "int_of_5000_digits_in_data": '{"n":3,"data":' + "7" * 5000 + "}",
    "nan": '{"n":3,"x":NaN}',
    "infinity": '{"n":3,"x":Infinity}',
    "minus_infinity": '{"n":3,"x":-Infinity}',
    "nan_for_int": '{"n":NaN}',
    "float_overflow": '{"n":3,"x":1e999}',
    "nan_in_data": '{"n":3,"data":[NaN]}',
    "nested_at_the_limit": _nested(63),
    "nested_past_the_limit": _nested(64),
    "nested_100000_deep": "[" * 100_000,
    "too_large": '{"n":3,"text":"' + "a" * 1_000_000 + '"}',
    "bytes": b'{"n":3}',
    "bytes_duplicate_key": b'{"n":1,"n" :2}',
    "bytes_invalid_utf8": b'{"n":3,"text":"\xff"}',
    "mapping": {"n": 3},
    "mapping_bool_for_int": {"n": True},
    "mapping_nan": {"n": 3, "x": float("nan")},
    "mapping_infinity": {"n": 3, "x": float("inf")},
    "mapping_lone_surrogate": {"n": 3, "text": "\ud800"},
    "mapping_int_of_5000_digits": {"n": 10**5000},
    "mapping_non_string_key": {"n": 3, 1: 2},
    "mapping_tuple_data": {"n": 3, "data": (1, 2)},
    "mapping_nested_too_deep": {"n": 3, "data": _nested_list(100)},
    "none": None,
}
"""Argument payloads a model (or a provider's decoded JSON) can send."""


CALL_ID = "call-under-test"
VALID = '{"n":3,"text":"hi"}'
ARGUMENT_TOOLS = [
    ("sync", False),
    ("sync", True),
    ("async", True),
    ("gen", False),
    ("agen", True),
    ("plain", False),
]
"""Tool kinds the hostile arguments are sent to (argument handling does
not depend on the tool's behaviour)."""
ALL_TOOLS = [
    *((kind, ctx) for kind in pt.FUNCTION_KINDS for ctx in (False, True)),
    ("plain", False),
]


def _ids(kind: str, with_ctx: bool) -> str:
    return f"{kind}{'_ctx' if with_ctx else ''}"


def _check_controls(results: list[ToolResult]) -> None:
    """The calls around the one under test succeed whatever it did."""
    for r in (results[0], results[2]):
        assert not r.is_error, r.error
        assert r.output == {
            "tag": r.call_id.removeprefix("call-"),
            "user": "ada",
        }


@pytest.mark.parametrize(
    ("kind", "with_ctx"),
    ARGUMENT_TOOLS,
    ids=[_ids(*t) for t in ARGUMENT_TOOLS],
)
@pytest.mark.parametrize("case", list(HOSTILE_ARGUMENTS))
def test_hostile_arguments_agree(case: str, kind: str, with_ctx: bool) -> None:
    """Each hostile argument payload gets one result, whatever the path.

    Valid, invalid, duplicate-key, malformed, surrogate, huge-number,
    non-finite, deeply nested, oversized, bytes and mapping arguments:
    every path answers alike, none raises or hangs, nothing stays bound.
    """
    subject = fixed_subject(kind, with_ctx, "echo")
    call = ToolCall(subject.name, HOSTILE_ARGUMENTS[case], CALL_ID)
    _check_controls(assert_paths_agree(subject, call))


@pytest.mark.parametrize(
    ("kind", "with_ctx"), ALL_TOOLS, ids=[_ids(*t) for t in ALL_TOOLS]
)
@pytest.mark.parametrize("behaviour", list(pt.BEHAVIOURS))
def test_tool_behaviours_agree(
    behaviour: str, kind: str, with_ctx: bool
) -> None:
    """Whatever a tool does, every path reports it the same way.

    Returning, publishing and setting state, raising ValueError,
    SystemExit, StopIteration, StopAsyncIteration, CancelledError, an
    exception whose ``__str__`` raises, ToolDenied, or returning NaN, an
    infinity, a 5,000-digit int, a lone surrogate or an object with no
    JSON form: one result on every path, never an exception or a hang.
    """
    subject = fixed_subject(kind, with_ctx, behaviour)
    call = ToolCall(subject.name, VALID, CALL_ID)
    _check_controls(assert_paths_agree(subject, call))


@pytest.mark.parametrize(
    "name", ["no_such_tool", "sync_echo\n", "sync_echo ", "x\ud800", ""]
)
def test_unknown_tool_names_agree(name: str) -> None:
    """A name that is not registered is the same error on every path."""
    subject = fixed_subject("sync", False, "echo")
    _check_controls(
        assert_paths_agree(subject, ToolCall(name, VALID, CALL_ID))
    )


# -- generated tools and calls ------------------------------------------------


@attrs.frozen
class Payload:
    """Arguments for a call, with a short label for Hypothesis's report.

    Attributes:
        label: How the arguments were made.
        value: The ``ToolCall.arguments``.
    """

    label: str
    value: object

    def __repr__(self) -> str:
        value = clip(plain(canon(self.value)), 300)
        return f"Payload({self.label}: {value})"


SEPARATORS = [
    (",", ":"),
    (", ", ": "),
    (",", " :"),
    (" , ", " : "),
    (",\n", ":\t"),
]
DUPLICATE_COLONS = [":", " :", "  :", "\n:", "\t:", " : ", ": "]


@st.composite
def encoded(draw: st.DrawFn, instance: object, label: str) -> Payload:
    """*instance* as the model or a provider may send it."""
    form = draw(st.sampled_from(["text", "ascii", "padded", "bytes", "map"]))
    if form == "map":
        return Payload(f"{label}, decoded", instance)
    item, key = draw(st.sampled_from(SEPARATORS))
    text = json.dumps(
        instance, separators=(item, key), ensure_ascii=form == "ascii"
    )
    if form == "padded":
        text = f" \n{text}\t"
    elif form == "bytes":
        return Payload(f"{label}, bytes", text.encode())
    return Payload(f"{label}, text", text)


@st.composite
def duplicated(draw: st.DrawFn, instance: dict[str, Any]) -> Payload:
    """*instance* as JSON text that sends one key twice."""
    key = draw(st.sampled_from(sorted(instance) or ["n"]))
    value = draw(st.just(instance.get(key)) | JSON_VALUES)
    colon = draw(st.sampled_from(DUPLICATE_COLONS))
    again = f"{json.dumps(key)}{colon}{json.dumps(value)}"
    text = json.dumps(instance, separators=(",", ":"))
    if not instance:
        return Payload("duplicate key", "{" + again + "}")
    if draw(st.booleans()):
        return Payload("duplicate key", "{" + again + "," + text[1:])
    return Payload("duplicate key", text[:-1] + "," + again + "}")


HOSTILE_PAYLOADS = st.sampled_from(list(HOSTILE_ARGUMENTS)).map(
    lambda name: Payload(name, HOSTILE_ARGUMENTS[name])
)


@st.composite
def payloads(draw: st.DrawFn, schema: Mapping[str, Any]) -> Payload:
    """Valid, broken, duplicated and hostile arguments for *schema*."""
    way = draw(st.sampled_from(["hostile", "valid", "mutated", "duplicated"]))
    if way == "hostile":
        return draw(HOSTILE_PAYLOADS)
    instance = draw(from_schema(schema))
    if way == "duplicated":
        return draw(duplicated(instance))
    if way == "mutated":
        kind = draw(st.sampled_from(sorted(MUTATIONS)))
        mutations = mutate(kind, schema, instance)
        if mutations:
            chosen = draw(st.sampled_from(mutations))
            return draw(encoded(chosen.instance, f"mutated ({kind})"))
    return draw(encoded(instance, "valid"))


@settings(max_examples=60, deadline=None, suppress_health_check=SLOW)
@given(
    kind=st.sampled_from(pt.KINDS),
    with_ctx=st.booleans(),
    behaviour=st.sampled_from(list(pt.BEHAVIOURS)),
    data=st.data(),
)
def test_every_path_agrees(
    kind: str, with_ctx: bool, behaviour: str, data: st.DataObject
) -> None:
    """Any tool, any arguments: every path gives the same results.

    Tools of every kind, with and without a context parameter, doing any
    behaviour; arguments drawn from the tool's own schema, broken in one
    way, sent with a duplicate key, or hostile; as text, bytes or a
    decoded mapping.
    """
    subject = fixed_subject(kind, with_ctx, behaviour)
    schema = subject.tools[False].definition().parameters
    payload = data.draw(payloads(schema), label="arguments")
    call = ToolCall(subject.name, payload.value, CALL_ID)
    _check_controls(assert_paths_agree(subject, call))


def describe(value: object) -> object:
    """A received argument as JSON that keeps its exact Python type.

    So that a path passing ``1`` where another passes ``1.0`` (or a list
    where another passes a tuple) shows in the tool's output.
    """
    cls = type(value)
    if value is DEFAULT:
        return "<default>"
    if isinstance(value, ExecutionContext) or value is None:
        return value
    if cls in {str, int, float, bool}:
        return value
    if isinstance(value, enum.Enum):
        return [cls.__name__, describe(value.value)]
    if isinstance(value, (dt.date, dt.time)):
        return [cls.__name__, value.isoformat()]
    if isinstance(value, uuid.UUID):
        return [cls.__name__, str(value)]
    if isinstance(value, (list, tuple)):
        return [cls.__name__, [describe(v) for v in value]]
    if isinstance(value, (set, frozenset)):
        return [cls.__name__, sorted((describe(v) for v in value), key=repr)]
    if isinstance(value, dict):
        return [cls.__name__, {k: describe(v) for k, v in value.items()}]
    if attrs.has(cls):
        fields = {
            a.name: describe(getattr(value, a.name)) for a in attrs.fields(cls)
        }
        return [cls.__name__, fields]
    if dataclasses.is_dataclass(value):
        fields = {
            f.name: describe(getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
        return [cls.__name__, fields]
    return [cls.__name__, repr(value)]


def _received(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: describe(v) for k, v in arguments.items()}


_BODIES = {
    "sync": (
        "def {sig} -> Any:\n    return _pt.act(_b, _received(locals()))\n"
    ),
    "async": (
        "async def {sig} -> Any:\n"
        "    return await _pt.aact(_b, _received(locals()))\n"
    ),
    "gen": (
        "def {sig} -> Any:\n"
        "    yield from _pt.chunks(_b, _received(locals()))\n"
    ),
    "agen": (
        "async def {sig} -> Any:\n"
        "    async for _item in _pt.achunks(_b, _received(locals())):\n"
        "        yield _item\n"
    ),
}


def generated_function(
    signature: Signature, kind: str, behaviour: str
) -> Callable[..., Any]:
    """A function of *kind* with *signature* whose body does *behaviour*.

    Parameters are laid out by ``strategies.parameter_list``, as for
    ``strategies.build_function``; only the body differs (it may be async
    or a generator).
    """
    namespace: dict[str, Any] = {
        "__name__": "paths_generated",
        "Any": Any,
        "_pt": pt,
        "_b": behaviour,
        "_received": _received,
    }
    sig = f"generated({parameter_list(signature, namespace)})"
    exec(_BODIES[kind].format(sig=sig), namespace)  # noqa: S102 - our source
    return namespace["generated"]  # type: ignore[no-any-return]


GENERATED_BEHAVIOURS = [
    "echo",
    "record",
    "record_then_fail",
    "value_error",
    "system_exit",
    "stop_iteration",
    "cancelled",
    "unprintable",
]


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(
    signature=signatures(),
    kind=st.sampled_from(pt.FUNCTION_KINDS),
    behaviour=st.sampled_from(GENERATED_BEHAVIOURS),
    data=st.data(),
)
def test_generated_signatures_agree(
    signature: Signature, kind: str, behaviour: str, data: st.DataObject
) -> None:
    """Tools with generated signatures get the same arguments on every path.

    Any supported parameter types (unions, literals, enums, containers,
    TypedDicts, attrs classes, dataclasses...): the fast paths and the
    general path accept and refuse the same arguments and hand the tool
    exactly the same values, exact types included.
    """
    fn = generated_function(signature, kind, behaviour)
    subject = Subject(
        {inline: tool(inline=inline)(fn) for inline in (False, True)},
        streaming=kind in {"gen", "agen"},
        inline_applies=kind == "sync",
        label=f"generated {kind} {behaviour} tool {signature}",
    )
    schema = subject.tools[False].definition().parameters
    payload = data.draw(payloads(schema), label="arguments")
    call = ToolCall(subject.name, payload.value, CALL_ID)
    _check_controls(assert_paths_agree(subject, call))


# -- a process pool -----------------------------------------------------------


POOL_TIMEOUT = 120


@pytest.fixture(name="pool", scope="module")
def _pool() -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """One spawned worker process for the module's pool tests."""
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    try:
        # Warm it up: the worker imports the tools once.
        name = pool.submit(pt.tool_name, "sync", False, "echo")
        assert name.result(timeout=POOL_TIMEOUT) == "sync_echo"
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@settings(max_examples=15, deadline=None, suppress_health_check=SLOW)
@given(
    kind=st.sampled_from(pt.KINDS),
    behaviour=st.sampled_from(
        [b for b in pt.BEHAVIOURS if b != "unprintable"]
    ),
    data=st.data(),
)
def test_process_pool_agrees_on_generated_calls(
    pool: concurrent.futures.Executor,
    kind: str,
    behaviour: str,
    data: st.DataObject,
) -> None:
    """Generated arguments get the same results in a worker process.

    (``unprintable`` stays out: see ``POOL_BEHAVIOURS``; the listed cases
    below run it, last.)
    """
    subject = fixed_subject(kind, kind != "plain", behaviour)
    schema = subject.tools[False].definition().parameters
    payload = data.draw(payloads(schema), label="arguments")
    call = ToolCall(subject.name, payload.value, CALL_ID)
    paths = [LOCAL_PATHS[0], *REMOTE_PATHS]
    _check_controls(assert_paths_agree(subject, call, paths, pool))


STREAM_SAMPLE = frozenset(
    {"echo", "record", "record_then_fail", "system_exit", "cancelled", "nan"}
)
"""What generator and plain tools do in the pool sample (every behaviour
runs on sync and async tools)."""
# "unprintable" runs last: on Python 3.11+, an async tool that raises an
# exception whose repr raises leaves asyncio.run broken in the worker's
# main thread (the SIGINT handler asyncio.run installs stays, and its repr
# raises), failing every later async call in that worker. Last, it shows
# as the one failure it is.
POOL_BEHAVIOURS = sorted(pt.BEHAVIOURS, key=lambda b: b == "unprintable")
POOL_CASES = [
    *(
        ("sync", False, "echo", case)
        for case in (
            "valid_every_key",
            "int_for_float",
            "integral_float_for_int",
            "unknown_key",
            "duplicate_key_space_before_colon",
            "lone_surrogate_escape",
            "int_of_4000_digits",
            "int_of_5000_digits",
            "nan",
            "nested_at_the_limit",
            "mapping_nan",
            "mapping_int_of_5000_digits",
            "mapping_tuple_data",
        )
    ),
    ("sync", True, "square", "int_of_4000_digits"),
    *(
        (kind, kind != "plain", behaviour, "valid")
        for behaviour in POOL_BEHAVIOURS
        for kind in pt.KINDS
        if kind in {"sync", "async"} or behaviour in STREAM_SAMPLE
    ),
]
"""A sample for the pool: the arguments a worker decodes, validates or
returns differently, then every behaviour on sync and async tools (a few
on the other kinds)."""


@pytest.mark.parametrize(
    ("kind", "with_ctx", "behaviour", "case"),
    POOL_CASES,
    ids=[f"{b}-{k}{'_ctx' if c else ''}-{a}" for k, c, b, a in POOL_CASES],
)
def test_process_pool_agrees(
    pool: concurrent.futures.Executor,
    kind: str,
    with_ctx: bool,
    behaviour: str,
    case: str,
) -> None:
    """A tool run in a worker process gives what it gives in this one.

    Through ``Dispatcher(executor=ProcessPoolExecutor(...))``, every path
    returns the results the in-process paths return: the same output,
    error, published metadata and state changes.
    """
    subject = fixed_subject(kind, with_ctx, behaviour)
    args = VALID if case == "valid" else HOSTILE_ARGUMENTS[case]
    call = ToolCall(subject.name, args, CALL_ID)
    # The in-process paths agree with each other (the tests above); one
    # of them stands for all.
    paths = [LOCAL_PATHS[0], *REMOTE_PATHS]
    _check_controls(assert_paths_agree(subject, call, paths, pool))


# -- the main thread ----------------------------------------------------------


MAIN_THREAD_SCRIPT = """
import asyncio, json, sys, threading
import paths_tools as pt
import test_paths as tp
from toolctx import Dispatcher, ExecutionContext, Registry, ToolCall

def run(dispatcher, call):
    try:
        return tp.summary(dispatcher.dispatch(call, ExecutionContext()))
    except BaseException as exc:
        return ["raised", tp.describe_exception(exc)]

seen = []
for kind, behaviour in json.loads(sys.argv[1]):
    t = pt.tool_for(kind, True, behaviour, False)
    dispatcher = Dispatcher(Registry([t]))
    call = ToolCall(t.definition().name, '{"n":3}', "c1")
    in_main = run(dispatcher, call)
    box = []
    thread = threading.Thread(target=lambda: box.append(run(dispatcher, call)))
    thread.start()
    thread.join(60)
    seen.append([kind, behaviour, in_main, box[0] if box else "hung"])
try:
    asyncio.run(asyncio.sleep(0))
    after = "works"
except Exception as exc:
    after = tp.describe_exception(exc)
print(json.dumps({"seen": seen, "asyncio_run_afterwards": after}, default=str))
"""


def test_dispatch_from_the_main_thread_agrees() -> None:
    """A program's main thread gets what any other thread gets.

    ``dispatch`` runs an async tool with ``asyncio.run``, which in the main
    thread (only) installs a SIGINT handler for the call: whatever the tool
    raises, the result is the same as from another thread, and
    ``asyncio.run`` still works afterwards. (The paths above all run in
    helper threads; this runs in a fresh process's main thread, so that a
    failure cannot break the test process's own main thread.)
    """
    cases = [
        [kind, behaviour]
        for behaviour in POOL_BEHAVIOURS  # "unprintable" last
        for kind in ("sync", "async", "agen")
    ]
    done = subprocess.run(
        [sys.executable, "-c", MAIN_THREAD_SCRIPT, json.dumps(cases)],
        cwd=pathlib.Path(__file__).parent,
        capture_output=True,
        text=True,
        timeout=POOL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    differ = [
        f"{kind} {behaviour}: main thread {clip(str(main), 400)}; "
        f"other thread {clip(str(other), 400)}"
        for kind, behaviour, main, other in answer["seen"]
        if main != other
    ]
    assert not differ, "\n".join(differ)
    assert answer["asyncio_run_afterwards"] == "works"
