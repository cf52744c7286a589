"""Shared Hypothesis strategies: generated tool signatures, schema instances.

* :func:`signatures` draws random parameter lists over the types toolctx
  supports (scalars, unions, literals, enums, containers, TypedDicts,
  attrs classes, dataclasses, ``Annotated``, nested), and
  :func:`build_function` turns one into a real function by ``exec`` of
  its source text, with the annotations naming the generated classes in
  the function's globals.
* :func:`from_schema` draws JSON instances of a JSON Schema, for exactly
  the subset of Draft 2020-12 that ``toolctx._schema`` emits.
* :func:`mutation_sites` and :func:`mutate` break a valid instance in one
  way (a wrong type, a missing or extra key, ``true`` or ``"1"`` for a
  number, a value outside an enum, a duplicate set item), and say which
  argument path the validator should blame.
* :func:`conforms` checks a structured value against its Python type.

Why not hypothesis-jsonschema: its 0.23.1 release calls the private
``many.more()`` of Hypothesis, which Hypothesis 6.170.10 removed
(``AttributeError: 'many' object has no attribute 'more'``); it works with
``hypothesis<6.170.10`` only. Rather than hold Hypothesis back, this
module generates instances itself. It handles only the keywords our
schema generator writes and raises on any other, so a new keyword in
``toolctx._schema`` fails loudly here instead of being ignored; the tests
check every instance with ``jsonschema.Draft202012Validator`` (formats
included), so the generator is verified too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import itertools
import json
import keyword
import re
import typing
import uuid

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union

import attrs
import jsonschema

from hypothesis import strategies as st
from typing_extensions import NotRequired, Required, TypedDict, is_typeddict

from toolctx import ExecutionContext


NoneType = type(None)
DEFAULT: Any = type("Default", (), {"__repr__": lambda _: "DEFAULT"})()
"""The default of every optional parameter and field: not JSON, so the
schema has no ``default`` for it, and a value the tool can recognise."""

TOOL_NAME = "generated"
JsonPath = tuple[str | int, ...]

_counter = itertools.count()


def _fresh(prefix: str) -> str:
    """A class name no other generated class has."""
    return f"{prefix}{next(_counter)}"


# -- generated types ---------------------------------------------------------

_HASHABLE_CLASSES: set[type] = set()
_SCALAR_TYPES = (str, int, float, bool, NoneType)
_FORMAT_TYPES = (dt.datetime, dt.date, dt.time, uuid.UUID)

IDENTIFIERS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name)
)
CONTEXT_FIELD_NAMES = (
    "invocation_id",
    "session_id",
    "turn",
    "user_id",
    "agent_id",
    "tool_name",
    "tool_call_id",
    "parent_invocation_id",
    "metadata",
    "state",
    "prior_results",
    "values",
    "scope",
    "ctx",
    "context",
)
PARAMETER_NAMES = st.sampled_from(CONTEXT_FIELD_NAMES) | IDENTIFIERS
"""Parameter names, often the name of a context field."""

_LITERAL_VALUES = (
    st.text(alphabet="abcxyz", max_size=3)
    | st.integers(-3, 3)
    | st.booleans()
    | st.none()
)
_ENUM_VALUES = (
    st.text(alphabet="abcxyz", max_size=3)
    | st.integers(-3, 3)
    | st.none()
    | st.sampled_from([0.5, -2.25, True])
)


def is_hashable(tp: Any) -> bool:
    """Whether every structured value of generated type *tp* is hashable."""
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp in _SCALAR_TYPES or tp in _FORMAT_TYPES or origin is Literal:
        return True
    if origin is Union:
        return all(map(is_hashable, args))
    if origin is tuple:
        return all(a is Ellipsis or is_hashable(a) for a in args)
    if origin is frozenset:
        return True  # its items are hashable by construction
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return True
    return tp in _HASHABLE_CLASSES


def _literal(values: Sequence[object]) -> Any:
    return Literal.__getitem__(tuple(values))


def _enum(values: Sequence[object]) -> type[enum.Enum]:
    members = [(f"m{i}", value) for i, value in enumerate(values)]
    return enum.Enum(_fresh("Enum"), members, module=__name__)  # type: ignore[return-value]


def _union(members: list[Any]) -> Any:
    return Union.__getitem__(tuple(members))


LITERALS: st.SearchStrategy[Any] = st.lists(
    _LITERAL_VALUES, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)
).map(_literal)
"""``Literal`` types of str, int, bool and None values."""

ENUMS: st.SearchStrategy[Any] = st.lists(
    # unique=True compares with ==, so no two members alias (1 == True).
    _ENUM_VALUES,
    min_size=1,
    max_size=4,
    unique=True,
).map(_enum)
"""``Enum`` classes with str, int, float, bool and None values."""

LEAF_TYPES: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([str, int, float, bool, NoneType]),
    st.sampled_from([*_FORMAT_TYPES, Any]),
    LITERALS,
    ENUMS,
)
"""Types with no type arguments."""


@attrs.frozen
class Field:
    """One field of a generated class.

    Attributes:
        name: The field (and JSON property) name.
        annotation: Its type.
        required: Whether it has no default.
    """

    name: str
    annotation: Any
    required: bool


def _fields(
    children: st.SearchStrategy[Any],
) -> st.SearchStrategy[list[Field]]:
    return st.lists(
        st.builds(Field, IDENTIFIERS, children, st.booleans()),
        min_size=1,
        max_size=3,
        unique_by=lambda f: f.name,
    )


def _required_first(fields: list[Field]) -> list[Field]:
    return sorted(fields, key=lambda f: not f.required)


def _typeddict(fields: list[Field], total: bool) -> Any:
    annotations: dict[str, Any] = {}
    for f in fields:
        tp = f.annotation
        if f.required != total:
            tp = Required[tp] if f.required else NotRequired[tp]
        annotations[f.name] = tp
    return TypedDict(_fresh("TD"), annotations, total=total)  # type: ignore[operator]


def _dataclass(fields: list[Field], frozen: bool) -> type:
    spec: list[Any] = [
        (f.name, f.annotation)
        if f.required
        else (f.name, f.annotation, dataclasses.field(default=DEFAULT))
        for f in _required_first(fields)
    ]
    cls = dataclasses.make_dataclass(_fresh("DC"), spec, frozen=frozen)
    if frozen and all(is_hashable(f.annotation) for f in fields):
        _HASHABLE_CLASSES.add(cls)
    return cls


def _attrs_class(fields: list[Field], frozen: bool, private: bool) -> type:
    # A private name ("_x") gets the JSON key "x" (attrs' default alias).
    these = {
        ("_" if private else "") + f.name: attrs.field(type=f.annotation)
        if f.required
        else attrs.field(type=f.annotation, default=DEFAULT)
        for f in _required_first(fields)
    }
    cls = attrs.make_class(_fresh("AC"), these, frozen=frozen)
    if frozen and all(is_hashable(f.annotation) for f in fields):
        _HASHABLE_CLASSES.add(cls)
    return cls


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Types built from *children*: containers, unions and classes."""
    hashable = children.filter(is_hashable)
    return st.one_of(
        children.map(lambda t: list[t]),  # type: ignore[valid-type]
        children.map(lambda t: tuple[t, ...]),  # type: ignore[valid-type]
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: tuple.__class_getitem__(tuple(ts))
        ),
        hashable.map(lambda t: set[t]),  # type: ignore[valid-type]
        hashable.map(lambda t: frozenset[t]),  # type: ignore[valid-type]
        children.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        children.map(lambda t: typing.Optional[t]),  # noqa: UP045
        children.map(lambda t: Annotated[t, "A description."]),
        st.lists(children, min_size=2, max_size=3).map(_union),
        st.builds(_typeddict, _fields(children), st.booleans()),
        st.builds(_dataclass, _fields(children), st.booleans()),
        st.builds(
            _attrs_class, _fields(children), st.booleans(), st.booleans()
        ),
    )


