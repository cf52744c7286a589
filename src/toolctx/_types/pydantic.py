"""Pydantic v2 models as tool parameters and return values.

Only imported once a model is used (the type model asks
:func:`toolctx._types.pydantic_check.is_model` first, which never imports
pydantic). Everything here is delegated to pydantic, under toolctx's
rules:

- :func:`model_schema`: the model's JSON Schema (Draft 2020-12) as
  pydantic writes it (titles, ``$defs`` named after the classes,
  ``Field`` constraints as keywords), except that every class that does
  not allow extra keys says ``additionalProperties: false`` and that a
  model's description and its fields' descriptions follow toolctx's
  docstring rules (the summary; ``Attributes:`` entries and attribute
  docstrings for fields that have no ``Field(description=...)``).
- :func:`validate` (:func:`compile_validator` for a per-tool plan):
  pydantic validates the JSON value in strict JSON mode, so JSON's own
  spellings are accepted (ISO 8601 strings for dates, times, datetimes
  and durations, strings for UUIDs, enum values) and nothing else is
  coerced. The model's validators (``field_validator``,
  ``model_validator``, ``model_post_init``) run as usual; a
  ``ValueError`` they raise becomes a problem with its path.
- :func:`dump`: the model in pydantic's JSON mode (aliases as the model's
  ``serialize_by_alias`` says), refusing what JSON cannot carry exactly.

Where toolctx's rules and pydantic's defaults differ, toolctx's win:

=======================================  ===============  ===============
Input (JSON)                             pydantic (lax)   toolctx
=======================================  ===============  ===============
``"1"`` for ``int``, ``1`` for ``str``   coerced          refused
``true`` for ``int``/``float``           coerced          refused
``true`` for ``Literal[1]``, IntEnum     accepted         refused
``1.0`` for ``int``                      ``1``            ``1`` (strict
                                                          pydantic: no)
unknown key, no ``extra`` setting        dropped          refused
unknown key, ``extra="allow"``           kept             kept
``[1, 1]`` for ``set[int]``              ``{1}``          refused
``Field(strict=False)``, ``strict``      per field        strict always
=======================================  ===============  ===============

Known limits (pydantic's own rules stay): strings pydantic accepts for
UUIDs (``{...}``, ``urn:uuid:``, no hyphens), dates and numbers in
``Decimal`` are its own; ``bytes`` follow the model's ``val_json_bytes``
(UTF-8 by default, not toolctx's base64); a ``mode="before"`` validator
may take more than the schema says; a model that also accepts its field
names (``populate_by_name``) has only its aliases in the schema. A model
with its own ``__init__`` is not supported.
"""

from __future__ import annotations

import functools
import inspect
import json
import json.encoder
import math
import threading

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, cast

import pydantic
import pydantic_core

from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from toolctx._text import bounded, message_of
from toolctx._types.model import class_doc
from toolctx._types.output import MAX_INT, MAX_INT_DIGITS, NotJSONError
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx._types.schema import json_number
from toolctx._types.validate import (
    InvalidValueError,
    json_key,
    json_kind,
    show_value,
)
from toolctx.exceptions import MAX_PROBLEM_LENGTH


if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue

    from toolctx._types.validate import PathParts, Problem


__all__ = [
    "UnsupportedModelError",
    "check",
    "compile_validator",
    "dump",
    "is_model",
    "model_schema",
    "validate",
]

JSONSchema = dict[str, Any]
Mode = Literal["validation", "serialization"]

_EXTRA: Final = "__pydantic_extra__"
_MODEL_SLOTS: Final = (
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
)
_CLASS_KINDS: Final = frozenset({"model", "dataclass", "typed-dict"})
_FIELDS_KINDS: Final = frozenset(
    {"model-fields", "typed-dict", "dataclass-args"}
)
_NOT_SCHEMAS: Final = frozenset(
    {
        "cls",
        "config",
        "custom_error_context",
        "default",
        "expected",
        "function",
        "members",
        "metadata",
        "missing",
        "ref",
        "schema_ref",
        "serialization",
    }
)
"""Core-schema keys whose values are data, not schemas to rewrite."""
_DUPLICATE: Final = "toolctx_duplicate_items"

_KEY: Final = "model"
_NO_INPUT: Final = object()


# -- the plan of one model ---------------------------------------------------


def _refuse(value: object) -> object:
    """The JSON encoder's ``default``: nothing but JSON data is encoded."""
    raise TypeError(type(value).__qualname__)


