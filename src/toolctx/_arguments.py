"""Validate a tool's JSON arguments strictly; make its output JSON-safe.

One private, strict cattrs converter (:func:`make_converter`) does both
directions. Structuring never coerces: ``"1"`` is not ``1``, ``1`` is not
``"1"``, ``true`` is not ``1``; the only conversions are the ones JSON
Schema itself makes (``1.0`` is the integer ``1``, an integer is a
number). Every problem is collected, with its path, into one
:class:`~toolctx.exceptions.ToolArgumentsError`, so a model can fix all
of its arguments in one retry::

    count: expected an integer, got the string "3"
    items[1].qty: expected an integer, got 2.5
    name: missing required argument (expected a string)
    colour: unexpected argument (allowed: name, size)

The accepted types are exactly those :mod:`toolctx._types.model` analyses;
the hooks live in :mod:`toolctx._strict_hooks`.
"""

from __future__ import annotations

import collections
import collections.abc as cabc

from typing import TYPE_CHECKING, Any, Final, TypeVar, final

from cattrs.preconf.json import JsonConverter, configure_converter

from toolctx._strict_hooks import (
    StrictHooks,
    configure,
    describe,
    literal_values,
    problems_of,
    render_path,
    show_value,
    unexpected,
    union_members,
    unwrap,
)
from toolctx._text import message_of
from toolctx.exceptions import ArgumentError, SchemaError, ToolArgumentsError


if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import cattrs

    from toolctx._params import Param
    from toolctx._strict_hooks import Hook, Problem

__all__ = [
    "ArgumentStructurer",
    "make_converter",
    "structure_value",
    "unstructure_output",
    "unstructure_value",
]

T = TypeVar("T")
_NONE: Final = type(None)
_FAST_CANDIDATES: Final[dict[type, str]] = {
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    _NONE: "null",
    list: "array",
    dict: "object",
}
_SCALARS: Final = frozenset({str, int, float, bool, _NONE})
_NO_TYPES: Final[frozenset[type]] = frozenset()


class _StrictConverter(JsonConverter):
    """A JSON converter whose ``structure`` raises ``ToolArgumentsError``."""

    strict_hooks: StrictHooks

    def structure(self, obj: Any, cl: type[T]) -> T:
        """Structure *obj* as *cl* strictly.

        Raises:
            ToolArgumentsError: Every problem with *obj*, with its path.
            SchemaError: *cl* is not a supported type.
        """
        try:
            return super().structure(obj, cl)
        except SchemaError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported
            raise ToolArgumentsError(
                _argument_errors(problems_of(exc))
            ) from None


def make_converter() -> cattrs.Converter:
    """Return a fresh, private, strict converter for JSON data.

    It is a :class:`cattrs.preconf.json.JsonConverter` (detailed
    validation, extra keys forbidden, attrs aliases as keys, the JSON
    preconf: datetimes as ISO strings, sets as lists...) whose hooks are
    replaced by strict ones for *every* type:

    * ``str`` takes only strings; ``int`` takes integers and integral
      floats (``1.0`` -> ``1``), not bools; ``float`` takes integers and
      floats (as ``float``), not bools; ``bool`` only ``true``/``false``;
    * unions take the first member, in written order, that accepts;
    * containers, TypedDicts, attrs classes and dataclasses check their
      shape and collect every problem.

    ``structure`` raises :class:`~toolctx.exceptions.ToolArgumentsError`
    (a ``ValueError``) listing the problems, or ``SchemaError`` for an
    unsupported type; ``unstructure`` raises ``TypeError`` for values
    with no JSON form.
    """
    return _new_converter()


def _new_converter() -> _StrictConverter:
    """Build and configure a :class:`_StrictConverter`."""
    converter = _StrictConverter(
        detailed_validation=True,
        forbid_extra_keys=True,
        use_alias=True,
        unstruct_collection_overrides={
            cabc.Set: list,
            collections.Counter: dict,
        },
    )
    configure_converter(converter)
    converter.strict_hooks = configure(converter)
    return converter


_CONVERTER: Final = _new_converter()
_HOOKS: Final = _CONVERTER.strict_hooks


def _argument_errors(problems: list[Problem]) -> list[ArgumentError]:
    """``ArgumentError`` records from ``(path, message)`` problems."""
    return [ArgumentError(render_path(path), msg) for path, msg in problems]