TYPES: st.SearchStrategy[Any] = st.recursive(LEAF_TYPES, _extend, max_leaves=5)
"""Any supported parameter type, nesting bounded."""


def _required_field_class(inner: Any) -> st.SearchStrategy[Any]:
    field = Field("n", inner, required=True)
    return st.one_of(
        st.just(_typeddict([field], total=True)),
        st.builds(_dataclass, st.just([field]), st.booleans()),
        st.builds(
            _attrs_class, st.just([field]), st.booleans(), st.booleans()
        ),
    )


NUMERIC_TYPES: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from([int, float, int | None, tuple[int, str]]),
    st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True).map(
        _literal
    ),
    st.sampled_from([int, float]).flatmap(_required_field_class),
)
"""Types whose generated instances always hold a number somewhere."""

ENUM_TYPES: st.SearchStrategy[Any] = (LITERALS | ENUMS).flatmap(
    lambda t: st.sampled_from([t, tuple[t, int], list[t]])  # type: ignore[valid-type]
)
"""Types whose instances always hold a ``Literal`` or enum value."""

SET_TYPES: st.SearchStrategy[Any] = TYPES.filter(is_hashable).flatmap(
    lambda t: st.sampled_from([set[t], frozenset[t]])  # type: ignore[valid-type]
)
"""``set``/``frozenset`` types of hashable items."""


