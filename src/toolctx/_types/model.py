"""Type hints become a small node tree: the one analysis of a tool's types.

:class:`Analysis` walks a type expression once and returns a
:class:`Node`: its :class:`Kind`, its children (items, union members,
tuple positions), literal or enum values, the JSON string format of
datetimes and UUIDs, and the description ``Annotated`` gave it. Classes
(enums, TypedDicts, attrs classes, dataclasses) are nodes that name their
class; their fields are analysed once per class into :class:`ClassInfo`
(so recursive classes work) and looked up with :meth:`Analysis.info`.

Everything else derives from the tree: the JSON Schema
(:mod:`toolctx._types.schema`) renders nodes, never hints. A hint the
model cannot represent raises :class:`~toolctx.exceptions.SchemaError`
naming the function, the parameter and the path through nested classes.

The supported types:

=========================================  ==============================
Python                                     :class:`Kind`
=========================================  ==============================
``Any``, ``object``                        ``ANY``
``None``                                   ``NULL``
``bool``, ``int``, ``float``, ``str``      ``BOOLEAN`` ... ``STRING``
``datetime``, ``date``, ``time``, UUID     ``FORMATTED`` (a JSON string)
``Literal[...]`` (str/int/bool/None)       ``LITERAL``
``Enum`` subclass (not ``Flag``)           ``ENUM``
``list[T]``, ``Sequence[T]``, bare ones    ``ARRAY``
``tuple[T, ...]``, bare ``tuple``          ``ARRAY`` (``container`` tuple)
``tuple[A, B]``, ``tuple[()]``             ``TUPLE``
``set[T]``, ``frozenset[T]``, ``Set[T]``   ``SET`` (items hashable)
``dict[str, T]``, ``Mapping[str, T]``      ``MAPPING``
``A | B``, ``Union``, ``Optional``         ``UNION`` (written order)
TypedDict                                  ``TYPEDDICT``
attrs class, dataclass                     ``CLASS``
pydantic v2 ``BaseModel`` subclass         ``MODEL`` (pydantic's own)
``Annotated[T, "text"]``                   T, described by "text"
``NewType``, ``TypeAliasType``             the underlying type
=========================================  ==============================
"""

from __future__ import annotations

import ast
import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import functools
import inspect
import itertools
import math
import re
import textwrap
import types
import typing
import uuid

from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePath
from typing import Any, Final

import attrs
import typing_extensions

from toolctx._docstrings import ParsedDocstring, parse_docstring
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx.exceptions import SchemaError


class _Missing(enum.Enum):
    MISSING = enum.auto()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
"""Sentinel for "no default"."""


def type_name(tp: object) -> str:
    """Render a type for an error message: ``int``, ``list[str]``..."""
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


SUPPORTED_TYPES: Final = (
    "str, int, float, bool, None, Optional/Union, Literal, Enum, "
    "list/tuple/set/frozenset, dict[str, T], TypedDict, attrs classes, "
    "dataclasses, pydantic models, datetime/date/time/timedelta, UUID, "
    "Decimal, Path, bytes, Annotated"
)
"""The supported types, as named in :class:`SchemaError` messages."""


class Kind(enum.Enum):
    """What a :class:`Node` stands for."""

    ANY = "any"
    NULL = "null"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"
    STRING = "string"
    FORMATTED = "formatted"
    DECIMAL = "decimal"
    LITERAL = "literal"
    ENUM = "enum"
    ARRAY = "array"
    TUPLE = "tuple"
    SET = "set"
    MAPPING = "mapping"
    UNION = "union"
    TYPEDDICT = "typeddict"
    CLASS = "class"
    MODEL = "model"
    INSTANCE = "instance"


CLASS_KINDS: Final = frozenset({Kind.ENUM, Kind.TYPEDDICT, Kind.CLASS})
"""Kinds whose node names a class (``Node.tp``)."""


