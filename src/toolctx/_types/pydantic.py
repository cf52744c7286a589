"""Pydantic v2 models as tool parameters and return values.

Only imported once a model is used (the type model asks
:func:`toolctx._types.pydantic_check.is_model` first, which never imports
pydantic). Everything here is delegated to pydantic through each model's
:class:`Plan`, built once:

- :func:`model_schema`: the model's JSON Schema (Draft 2020-12) as
  pydantic writes it (titles, ``$defs`` named after the classes,
  ``Field`` constraints as keywords), except that every class that does
  not allow extra keys says ``additionalProperties: false`` and that a
  model's description and its fields' descriptions follow toolctx's
  docstring rules (the summary; ``Attributes:`` entries and attribute
  docstrings for fields that have no ``Field(description=...)``).
- :func:`validate` (:func:`compile_validator` for a per-tool plan):
  pydantic validates the JSON text of the value in one step, in strict
  JSON mode, so JSON's own spellings are what pydantic's JSON mode says
  (ISO 8601 strings for dates, times, datetimes and durations, strings
  for UUIDs, enum values) and nothing else is coerced. The model's
  validators (``field_validator``, ``model_validator``,
  ``model_post_init``) run as usual; a ``ValueError`` they raise becomes
  a problem with its path.
- :func:`dump`: the model in pydantic's JSON mode (aliases as the model's
  ``serialize_by_alias`` says), refusing what JSON cannot carry exactly.

pydantic's own rules and settings apply (strict mode: no ``"1"`` for
``1``, no ``true`` for an ``int``; a ``Field(strict=False)`` is strict
too, as pydantic's validation-call ``strict=True`` says). toolctx adds
two rules (:class:`_Rewriter`): where only the first applies, pydantic
2.12 and later are told ``extra="forbid"`` for the call; else the
model's core schema is rewritten once:

- a class (model, dataclass, TypedDict) that sets no ``extra`` refuses
  unknown keys (``extra="forbid"``); one that sets ``extra`` gets what
  pydantic does with it;
- a ``pattern`` is ECMA-262, as the JSON Schema says
  (:mod:`toolctx._types.patterns`), not Rust's or Python's regex.

Every pydantic version the package admits answers the same: an enum with
a None member is matched member by member (pydantic 2.11 and 2.13 take
any string for that member), and an aliased field's name is
refused where pydantic 2.12 and 2.13 drop it silently
(:func:`~toolctx._types.pydantic_problems.named_keys`).

Known limits (pydantic's own rules stay): strings pydantic accepts for
UUIDs (``{...}``, ``urn:uuid:``, no hyphens), dates and numbers in
``Decimal`` are its own; ``bytes`` follow the model's ``val_json_bytes``
(UTF-8 by default, not toolctx's base64); a ``mode="before"`` validator
may take more than the schema says; a model that also accepts its field
names (``populate_by_name``) has only its aliases in the schema. A model
with its own ``__init__`` is not supported (pydantic would run it in
lax Python mode).
"""

from __future__ import annotations

import functools
import json
import json.encoder
import math
import threading

from typing import TYPE_CHECKING, Any, Final, cast

import pydantic_core

from pydantic_core import core_schema

from toolctx._text import message_of
from toolctx._types.messages import show_value
from toolctx._types.output import MAX_INT, MAX_INT_DIGITS, NotJSONError
from toolctx._types.output_scalars import checked_text
from toolctx._types.patterns import PatternError, compile_pattern, pattern_text
from toolctx._types.problems import InvalidValueError
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx._types.pydantic_problems import (
    named_keys,
    not_json_problem,
    problems_of,
)
from toolctx._types.pydantic_schema import generate, renamed, settle


if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    import pydantic

    from toolctx._types.pydantic_schema import JSONSchema, Mode


__all__ = [
    "UnsupportedModelError",
    "check",
    "compile_validator",
    "dump",
    "is_model",
    "model_schema",
    "validate",
]


# -- the plan: built once per model ------------------------------------------


