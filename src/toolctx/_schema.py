"""JSON Schema (Draft 2020-12) for a tool's parameters, built from hints.

:func:`parameters_schema` turns a tool's :class:`~toolctx._params.Param`
list into the ``parameters`` object providers ask for. Types map as
follows, and the argument validator accepts exactly what these accept:

=========================================  ==============================
Python                                     JSON Schema
=========================================  ==============================
``str``, ``int``, ``float``, ``bool``      ``{"type": "string"}`` ...
``None``                                   ``{"type": "null"}``
``Any``, ``object``                        ``{}``
``A | B``, ``Union``, ``Optional``         ``{"anyOf": [A, B]}``
``Literal[...]`` (str/int/bool/None)       ``{"enum": [...]}`` (+ type)
``Enum`` subclass (not ``Flag``)           ``$ref`` to ``{"enum": [...]}``
``list[T]``, ``Sequence[T]``               ``array`` of T
``tuple[T, ...]``                          ``array`` of T
``tuple[A, B]``                            ``array`` with ``prefixItems``
``set[T]``, ``frozenset[T]``, ``Set[T]``   ``array`` with ``uniqueItems``
``dict[str, T]``, ``Mapping[str, T]``      ``object`` of T
TypedDict, attrs class, dataclass          ``$ref`` to a closed ``object``
``datetime``, ``date``, ``time``, UUID     ``string`` with ``format``
``Annotated[T, "text"]``                   T, described by "text"
``NewType``, ``TypeAliasType``             the underlying type
=========================================  ==============================

Union members keep their written order. Set items must be of a hashable
type (see :func:`is_hashable_type`). Generic type aliases are not
supported, nor are recursive ones (recursive *classes* are).

Classes (enums, TypedDicts, attrs classes, dataclasses) go to the root
``$defs`` under their ``__name__``, in first-encounter order, and are
referenced with ``{"$ref": "#/$defs/Name"}``, so recursive classes work.
When two different classes share a ``__name__``, the later one is named
``module.qualname`` (characters outside ``[A-Za-z0-9_.-]`` become ``_``).

Descriptions, strongest first: the first non-empty string in
``Annotated`` metadata, then the docstring's (``Param.description``; for
class fields ``metadata={"description": ...}`` and then the class
docstring's ``Attributes`` entry). A class's own docstring (not one it
inherits, nor one Python generates) describes its ``$defs`` entry.
Defaults become ``"default"`` when :func:`json_default` can convert them.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import enum
import inspect
import json
import math
import re
import types
import typing
import uuid

from typing import TYPE_CHECKING, Any, Final

import attrs
import typing_extensions

from toolctx._docstrings import ParsedDocstring, parse_docstring
from toolctx._keys import MISSING, type_name
from toolctx.exceptions import SchemaError


if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from toolctx._params import Param

__all__ = [
    "SUPPORTED_TYPES",
    "is_hashable_type",
    "json_default",
    "parameters_schema",
    "type_schema",
]

JSONSchema = dict[str, Any]

SUPPORTED_TYPES: Final = (
    "str, int, float, bool, None, Optional/Union, Literal, Enum, "
    "list/tuple/set/frozenset, dict[str, T], TypedDict, attrs classes, "
    "dataclasses, datetime/date/time/UUID, Annotated"
)
"""The supported types, as named in :class:`SchemaError` messages."""


def _unique(*candidates: object) -> tuple[Any, ...]:
    """The non-None *candidates*, without repeats, in order."""
    found: list[object] = []
    for item in candidates:
        if item is not None and not any(item is f for f in found):
            found.append(item)
    return tuple(found)


_ANNOTATED = _unique(typing.Annotated, typing_extensions.Annotated)
_LITERAL = _unique(typing.Literal, typing_extensions.Literal)
_UNION = _unique(typing.Union, types.UnionType)
_ANY = _unique(typing.Any, typing_extensions.Any, object)
_ALIAS_TYPES = _unique(
    getattr(typing, "TypeAliasType", None), typing_extensions.TypeAliasType
)
_REQUIRED = _unique(
    getattr(typing, "Required", None), typing_extensions.Required
)
_NOT_REQUIRED = _unique(
    getattr(typing, "NotRequired", None), typing_extensions.NotRequired
)
_QUALIFIERS = _unique(
    *_REQUIRED,
    *_NOT_REQUIRED,
    getattr(typing, "ReadOnly", None),
    typing_extensions.ReadOnly,
)
_ARRAYS = (list, collections.abc.Sequence)
_SETS = (set, frozenset, collections.abc.Set)
_MAPPINGS = (dict, collections.abc.Mapping)
_BARE_TUPLES = _unique(tuple, typing.Tuple)  # noqa: UP006 - the bare alias
_SCALARS: Final[tuple[tuple[object, JSONSchema], ...]] = (
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (None, {"type": "null"}),
    (type(None), {"type": "null"}),
    (dt.datetime, {"type": "string", "format": "date-time"}),
    (dt.date, {"type": "string", "format": "date"}),
    (dt.time, {"type": "string", "format": "time"}),
    (uuid.UUID, {"type": "string", "format": "uuid"}),
)
_BARE_CONTAINERS = (*_ARRAYS, *_SETS, *_MAPPINGS, tuple)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def parameters_schema(params: Sequence[Param], *, owner: str) -> JSONSchema:
    """Return the JSON Schema of a tool's arguments object.

    The result is ``{"type": "object", "properties": ..., "required":
    [...], "additionalProperties": False, "$defs": ...}``: properties in
    parameter order, ``required`` only when some parameter has no
    default, ``$defs`` only when a class is referenced.

    Args:
        params: The tool's model-visible parameters, annotations resolved.
        owner: The function's qualified name, used in error messages.

    Raises:
        SchemaError: A parameter's type (or a type nested in it) has no
            JSON Schema; the message names *owner*, the parameter and,
            for nested classes, the field path.
    """
    builder = _Builder(owner)
    properties: JSONSchema = {}
    required: list[str] = []
    for param in params:
        builder.parameter = param.name
        properties[param.name] = builder.property_schema(
            param.annotation,
            description=param.description,
            default=param.default,
        )
        if param.required:
            required.append(param.name)
    schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema


def type_schema(
    tp: Any, *, owner: str, parameter: str | None = None
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """Return ``(schema, defs)`` for the type expression *tp*.

    *schema* may hold ``{"$ref": "#/$defs/Name"}`` references to entries
    of *defs*, which the caller must place under the root ``"$defs"`` of
    the document. *owner* and *parameter* only feed error messages.

    Raises:
        SchemaError: *tp* (or a type nested in it) has no JSON Schema.
    """
    builder = _Builder(owner)
    builder.parameter = parameter
    return builder.schema(tp), builder.defs


def json_default(value: object) -> object:
    """Return *value* as JSON data, or ``MISSING`` if it has no JSON form.

    Enum members become their value, tuples lists, sets and frozensets
    lists sorted by their JSON text, ``datetime``/``date``/``time``
    ISO 8601 strings, UUIDs strings, str-keyed mappings objects, attrs
    and dataclass instances objects of their ``__init__`` fields. NaN,
    infinities, other keys and other objects have no JSON form.
    """
    return _to_json(value, ())


def is_hashable_type(tp: Any) -> bool:
    """Whether every value of the supported type *tp* is hashable.

    True for scalars, ``Literal``, enums, the datetime types, UUIDs,
    tuples and frozensets of hashable types, unions of them, and attrs
    classes and dataclasses whose ``__hash__`` is not None (their fields
    are not inspected). False for ``Any``, lists, dicts, sets, TypedDicts.
    """
    return _hashable(tp, ())


class _Builder:
    """Walks type expressions, collecting ``$defs`` for one schema."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.parameter: str | None = None
        self.defs: dict[str, JSONSchema] = {}
        self._names: dict[type, str] = {}
        self._inside: list[str] = []
        self._aliases: list[object] = []

    def property_schema(
        self, tp: Any, *, description: str | None, default: object
    ) -> JSONSchema:
        """The schema of a property: *tp*, a description and a default."""
        schema = self.schema(tp)
        if description and "description" not in schema:
            schema["description"] = description
        if default is not MISSING:
            value = json_default(default)
            if value is not MISSING:
                schema["default"] = value
        return schema

    def schema(self, tp: Any) -> JSONSchema:  # noqa: C901
        """The schema of the type expression *tp* (a fresh dict)."""
        origin = typing_extensions.get_origin(tp)
        args = typing_extensions.get_args(tp)
        if origin is not None and _is_in(origin, _ANNOTATED):
            schema = self.schema(args[0])
            text = _first_text(args[1:])
            if text is not None:
                schema["description"] = text
            return schema
        if isinstance(tp, _ALIAS_TYPES):
            return self._alias(tp)
        if hasattr(tp, "__supertype__"):
            return self.schema(tp.__supertype__)
        for scalar, schema in _SCALARS:
            if tp is scalar:
                return dict(schema)
        if _is_in(tp, _ANY):
            return {}
        if origin is not None and _is_in(origin, _UNION):
            return {"anyOf": [self.schema(arg) for arg in args]}
        if origin is not None and _is_in(origin, _LITERAL):
            return self._literal(tp, args)
        if origin is not None or _is_in(tp, _BARE_CONTAINERS):
            return self._generic(tp, origin or tp, args)
        if isinstance(tp, type):
            return self._class(tp)
        raise self._error(tp)

    def _alias(self, alias: Any) -> JSONSchema:
        """The schema of a ``TypeAliasType``'s value."""
        if _is_in(alias, tuple(self._aliases)):
            raise self._error(
                alias, "recursive type aliases are not supported"
            )
        self._aliases.append(alias)
        schema = self.schema(alias.__value__)
        self._aliases.pop()
        return schema

    def _literal(self, tp: Any, values: tuple[Any, ...]) -> JSONSchema:
        """``{"enum": [...]}`` plus ``type`` when the values share one."""
        for value in values:
            if type(value) not in {str, int, bool, type(None)}:
                raise self._error(
                    tp,
                    f"Literal values must be str, int, bool or None, "
                    f"not {value!r}",
                )
        return _enum_schema(list(values))

    def _generic(  # noqa: C901
        self, tp: Any, origin: Any, args: tuple[Any, ...]
    ) -> JSONSchema:
        """The schema of a container type (bare or subscripted)."""
        if _is_in(origin, _ARRAYS):
            return {"type": "array", "items": self._item(args)}
        if origin is tuple:
            if _is_in(tp, _BARE_TUPLES):
                return {"type": "array", "items": {}}
            if len(args) == 2 and args[1] is Ellipsis:  # noqa: PLR2004
                return {"type": "array", "items": self.schema(args[0])}
            if not args or args == ((),):
                return {"type": "array", "maxItems": 0}
            return {
                "type": "array",
                "prefixItems": [self.schema(arg) for arg in args],
                "items": False,
                "minItems": len(args),
                "maxItems": len(args),
            }
        if _is_in(origin, _SETS):
            items = self._item(args)
            if not _hashable(args[0] if args else Any, ()):
                raise self._error(tp, "set items must be of a hashable type")
            return {"type": "array", "items": items, "uniqueItems": True}
        if _is_in(origin, _MAPPINGS):
            if not args:
                return {"type": "object"}
            if args[0] is not str:
                raise self._error(tp, "JSON object keys are strings")
            return {
                "type": "object",
                "additionalProperties": self.schema(args[1]),
            }
        raise self._error(tp)

    def _item(self, args: tuple[Any, ...]) -> JSONSchema:
        """The schema of a container's single type argument, if any."""
        return self.schema(args[0]) if args else {}

    def _class(self, cls: type) -> JSONSchema:
        """A ``$ref`` to the ``$defs`` entry of a supported class."""
        build: Callable[[Any], JSONSchema]
        if issubclass(cls, enum.Enum):
            build = self._enum_def
        elif typing_extensions.is_typeddict(cls):
            build = self._typeddict_def
        elif attrs.has(cls) or dataclasses.is_dataclass(cls):
            build = self._fields_def
        else:
            raise self._error(cls)
        name = self._names.get(cls)
        if name is None:
            name = self._name_for(cls)
            self._names[cls] = name
            self.defs[name] = {}  # reserve the slot: order, and recursion
            self.defs[name] = build(cls)
        return {"$ref": f"#/$defs/{name}"}

    def _name_for(self, cls: type) -> str:
        """A ``$defs`` name for *cls* that no other class has taken."""
        name = _UNSAFE_NAME.sub("_", cls.__name__)
        if name not in self.defs:
            return name
        full = _UNSAFE_NAME.sub("_", f"{cls.__module__}.{cls.__qualname__}")
        name, counter = full, 2
        while name in self.defs:
            name, counter = f"{full}_{counter}", counter + 1
        return name

    def _enum_def(self, cls: type[enum.Enum]) -> JSONSchema:
        """The ``$defs`` entry of an Enum: its member values."""
        if issubclass(cls, enum.Flag):
            raise self._error(cls, "Flag enums are not supported")
        values: list[object] = []
        for member in cls:
            value = _scalar(member.value)
            if value is MISSING:
                raise self._error(
                    cls,
                    f"member {member.name} has value "
                    f"{member.value!r}; values must be str, int, float, "
                    f"bool or None",
                )
            values.append(value)
        return _described(_enum_schema(values), _class_doc(cls).summary)

    def _typeddict_def(self, cls: Any) -> JSONSchema:
        """The ``$defs`` entry of a TypedDict."""
        hints = self._hints(cls, typing_extensions.get_type_hints)
        required_keys = getattr(cls, "__required_keys__", frozenset(hints))
        doc = _class_doc(cls)
        fields: list[tuple[str, JSONSchema, bool]] = []
        for name, hint in hints.items():
            tp, outer, marked = _strip_qualifiers(hint)
            needed = name in required_keys if marked is None else marked
            self._inside.append(f"{cls.__name__}.{name}")
            schema = self.schema(tp)
            self._inside.pop()
            if outer is not None:
                schema["description"] = outer
            elif name in doc.attributes and "description" not in schema:
                schema["description"] = doc.attributes[name]
            fields.append((name, schema, needed))
        return self._object(doc, fields)

    def _fields_def(self, cls: Any) -> JSONSchema:
        """The ``$defs`` entry of an attrs class or dataclass."""
        hints = self._hints(cls, typing.get_type_hints)
        if any(isinstance(h, dataclasses.InitVar) for h in hints.values()):
            raise self._error(cls, "InitVar fields are not supported")
        doc = _class_doc(cls)
        fields: list[tuple[str, JSONSchema, bool]] = []
        for name, key, default, required, metadata in _init_fields(cls):
            if name not in hints:
                raise self._error(cls, f"field {name!r} has no annotation")
            text = metadata.get("description")
            if not isinstance(text, str) or not text:
                text = doc.attributes.get(name)
            self._inside.append(f"{cls.__name__}.{name}")
            prop = self.property_schema(
                hints[name], description=text, default=default
            )
            self._inside.pop()
            fields.append((key, prop, required))
        return self._object(doc, fields)

    @staticmethod
    def _object(
        doc: ParsedDocstring, fields: list[tuple[str, JSONSchema, bool]]
    ) -> JSONSchema:
        """A closed object schema from ``(key, schema, required)`` rows."""
        schema: JSONSchema = {
            "type": "object",
            "properties": {key: prop for key, prop, _ in fields},
        }
        required = [key for key, _, needed in fields if needed]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return _described(schema, doc.summary)

    def _hints(
        self, cls: type, get_hints: Callable[..., dict[str, Any]]
    ) -> dict[str, Any]:
        """*cls*'s resolved field hints (``Annotated`` kept)."""
        try:
            return get_hints(cls, include_extras=True)
        except (NameError, AttributeError, TypeError, SyntaxError) as exc:
            raise self._error(
                cls, f"its field annotations cannot be resolved ({exc})"
            ) from exc

    def _error(self, tp: object, reason: str = "") -> SchemaError:
        """A SchemaError naming the owner, parameter and nested path."""
        where = self.owner
        if self.parameter is not None:
            where = f"parameter {self.parameter!r}"
            if self._inside:
                where += f" (inside {' -> '.join(self._inside)})"
            where += f" of {self.owner}"
        elif self._inside:
            where += f" (inside {' -> '.join(self._inside)})"
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