@attrs.frozen
class Node:
    """One analysed type expression.

    Attributes:
        kind: What the type is.
        tp: The type expression, without ``Annotated``, aliases and
            ``NewType`` (for class kinds: the class).
        items: Children: the item of an ``ARRAY``/``SET``, the value of a
            ``MAPPING``, the positions of a ``TUPLE``, the members of a
            ``UNION``; empty for a bare container.
        values: The values of a ``LITERAL``; the member values of an
            ``ENUM`` as JSON scalars.
        format: The JSON Schema ``format`` of a ``FORMATTED`` string.
        container: The Python type an ``ARRAY`` or ``SET`` builds (list,
            tuple, set, frozenset).
        bare: A container written without type arguments.
        description: From ``Annotated`` text, or given by the field or
            parameter the node describes.
        constraints: JSON Schema validation keywords and their values
            (``minimum``, ``exclusiveMaximum``, ``multipleOf``,
            ``minLength``, ``maxLength``, ``pattern``, ``minItems``,
            ``maxItems``, ``minProperties``, ``maxProperties``), from
            annotated-types or pydantic metadata; the schema shows them
            and the validator enforces them.
        examples: Example values (pydantic ``Field(examples=...)``).
    """

    kind: Kind
    tp: Any
    items: tuple[Node, ...] = ()
    values: tuple[object, ...] = ()
    format: str | None = None
    container: type | None = None
    bare: bool = False
    description: str | None = None
    constraints: tuple[tuple[str, object], ...] = ()
    examples: tuple[object, ...] = ()

    def described(self, text: str | None) -> Node:
        """This node with *text* as its description (None keeps it)."""
        if not text or text == self.description:
            return self
        return attrs.evolve(self, description=text)


@attrs.frozen
class Field:
    """One field of a TypedDict, attrs class or dataclass.

    Attributes:
        name: The Python name (attribute or TypedDict key).
        key: The JSON key (the attrs alias; the name otherwise).
        node: The field's type, described by the field's text.
        required: Whether the key must be present.
        default: The field's default, or ``MISSING`` (also for factories).
    """

    name: str
    key: str
    node: Node
    required: bool
    default: object = MISSING


@attrs.frozen
class ClassInfo:
    """What a class node's class holds.

    Attributes:
        cls: The class.
        description: The summary of the docstring the class defines itself.
        fields: The fields (TypedDicts, attrs classes, dataclasses), in
            declaration order; empty for enums.
        extra: The type of the keys beyond *fields* a TypedDict accepts
            (PEP 728 ``extra_items``); None when other keys are refused
            (``closed=True``, and toolctx's rule for every other class).
    """

    cls: type
    description: str
    fields: tuple[Field, ...] = ()
    extra: Node | None = None


def _unique(*candidates: object) -> tuple[Any, ...]:
    """The non-None *candidates*, without repeats, in order."""
    found: list[object] = []
    for item in candidates:
        if item is not None and not any(item is f for f in found):
            found.append(item)
    return tuple(found)


ANNOTATED: Final = _unique(typing.Annotated, typing_extensions.Annotated)
LITERAL: Final = _unique(typing.Literal, typing_extensions.Literal)
UNION: Final = _unique(typing.Union, types.UnionType)
ANY: Final = _unique(typing.Any, typing_extensions.Any, object)
ALIAS_TYPES: Final = _unique(
    getattr(typing, "TypeAliasType", None), typing_extensions.TypeAliasType
)
REQUIRED: Final = _unique(
    getattr(typing, "Required", None), typing_extensions.Required
)
NOT_REQUIRED: Final = _unique(
    getattr(typing, "NotRequired", None), typing_extensions.NotRequired
)
QUALIFIERS: Final = _unique(
    *REQUIRED,
    *NOT_REQUIRED,
    getattr(typing, "ReadOnly", None),
    typing_extensions.ReadOnly,
)
ARRAYS: Final = (list, cabc.Sequence)
SETS: Final = (set, frozenset, cabc.Set)
MAPPINGS: Final = (dict, cabc.Mapping)
BARE_TUPLES: Final = _unique(tuple, typing.Tuple)  # noqa: UP006 - bare alias
_BARE_CONTAINERS: Final = (*ARRAYS, *SETS, *MAPPINGS, tuple)
_SCALARS: Final[tuple[tuple[object, Kind, str | None], ...]] = (
    (str, Kind.STRING, None),
    (int, Kind.INTEGER, None),
    (float, Kind.NUMBER, None),
    (bool, Kind.BOOLEAN, None),
    (None, Kind.NULL, None),
    (type(None), Kind.NULL, None),
    (dt.datetime, Kind.FORMATTED, "date-time"),
    (dt.date, Kind.FORMATTED, "date"),
    (dt.time, Kind.FORMATTED, "time"),
    (uuid.UUID, Kind.FORMATTED, "uuid"),
    (dt.timedelta, Kind.FORMATTED, "duration"),
    (bytes, Kind.FORMATTED, None),
    (decimal.Decimal, Kind.DECIMAL, None),
)
_LITERAL_TYPES: Final = frozenset({str, int, bool, type(None)})
_NO_EXTRA_ITEMS: Final = getattr(typing_extensions, "NoExtraItems", object())