class Plan:
    """Everything toolctx builds once for one model class.

    Attributes:
        cls: The model.
        source: The model's own core schema.
        validate_json: pydantic's strict JSON validation of the model,
            with toolctx's rules (:class:`_Rewriter`): the model's own
            validator told ``extra="forbid"`` where that is all they
            change and pydantic can (2.12 and later), else the validator
            of the rewritten core schema.
        serializer: Dumps in JSON mode, keeping NaN and infinities as
            floats so that :func:`dump` can refuse them.
        by_alias: Whether output keys are the fields' aliases.
    """

    def __init__(self, cls: type[pydantic.BaseModel]) -> None:
        self.cls = cls
        self.source: Any = cls.__pydantic_core_schema__
        config = cast("dict[str, Any]", dict(cls.model_config))
        core_config = _core_config(self.source)
        rewriter = _Rewriter()
        rewritten = rewriter.rewrite(self.source)
        self.names = frozenset(rewriter.names)
        self.validate_json: Callable[[str], Any]
        if rewriter.forbid_only and _runtime_extra():
            # pydantic itself, with its extra="forbid" for this call
            self.validate_json = functools.partial(
                cls.__pydantic_validator__.validate_json,
                strict=True,
                extra="forbid",
            )
        else:
            validator = pydantic_core.SchemaValidator(rewritten, core_config)
            self.validate_json = functools.partial(
                validator.validate_json, strict=True
            )
        out_config = dict(core_config or {})
        if "ser_json_inf_nan" not in config:
            out_config["ser_json_inf_nan"] = "constants"
        self.serializer = pydantic_core.SchemaSerializer(
            self.source, cast("core_schema.CoreConfig", out_config)
        )
        self.by_alias = bool(config.get("serialize_by_alias"))
        self._schemas: dict[str, tuple[JSONSchema, dict[str, JSONSchema]]]
        self._schemas = {}

    def validate(self, data: object) -> Any:
        """*data* (JSON) as an instance of the model, in one step.

        pydantic validates the JSON text of *data* in strict JSON mode:
        JSON's own spellings (ISO 8601 dates, UUID strings, enum values)
        are what pydantic's JSON mode says they are.

        Raises:
            InvalidValueError: Every problem, with paths relative to
                *data*.
        """
        try:
            text = encode(data)
        except (TypeError, ValueError, RecursionError):
            raise InvalidValueError([not_json_problem(data)]) from None
        try:
            value = self.validate_json(text)
        except pydantic_core.ValidationError as exc:
            errors = exc.errors(include_url=False)
        else:
            if not self.names:
                return value
            errors = []
            schema, defs = self.schema("validation")
            if not named_keys(data, self.names, schema, defs):
                return value
        schema, defs = self.schema("validation")
        found = problems_of(errors, data, schema, defs, self.names)
        raise InvalidValueError(found)

    def schema(self, mode: Mode) -> tuple[JSONSchema, dict[str, JSONSchema]]:
        """``(schema, defs)`` of the model in *mode* (shared: copy it)."""
        found = self._schemas.get(mode)
        if found is None:
            found = generate(self.source, mode, self.by_alias)
            self._schemas[mode] = found
        return found


_plans: dict[type, Plan] = {}
_lock: Final = threading.Lock()


def plan_of(cls: type) -> Plan:
    """The (cached) plan of the model *cls* (again once it is rebuilt)."""
    plan = _plans.get(cls)
    if plan is not None and plan.source is _own_schema(cls):
        return plan
    with _lock:
        plan = _plans.get(cls)
        if plan is None or plan.source is not _own_schema(cls):
            plan = Plan(_ready(cls))
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


def _core_config(schema: Any) -> core_schema.CoreConfig | None:
    """The core config of the model node under a core schema's wrappers."""
    definitions: dict[str, Any] = {}
    node = schema
    for _ in range(100):  # wrappers are few; never loop forever
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind == "model":
            return cast("core_schema.CoreConfig | None", node.get("config"))
        if kind == "definitions":
            for item in node.get("definitions", ()):
                definitions[item.get("ref")] = item
        if kind == "definition-ref":
            node = definitions.get(str(node.get("schema_ref")))
        else:
            node = node.get("schema")
    return None