def _make_encoder() -> Callable[[object], str]:
    """Compact JSON text of JSON data; NaN, infinities and objects raise.

    The C encoder ``json.dumps`` uses, made once: ``json.dumps`` builds a
    new one per call, which costs more than encoding small arguments.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is not None:
        try:
            chunks = make(
                None,  # no cycle check: a cycle ends in RecursionError
                _refuse,
                json.encoder.encode_basestring_ascii,
                None,
                ":",
                ",",
                False,  # noqa: FBT003 - positional C signature
                False,  # noqa: FBT003
                False,  # noqa: FBT003
            )
        except TypeError:  # another signature: use the public encoder
            pass
        else:
            return lambda data: "".join(chunks(data, 0))
    return json.JSONEncoder(
        allow_nan=False, separators=(",", ":"), default=_refuse
    ).encode


_encode: Final = _make_encoder()


class _Plan:
    """Everything toolctx builds once for one model class.

    Attributes:
        cls: The model.
        source: The model's own core schema.
        validator: Validates under toolctx's rules (see the module).
        serializer: Dumps in JSON mode, keeping NaN and infinities as
            floats so that :func:`dump` can refuse them.
        by_alias: Whether output keys are the fields' aliases.
    """

    def __init__(self, cls: type[pydantic.BaseModel]) -> None:
        self.cls = cls
        self.source: Any = cls.__pydantic_core_schema__
        config = _model_config(self.source)
        self.validator = pydantic_core.SchemaValidator(
            _Rewriter().rewrite(self.source, "ignore"), config
        )
        out_config = dict(config or {})
        if "ser_json_inf_nan" not in cls.model_config:
            out_config["ser_json_inf_nan"] = "constants"
        self.serializer = pydantic_core.SchemaSerializer(
            self.source, cast("core_schema.CoreConfig", out_config)
        )
        self.by_alias = bool(cls.model_config.get("serialize_by_alias"))
        self._schemas: dict[str, tuple[JSONSchema, dict[str, JSONSchema]]]
        self._schemas = {}

    def validate(self, data: object) -> Any:
        """*data* (JSON) as an instance of the model.

        Raises:
            InvalidValueError: Every problem, with paths relative to
                *data*.
        """
        try:
            text = _encode(data)
        except (TypeError, ValueError, RecursionError):
            raise InvalidValueError([_not_json_problem(data)]) from None
        try:
            return self.validator.validate_json(text, strict=True)
        except pydantic_core.ValidationError as exc:
            raise InvalidValueError(self._problems(exc, data)) from None

    def schema(self, mode: Mode) -> tuple[JSONSchema, dict[str, JSONSchema]]:
        """``(schema, defs)`` of the model in *mode* (shared: copy it)."""
        found = self._schemas.get(mode)
        if found is None:
            found = _generate(self.source, mode, self.by_alias)
            self._schemas[mode] = found
        return found

    def _problems(
        self, exc: pydantic_core.ValidationError, data: object
    ) -> list[Problem]:
        found: list[_Found] = []
        for error in exc.errors(include_url=False):
            found.extend(self._problem(error, data))
        return _merged(found)

    def _problem(
        self, error: pydantic_core.ErrorDetails, data: object
    ) -> list[_Found]:
        """The problems one pydantic error stands for."""
        kind = error["type"]
        ctx: dict[str, Any] = dict(error.get("ctx") or {})
        path = _data_path(error["loc"], data, keep_last=kind == "missing")
        if kind == _DUPLICATE:
            return [
                ((*path, index), None, None, _duplicate(first))
                for index, first in ctx.get("duplicates", ())
            ]
        if kind in {"extra_forbidden", "unexpected_keyword_argument"}:
            names = self._allowed(path[:-1])
            if names is None:
                return [(path, None, None, "unexpected property")]
            allowed = ", ".join(names) if names else "none"
            text = f"unexpected property (allowed: {allowed})"
            return [(path, None, None, text)]
        return [_one_problem(error, kind, ctx, path)]

    def _allowed(self, path: PathParts) -> list[str] | None:
        """The keys the object at *path* takes, when the schema says."""
        schema, defs = self.schema("validation")
        nodes = list(_resolved(schema, defs))
        for part in path:
            nodes = [
                found
                for node in nodes
                for child in _children(node, part)
                for found in _resolved(child, defs)
            ]
        options = {
            tuple(node["properties"])
            for node in nodes
            if isinstance(node.get("properties"), dict)
            and node.get("additionalProperties") is False
        }
        return list(options.pop()) if len(options) == 1 else None


_plans: dict[type, _Plan] = {}
_lock: Final = threading.Lock()


def _plan(cls: type) -> _Plan:
    """The (cached) plan of the model *cls*."""
    plan = _plans.get(cls)
    if plan is not None and plan.source is _own_schema(cls):
        return plan
    with _lock:
        plan = _plans.get(cls)
        if plan is None or plan.source is not _own_schema(cls):
            plan = _Plan(_ready(cls))
            _plans[cls] = plan
    return plan


def _own_schema(cls: type) -> object:
    return cls.__dict__.get("__pydantic_core_schema__")


def _ready(cls: type) -> type[pydantic.BaseModel]:
    """*cls*, checked to be a complete pydantic v2 model."""
    if not is_model(cls):
        name = getattr(cls, "__qualname__", repr(cls))
        msg = f"{name} is not a pydantic v2 model (a BaseModel subclass)"
        raise UnsupportedModelError(msg)
    model = cast("type[pydantic.BaseModel]", cls)
    if not model.__pydantic_complete__:
        try:
            model.model_rebuild(raise_errors=True)
        except Exception as exc:  # noqa: BLE001 - reported as the reason
            detail = message_of(exc, 300)
            msg = (
                f"the model is not fully defined ({detail}); define the "
                f"types it refers to, then call "
                f"{model.__name__}.model_rebuild()"
            )
            raise UnsupportedModelError(msg) from None
    return model


def _model_config(schema: Any) -> core_schema.CoreConfig | None:
    """The core config of the model node a model's core schema holds."""
    node = _model_node(schema)
    config = node.get("config") if node is not None else None
    return cast("core_schema.CoreConfig | None", config)