def is_in(item: object, candidates: tuple[object, ...]) -> bool:
    """Whether *item* is one of *candidates* (by identity)."""
    return any(item is candidate for candidate in candidates)


class Analysis:
    """Analyse the hints of one function (or one type) into nodes.

    Class fields are analysed once per analysis, on first encounter, and
    kept in :attr:`classes`; a class met again while its own fields are
    being analysed (a recursive class) is simply a node naming it.

    With *python*, the analysis describes Python values instead of JSON
    (the types of ``ContextKey`` slots): any class is an ``INSTANCE``
    node (checked with ``isinstance``, its fields not analysed), mapping
    keys may be of any type (``items`` is ``(value, key)``), type
    variables and forms without a runtime check are ``ANY``, and
    ``Annotated`` metadata is ignored.

    Args:
        owner: The function's qualified name, for error messages.
        parameter: The parameter being analysed, for error messages.
        python: Describe Python values (see above).
    """

    def __init__(
        self,
        owner: str,
        parameter: str | None = None,
        *,
        python: bool = False,
    ) -> None:
        self.owner = owner
        self.parameter = parameter
        self.python = python
        self.classes: dict[type, ClassInfo] = {}
        self._pending: set[type] = set()
        self._inside: list[str] = []
        self._aliases: list[object] = []

    def info(self, cls: type) -> ClassInfo:
        """The fields and description of a class node's class."""
        return self.classes[cls]

    def node(self, tp: Any) -> Node:  # noqa: C901, PLR0912
        """The node of the type expression *tp*."""
        origin = typing_extensions.get_origin(tp)
        args = typing_extensions.get_args(tp)
        if origin is not None and is_in(origin, ANNOTATED):
            if self.python:
                return self.node(args[0])
            return self._annotated(self.node(args[0]), args[1:])
        if isinstance(tp, ALIAS_TYPES):
            return self._alias(tp)
        if hasattr(tp, "__supertype__"):
            return self.node(tp.__supertype__)
        for scalar, kind, fmt in _SCALARS:
            if tp is scalar:
                return Node(kind, tp, format=fmt)
        if is_in(tp, ANY) or (self.python and isinstance(tp, typing.TypeVar)):
            return Node(Kind.ANY, tp)
        if origin is not None and is_in(origin, UNION):
            return Node(Kind.UNION, tp, tuple(self.node(a) for a in args))
        if origin is not None and is_in(origin, LITERAL):
            if self.python:
                return Node(Kind.LITERAL, tp, values=args)
            return self._literal(tp, args)
        if self.python:
            return self._python(tp, origin, args)
        if origin is not None or is_in(tp, _BARE_CONTAINERS):
            return self._generic(tp, origin or tp, args)
        if isinstance(tp, type):
            if issubclass(tp, PurePath):
                return Node(Kind.FORMATTED, tp, format="path")
            return self._class(tp)
        raise self.error(tp)

    def _python(  # noqa: C901 - one branch per kind of generic
        self, tp: Any, origin: Any, args: tuple[Any, ...]
    ) -> Node:
        """The node of a Python value type (see *python*)."""
        if origin is None:
            if not isinstance(tp, type):
                return Node(Kind.ANY, tp)  # nothing to check at run time
            if typing_extensions.is_typeddict(tp):
                return Node(Kind.INSTANCE, cabc.Mapping)
            return Node(Kind.INSTANCE, tp)
        if origin is type:
            return Node(Kind.INSTANCE, type)
        if not isinstance(origin, type):
            return Node(Kind.ANY, tp)
        if not args:
            return Node(Kind.INSTANCE, origin)
        if issubclass(origin, tuple):
            if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004
                item = self.node(args[0])
                return Node(Kind.ARRAY, tp, (item,), container=origin)
            fixed = () if args == ((),) else args
            items = tuple(self.node(arg) for arg in fixed)
            return Node(Kind.TUPLE, tp, items, container=origin)
        if issubclass(origin, cabc.Mapping):
            key, value = args if len(args) == 2 else (Any, Any)  # noqa: PLR2004
            items = (self.node(value), self.node(key))
            return Node(Kind.MAPPING, tp, items, container=origin)
        if issubclass(origin, cabc.Collection):
            item = self.node(args[0])
            return Node(Kind.ARRAY, tp, (item,), container=origin)
        return Node(Kind.INSTANCE, origin)

    def _annotated(self, node: Node, metadata: tuple[Any, ...]) -> Node:
        """*node* with what ``Annotated`` metadata adds to it.

        Descriptions (text, ``doc()``), constraints and examples
        (annotated-types, pydantic ``Field``, ``StringConstraints``).
        Metadata toolctx cannot express or enforce is a ``SchemaError``:
        a constraint is never dropped silently. Other objects (markers of
        other libraries) are left alone.
        """
        text = first_text(metadata)
        constraints = dict(node.constraints)
        examples = list(node.examples)
        for item in metadata:
            info = field_info(item)
            documented = doc_text(item)
            if documented is not None:
                text = text or documented
            elif info is not None:
                text = text or info.description
                examples.extend(info.examples)
                constraints.update(self._constraints(node, info.metadata))
            elif is_constraint(item):
                constraints.update(self._constraints(node, (item,)))
        if constraints == dict(node.constraints) and not examples:
            return node.described(text)
        return attrs.evolve(
            node.described(text),
            constraints=tuple(constraints.items()),
            examples=tuple(examples),
        )

    def _constraints(
        self, node: Node, items: Iterable[object]
    ) -> dict[str, object]:
        """JSON Schema keywords for annotated-types/pydantic *items*."""
        out: dict[str, object] = {}
        for item in flatten_metadata(items):
            try:
                pairs = constraint_keywords(item)
            except _UnenforceableError as exc:
                raise self.constraint_error(node.tp, item, str(exc)) from None
            for keyword, value in pairs:
                out[self._keyword_for(node, keyword, item)] = value
        return out

    def _keyword_for(self, node: Node, keyword: str, item: object) -> str:
        """The keyword *node*'s kind takes for *keyword*, or SchemaError."""
        kind = node.kind
        if keyword in _NUMERIC and kind in _NUMERIC_KINDS:
            return keyword
        if keyword in _LENGTH:
            target = _LENGTH_KEYWORDS.get(kind)
            if target is not None:
                return f"{keyword}{target}"
        if keyword == "pattern" and kind is Kind.STRING:
            return keyword
        raise self.constraint_error(
            node.tp,
            item,
            "does not apply to it; put a constraint on the type it bounds, "
            "e.g. `Annotated[int, Ge(0)] | None` rather than "
            "`Annotated[int | None, Ge(0)]`",
        )

    def _alias(self, alias: Any) -> Node:
        """The node of a ``TypeAliasType``'s value."""
        if is_in(alias, tuple(self._aliases)):
            raise self.error(alias, "recursive type aliases are not supported")
        self._aliases.append(alias)
        try:
            return self.node(alias.__value__)
        finally:
            self._aliases.pop()

    def _literal(self, tp: Any, values: tuple[Any, ...]) -> Node:
        for value in values:
            if type(value) not in _LITERAL_TYPES:
                raise self.error(
                    tp,
                    f"Literal values must be str, int, bool or None, "
                    f"not {value!r}",
                )
        return Node(Kind.LITERAL, tp, values=values)

    def _generic(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> Node:
        """The node of a container type (bare or subscripted)."""
        if is_in(origin, ARRAYS):
            return self._items(Kind.ARRAY, tp, args, list)
        if origin is tuple:
            if is_in(tp, BARE_TUPLES):
                return Node(Kind.ARRAY, tp, container=tuple, bare=True)
            if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004
                return self._items(Kind.ARRAY, tp, args[:1], tuple)
            fixed = () if not args or args == ((),) else args
            items = tuple(self.node(arg) for arg in fixed)
            return Node(Kind.TUPLE, tp, items, container=tuple)
        if is_in(origin, SETS):
            if not is_hashable(args[0] if args else Any):
                raise self.error(tp, "set items must be of a hashable type")
            made = set if origin is set else frozenset
            return self._items(Kind.SET, tp, args, made)
        if is_in(origin, MAPPINGS):
            if not args:
                return Node(Kind.MAPPING, tp, container=dict, bare=True)
            if args[0] is not str:
                raise self.error(tp, "JSON object keys are strings")
            value = self.node(args[1])
            return Node(Kind.MAPPING, tp, (value,), container=dict)
        raise self.error(tp)

    def _items(
        self, kind: Kind, tp: Any, args: tuple[Any, ...], container: type
    ) -> Node:
        if not args:
            return Node(kind, tp, container=container, bare=True)
        item = self.node(args[0])
        return Node(kind, tp, (item,), container=container)

    def _class(self, cls: type) -> Node:
        """A node naming a supported class; its info analysed once."""
        if issubclass(cls, enum.Enum):
            kind = Kind.ENUM
            build: Callable[[Any], ClassInfo] = self._enum_info
        elif typing_extensions.is_typeddict(cls):
            kind = Kind.TYPEDDICT
            build = self._typeddict_info
        elif attrs.has(cls) or dataclasses.is_dataclass(cls):
            kind = Kind.CLASS
            build = self._fields_info
        elif is_model(cls):
            return self._model(cls)
        else:
            raise self.error(cls)
        if cls not in self.classes and cls not in self._pending:
            self._pending.add(cls)
            try:
                self.classes[cls] = build(cls)
            finally:
                self._pending.discard(cls)
        values = enum_values(cls) if kind is Kind.ENUM else ()
        return Node(kind, cls, values=values)

    def _model(self, cls: type) -> Node:
        """A pydantic model: validated, described and dumped by pydantic."""
        from toolctx._types import pydantic

        try:
            pydantic.check(cls)
        except UnsupportedModelError as exc:
            raise self.error(cls, exc.reason) from None
        return Node(Kind.MODEL, cls)

    def _enum_info(self, cls: type[enum.Enum]) -> ClassInfo:
        if issubclass(cls, enum.Flag):
            raise self.error(cls, "Flag enums are not supported")
        for member in cls:
            if json_scalar(member.value) is MISSING:
                raise self.error(
                    cls,
                    f"member {member.name} has value "
                    f"{member.value!r}; values must be str, int, float, "
                    f"bool or None",
                )
        return ClassInfo(cls, class_doc(cls).summary)

    def _typeddict_info(self, cls: Any) -> ClassInfo:
        hints = self._hints(cls, typing_extensions.get_type_hints)
        required_keys = getattr(cls, "__required_keys__", frozenset(hints))
        doc = class_doc(cls)
        fields: list[Field] = []
        for name, hint in hints.items():
            tp, outer, marked = strip_qualifiers(hint)
            needed = name in required_keys if marked is None else marked
            node = self._field_node(cls, name, tp)
            if outer is not None:
                node = node.described(outer)
            elif node.description is None:
                node = node.described(doc.attributes.get(name))
            fields.append(Field(name, name, node, needed))
        extra = getattr(cls, "__extra_items__", _NO_EXTRA_ITEMS)
        extra_node = None
        if extra is not None and extra is not _NO_EXTRA_ITEMS:
            tp, _, _ = strip_qualifiers(extra)
            extra_node = self._field_node(cls, "<extra items>", tp)
        return ClassInfo(cls, doc.summary, tuple(fields), extra_node)

    def _fields_info(self, cls: Any) -> ClassInfo:
        hints = self._hints(cls, typing.get_type_hints)
        if any(isinstance(h, dataclasses.InitVar) for h in hints.values()):
            raise self.error(cls, "InitVar fields are not supported")
        doc = class_doc(cls)
        fields: list[Field] = []
        for name, key, default, required, metadata in init_fields(cls):
            if name not in hints:
                raise self.error(cls, f"field {name!r} has no annotation")
            text = metadata.get("description")
            if not isinstance(text, str) or not text:
                text = doc.attributes.get(name)
            node = self._field_node(cls, name, hints[name])
            if node.description is None:
                node = node.described(text)
            fields.append(Field(name, key, node, required, default))
        return ClassInfo(cls, doc.summary, tuple(fields))

    def _field_node(self, cls: type, name: str, tp: Any) -> Node:
        self._inside.append(f"{cls.__name__}.{name}")
        try:
            return self.node(tp)
        finally:
            self._inside.pop()

    def _hints(
        self, cls: type, get_hints: Callable[..., dict[str, Any]]
    ) -> dict[str, Any]:
        """*cls*'s resolved field hints (``Annotated`` kept)."""
        try:
            return get_hints(cls, include_extras=True)
        except (NameError, AttributeError, TypeError, SyntaxError) as exc:
            raise self.error(
                cls, f"its field annotations cannot be resolved ({exc})"
            ) from exc

    def constraint_error(
        self, tp: object, item: object, reason: str
    ) -> SchemaError:
        """The SchemaError for constraint metadata toolctx cannot use."""
        shown = repr(item)
        if len(shown) > 120:  # noqa: PLR2004
            shown = shown[:117] + "..."
        return SchemaError(
            f"Cannot build a JSON Schema for {self._where()}: the "
            f"constraint {shown} on type {type_name(tp)} {reason}. "
            "Constraints toolctx enforces: Gt, Ge, Lt, Le, MultipleOf, "
            "MinLen, MaxLen, Len, Interval and pydantic's Field(ge=..., "
            "max_length=..., pattern=...).",
            function=self.owner,
            parameter=self.parameter,
        )

    def _where(self) -> str:
        where = self.owner
        if self.parameter is not None:
            where = f"parameter {self.parameter!r}"
            if self._inside:
                where += f" (inside {' -> '.join(self._inside)})"
            where += f" of {self.owner}"
        elif self._inside:
            where += f" (inside {' -> '.join(self._inside)})"
        return where

    def error(self, tp: object, reason: str = "") -> SchemaError:
        """A SchemaError naming the owner, parameter and nested path."""
        where = self._where()
        if not reason and isinstance(tp, (str, typing.ForwardRef)):
            reason = "it is an unresolved forward reference"
        elif not reason and isinstance(tp, typing.TypeVar):
            reason = "type variables have no JSON Schema"
        because = f" ({reason})" if reason else ""
        message = (
            f"Cannot build a JSON Schema for {where}: type "
            f"{type_name(tp)} is not supported{because}. "
            f"Supported: {SUPPORTED_TYPES}."
        )
        return SchemaError(
            message, function=self.owner, parameter=self.parameter
        )


def first_text(metadata: tuple[Any, ...]) -> str | None:
    """The first non-empty string in ``Annotated`` metadata, cleaned."""
    for item in metadata:
        if isinstance(item, str):
            text = inspect.cleandoc(item).strip()
            if text:
                return text
    return None


def strip_qualifiers(hint: Any) -> tuple[Any, str | None, bool | None]:
    """Peel ``Required``/``NotRequired``/``ReadOnly`` off a TypedDict hint.

    Returns the bare type, the description of an ``Annotated`` that
    wrapped a qualifier (lost with the wrapper otherwise), and True/False
    for a ``Required``/``NotRequired`` marker (None without one). The
    marker beats ``__required_keys__``, which misses markers written as
    strings (``from __future__ import annotations``) before Python 3.14.
    """
    text: str | None = None
    marked: bool | None = None
    while True:
        origin = typing_extensions.get_origin(hint)
        args = typing_extensions.get_args(hint)
        if origin is not None and is_in(origin, QUALIFIERS):
            if marked is None and is_in(origin, REQUIRED):
                marked = True
            elif marked is None and is_in(origin, NOT_REQUIRED):
                marked = False
            hint = args[0]
        elif (
            origin is not None
            and is_in(origin, ANNOTATED)
            and is_in(typing_extensions.get_origin(args[0]), QUALIFIERS)
        ):
            text = text or first_text(args[1:])
            hint = args[0]
        else:
            return hint, text, marked


def enum_values(cls: type[enum.Enum]) -> tuple[object, ...]:
    """The member values of an enum, as JSON scalars."""
    return tuple(json_scalar(member.value) for member in cls)


def json_scalar(value: object) -> object:
    """*value* as a plain JSON scalar, or ``MISSING``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else MISSING
    if isinstance(value, str):
        return str(value)
    return MISSING


def class_doc(cls: type) -> ParsedDocstring:
    """What *cls*'s docstrings say: its own docstring and field texts.

    Field texts come from the docstring's ``Attributes``/``Args`` section
    and, for fields it does not describe, from attribute docstrings (a
    string right below the field in the class body).
    """
    doc = _own_doc(cls)
    extra = {
        name: text
        for name, text in attribute_docstrings(cls).items()
        if name not in doc.attributes
    }
    if not extra:
        return doc
    return attrs.evolve(doc, attributes={**doc.attributes, **extra})


@functools.lru_cache(maxsize=512)
def attribute_docstrings(cls: type) -> dict[str, str]:
    """Field name -> the string literal that follows it in *cls*'s body.

    Read from the class's source with :mod:`ast`; empty when the source is
    not available (built in a REPL, ``exec``, a compiled module).
    """
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return {}
    body = next(
        (
            node.body
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__
        ),
        [],
    )
    found: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        target = None
        if isinstance(statement, ast.AnnAssign) and isinstance(
            statement.target, ast.Name
        ):
            target = statement.target.id
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            target = statement.targets[0].id
        if (
            target is not None
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            text = inspect.cleandoc(following.value.value).strip()
            if text:
                found[target] = " ".join(text.split())
    return found


def _own_doc(cls: type) -> ParsedDocstring:
    """The parsed docstring *cls* defines itself (not inherited/generated)."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc == "An enumeration.":
        return ParsedDocstring()
    if any(doc == getattr(base, "__doc__", None) for base in cls.__mro__[1:]):
        return ParsedDocstring()
    if (
        dataclasses.is_dataclass(cls)
        and "\n" not in doc
        and doc.startswith(f"{cls.__name__}(")
        and doc.endswith(")")
    ):
        return ParsedDocstring()  # dataclasses write "Name(x: int)"
    return parse_docstring(doc)


def init_fields(
    cls: Any,
) -> list[tuple[str, str, object, bool, Mapping[Any, Any]]]:
    """``(name, key, default, required, metadata)`` per ``__init__`` field.

    For attrs classes or dataclasses. *key* is the JSON name (the attrs
    alias); *default* is ``MISSING`` when there is none or a factory.
    """
    if attrs.has(cls):
        return [
            (
                f.name,
                f.alias or f.name.lstrip("_"),
                MISSING
                if f.default is attrs.NOTHING
                or isinstance(f.default, attrs.Factory)  # type: ignore[arg-type]
                else f.default,
                f.default is attrs.NOTHING,
                f.metadata,
            )
            for f in attrs.fields(cls)
            if f.init
        ]
    return [
        (
            f.name,
            f.name,
            MISSING if f.default is dataclasses.MISSING else f.default,
            f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING,
            f.metadata,
        )
        for f in dataclasses.fields(cls)
        if f.init
    ]


def is_hashable(tp: Any, aliases: tuple[object, ...] = ()) -> bool:  # noqa: C901
    """Whether every value of the supported type *tp* is hashable.

    True for scalars, ``Literal``, enums, the datetime types, UUIDs,
    tuples and frozensets of hashable types, unions of them, and attrs
    classes and dataclasses whose ``__hash__`` is not None (their fields
    are not inspected). False for ``Any``, lists, dicts, sets, TypedDicts.
    """
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is not None and is_in(origin, ANNOTATED):
        return is_hashable(args[0], aliases)
    if isinstance(tp, ALIAS_TYPES):
        return not is_in(tp, aliases) and is_hashable(
            tp.__value__, (*aliases, tp)
        )
    if hasattr(tp, "__supertype__"):
        return is_hashable(tp.__supertype__, aliases)
    if any(tp is scalar for scalar, _, _ in _SCALARS):
        return True
    if isinstance(tp, type) and issubclass(tp, PurePath):
        return True
    if origin is not None and is_in(origin, LITERAL):
        return True
    if origin is not None and is_in(origin, UNION):
        return all(is_hashable(arg, aliases) for arg in args)
    if origin is tuple and not is_in(tp, BARE_TUPLES):
        return all(
            arg is Ellipsis or arg == () or is_hashable(arg, aliases)
            for arg in args
        )
    if origin is frozenset:
        return bool(args) and is_hashable(args[0], aliases)
    if origin is not None or not isinstance(tp, type):
        return False
    if issubclass(tp, enum.Enum):
        return True
    if attrs.has(tp) or dataclasses.is_dataclass(tp) or is_model(tp):
        return getattr(tp, "__hash__", None) is not None
    return False


UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")
"""Characters a ``$defs`` name may not hold."""


_NUMERIC: Final = frozenset(
    {
        "minimum",
        "exclusiveMinimum",
        "maximum",
        "exclusiveMaximum",
        "multipleOf",
    }
)
_NUMERIC_KINDS: Final = frozenset({Kind.INTEGER, Kind.NUMBER, Kind.DECIMAL})
_LENGTH: Final = frozenset({"min", "max"})
_LENGTH_KEYWORDS: Final = {
    Kind.STRING: "Length",
    Kind.ARRAY: "Items",
    Kind.TUPLE: "Items",
    Kind.SET: "Items",
    Kind.MAPPING: "Properties",
}
_BOUNDS: Final = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("multiple_of", "multipleOf"),
    ("min_length", "min"),
    ("max_length", "max"),
)
_TRANSFORMS: Final = (
    "strip_whitespace",
    "to_upper",
    "to_lower",
    "coerce_numbers_to_str",
    "allow_inf_nan",
    "max_digits",
    "decimal_places",
    "strict",
    "fail_fast",
    "union_mode",
)