# -- signatures and functions ------------------------------------------------


@attrs.frozen
class Parameter:
    """One parameter of a generated tool function.

    Attributes:
        name: The parameter name.
        annotation: Its type.
        required: Whether it has no default (else its default is DEFAULT).
        kw_only: Whether it is keyword-only.
    """

    name: str
    annotation: Any
    required: bool
    kw_only: bool


@attrs.frozen
class Signature:
    """A generated tool signature.

    Attributes:
        parameters: The model-visible parameters, in signature order.
        context_parameter: The name of a parameter annotated
            ``ExecutionContext``, or None.
        context_index: Where the context parameter sits among the
            required positional parameters (or keyword-only ones).
    """

    parameters: tuple[Parameter, ...]
    context_parameter: str | None = None
    context_index: int = 0

    def annotation(self, name: str) -> Any:
        """The annotation of the model-visible parameter *name*."""
        return next(p.annotation for p in self.parameters if p.name == name)


def _ordered(params: list[Parameter]) -> tuple[Parameter, ...]:
    """Legal Python order: positional required, positional optional, kw."""
    positional = [p for p in params if not p.kw_only]
    positional.sort(key=lambda p: not p.required)
    return (*positional, *(p for p in params if p.kw_only))


@st.composite
def signatures(
    draw: st.DrawFn,
    must_include: st.SearchStrategy[Any] | None = None,
    types: st.SearchStrategy[Any] = TYPES,
) -> Signature:
    """Draw a signature: 0-4 parameters, maybe a context parameter.

    Args:
        draw: Hypothesis's draw function.
        must_include: Also add a required parameter of a type drawn from
            this strategy (so a particular kind of value is present).
        types: The parameter types.
    """
    names = draw(
        st.lists(PARAMETER_NAMES, min_size=0, max_size=5, unique=True)
    )
    context_parameter: str | None = None
    with_context = draw(st.booleans())
    if names and with_context:
        context_parameter = names.pop()
    params = [
        Parameter(name, draw(types), draw(st.booleans()), draw(st.booleans()))
        for name in names[:4]
    ]
    if must_include is not None:
        name = draw(PARAMETER_NAMES.filter(lambda n: n not in names))
        if name == context_parameter:
            context_parameter = None
        params.insert(
            draw(st.integers(0, len(params))),
            Parameter(name, draw(must_include), True, draw(st.booleans())),
        )
    return Signature(
        _ordered(params), context_parameter, draw(st.integers(0, 5))
    )


def parameter_list(signature: Signature, namespace: dict[str, Any]) -> str:
    """The parameter list source of *signature*, e.g. ``a: T0, *, b: T1``.

    Every annotation is a name (``T0``, ``T1``...) bound in *namespace*
    (the function's globals), so ``typing.get_type_hints`` resolves them
    as it would module-level classes; optional parameters default to
    ``_DEFAULT`` and the context parameter is ``_Context``, both bound
    here too.
    """
    namespace["_DEFAULT"] = DEFAULT
    namespace["_Context"] = ExecutionContext
    positional: list[str] = []
    keyword_only: list[str] = []
    for i, p in enumerate(signature.parameters):
        namespace[f"T{i}"] = p.annotation
        text = f"{p.name}: T{i}" + ("" if p.required else " = _DEFAULT")
        (keyword_only if p.kw_only else positional).append(text)
    if signature.context_parameter is not None:
        text = f"{signature.context_parameter}: _Context"
        required = [t for t in positional if "=" not in t]
        if signature.context_index % 2:
            keyword_only.insert(0, text)
        else:
            positional.insert(
                signature.context_index % (len(required) + 1), text
            )
    params = positional + (["*", *keyword_only] if keyword_only else [])
    return ", ".join(params)