def _model_node(schema: Any) -> dict[str, Any] | None:
    """The ``model`` node under a model's wrappers and definitions."""
    definitions: dict[str, Any] = {}
    node = schema
    for _ in range(100):  # wrappers are few; never loop forever
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind == "model":
            return node
        if kind == "definitions":
            for item in node.get("definitions", ()):
                definitions[item.get("ref")] = item
        if kind == "definition-ref":
            node = definitions.get(str(node.get("schema_ref")))
        else:
            node = node.get("schema")
    return None


# -- validation under toolctx's rules -----------------------------------------


class _Rewriter:
    """A model's core schema, rewritten to validate under toolctx's rules.

    - ``int``: an integral float (``1.0``) is the integer (JSON Schema's
      rule); strict pydantic refuses it otherwise.
    - ``literal``/``enum``: ``true`` is not ``1`` nor ``1`` ``true``
      (pydantic matches them as Python does).
    - ``set``/``frozenset``: repeated items are refused, not merged
      (the schema says ``uniqueItems``).
    - model fields, TypedDicts, dataclasses: unknown keys are refused
      unless the class allows extras (``extra="allow"``).
    - ``model`` and pydantic ``dataclass``: validated by the rewritten
      schema itself. pydantic-core would use the class's own prebuilt
      validator for such a node, which knows none of the above; so the
      node names a stand-in class with the same layout, and the result
      is adopted into the real class as pydantic-core builds it
      (``__dict__``, fields set, extra, private, then
      ``model_post_init``; a dataclass's fields, then ``__post_init__``).
    """

    def __init__(self) -> None:
        self._shells: dict[type, type] = {}
        self._config: Any = None
        self._definitions: list[Any] = []

    def rewrite(self, node: Any, extra: str) -> Any:
        """*node* rewritten; *extra* the enclosing class's extra setting."""
        if isinstance(node, list):
            return [self.rewrite(item, extra) for item in node]
        if isinstance(node, tuple):
            return tuple(self.rewrite(item, extra) for item in node)
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        config = node.get("config")
        outer = self._config
        if kind in _CLASS_KINDS and isinstance(config, dict):
            default = "ignore" if kind == "model" else extra
            extra = str(config.get("extra_fields_behavior", default))
            self._config = config
        try:
            out = {
                key: value
                if key in _NOT_SCHEMAS
                else self.rewrite(value, extra)
                for key, value in node.items()
            }
        finally:
            self._config = outer
        if kind == "definitions":
            self._definitions.extend(out["definitions"])
        if kind == "dict" and "keys_schema" in node:
            out["keys_schema"] = node["keys_schema"]  # JSON keys: pydantic's
        if kind in _FIELDS_KINDS:
            if out.get("extra_behavior", extra) != "allow":
                out["extra_behavior"] = "forbid"
            return out
        return self._special(kind, out)

    def _special(self, kind: object, out: dict[str, Any]) -> dict[str, Any]:
        """The node *out* (children rewritten), rewritten itself."""
        if kind == "model":
            return self._model(out)
        if kind == "dataclass" and _prebuilt(out):
            return self._dataclass(out)
        if kind == "int":
            return _integer_node(out)
        if kind == "literal":
            return _options_node(out, list(out.get("expected", ())), None)
        if kind == "enum":
            return _options_node(out, list(out.get("members", ())), out)
        if kind in {"set", "frozenset"}:
            return self._set(out)
        return out

    def _set(self, node: dict[str, Any]) -> dict[str, Any]:
        """A set: a JSON array of distinct items (the schema's uniqueItems).

        pydantic merges repeated items silently; toolctx refuses them.
        Items are told apart as the JSON values they are, as
        ``uniqueItems`` does (``[1, 2]`` is not ``[2, 1]``, ``[true]``
        not ``[1]``), so the check needs the JSON array itself: the node
        becomes a function of it, which validates the items as a list in
        strict JSON mode with a validator of their own (built on first
        use, when the definitions they may refer to are all rewritten),
        then makes the set.
        """
        keys = ("items_schema", "min_length", "max_length", "strict")
        as_list = {"type": "list", **{k: node[k] for k in keys if k in node}}
        config = self._config
        built: list[pydantic_core.SchemaValidator] = []

        def items() -> pydantic_core.SchemaValidator:
            if not built:
                schema: dict[str, Any] = as_list
                if self._definitions:
                    schema = {
                        "type": "definitions",
                        "schema": as_list,
                        "definitions": self._definitions,
                    }
                built.append(pydantic_core.SchemaValidator(schema, config))
            return built[0]

        kind = "set_type" if node["type"] == "set" else "frozen_set_type"
        made = set if node["type"] == "set" else frozenset
        return _replaced(node, functools.partial(_distinct, made, kind, items))

    def _model(self, node: dict[str, Any]) -> dict[str, Any]:
        cls = node["cls"]
        if node.get("custom_init"):
            msg = (
                f"{cls.__qualname__} defines its own __init__, which "
                f"toolctx cannot run under its validation rules; move that "
                f"logic to a model_validator or to model_post_init"
            )
            raise UnsupportedModelError(msg)
        post_init = node.pop("post_init", None)
        node["cls"] = self._shell(cls)
        node.pop("metadata", None)
        adopt = functools.partial(_adopt, cls, post_init)
        return _after(adopt, node)

    def _dataclass(self, node: dict[str, Any]) -> dict[str, Any]:
        """A pydantic dataclass: a stand-in too, adopted afterwards.

        pydantic-core sets the fields on the stand-in (its ``__dict__``, or
        its slots) and calls its ``__post_init__`` with the init-only
        values, which the stand-in keeps for the real one.
        """
        cls = node["cls"]
        fields = tuple(node.get("fields", ()))
        slots = bool(node.get("slots"))
        layout = (*fields, _ARGS) if slots else ("__dict__", _ARGS)
        node["cls"] = self._shell(cls, layout, {"__post_init__": _keep_args})
        node.pop("metadata", None)
        post_init = bool(node.get("post_init"))
        adopt = functools.partial(_adopt_dataclass, cls, fields, post_init)
        return _after(adopt, node)

    def _shell(
        self,
        cls: type,
        slots: tuple[str, ...] = ("__dict__", *_MODEL_SLOTS),
        methods: dict[str, Any] | None = None,
    ) -> type:
        """A plain class laid out like *cls* (no prebuilt validator)."""
        shell = self._shells.get(cls)
        if shell is None:
            namespace = {
                "__slots__": slots,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                **(methods or {}),
            }
            shell = type(cls.__name__, (), namespace)
            self._shells[cls] = shell
        return shell