@final
class ArgumentStructurer:
    """Turns one tool's JSON arguments into keyword arguments.

    Built once per tool, at decoration: the hooks of every parameter
    type are looked up (and unsupported types rejected) here, so that
    :meth:`structure` only runs them.

    Args:
        params: The tool's model-visible parameters.

    Raises:
        SchemaError: A parameter's type cannot be validated.
    """

    __slots__ = (
        "_allowed",
        "_count",
        "_fast_get",
        "_fast_literals",
        "_names",
        "_required",
        "_specs",
    )

    def __init__(self, params: Sequence[Param]) -> None:
        specs: list[tuple[str, Hook, Any, bool, str]] = []
        fast_types: dict[str, frozenset[type]] = {}
        fast_literals: dict[str, frozenset[str]] = {}
        for param in params:
            try:
                hook = _HOOKS.hook_for(param.annotation)
            except SchemaError as exc:
                msg = f"Parameter {param.name!r}: {exc}"
                raise SchemaError(msg, parameter=param.name) from exc
            tp = unwrap(param.annotation)
            specs.append(
                (param.name, hook, tp, param.required, describe(tp).text)
            )
            fast_types[param.name] = _identity_types(tp)
            literals = _literal_strings(tp)
            if literals is not None:
                fast_literals[param.name] = literals
        self._specs = tuple(specs)
        self._names = frozenset(spec[0] for spec in specs)
        self._count = len(specs)
        self._required = frozenset(spec[0] for spec in specs if spec[3])
        self._fast_get = fast_types.get
        self._fast_literals = fast_literals
        self._allowed = (
            "allowed: " + ", ".join(spec[0] for spec in specs)
            if specs
            else "this tool takes no arguments"
        )

    def structure(self, args: Mapping[str, object]) -> dict[str, object]:
        """Validate *args*; return the keyword arguments to call with.

        Absent optional arguments are left out (Python fills in their
        defaults). Flat arguments that already have their exact type
        take a fast path that skips the hooks.

        Raises:
            ToolArgumentsError: Every unknown, missing or wrong argument,
                in parameter order (unknown ones last); no tool name.
        """
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
                    return args.copy()
        try:
            return self._structure(args)
        except ToolArgumentsError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported
            detail = message_of(exc) or type(exc).__name__
            raise ToolArgumentsError(
                [ArgumentError("", f"invalid arguments ({detail})")]
            ) from None

    def _structure(self, args: object) -> dict[str, object]:
        """The full path: run every hook, collect every problem."""
        if not isinstance(args, cabc.Mapping):
            got = show_value(args, None)
            msg = f"expected an object of arguments, got {got}"
            raise ToolArgumentsError([ArgumentError("", msg)])
        out: dict[str, object] = {}
        errors: list[ArgumentError] = []
        found = 0
        for name, hook, tp, required, expected in self._specs:
            if name in args:
                found += 1
                try:
                    out[name] = hook(args[name], tp)
                except Exception as exc:  # noqa: BLE001 - reported
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


def _literal_strings(tp: Any) -> frozenset[str] | None:
    """The values of a ``Literal`` of strings only, else None."""
    values = literal_values(tp)
    if values and all(type(v) is str for v in values):
        return frozenset(values)
    return None


def _identity_types(tp: Any) -> frozenset[type]:
    """The JSON value types the hook of *tp* returns unchanged.

    A type qualifies when the first member of *tp* (a union, or *tp*
    alone) that accepts values of that JSON kind is that very type or
    ``Any``; ``float`` is not in ``int``'s set (``1.0`` becomes ``1``),
    nor ``int`` in ``float``'s (``1`` becomes ``1.0``).
    """
    members = [unwrap(arg) for arg in union_members(tp)]
    fast: set[type] = set()
    for candidate, kind in _FAST_CANDIDATES.items():
        for member in members:
            desc = describe(member)
            if desc.anything or (
                member is candidate and candidate in _SCALARS
            ):
                fast.add(candidate)
                break
            if kind in desc.kinds:
                break
    return frozenset(fast)


def unstructure_output(value: object) -> object:
    """Return a tool's return value as JSON data.

    Strings, numbers, bools and None come back as they are; attrs
    classes and dataclasses become dicts keyed by their ``__init__``
    names, enums their value, ``datetime``/``date``/``time`` ISO 8601
    strings, UUIDs and paths strings, tuples, lists, sets and frozensets
    lists (sets sorted), mappings dicts with string keys (``1`` becomes
    ``"1"``, as ``json.dumps`` writes it). NaN, infinities and integers
    of more than 4,300 digits have no JSON form.

    Raises:
        TypeError: A value (or one nested in it) has no JSON form; the
            message names its type and where it sits.
    """
    cls = type(value)
    if cls is str or cls is bool or value is None:
        return value
    try:
        return _HOOKS.unstructure(value)
    except RecursionError:
        msg = (
            f"Cannot convert a {cls.__qualname__} to JSON: it is nested "
            f"too deeply or contains a reference cycle."
        )
        raise TypeError(msg) from None


def structure_value(data: object, tp: object) -> object:
    """Validate and structure one JSON value as the type *tp*.

    Same strict rules as tool arguments; paths in the errors are
    relative to *data* (empty for *data* itself).

    Raises:
        ToolArgumentsError: Every problem with *data* (a ``ValueError``).
        SchemaError: *tp* is not a supported type.
    """
    hook = _HOOKS.hook_for(tp)
    try:
        return hook(data, unwrap(tp))
    except Exception as exc:  # noqa: BLE001 - reported
        raise ToolArgumentsError(_argument_errors(problems_of(exc))) from None


def unstructure_value(value: object, tp: object) -> object:
    """Return *value*, declared as *tp*, as JSON data.

    The conversion follows the runtime type of *value*, exactly as
    :func:`unstructure_output` (so a subclass keeps its own fields);
    *tp* is checked to be supported, so that
    ``structure_value(unstructure_value(v, tp), tp)`` can read it back.

    Raises:
        TypeError: *value* has no JSON form.
        SchemaError: *tp* is not a supported type (also a TypeError).
    """
    _HOOKS.hook_for(tp)
    return unstructure_output(value)