def build_function(
    signature: Signature, capture: Callable[[dict[str, Any]], None]
) -> Callable[..., None]:
    """Return a real function with *signature* that passes its arguments on.

    The function is made by ``exec`` of its source text (parameters from
    :func:`parameter_list`). The body calls ``capture(locals())``.
    """
    namespace: dict[str, Any] = {
        "__name__": "toolctx_generated",
        "_capture": capture,
    }
    source = (
        f"def {TOOL_NAME}({parameter_list(signature, namespace)}) -> None:\n"
        "    _capture(dict(locals()))\n"
    )
    exec(source, namespace)  # noqa: S102 - our own generated source
    return namespace[TOOL_NAME]  # type: ignore[no-any-return]


# -- checking structured values ----------------------------------------------


def _unwrap(tp: Any) -> Any:
    """*tp* without ``Annotated``, ``Required`` and ``NotRequired``."""
    while typing.get_origin(tp) in {Required, NotRequired, Annotated}:
        tp = typing.get_args(tp)[0]
    return tp


def conforms(value: object, tp: Any) -> bool:  # noqa: PLR0912
    """Whether *value* is exactly of the generated type *tp*.

    Exact types: an ``int`` parameter gets an ``int`` (never a ``bool``
    or ``float``), a ``float`` one a ``float``, a ``frozenset`` one a
    ``frozenset``; class fields left out hold ``DEFAULT``.
    """
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return True
    if tp is NoneType:
        return value is None
    if tp in _SCALAR_TYPES or tp in _FORMAT_TYPES:
        return type(value) is tp
    if origin is Union:
        return any(conforms(value, arg) for arg in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if origin in {list, set, frozenset}:
        return type(value) is origin and all(
            conforms(v, args[0])
            for v in value  # type: ignore[attr-defined]
        )
    if origin is tuple:
        if type(value) is not tuple:
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(map(conforms, value, args))
    if origin is dict:
        return type(value) is dict and all(
            type(k) is str and conforms(v, args[1]) for k, v in value.items()
        )
    if is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        return (
            type(value) is dict
            and set(value) <= set(hints)
            and tp.__required_keys__ <= set(value)
            and all(conforms(v, hints[k]) for k, v in value.items())
        )
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return type(value) is tp
    if attrs.has(tp) or dataclasses.is_dataclass(tp):
        if type(value) is not tp:
            return False
        hints = typing.get_type_hints(tp)
        return all(
            (getattr(value, name) is DEFAULT)
            or conforms(getattr(value, name), hint)
            for name, hint in hints.items()
        )
    msg = f"conforms() does not know the type {tp!r}"
    raise AssertionError(msg)


# -- JSON values ---------------------------------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    JSON_SCALARS,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.text(max_size=4), c, max_size=3)
    ),
    max_leaves=6,
)
"""Any JSON value (bounded), for ``{}`` schemas."""


def json_key(value: object) -> object:
    """A hashable key, equal for values JSON Schema calls equal.

    ``1`` and ``1.0`` are equal; ``true`` and ``1`` are not.
    """
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(map(json_key, value)))
    if isinstance(value, dict):
        return (
            "object",
            frozenset((k, json_key(v)) for k, v in value.items()),
        )
    return (type(value).__name__, value)


# -- formats -------------------------------------------------------------------

# RFC 3339, which JSON Schema's date-time, date and time formats follow,
# within what Python's datetime holds (and rfc3339-validator accepts):
# years 0001-9999, no leap second (":60").
_OFFSETS = st.sampled_from(["Z", "z"]) | st.builds(
    "{}{:02d}:{:02d}".format,
    st.sampled_from("+-"),
    st.integers(0, 23),
    st.integers(0, 59),
)
_FRACTIONS = st.just("") | st.from_regex(r"\.[0-9]{1,9}", fullmatch=True)
_DATES = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)).map(
    lambda d: d.isoformat()
)
_TIMES = st.builds(
    "{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    _FRACTIONS,
    _OFFSETS,
)
FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date": _DATES,
    "time": _TIMES,
    "date-time": st.builds(
        "{}{}{}".format, _DATES, st.sampled_from("Tt"), _TIMES
    ),
    "uuid": st.builds(
        lambda u, upper: str(u).upper() if upper else str(u),
        st.uuids(),
        st.booleans(),
    ),
}
"""String formats the schema generator writes, and their strategies."""