def _prebuilt(node: Mapping[str, Any]) -> bool:
    """Whether pydantic-core validates a class node with its own validator."""
    cls = node.get("cls")
    return (
        isinstance(cls, type)
        and bool(cls.__dict__.get("__pydantic_complete__"))
        and "generic_origin" not in node
    )


def _replaced(
    node: dict[str, Any], function: Callable[[Any], Any]
) -> dict[str, Any]:
    """*node* replaced by a plain validator; its ``ref`` moves over.

    The function gets the JSON value itself and returns the value.
    """
    ref = node.pop("ref", None)
    replaced = cast(
        "dict[str, Any]",
        core_schema.no_info_plain_validator_function(function),
    )
    if ref is not None:
        replaced["ref"] = ref
    return replaced


def _after(
    function: Callable[[Any], Any], node: dict[str, Any]
) -> dict[str, Any]:
    """*node* followed by an after-validator; its ``ref`` moves outside."""
    ref = node.pop("ref", None)
    wrapped = cast(
        "dict[str, Any]",
        core_schema.no_info_after_validator_function(
            function, cast("core_schema.CoreSchema", node)
        ),
    )
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


def _adopt(
    cls: type[pydantic.BaseModel], post_init: str | None, shell: object
) -> pydantic.BaseModel:
    """The real model instance holding what the stand-in was given."""
    instance = cls.__new__(cls)
    put = object.__setattr__
    put(instance, "__dict__", shell.__dict__)
    put(instance, "__pydantic_fields_set__", shell.__pydantic_fields_set__)  # type: ignore[attr-defined]
    put(instance, "__pydantic_extra__", getattr(shell, _EXTRA, None))
    put(instance, "__pydantic_private__", None)
    if post_init:
        getattr(instance, post_init)(None)
    return instance


_ARGS: Final = "_toolctx_post_init_args"


def _keep_args(self: object, *args: object) -> None:
    """The stand-in's ``__post_init__``: keep the init-only values."""
    object.__setattr__(self, _ARGS, args)


def _adopt_dataclass(
    cls: type[Any], fields: tuple[str, ...], post_init: bool, shell: object
) -> object:
    """The real dataclass instance holding what the stand-in was given."""
    instance = cast("Any", cls).__new__(cls)
    if hasattr(shell, "__dict__"):
        object.__setattr__(instance, "__dict__", shell.__dict__)
    else:
        for name in fields:
            if hasattr(shell, name):
                object.__setattr__(instance, name, getattr(shell, name))
    if post_init:
        instance.__post_init__(*getattr(shell, _ARGS, ()))
    return instance


def _integer_node(node: dict[str, Any]) -> dict[str, Any]:
    """An integer, or an integral float (``1.0``): JSON Schema's integers.

    A JSON integer takes pydantic's own path; only a float meets Python
    (:func:`_integral`). The node's constraints apply to the integer.
    """
    ref = node.pop("ref", None)
    node.pop("metadata", None)
    either = core_schema.union_schema(
        [
            core_schema.int_schema(),
            core_schema.no_info_after_validator_function(
                _integral, core_schema.float_schema()
            ),
        ],
        mode="left_to_right",
        custom_error_type="int_type",
    )
    plain = {key for key in node if key != "serialization"} == {"type"}
    replaced = cast(
        "dict[str, Any]",
        either
        if plain
        else core_schema.chain_schema(
            [either, cast("core_schema.CoreSchema", node)]
        ),
    )
    if ref is not None:
        replaced["ref"] = ref
    return replaced


def _integral(value: float) -> int:
    """An integral float as the integer; any other float is refused."""
    if value.is_integer():
        return int(value)
    raise pydantic_core.PydanticKnownError("int_type")


def _distinct(
    made: type,
    kind: str,
    items: Callable[[], pydantic_core.SchemaValidator],
    value: Any,
) -> Any:
    """The JSON array *value* as a *made* set; repeated items are refused.

    Items repeat when they are equal as JSON values (``1`` and ``1.0``,
    not ``true`` and ``1``). Distinct items that validate to equal
    values (``[1, 2]`` and ``[2, 1]`` for a frozenset) are one item of
    the set, as a Python set holds them.
    """
    if not isinstance(value, list):
        raise pydantic_core.PydanticKnownError(cast("Any", kind))
    seen: dict[object, int] = {}
    repeats: list[tuple[int, int]] = []
    for index, item in enumerate(value):
        first = seen.setdefault(json_key(item), index)
        if first != index:
            repeats.append((index, first))
    if repeats:
        raise pydantic_core.PydanticCustomError(
            _DUPLICATE, "items must be unique", {"duplicates": repeats}
        )
    validated = items().validate_json(_encode(value), strict=True)
    try:
        return made(validated)
    except TypeError:
        raise pydantic_core.PydanticKnownError(
            "set_item_not_hashable"
        ) from None


