"""Validate a tool's JSON arguments strictly; make its output JSON-safe.

A tool's parameters are analysed once, at decoration, into the type
model's nodes (:mod:`toolctx._types.model`) and compiled into checks
(:mod:`toolctx._types.validate`). Checking never coerces: ``"1"`` is not
``1``, ``1`` is not ``"1"``, ``true`` is not ``1``; the only conversions
are the ones JSON Schema itself makes (``1.0`` is the integer ``1``, an
integer is a number). Every problem is collected, with its path, into
one :class:`~toolctx.exceptions.ToolArgumentsError`, so a model can fix
all of its arguments in one retry::

    count: expected an integer, got the string "3"
    items[1].qty: expected an integer, got 2.5
    name: missing required argument (expected a string)
    colour: unexpected argument (allowed: name, size)

Output goes the other way by runtime type (:mod:`toolctx._types.output`);
this module registers there the objects that carry host-only data
(contexts, results, sessions), which never become output.
"""

from __future__ import annotations

import collections.abc as cabc

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol, final

from toolctx._context.execution import CallRecorder, ExecutionContext
from toolctx._context.session import Session
from toolctx._records import ToolResult
from toolctx._text import message_of
from toolctx._types.messages import describe, show_value
from toolctx._types.model import Analysis
from toolctx._types.nodes import Kind, Node
from toolctx._types.output import refuse
from toolctx._types.problems import problems_of, render_path, unexpected
from toolctx._types.scalars import unchanged_types
from toolctx._types.validate import Compiler
from toolctx.exceptions import ArgumentError, ToolArgumentsError


if TYPE_CHECKING:
    from toolctx._tools.params import Param
    from toolctx._types.problems import Check, Problem

__all__ = ["ArgumentStructurer", "Structurer"]

_NO_TYPES: Final[frozenset[type]] = frozenset()


def _host_only(cls: type) -> str:
    """Why a tool may not return a context, result or session."""
    return (
        f"A tool may not return {cls.__qualname__} objects: they carry "
        f"host-only data (scope, published metadata, state, exceptions) "
        f"that must not reach the model. Return the fields you need, e.g. "
        f"{{'invocation_id': ctx.invocation_id}}."
    )


refuse((ExecutionContext, ToolResult, Session, CallRecorder), _host_only)


class Structurer(Protocol):
    """A tool's argument step, as the dispatcher runs it.

    :class:`ArgumentStructurer` (a function tool's checks) and the
    schema check of a plain tool registered with ``check_arguments=True``
    (:class:`toolctx._tools._schema_arguments.SchemaStructurer`).
    """

    @property
    def structure(self) -> Callable[[Mapping[str, object]], dict[str, object]]:
        """Validate *args*; return what to call with.

        Raises:
            ToolArgumentsError: Every problem, each with its path.
        """
        ...


def _argument_errors(problems: list[Problem]) -> list[ArgumentError]:
    """``ArgumentError`` records from ``(path, message)`` problems."""
    return [ArgumentError(render_path(path), msg) for path, msg in problems]