def _is_in(item: object, candidates: tuple[object, ...]) -> bool:
    """Whether *item* is one of *candidates* (by identity)."""
    return any(item is candidate for candidate in candidates)


def _first_text(metadata: tuple[Any, ...]) -> str | None:
    """The first non-empty string in ``Annotated`` metadata, cleaned."""
    for item in metadata:
        if isinstance(item, str):
            text = inspect.cleandoc(item).strip()
            if text:
                return text
    return None


def _strip_qualifiers(hint: Any) -> tuple[Any, str | None, bool | None]:
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
        if origin is not None and _is_in(origin, _QUALIFIERS):
            if marked is None and _is_in(origin, _REQUIRED):
                marked = True
            elif marked is None and _is_in(origin, _NOT_REQUIRED):
                marked = False
            hint = args[0]
        elif (
            origin is not None
            and _is_in(origin, _ANNOTATED)
            and _is_in(typing_extensions.get_origin(args[0]), _QUALIFIERS)
        ):
            text = text or _first_text(args[1:])
            hint = args[0]
        else:
            return hint, text, marked


def _json_kind(value: object) -> str:
    """The JSON Schema type name of a scalar *value*."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _enum_schema(values: list[object]) -> JSONSchema:
    """``{"enum": values}``, plus ``type`` when all share one JSON type."""
    schema: JSONSchema = {"enum": values}
    kinds = [_json_kind(value) for value in values]
    if kinds and all(kind == kinds[0] for kind in kinds):
        schema["type"] = kinds[0]
    return schema


def _described(schema: JSONSchema, text: str) -> JSONSchema:
    """*schema* with ``description`` set to *text* when it is non-empty."""
    if text:
        schema["description"] = text
    return schema


def _class_doc(cls: type) -> ParsedDocstring:
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


def _init_fields(
    cls: Any,
) -> list[tuple[str, str, object, bool, collections.abc.Mapping[Any, Any]]]:
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


def _scalar(value: object) -> object:
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


def _to_json(  # noqa: C901, PLR0912
    value: object, active: tuple[int, ...]
) -> object:
    """:func:`json_default`, with the ids of the containers being walked."""
    if isinstance(value, enum.Enum):
        return _to_json(value.value, active)
    scalar = _scalar(value)
    if scalar is not MISSING or value is None:
        return scalar
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if id(value) in active:
        return MISSING
    inner = (*active, id(value))
    items: list[object]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_to_json(item, inner) for item in value]
        if any(item is MISSING for item in items):
            return MISSING
        if isinstance(value, (set, frozenset)):
            items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return items
    pairs: list[tuple[object, object]]
    if isinstance(value, collections.abc.Mapping):
        pairs = list(value.items())
    elif attrs.has(type(value)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        pairs = [
            (key, getattr(value, name))
            for name, key, *_ in _init_fields(type(value))
        ]
    else:
        return MISSING
    result: dict[str, object] = {}
    for key, item in pairs:
        converted = _to_json(item, inner)
        if not isinstance(key, str) or converted is MISSING:
            return MISSING
        result[key] = converted
    return result


def _hashable(tp: Any, aliases: tuple[object, ...]) -> bool:  # noqa: C901
    """:func:`is_hashable_type`, with the type aliases being expanded."""
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is not None and _is_in(origin, _ANNOTATED):
        return _hashable(args[0], aliases)
    if isinstance(tp, _ALIAS_TYPES):
        return not _is_in(tp, aliases) and _hashable(
            tp.__value__, (*aliases, tp)
        )
    if hasattr(tp, "__supertype__"):
        return _hashable(tp.__supertype__, aliases)
    if any(tp is scalar for scalar, _ in _SCALARS):
        return True
    if origin is not None and _is_in(origin, _LITERAL):
        return True
    if origin is not None and _is_in(origin, _UNION):
        return all(_hashable(arg, aliases) for arg in args)
    if origin is tuple and not _is_in(tp, _BARE_TUPLES):
        return all(
            arg is Ellipsis or arg == () or _hashable(arg, aliases)
            for arg in args
        )
    if origin is frozenset:
        return bool(args) and _hashable(args[0], aliases)
    if origin is not None or not isinstance(tp, type):
        return False
    if issubclass(tp, enum.Enum):
        return True
    if attrs.has(tp) or dataclasses.is_dataclass(tp):
        return getattr(tp, "__hash__", None) is not None
    return False