# -- toolctx's two rules: unknown keys, ECMA-262 patterns ---------------------

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
_MODEL_SLOTS: Final = (
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
)
_ARGS: Final = "_toolctx_post_init_args"
"""The attribute a dataclass stand-in keeps its init-only values in."""


class _Rewriter:
    """A model's core schema, with toolctx's two rules added.

    - model fields, TypedDicts, dataclasses: a class that sets no
      ``extra`` (nor inherits one, as a plain dataclass or TypedDict
      inside a model does: its core config says) refuses unknown keys,
      as ``extra="forbid"`` does.
    - ``str`` with a ``pattern``: the pattern means what the schema says
      (ECMA-262), also for a mapping's keys.

    pydantic-core would validate a nested ``model`` or pydantic
    ``dataclass`` node with the class's own prebuilt validator, which
    knows neither rule; so the node names a stand-in class with the same
    layout, and the result is adopted into the real class as
    pydantic-core builds it (``__dict__``, fields set, extra, private,
    then ``model_post_init``; a dataclass's fields, then
    ``__post_init__``).
    """

    def __init__(self) -> None:
        self._shells: dict[type, type] = {}
        self.forbid_only = True
        """Whether the rules change nothing but ``extra`` to forbid."""
        self.names: set[str] = set()
        """Field names pydantic-core drops silently where it should refuse
        them (:func:`_refused_names`): the plan refuses them itself."""

    def rewrite(  # noqa: C901
        self, node: Any, config: dict[str, Any] | None = None
    ) -> Any:
        """*node* rewritten; *config* the enclosing class's core config."""
        if isinstance(node, (list, tuple)):
            return type(node)(self.rewrite(item, config) for item in node)
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if kind in _CLASS_KINDS and isinstance(node.get("config"), dict):
            # pydantic's config of the class, with what it inherits
            config = node["config"]
        extra = (config or {}).get("extra_fields_behavior")
        if kind in _CLASS_KINDS:
            self.forbid_only &= extra in {None, "forbid"}
        out = {
            key: value if key in _NOT_SCHEMAS else self.rewrite(value, config)
            for key, value in node.items()
        }
        if kind == "dict" and "keys_schema" in node:
            # JSON keys: pydantic's, but for the meaning of a pattern
            keys = _patterns_only(node["keys_schema"])
            self.forbid_only &= keys == node["keys_schema"]
            out["keys_schema"] = keys
        if kind in _FIELDS_KINDS:
            if extra is None:  # pydantic's default: its "ignore"
                out["extra_behavior"] = "forbid"
            if extra in {None, "forbid"} and _drops_names():
                self.names |= _refused_names(out, config)
        elif kind == "model":
            return self._model(out)
        elif kind == "dataclass" and _prebuilt(out):
            return self._dataclass(out)
        elif kind == "str" and out.get("pattern") is not None:
            self.forbid_only = False
            return _pattern_node(out)
        elif kind == "enum" and _has_none(out):
            self.forbid_only = False
            return _enum_node(out)
        return out

    def _model(self, node: dict[str, Any]) -> Any:
        cls = node["cls"]
        if node.get("custom_init"):
            msg = (
                f"{cls.__qualname__} defines its own __init__, which "
                f"pydantic runs in lax Python mode; move that logic to a "
                f"model_validator or to model_post_init"
            )
            raise UnsupportedModelError(msg)
        post_init = node.pop("post_init", None)
        node["cls"] = self._shell(cls)
        node.pop("metadata", None)
        adopt = functools.partial(_adopt_model, cls, post_init)
        return _after(adopt, node)

    def _dataclass(self, node: dict[str, Any]) -> Any:
        """A pydantic dataclass: a stand-in too, adopted afterwards.

        pydantic-core sets the fields on the stand-in (its ``__dict__``,
        or its slots) and calls its ``__post_init__`` with the init-only
        values, which the stand-in keeps for the real one.
        """
        cls = node["cls"]
        fields = tuple(node.get("fields", ()))
        layout = (*fields, _ARGS) if node.get("slots") else ("__dict__", _ARGS)
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