_RFC3339_TIME = re.compile(
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    re.IGNORECASE,
)


def _rfc3339_date(text: str) -> bool:
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) is None:
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _rfc3339_time(instance: object) -> bool:
    if not isinstance(instance, str):
        return True  # formats only constrain strings
    return _RFC3339_TIME.fullmatch(instance) is not None


def _rfc3339_datetime(instance: object) -> bool:
    if not isinstance(instance, str):
        return True  # formats only constrain strings
    date, sep, time = instance[:10], instance[10:11], instance[11:]
    return sep in {"T", "t"} and _rfc3339_date(date) and _rfc3339_time(time)


def format_checker() -> jsonschema.FormatChecker:
    """Return jsonschema's Draft 2020-12 format checker, gaps filled.

    jsonschema checks ``date-time`` and ``time`` only when the optional
    ``rfc3339-validator`` package is installed; without it, RFC 3339
    checks written from the RFC's grammar stand in, so that every format
    the schema generator writes is really checked.
    """
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers.update(
        jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    )
    if "date-time" not in checker.checkers:
        checker.checks("date-time")(_rfc3339_datetime)
    if "time" not in checker.checkers:
        checker.checks("time")(_rfc3339_time)
    return checker


FORMAT_CHECKER = format_checker()


def validator(schema: Mapping[str, Any]) -> jsonschema.Draft202012Validator:
    """A Draft 2020-12 validator for *schema* that checks formats."""
    return jsonschema.Draft202012Validator(
        schema, format_checker=FORMAT_CHECKER
    )


# -- instances from a schema -----------------------------------------------------

_KNOWN_KEYWORDS = frozenset(
    {
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "default",
        "description",
        "enum",
        "format",
        "items",
        "maxItems",
        "minItems",
        "prefixItems",
        "properties",
        "required",
        "type",
        "uniqueItems",
    }
)