_UNKNOWN: Final = object()


def _options_node(
    node: dict[str, Any], options: list[Any], enum_node: Any
) -> dict[str, Any]:
    """A ``Literal`` (or an enum, *enum_node*) matched by JSON equality.

    pydantic matches options as Python does, so ``true`` passes for
    ``Literal[1]`` or an ``IntEnum`` member of value 1; in JSON they
    differ, and ``1.0`` is ``1``. Options that are not JSON scalars
    leave the node to pydantic.
    """
    values = [getattr(option, "value", option) for option in options]
    if not all(_is_scalar(value) for value in values) or all(
        isinstance(value, str) or value is None for value in values
    ):
        return node  # pydantic's own matching is JSON's here
    table: dict[tuple[str | None, object], Any] = {}
    for value, option in zip(values, options, strict=True):
        table.setdefault((json_kind(value), value), option)
    numbers = [value for value in values if isinstance(value, (int, float))]
    expected = _options_text(options)
    error = "literal_error" if enum_node is None else "enum"
    enum_cls = None if enum_node is None else enum_node.get("cls")

    def match(value: Any) -> Any:
        try:
            found = table.get((json_kind(value), value), _UNKNOWN)
        except TypeError:  # an array or an object
            found = _UNKNOWN
        if found is not _UNKNOWN:
            return found
        confused = isinstance(value, (int, float)) and any(
            number == value for number in numbers
        )
        if enum_cls is not None and not confused:
            try:  # the enum's own _missing_, if any
                member = enum_cls(value)
            except (ValueError, TypeError):
                pass
            else:
                if isinstance(member, enum_cls):
                    return member
        raise pydantic_core.PydanticKnownError(
            cast("Any", error), {"expected": expected}
        )

    return _replaced(node, match)


def _options_text(options: list[Any]) -> str:
    """``'a' or 1``, as pydantic lists literal and enum options."""
    shown = [repr(getattr(option, "value", option)) for option in options]
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " or " + shown[-1]


# -- problems ----------------------------------------------------------------

_Found = tuple["PathParts", str | None, str | None, str]
"""``(path, expected, got, message)``: *expected*/*got* for type errors."""

_EXPECTED: Final = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "none_required": "null",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dict_type": "an object",
    "dataclass_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
    "set_type": "an array",
    "frozen_set_type": "an array",
    "iterable_type": "an array",
}
"""How type errors read: ``expected <text>, got <value>``."""

_SIDES: Final = {True: "at least", False: "at most"}
_BOUND_SYMBOLS: Final = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", ">="),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "<="),
}


def _one_problem(
    error: pydantic_core.ErrorDetails,
    kind: str,
    ctx: dict[str, Any],
    path: PathParts,
) -> _Found:
    """The problem of a pydantic error, in toolctx's words where known."""
    given = error.get("input", _NO_INPUT)
    if kind == "missing":
        return (path, None, None, "missing required property")
    if kind in _TAG_ERRORS:
        return _tag_problem(kind, ctx, path)
    expected = _EXPECTED.get(kind)
    if expected is not None:
        style = "json" if kind == "string_type" else None
        return (path, expected, _shown(given, style), f"expected {expected}")
    if kind in {"literal_error", "enum"}:
        text = str(ctx.get("expected", "one of the listed values"))
        return (path, text, _shown(given, "repr"), f"expected {text}")
    if kind == "json_invalid":  # the text is toolctx's own: not shown
        detail = bounded(str(ctx.get("error", "")), 100)
        return (path, None, None, f"unreadable value ({detail})")
    if kind in {"value_error", "assertion_error"}:
        text = error["msg"].removeprefix("Value error, ")
        return (path, None, None, text or "invalid value")
    constraint = _constraint_text(kind, ctx, given)
    if constraint is not None:
        text, got = constraint
    else:
        text = error["msg"]
        if text.startswith("Input should be "):
            text = "expected " + text.removeprefix("Input should be ")
        got = _shown(given, "json") if _is_scalar(given) else None
    if got is not None:
        text += f", got {got}"
    return (path, None, None, text)


def _constraint_text(
    kind: str, ctx: dict[str, Any], given: object
) -> tuple[str, str | None] | None:
    """``(expected, got)`` of a constraint error, None for another error."""
    bound = _BOUND_SYMBOLS.get(kind)
    got = _shown(given, "json")
    if bound is not None:
        edge = show_value(ctx.get(bound[0]), None)
        return f"expected a number {bound[1]} {edge}", got
    if kind == "multiple_of":
        step = show_value(ctx.get("multiple_of"), None)
        return f"expected a multiple of {step}", got
    if kind in {"string_too_short", "string_too_long"}:
        short = kind == "string_too_short"
        limit = ctx.get("min_length" if short else "max_length")
        size = str(len(given)) if isinstance(given, str) else got
        return f"expected {_SIDES[short]} {_counted(limit, 'character')}", size
    if kind in {"too_short", "too_long"}:
        short = kind == "too_short"
        limit = ctx.get("min_length" if short else "max_length")
        noun = "property" if ctx.get("field_type") == "Dictionary" else "item"
        size = ctx.get("actual_length")
        count = _counted(limit, noun)
        return f"expected {_SIDES[short]} {count}", _text(size)
    if kind == "string_pattern_mismatch":
        pattern = bounded(str(ctx.get("pattern")), 60)
        return f"expected a string matching {pattern!r}", got
    return None