@attrs.frozen
class FieldText:
    """What a pydantic ``FieldInfo`` adds to a type: text and bounds."""

    description: str | None
    examples: tuple[object, ...]
    metadata: tuple[object, ...]


def _from(item: object, package: str) -> bool:
    module = getattr(type(item), "__module__", "") or ""
    return module == package or module.startswith(f"{package}.")


def field_info(item: object) -> FieldText | None:
    """The text and metadata of a pydantic ``FieldInfo``, else None.

    Reads attributes only: pydantic is never imported here.
    """
    if not (_from(item, "pydantic") and type(item).__name__ == "FieldInfo"):
        return None
    description = getattr(item, "description", None)
    examples = getattr(item, "examples", None) or ()
    return FieldText(
        description if isinstance(description, str) else None,
        tuple(examples),
        tuple(getattr(item, "metadata", ()) or ()),
    )


def doc_text(item: object) -> str | None:
    """The text of ``annotated_types.doc()`` or ``typing_extensions.Doc``."""
    if type(item).__name__ not in {"DocInfo", "Doc"}:
        return None
    text = getattr(item, "documentation", None)
    return inspect.cleandoc(text) if isinstance(text, str) else None


def is_constraint(item: object) -> bool:
    """Whether *item* is annotated-types or pydantic constraint metadata."""
    return _from(item, "annotated_types") or (
        _from(item, "pydantic") and type(item).__name__ != "FieldInfo"
    )


