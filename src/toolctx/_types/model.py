"""Type hints become a small node tree: the one analysis of a tool's types.

:class:`Analysis` walks a type expression once and returns a
:class:`~toolctx._types.nodes.Node`: its
:class:`~toolctx._types.nodes.Kind`, its children (items, union members,
tuple positions), literal or enum values, the JSON string format of
datetimes and UUIDs, and the description ``Annotated`` gave it. Classes
(enums, TypedDicts, attrs classes, dataclasses) are nodes that name their
class; their fields are analysed once per class into
:class:`~toolctx._types.nodes.ClassInfo` (so recursive classes work) and
looked up with :meth:`Analysis.info`. What typing forms are spelled as
lives in :mod:`~toolctx._types.forms`, what ``Annotated`` metadata says
in :mod:`~toolctx._types.metadata`, what a class declares in
:mod:`~toolctx._types.classes`, and how its fields become nodes in
:mod:`~toolctx._types.class_info`.

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

import collections.abc as cabc
import dataclasses
import enum
import typing

from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

import attrs
import typing_extensions

from toolctx._types.class_info import (
    FieldAnalysis,
    enum_info,
    fields_info,
    typeddict_info,
)
from toolctx._types.classes import enum_values
from toolctx._types.forms import (
    ALIAS_TYPES,
    ANNOTATED,
    ANY,
    ARRAYS,
    BARE_TUPLES,
    LITERAL,
    MAPPINGS,
    SCALARS,
    SETS,
    UNION,
    is_hashable,
    is_in,
)
from toolctx._types.metadata import annotate
from toolctx._types.nodes import (
    SUPPORTED_TYPES,
    ClassInfo,
    Kind,
    Node,
    type_name,
)
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx.exceptions import SchemaError


if TYPE_CHECKING:
    from collections.abc import Callable


_BARE_CONTAINERS: Final = (*ARRAYS, *SETS, *MAPPINGS, tuple)
_LITERAL_TYPES: Final = frozenset({str, int, bool, type(None)})


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
            return annotate(
                self.node(args[0]), args[1:], self.constraint_error
            )
        if isinstance(tp, ALIAS_TYPES):
            return self._alias(tp)
        if hasattr(tp, "__supertype__"):
            return self.node(tp.__supertype__)
        for scalar, kind, fmt in SCALARS:
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
            build: Callable[[FieldAnalysis, Any], ClassInfo] = enum_info
        elif typing_extensions.is_typeddict(cls):
            kind = Kind.TYPEDDICT
            build = typeddict_info
        elif attrs.has(cls) or dataclasses.is_dataclass(cls):
            kind = Kind.CLASS
            build = fields_info
        elif is_model(cls):
            return self._model(cls)
        else:
            raise self.error(cls)
        if cls not in self.classes and cls not in self._pending:
            self._pending.add(cls)
            try:
                self.classes[cls] = build(self, cls)
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

    def field_node(self, cls: type, name: str, tp: Any) -> Node:
        """The node of the type *tp* of field *name* of *cls*."""
        self._inside.append(f"{cls.__name__}.{name}")
        try:
            return self.node(tp)
        finally:
            self._inside.pop()

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