def _shown(given: object, style: str | None) -> str | None:
    """*given* as a message shows it; None when pydantic hid the input."""
    return None if given is _NO_INPUT else show_value(given, style)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


_TAG_ERRORS: Final = frozenset({"union_tag_invalid", "union_tag_not_found"})


def _tag_problem(kind: str, ctx: dict[str, Any], path: PathParts) -> _Found:
    """A discriminated union's tag: wrong or missing, at the tag's key."""
    discriminator = str(ctx.get("discriminator", ""))
    quoted = len(discriminator) > 2 and discriminator[0] == discriminator[-1]  # noqa: PLR2004
    if quoted and discriminator[0] in {"'", '"'}:
        path = (*path, discriminator[1:-1])
    if kind == "union_tag_not_found":
        return (path, None, None, "missing required property")
    tags = str(ctx.get("expected_tags", ""))
    got = show_value(ctx.get("tag"), "repr")
    return (path, None, None, f"expected one of {tags}, got {got}")


def _counted(count: object, noun: str) -> str:
    """``1 item``, ``2 items``, ``3 properties``."""
    if count == 1:
        return f"1 {noun}"
    plural = "properties" if noun == "property" else f"{noun}s"
    return f"{count} {plural}"


def _duplicate(first: int) -> str:
    return f"duplicate of item {first} (items must be unique)"


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float))


def _merged(found: list[_Found]) -> list[Problem]:
    """Problems in order; type errors at one path and value joined.

    A union's members each report a type error at the same place:
    ``expected an integer or a string, got 1.5`` reads better than two.
    """
    merged: dict[tuple[PathParts, str], list[str]] = {}
    order: list[tuple[PathParts, str, bool]] = []
    for path, expected, got, message in found:
        if expected is None or got is None:
            order.append((path, message, False))
            continue
        texts = merged.get((path, got))
        if texts is None:
            texts = merged[path, got] = []
            order.append((path, got, True))
        if expected not in texts:
            texts.append(expected)
    problems: list[Problem] = []
    for path, text, joined in order:
        message = text
        if joined:
            texts = merged[path, text]
            shown = ", ".join(texts[:-1]) + " or " + texts[-1]
            message = f"expected {texts[0] if len(texts) == 1 else shown}"
            message += f", got {text}"
        problems.append((path, bounded(message, MAX_PROBLEM_LENGTH)))
    return problems


def _data_path(
    loc: tuple[str | int, ...], data: object, *, keep_last: bool
) -> PathParts:
    """The path of an error's location in the data itself.

    pydantic's locations also name the union member that failed (``int``,
    ``Item``, ``function-after[...]``) and dict keys (``[key]``); those
    are not in the data and are left out. A missing key (*keep_last*)
    is the last location item.
    """
    path: list[str | int] = []
    current: object = data
    last = len(loc) - 1
    for position, item in enumerate(loc):
        if isinstance(current, Mapping):
            key = item if isinstance(item, str) else str(item)
            if key in current:
                path.append(key)
                current = current[key]
                continue
        elif (
            isinstance(current, (list, tuple))
            and isinstance(item, int)
            and 0 <= item < len(current)
        ):
            path.append(item)
            current = current[item]
            continue
        if keep_last and position == last:
            path.append(item)
    return tuple(path)


def _not_json_problem(data: object) -> Problem:
    """Where *data* stops being JSON data, and why."""
    try:
        found = _find_not_json(data)
    except RecursionError:
        return ((), "the value is nested too deeply or holds a cycle")
    return found or ((), "the value is not JSON data")


def _find_not_json(value: object) -> Problem | None:
    if value is None or isinstance(value, (str, bool)):
        return None
    if isinstance(value, int):
        if -MAX_INT < value < MAX_INT:
            return None
        return ((), f"the integer has more than {MAX_INT_DIGITS} digits")
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        shown = show_value(value, None)
        return ((), f"expected a finite number, got {shown}")
    items: Iterator[tuple[str | int, object]]
    if isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, Mapping):
        items = iter(value.items())
    else:
        return ((), f"expected JSON data, got {show_value(value, None)}")
    for key, item in items:
        found = _find_not_json(item)
        if found is not None:
            return ((key, *found[0]), found[1])
    return None


# -- JSON Schema -------------------------------------------------------------


class _ToolctxJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema, closed and described by toolctx's rules."""

    ignored_warning_kinds = {"skipped-choice", "non-serializable-default"}  # noqa: RUF012 - pydantic's own class attribute

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        """A model: closed unless it allows extras; docstring texts."""
        json_schema = super().model_schema(schema)
        _close(json_schema)
        _describe(json_schema, schema["cls"], self.mode, self.by_alias)
        return json_schema

    def typed_dict_schema(
        self, schema: core_schema.TypedDictSchema
    ) -> JsonSchemaValue:
        """A TypedDict inside a model: closed unless it allows extras."""
        json_schema = super().typed_dict_schema(schema)
        _close(json_schema)
        return json_schema

    def dataclass_schema(
        self, schema: core_schema.DataclassSchema
    ) -> JsonSchemaValue:
        """A dataclass inside a model: closed unless it allows extras."""
        json_schema = super().dataclass_schema(schema)
        _close(json_schema)
        return json_schema