def _alias_keys(alias: object) -> set[str]:
    """The top-level JSON keys a ``validation_alias`` takes."""
    if isinstance(alias, str):
        return {alias}
    if not isinstance(alias, list):
        return set()
    paths = alias if alias and isinstance(alias[0], list) else [alias]
    return {path[0] for path in paths if path and isinstance(path[0], str)}


def _refused_names(
    node: dict[str, Any], config: dict[str, Any] | None
) -> set[str]:
    """The names of *node*'s aliased fields, where only aliases are keys.

    Empty where the class takes names too (``validate_by_name``,
    ``populate_by_name``), and names another field's alias takes.
    """
    config = config or {}
    by_name = config.get("validate_by_name", config.get("populate_by_name"))
    if by_name or not config.get("validate_by_alias", True):
        return set()
    fields = node.get("fields")
    if isinstance(fields, dict):
        pairs = [(str(name), field) for name, field in fields.items()]
    else:  # dataclass-args: a list of fields
        pairs = [(str(field.get("name")), field) for field in fields or ()]
    taken: set[str] = set()
    names: set[str] = set()
    for name, field in pairs:
        keys = _alias_keys(field.get("validation_alias"))
        taken |= keys or {name}
        if keys and name not in keys:
            names.add(name)
    return names - taken


@functools.cache
def _drops_names() -> bool:
    """Whether pydantic-core drops a field's name where its alias is due.

    pydantic-core 2.41 to 2.46 (pydantic 2.12, 2.13) drop such a key
    silently, even with ``extra="forbid"``; earlier and later ones
    refuse it, as toolctx's rules say (an unknown key is refused).
    """
    field = core_schema.model_field(
        core_schema.str_schema(), validation_alias="alias"
    )
    validator = pydantic_core.SchemaValidator(
        core_schema.model_fields_schema(
            {"name": field}, extra_behavior="forbid"
        )
    )
    try:
        validator.validate_json('{"name": ""}', strict=True)
    except pydantic_core.ValidationError as exc:
        return all(e["type"] != "extra_forbidden" for e in exc.errors())
    return True


@functools.cache
def _runtime_extra() -> bool:
    """Whether pydantic-core takes ``extra=`` per validation call."""
    validator = pydantic_core.SchemaValidator(core_schema.none_schema())
    try:
        validator.validate_json("null", extra="forbid")  # type: ignore[call-arg, unused-ignore]
    except TypeError:
        return False
    return True


def _prebuilt(node: Mapping[str, Any]) -> bool:
    """Whether pydantic-core validates a class node with its own validator."""
    cls = node.get("cls")
    return (
        isinstance(cls, type)
        and bool(cls.__dict__.get("__pydantic_complete__"))
        and "generic_origin" not in node
    )


def _after(function: Callable[[Any], Any], node: dict[str, Any]) -> Any:
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


def _adopt_model(
    cls: type[pydantic.BaseModel], post_init: str | None, shell: object
) -> pydantic.BaseModel:
    """The real model instance holding what the stand-in was given."""
    instance = cls.__new__(cls)
    put = object.__setattr__
    put(instance, "__dict__", shell.__dict__)
    put(instance, "__pydantic_fields_set__", shell.__pydantic_fields_set__)  # type: ignore[attr-defined]
    put(
        instance,
        "__pydantic_extra__",
        getattr(shell, "__pydantic_extra__", None),
    )
    put(instance, "__pydantic_private__", None)
    if post_init:
        getattr(instance, post_init)(None)
    return instance


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


def _patterns_only(node: Any) -> Any:
    """*node* with only its string patterns rewritten (for mapping keys)."""
    if isinstance(node, (list, tuple)):
        return type(node)(_patterns_only(item) for item in node)
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key in _NOT_SCHEMAS else _patterns_only(value)
        for key, value in node.items()
    }
    if out.get("type") == "str" and out.get("pattern") is not None:
        return _pattern_node(out)
    return out