def flatten_metadata(items: Iterable[object]) -> list[object]:
    """*items*, grouped metadata expanded into its parts.

    ``Interval``, ``Len`` and ``StringConstraints`` are groups.
    """
    out: list[object] = []
    for item in items:
        if is_constraint(item) and hasattr(item, "__iter__"):
            out.extend(flatten_metadata(list(item)))
        else:
            out.append(item)
    return out


def constraint_keywords(item: object) -> list[tuple[str, object]]:
    """``(keyword, value)`` pairs of one constraint.

    Lengths come as ``min``/``max``, resolved per kind by the caller.
    Metadata toolctx cannot enforce raises ``_UnenforceableErrorError``.
    """
    found: list[tuple[str, object]] = []
    for attribute, keyword in _BOUNDS:
        value = getattr(item, attribute, None)
        if value is not None:
            found.append((keyword, value))
    pattern = getattr(item, "pattern", None)
    if pattern is not None:
        found.append(("pattern", getattr(pattern, "pattern", pattern)))
    transforms = [
        name
        for name in _TRANSFORMS
        if getattr(item, name, None) not in {None, False}
    ]
    if transforms or not found:
        unknown = ", ".join(transforms) or type(item).__name__
        msg = f"asks for {unknown}, which toolctx cannot enforce"
        raise _UnenforceableError(msg)
    return found


class _UnenforceableError(ValueError):
    """Constraint metadata toolctx cannot express or enforce."""