def _close(json_schema: JsonSchemaValue) -> None:
    """``additionalProperties: false`` where pydantic left it unsaid.

    pydantic writes ``true`` (or a schema) for ``extra="allow"`` and
    ``false`` for ``"forbid"``; ``"ignore"`` (its default) is unsaid,
    and toolctx refuses unknown keys then.
    """
    if (
        json_schema.get("type") == "object"
        and "additionalProperties" not in json_schema
    ):
        json_schema["additionalProperties"] = False


def _describe(
    json_schema: JsonSchemaValue, cls: Any, mode: str, by_alias: bool
) -> None:
    """Descriptions by toolctx's docstring rules (``Field`` texts win)."""
    own = cls.__dict__.get("__doc__")
    doc = class_doc(cls)
    given = json_schema.get("description")
    if isinstance(own, str) and given in {None, inspect.cleandoc(own)}:
        # pydantic's text is the whole docstring (before 2.10 it is added
        # later, and only when no description is there yet)
        if doc.summary:
            json_schema["description"] = doc.summary
        else:
            json_schema.pop("description", None)
    properties = json_schema.get("properties")
    if not doc.attributes or not isinstance(properties, dict):
        return
    for name, field in cls.model_fields.items():
        text = doc.attributes.get(name)
        prop = properties.get(_property_key(name, field, mode, by_alias))
        if text and isinstance(prop, dict) and "description" not in prop:
            prop["description"] = text


def _property_key(name: str, field: Any, mode: str, by_alias: bool) -> str:
    """The JSON key pydantic writes a field under."""
    if not by_alias:
        return name
    if mode == "validation":
        alias = field.validation_alias
        if isinstance(alias, str):
            return alias
    elif isinstance(field.serialization_alias, str):
        return field.serialization_alias
    return field.alias if isinstance(field.alias, str) else name