def _pattern_node(node: dict[str, Any]) -> Any:
    r"""A string whose ``pattern`` is run as ECMA-262 (the schema's meaning).

    pydantic-core runs a pattern with Rust's ``regex`` (Unicode ``\d``,
    ``\w`` and ``\s``, ``.`` matching ``\r``) or Python's ``re``
    (``$`` before a final line break). The node keeps its other checks
    (strictness, stripping, lengths), then meets
    :func:`~toolctx._types.patterns.compile_pattern`'s expression, as
    pydantic orders them; ``to_lower``/``to_upper`` come after.

    Raises:
        UnsupportedModelError: The pattern is not ECMA-262, or toolctx
            cannot run it so.
    """
    given = node.pop("pattern")
    try:
        text = pattern_text(given)
        regex = compile_pattern(text)
    except PatternError as exc:
        shown = getattr(given, "pattern", given)
        msg = f"the pattern {shown!r} cannot be enforced ({exc})"
        raise UnsupportedModelError(msg) from None
    node.pop("regex_engine", None)
    ref = node.pop("ref", None)
    cases = {key: node.pop(key, None) for key in ("to_lower", "to_upper")}
    context = {"pattern": text}

    def match(value: str) -> str:
        if regex.search(value) is None:
            raise pydantic_core.PydanticKnownError(
                "string_pattern_mismatch", context
            )
        return value

    replaced = _after(match, node)
    if any(cases.values()):
        replaced = core_schema.chain_schema(
            [
                replaced,
                core_schema.str_schema(
                    to_lower=bool(cases["to_lower"]),
                    to_upper=bool(cases["to_upper"]),
                ),
            ]
        )
    if ref is not None:
        replaced["ref"] = ref
    return replaced


def _has_none(node: dict[str, Any]) -> bool:
    """Whether an enum node has a member of value None.

    pydantic 2.11 and 2.13 take any string for such a member;
    :func:`_enum_node` matches its members itself, as pydantic 2.14 does,
    so every pydantic version behaves the same.
    """
    return any(
        getattr(member, "value", member) is None
        for member in node.get("members", ())
    )


def _enum_node(node: dict[str, Any]) -> Any:
    """An enum matched member by member, as pydantic 2.14 matches it."""
    members = list(node["members"])
    shown = [repr(member.value) for member in members]
    expected = ", ".join(shown[:-1]) + " or " + shown[-1]

    def match(value: object) -> object:
        for member in members:
            if member.value == value:  # true is 1, as in pydantic 2.14
                return member
        raise pydantic_core.PydanticKnownError("enum", {"expected": expected})

    ref = node.pop("ref", None)
    replaced = cast(
        "dict[str, Any]",
        core_schema.no_info_plain_validator_function(match),
    )
    if ref is not None:
        replaced["ref"] = ref
    return replaced


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


encode: Final = _make_encoder()
"""Compact JSON text of JSON data; anything else raises (see above)."""


# -- output ------------------------------------------------------------------


def _check_output(value: object) -> None:
    """Raise :class:`NotJSONError` for what JSON cannot carry exactly."""
    cls = type(value)
    if cls is str:
        text = cast("str", value)
        if not text.isascii():
            checked_text(text)
    elif cls is float:
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
        _check_dict(cast("dict[str, object]", value))


def _check_dict(data: dict[str, object]) -> None:
    """:func:`_check_output` of each key and item of *data*."""
    for key in data:
        if not key.isascii():
            checked_text(key, "A key")
    _check_items(iter(data.items()))


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
    plan = plan_of(cls)
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
    schema, defs = plan_of(cls).schema(mode)
    if taken:
        return settle(schema, defs, taken)
    return renamed(schema, {}), renamed(defs, {})


def compile_validator(cls: type) -> Callable[[object], Any]:
    """The validator of the model *cls*: JSON value -> instance.

    Built once per class (cached); the returned function raises
    :class:`~toolctx._types.problems.InvalidValueError` with every
    problem, paths relative to the value (``items[0].name``). Other
    exceptions the model's own validators raise propagate unchanged.

    Raises:
        UnsupportedModelError: The model is not complete or defines its
            own ``__init__``.
    """
    return plan_of(cls).validate


def validate(cls: type, data: object) -> Any:
    """*data* (a JSON value) validated as the model *cls*.

    Raises:
        InvalidValueError: Every problem, paths relative to *data*.
        UnsupportedModelError: See :func:`compile_validator`.
    """
    return plan_of(cls).validate(data)


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
    plan = plan_of(target)
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