@final
class ArgumentStructurer:
    """Turns one tool's JSON arguments into keyword arguments.

    Built once per tool, at decoration: every parameter type is analysed
    and compiled into its check (and unsupported types rejected) here, so
    that :meth:`structure` only runs the checks.

    Args:
        params: The tool's model-visible parameters.
        owner: The function's qualified name, for error messages.

    Raises:
        SchemaError: A parameter's type cannot be validated; the error
            names the parameter.
    """

    __slots__ = (
        "_allowed",
        "_count",
        "_fast_get",
        "_fast_literals",
        "_fills",
        "_names",
        "_required",
        "_shares",
        "_specs",
        "structure",
    )

    structure: Callable[[Mapping[str, object]], dict[str, object]]
    """Validate *args*; return the keyword arguments to call with.

    Absent optional arguments are left out (Python fills in their
    defaults), except those whose default is a pydantic ``Field``: its
    default (or factory's value) is passed. Arguments that already have
    their exact type skip the checks: when all are given, through a
    function generated for the tool (see :func:`_compile_route`).
    Unless the structurer shares its input, the result is a new dict.

    Raises:
        ToolArgumentsError: Every unknown, missing or wrong argument, in
            parameter order (unknown ones last); no tool name.
    """

    def __init__(
        self,
        params: Sequence[Param],
        *,
        owner: str = "a tool",
        shares_input: bool = False,
    ) -> None:
        analysis = Analysis(owner)
        compiler = Compiler(analysis)
        specs: list[tuple[str, Check, bool, str, frozenset[type]]] = []
        fast_types: dict[str, frozenset[type]] = {}
        fast_literals: dict[str, frozenset[str]] = {}
        for param in params:
            analysis.parameter = param.name
            node = analysis.node(param.annotation)
            same = unchanged_types(node)
            specs.append(
                (
                    param.name,
                    compiler.check(node),
                    param.required,
                    describe(node).text,
                    same,
                )
            )
            fast_types[param.name] = same
            literals = _literal_strings(node)
            if literals is not None:
                fast_literals[param.name] = literals
        self._specs = tuple(specs)
        self._names = frozenset(spec[0] for spec in specs)
        self._count = len(specs)
        # Defaults toolctx supplies (pydantic ``= Field(...)``): absent,
        # they send the call down the full path, which fills them in.
        self._fills = {p.name: p for p in params if p.fill}
        self._required = frozenset(
            spec[0] for spec in specs if spec[2] or spec[0] in self._fills
        )
        self._fast_get = fast_types.get
        self._fast_literals = fast_literals
        self._allowed = (
            "allowed: " + ", ".join(spec[0] for spec in specs)
            if specs
            else "this tool takes no arguments"
        )
        # With shares_input, structure() may return the dict it was given
        # (its caller never changes the result).
        self._shares = shares_input
        self.structure = (
            _compile_route(
                owner,
                specs,
                fast_literals,
                self._fills,
                self._general,
                shares=shares_input,
            )
            or self._general
        )

    def _general(self, args: Mapping[str, object]) -> dict[str, object]:
        """:attr:`structure` for any *args*: partial ones, or refused."""
        if type(args) is dict:
            fast_get = self._fast_get
            for name in args:
                value = args[name]
                if type(value) not in fast_get(name, _NO_TYPES):
                    literals = self._fast_literals.get(name)
                    if (
                        literals is None
                        or type(value) is not str
                        or value not in literals
                    ):
                        break
            else:
                if len(args) == self._count or self._required <= args.keys():
                    return args if self._shares else args.copy()
        try:
            return self._structure(args)
        except ToolArgumentsError:
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported
            detail = message_of(exc) or type(exc).__name__
            raise ToolArgumentsError(
                [ArgumentError("", f"invalid arguments ({detail})")]
            ) from None

    def _structure(self, args: object) -> dict[str, object]:
        """The full path: run every check, collect every problem."""
        if not isinstance(args, cabc.Mapping):
            got = show_value(args, None)
            msg = f"expected an object of arguments, got {got}"
            raise ToolArgumentsError([ArgumentError("", msg)])
        out: dict[str, object] = {}
        errors: list[ArgumentError] = []
        found = 0
        for name, check, required, expected, same in self._specs:
            if name in args:
                found += 1
                value = args[name]
                if type(value) in same:  # the check would return it as is
                    out[name] = value
                    continue
                try:
                    out[name] = check(value)
                except (Exception, SystemExit) as exc:  # noqa: BLE001
                    # Reported: a validator's SystemExit (argparse inside a
                    # pydantic validator, a __post_init__) is a bad argument
                    # like any other; KeyboardInterrupt and the like are not.
                    errors.extend(
                        ArgumentError(render_path((name, *path)), msg)
                        for path, msg in problems_of(exc)
                    )
            elif required:
                errors.append(
                    ArgumentError(
                        name,
                        f"missing required argument (expected {expected})",
                    )
                )
            elif name in self._fills:
                out[name] = self._fills[name].fill_value()
        if found != len(args):
            errors.extend(
                _argument_errors(
                    unexpected(
                        [key for key in args if key not in self._names],
                        f"unexpected argument ({self._allowed})",
                        "arguments",
                    )
                )
            )
        if errors:
            raise ToolArgumentsError(errors)
        return out


class _Absent:
    """The value of an argument the model left out, in generated routes."""

    __slots__ = ()


def _compile_route(
    owner: str,
    specs: Sequence[tuple[str, Check, bool, str, frozenset[type]]],
    literals: Mapping[str, frozenset[str]],
    fills: Mapping[str, Param],
    general: Callable[[Mapping[str, object]], dict[str, object]],
    *,
    shares: bool,
) -> Callable[[Mapping[str, object]], dict[str, object]] | None:
    """The tool's own route for the common call: every argument given.

    The generated function takes a ``dict`` holding exactly the tool's
    parameters, each of a type its check returns as it is (or a string
    of its ``Literal``), and returns it (or a copy) without running a
    check; anything else goes to *general*, which decides as before. So
    ``add(a: int, b: int)`` gets::

        def structure(args):
            if type(args) is dict and len(args) == 2 and (
                type(args.get('a', _absent)) is _t0
                and type(args.get('b', _absent)) is _t1
            ):
                return args.copy()
            return _general(args)

    None when some parameter's values always need their check (a model,
    a constrained type), or a pydantic ``Field`` default is filled in.
    """
    if fills or not all(spec[4] or spec[0] in literals for spec in specs):
        return None
    namespace: dict[str, object] = {
        "_absent": _Absent(),
        "_general": general,
        "_dict": dict,
        "_str": str,
    }
    tests = []
    for i, (name, _check, _required, _expected, same) in enumerate(specs):
        value = f"_v{i}"
        get = (
            f"({value} := args.get({name!r}, _absent))"
            if name in literals
            else f"args.get({name!r}, _absent)"
        )
        if len(same) == 1:
            namespace[f"_t{i}"] = next(iter(same))
            test = f"type({get}) is _t{i}"
        else:
            namespace[f"_t{i}"] = same
            test = f"type({get}) in _t{i}"
        if name in literals:
            namespace[f"_l{i}"] = literals[name]
            test = f"({test} or (type({value}) is _str and {value} in _l{i}))"
        tests.append(test)
    result = "args" if shares else "args.copy()"
    condition = " and ".join(
        ["type(args) is _dict", f"len(args) == {len(specs)}", *tests]
    )
    source = (
        "def structure(args):\n"
        f"    if {condition}:\n"
        f"        return {result}\n"
        "    return _general(args)\n"
    )
    code = compile(source, f"<toolctx arguments of {owner}>", "exec")
    exec(code, namespace)  # noqa: S102 - generated from the tool's types
    return namespace["structure"]  # type: ignore[return-value]


def _literal_strings(node: Node) -> frozenset[str] | None:
    """The values of a ``Literal`` of strings only, else None."""
    if (
        node.kind is Kind.LITERAL
        and not node.constraints
        and node.values
        and all(type(v) is str for v in node.values)
    ):
        return frozenset(node.values)  # type: ignore[arg-type]
    return None