def _generate(
    source: Any, mode: Mode, by_alias: bool
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """``(schema, defs)`` of a model's core schema in *mode*."""
    generator = _ToolctxJsonSchema(
        by_alias=by_alias if mode == "serialization" else True,
        ref_template="#/$defs/{model}",
    )
    json_mode: JsonSchemaMode = mode
    try:
        refs, defs = generator.generate_definitions(
            [(_KEY, json_mode, source)]
        )
    except (pydantic.PydanticUserError, TypeError, ValueError) as exc:
        detail = message_of(exc, 300)
        msg = f"pydantic cannot write its JSON Schema ({detail})"
        raise UnsupportedModelError(msg) from None
    return dict(refs[_KEY, json_mode]), {str(k): v for k, v in defs.items()}


def _resolved(node: object, defs: Mapping[str, Any]) -> Iterator[JSONSchema]:
    """*node*, its ``$ref`` followed and ``anyOf``/``oneOf`` opened."""
    pending = [node]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        ref = current.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            pending.append(defs.get(ref.removeprefix("#/$defs/")))
        for key in ("anyOf", "oneOf", "allOf"):
            choices = current.get(key)
            if isinstance(choices, list):
                pending.extend(choices)
        yield current


def _children(node: JSONSchema, part: str | int) -> list[object]:
    """The schemas of *node*'s property or item *part*."""
    if isinstance(part, str):
        properties = node.get("properties")
        if isinstance(properties, dict) and part in properties:
            return [properties[part]]
        extra = node.get("additionalProperties")
        return [extra] if isinstance(extra, dict) else []
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and 0 <= part < len(prefix):
        return [prefix[part]]
    items = node.get("items")
    return [items] if isinstance(items, dict) else []


def _renamed(value: Any, renames: Mapping[str, str]) -> Any:
    """A copy of JSON Schema *value*, references to *renames* moved.

    ``Decimal`` bounds (``Field(ge=Decimal("0.01"))``), which pydantic
    leaves in the schema, become JSON numbers.
    """
    if isinstance(value, list):
        return [_renamed(item, renames) for item in value]
    if not isinstance(value, dict):
        return json_number(value)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "$ref" and isinstance(item, str):
            name = item.removeprefix("#/$defs/")
            out[key] = f"#/$defs/{renames[name]}" if name in renames else item
        elif key in {"default", "examples", "const", "enum"}:
            out[key] = json.loads(json.dumps(item))
        else:
            out[key] = _renamed(item, renames)
    return out


def _settle(
    schema: JSONSchema,
    defs: dict[str, JSONSchema],
    taken: Mapping[str, JSONSchema],
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """Rename the *defs* whose names *taken* holds for another schema.

    A definition equal to the one *taken* holds under its name is shared
    (not returned again); another one gets the first free ``Name_2``,
    ``Name_3``...; references follow the renames.
    """
    renames: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, body in defs.items():
            if name in renames or name not in taken:
                continue
            if taken[name] != _renamed(body, renames):
                renames[name] = _free_name(name, taken, defs, renames)
                changed = True
    settled: dict[str, JSONSchema] = {}
    for name, body in defs.items():
        new = renames.get(name, name)
        if new == name and name in taken:
            continue  # the very same definition: shared
        settled[new] = _renamed(body, renames)
    return _renamed(schema, renames), settled


def _free_name(
    name: str,
    taken: Mapping[str, object],
    defs: Mapping[str, object],
    renames: Mapping[str, str],
) -> str:
    used = set(renames.values())
    counter = 2
    while (
        f"{name}_{counter}" in taken
        or f"{name}_{counter}" in defs
        or f"{name}_{counter}" in used
    ):
        counter += 1
    return f"{name}_{counter}"


# -- output ------------------------------------------------------------------


def _check_output(value: object) -> None:
    """Raise :class:`NotJSONError` for what JSON cannot carry exactly."""
    cls = type(value)
    if cls is float:
        if not math.isfinite(cast("float", value)):
            msg = (
                f"The number {value!r} has no JSON form (JSON has no NaN "
                f"or infinities). Return a finite number, or None for a "
                f"missing value."
            )
            raise NotJSONError(msg)
    elif cls is int:
        if not -MAX_INT < cast("int", value) < MAX_INT:
            msg = (
                f"An integer of more than {MAX_INT_DIGITS} digits is too "
                f"large. Return it as a string."
            )
            raise NotJSONError(msg)
    elif cls is list:
        _check_items(enumerate(cast("list[object]", value)))
    elif cls is dict:
        _check_items(iter(cast("dict[str, object]", value).items()))


def _check_items(items: Iterator[tuple[str | int, object]]) -> None:
    """:func:`_check_output` of each item, the key added to error paths."""
    for key, item in items:
        try:
            _check_output(item)
        except NotJSONError as exc:
            exc.path.insert(0, key)
            raise


# -- the interface -----------------------------------------------------------


def check(cls: type) -> None:
    """Build everything toolctx needs for the model *cls* (cached).

    For the type model's analysis, at decoration: a model that cannot be
    a parameter or a return type fails here, not on the first call.

    Raises:
        UnsupportedModelError: Not a complete pydantic v2 model, a model
            with its own ``__init__``, or one with no JSON Schema.
    """
    plan = _plan(cls)
    plan.schema("validation")
    plan.schema("serialization")


def model_schema(
    cls: type,
    *,
    mode: Mode = "validation",
    taken: Mapping[str, JSONSchema] | None = None,
) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """The JSON Schema (Draft 2020-12) of the model *cls*.

    Args:
        cls: A pydantic v2 model.
        mode: ``"validation"`` for a parameter (what :func:`validate`
            accepts), ``"serialization"`` for a return type (what
            :func:`dump` writes: computed fields, serializers).
        taken: The ``$defs`` the caller already holds. A definition of
            the same name and content is shared; one of the same name
            and other content is renamed (``Item_2``) in the result.

    Returns:
        ``(schema, defs)``: *schema* is ``{"$ref": "#/$defs/Name"}``
        (references point into the root ``$defs``); *defs* the
        definitions to add to the root ``"$defs"``. Fresh copies.

    Raises:
        UnsupportedModelError: The model is not complete, defines its
            own ``__init__``, or has no JSON Schema.
    """
    schema, defs = _plan(cls).schema(mode)
    if taken:
        return _settle(schema, defs, taken)
    return _renamed(schema, {}), _renamed(defs, {})


def compile_validator(cls: type) -> Callable[[object], Any]:
    """The validator of the model *cls*: JSON value -> instance.

    Built once per class (cached); the returned function raises
    :class:`~toolctx._types.validate.InvalidValueError` with every
    problem, paths relative to the value (``items[0].name``). Other
    exceptions the model's own validators raise propagate unchanged.

    Raises:
        UnsupportedModelError: The model is not complete or defines its
            own ``__init__``.
    """
    return _plan(cls).validate


def validate(cls: type, data: object) -> Any:
    """*data* (a JSON value) validated as the model *cls*.

    Raises:
        InvalidValueError: Every problem, paths relative to *data*.
        UnsupportedModelError: See :func:`compile_validator`.
    """
    return _plan(cls).validate(data)


def dump(value: object, cls: type | None = None) -> object:
    """The model instance *value* as JSON data, in pydantic's JSON mode.

    Args:
        value: An instance of *cls* (or of any model when *cls* is None).
        cls: The declared model (a return annotation): its fields are
            written, a subclass instance's extra fields are not.

    Raises:
        NotJSONError: *value* is not a *cls* instance, a field holds a
            value of another type than declared, or the data holds NaN,
            an infinity or an integer of more than 4,300 digits.
        UnsupportedModelError: See :func:`model_schema`.
    """
    target = type(value) if cls is None else cls
    plan = _plan(target)
    if not isinstance(value, target):
        name = target.__qualname__
        msg = (
            f"Expected an instance of {name}, got {show_value(value, None)}."
            f" Return an instance of {name}."
        )
        raise NotJSONError(msg)
    try:
        data = plan.serializer.to_python(
            value, mode="json", by_alias=plan.by_alias, warnings="error"
        )
        _check_output(data)
    except pydantic_core.PydanticSerializationError as exc:
        detail = message_of(exc, 500)
        msg = f"Cannot write the {target.__qualname__} as JSON: {detail}"
        raise NotJSONError(msg) from None
    except RecursionError:
        msg = f"Cannot write the {target.__qualname__}: nested too deeply"
        raise NotJSONError(msg) from None
    return data