class _Instances:
    """Builds instance strategies for one schema document."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.refs: dict[str, st.SearchStrategy[Any]] = {}

    def ref(self, ref: str) -> st.SearchStrategy[Any]:
        name = ref.removeprefix("#/$defs/")
        if name not in self.refs:
            self.refs[name] = st.deferred(lambda: self.of(self.defs[name]))
        return self.refs[name]

    def of(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        unknown = set(schema) - _KNOWN_KEYWORDS
        if unknown:
            msg = (
                f"from_schema() does not handle {sorted(unknown)} in {schema}"
            )
            raise ValueError(msg)
        if "$ref" in schema:
            return self.ref(schema["$ref"])
        if "enum" in schema:
            return st.sampled_from(schema["enum"]).flatmap(_json_equal)
        if "anyOf" in schema:
            return st.one_of([self.of(s) for s in schema["anyOf"]])
        kind = schema.get("type")
        if kind is None:
            return JSON_VALUES
        if kind == "string":
            fmt = schema.get("format")
            return st.text(max_size=6) if fmt is None else FORMATS[fmt]
        if kind == "integer":
            return st.integers(-(2**53), 2**53) | st.integers(-99, 99).map(
                float
            )
        if kind == "number":
            return st.integers(-(2**53), 2**53) | st.floats(
                allow_nan=False, allow_infinity=False
            )
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind == "array":
            return self.array(schema)
        if kind == "object":
            return self.object(schema)
        msg = f"from_schema() does not handle the type {kind!r}"
        raise ValueError(msg)

    def array(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        if "prefixItems" in schema:
            if schema.get("items") is not False:
                msg = "from_schema() handles prefixItems with items: false"
                raise ValueError(msg)
            prefix = [self.of(s) for s in schema["prefixItems"]]
            return st.tuples(*prefix).map(list)
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", 3), 3)
        items = schema.get("items", {})
        return st.lists(
            self.of(items),
            min_size=low,
            max_size=high,
            unique_by=json_key if schema.get("uniqueItems") else None,
        )

    def object(self, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", {})
        fixed = st.fixed_dictionaries(
            {k: self.of(properties[k]) for k in required},
            optional={
                k: self.of(v)
                for k, v in properties.items()
                if k not in required
            },
        )
        if extra is False:
            return fixed
        more = st.dictionaries(
            st.text(max_size=4).filter(lambda k: k not in properties),
            JSON_VALUES if extra is True else self.of(extra),
            max_size=3,
        )
        return st.builds(lambda a, b: {**b, **a}, fixed, more)


def _json_equal(value: object) -> st.SearchStrategy[Any]:
    """*value*, or a JSON-equal spelling of it (``1.0`` for ``1``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return st.sampled_from([value, float(value)])
    return st.just(value)


def from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Draw JSON instances of *schema* (the subset toolctx writes).

    Handles ``type``, ``enum``, ``anyOf``, ``$ref``/``$defs``,
    ``properties``/``required``/``additionalProperties``, ``items``/
    ``prefixItems``/``minItems``/``maxItems``/``uniqueItems`` and the
    ``date-time``, ``date``, ``time`` and ``uuid`` formats; any other
    keyword raises ``ValueError``. Sizes are kept small.
    """
    return _Instances(schema.get("$defs", {})).of(schema)


# -- mutations -----------------------------------------------------------------

KINDS = ("null", "boolean", "integer", "fraction", "string", "array", "object")
_SAMPLES: dict[str, object] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "fraction": 0.5,
    "string": "x",
    "array": [],
    "object": {},
}


@attrs.frozen
class Site:
    """A node of a valid instance, with the schema that node matched.

    Attributes:
        path: Where the node sits, from the arguments object.
        schema: The schema at that position (a union, a ``$ref``...).
        resolved: The member that the node matched, ``$ref`` resolved.
        value: The node's value.
        unions: Paths of the ``anyOf`` nodes on the way, outermost first.
    """

    path: JsonPath
    schema: Mapping[str, Any]
    resolved: Mapping[str, Any]
    value: Any
    unions: tuple[JsonPath, ...]


def _deref(
    schema: Mapping[str, Any], defs: Mapping[str, Any]
) -> Mapping[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].removeprefix("#/$defs/")]
    return schema


def accepted_kinds(
    schema: Mapping[str, Any], defs: Mapping[str, Any]
) -> set[str]:
    """The value kinds (see :data:`KINDS`) that *schema* may accept."""
    schema = _deref(schema, defs)
    if "anyOf" in schema:
        return set().union(*(accepted_kinds(s, defs) for s in schema["anyOf"]))
    if "enum" in schema:
        return {_kind(v) for v in schema["enum"]}
    kind = schema.get("type")
    if kind is None:
        return set(KINDS)
    if kind == "number":
        return {"integer", "fraction"}
    return {kind}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer()
    ):
        return "integer"
    if isinstance(value, float):
        return "fraction"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def mutation_sites(schema: Mapping[str, Any], instance: Any) -> list[Site]:
    """Every node of the valid *instance*, root first."""
    defs = schema.get("$defs", {})
    check = validator(schema)
    sites: list[Site] = []

    def matches(value: object, sub: Mapping[str, Any]) -> bool:
        sub_check = check.evolve(schema={**sub, "$defs": defs})
        return bool(sub_check.is_valid(value))

    def walk(
        value: Any,
        sub: Mapping[str, Any],
        path: JsonPath,
        unions: tuple[JsonPath, ...],
    ) -> None:
        resolved = _deref(sub, defs)
        while "anyOf" in resolved:
            unions = (*unions, path)
            resolved = _deref(
                next(m for m in resolved["anyOf"] if matches(value, m)), defs
            )
        sites.append(Site(path, sub, resolved, value, unions))
        if isinstance(value, dict):
            properties = resolved.get("properties", {})
            extra = resolved.get("additionalProperties", {})
            for key, item in value.items():
                child = properties.get(key, extra)
                if isinstance(child, Mapping) and child:
                    walk(item, child, (*path, key), unions)
        elif isinstance(value, list):
            prefix = resolved.get("prefixItems", [])
            items = resolved.get("items", {})
            for index, item in enumerate(value):
                child = prefix[index] if index < len(prefix) else items
                if isinstance(child, Mapping) and child:
                    walk(item, child, (*path, index), unions)

    walk(instance, schema, (), ())
    return sites


@attrs.frozen
class Mutation:
    """One way to break a valid instance.

    Attributes:
        kind: Which mutation (see :data:`MUTATIONS`).
        path: The argument path that was broken.
        instance: The broken instance.
        unions: ``anyOf`` nodes above *path*; the validator may blame a
            path inside the outermost one instead of *path* itself.
    """

    kind: str
    path: JsonPath
    instance: Any
    unions: tuple[JsonPath, ...]


def _replace(instance: Any, path: JsonPath, value: object) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = list(instance) if isinstance(instance, list) else dict(instance)
    copy[head] = _replace(instance[head], tuple(rest), value)  # type: ignore[index]
    return copy


def _wrong_type(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not site.path:
        return []
    kinds = accepted_kinds(site.schema, defs)
    return [(site.path, _SAMPLES[k]) for k in KINDS if k not in kinds]


def _missing_key(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not isinstance(site.value, dict):
        return []
    out: list[tuple[JsonPath, object]] = []
    for key in site.resolved.get("required", []):
        if key in site.value:
            smaller = {k: v for k, v in site.value.items() if k != key}
            out.append(((*site.path, key), smaller))
    return out


def _extra_key(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not isinstance(site.value, dict):
        return []
    if site.resolved.get("additionalProperties", True) is not False:
        return []
    key = "zz_unexpected"
    while key in site.resolved.get("properties", {}):
        key += "_"
    return [((*site.path, key), {**site.value, key: 1})]


def _bool_for_number(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    kinds = accepted_kinds(site.schema, defs)
    if not site.path or "integer" not in kinds or "boolean" in kinds:
        return []
    return [(site.path, True), (site.path, False)]


def _string_for_number(
    site: Site, defs: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    kinds = accepted_kinds(site.schema, defs)
    if not site.path or "integer" not in kinds or "string" in kinds:
        return []
    value = site.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(int(value)) if _kind(value) == "integer" else repr(value)
        return [(site.path, text)]
    return [(site.path, "1")]


def _out_of_enum(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    values = site.resolved.get("enum")
    if not site.path or values is None:
        return []
    strings = [v for v in values if isinstance(v, str)]
    numbers = [
        v
        for v in values
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    candidates: list[object] = []
    if strings:
        candidates.append(max(strings, key=len) + "_not_listed")
    if numbers:
        candidates.append(int(max(numbers)) + 1)
    if any(isinstance(v, bool) for v in values):
        candidates.extend([True, False])
    listed = {json_key(v) for v in values}
    return [(site.path, c) for c in candidates if json_key(c) not in listed]


def _duplicate_item(
    site: Site, _: Mapping[str, Any]
) -> list[tuple[JsonPath, object]]:
    if not site.resolved.get("uniqueItems") or not site.value:
        return []
    value = site.value
    return [
        ((*site.path, len(value)), [*value, value[i]])
        for i in range(len(value))
    ]


_SiteMutation = Callable[
    [Site, Mapping[str, Any]], list[tuple[JsonPath, object]]
]
MUTATIONS: dict[str, _SiteMutation] = {
    "wrong_type": _wrong_type,
    "missing_key": _missing_key,
    "extra_key": _extra_key,
    "bool_for_number": _bool_for_number,
    "string_for_number": _string_for_number,
    "out_of_enum": _out_of_enum,
    "duplicate_item": _duplicate_item,
}
"""Each mutation: ``(site, defs) -> [(blamed path, new node value)]``."""

MUTATION_TYPES: dict[str, st.SearchStrategy[Any] | None] = {
    "wrong_type": None,
    "missing_key": None,
    "extra_key": None,
    "bool_for_number": NUMERIC_TYPES,
    "string_for_number": NUMERIC_TYPES,
    "out_of_enum": ENUM_TYPES,
    "duplicate_item": SET_TYPES,
}
"""A parameter type that makes each mutation possible (None: any)."""


def mutate(
    kind: str, schema: Mapping[str, Any], instance: Any
) -> list[Mutation]:
    """Every *kind* mutation of the valid *instance* that *schema* rejects."""
    defs = schema.get("$defs", {})
    check = validator(schema)
    out: list[Mutation] = []
    for site in mutation_sites(schema, instance):
        for path, node in MUTATIONS[kind](site, defs):
            broken = _replace(instance, site.path, node)
            if not check.is_valid(broken):
                out.append(Mutation(kind, path, broken, site.unions))
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def render_path(path: JsonPath) -> str:
    """A path as toolctx's messages write it: ``a.b[0]``, ``m["x y"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out
