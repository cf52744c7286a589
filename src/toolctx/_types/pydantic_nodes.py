"""The core-schema nodes toolctx puts into a model's schema, and what they run.

:class:`~toolctx._types.pydantic_rules.Rewriter` decides where; this
module builds the replacements and holds the functions pydantic-core
calls while it validates: integers that may be integral floats,
``Literal`` and enum options matched by JSON equality, sets that refuse
repeated items (:data:`DUPLICATE`), and the adoption of what a stand-in
class was given into the real model or dataclass. :func:`encode` writes
the compact JSON text pydantic-core reads.
"""

from __future__ import annotations

import functools
import json
import json.encoder

from typing import TYPE_CHECKING, Any, Final, cast

import pydantic_core

from pydantic_core import core_schema

from toolctx._types.jsonvalues import json_key, json_kind
from toolctx._types.patterns import PatternError, compile_pattern, pattern_text
from toolctx._types.pydantic_check import UnsupportedModelError


if TYPE_CHECKING:
    from collections.abc import Callable

    import pydantic


DUPLICATE: Final = "toolctx_duplicate_items"
"""The error type of a repeated set item (``ctx["duplicates"]``)."""
_EXTRA: Final = "__pydantic_extra__"
ARGS: Final = "_toolctx_post_init_args"
"""The attribute a dataclass stand-in keeps its init-only values in."""


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


def plain_node(
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


def after_node(
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


def adopt_model(
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


def keep_args(self: object, *args: object) -> None:
    """The stand-in's ``__post_init__``: keep the init-only values."""
    object.__setattr__(self, ARGS, args)


def adopt_dataclass(
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
        instance.__post_init__(*getattr(shell, ARGS, ()))
    return instance


def integer_node(node: dict[str, Any]) -> dict[str, Any]:
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


def pattern_node(node: dict[str, Any]) -> dict[str, Any]:
    r"""A string whose ``pattern`` is run as ECMA-262 (the schema's meaning).

    pydantic-core runs a pattern with Rust's ``regex`` (Unicode ``\d``,
    ``\w`` and ``\s``, ``.`` matching ``\r``) or Python's ``re``
    (``$`` before a final line break). The node keeps its other checks
    (strictness, stripping, lengths) and then meets
    :func:`~toolctx._types.patterns.compile_pattern`'s expression, as
    pydantic orders them; ``to_lower``/``to_upper`` come after, as in
    pydantic.

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

    replaced = cast(
        "dict[str, Any]",
        core_schema.no_info_after_validator_function(
            match, cast("core_schema.CoreSchema", node)
        ),
    )
    if any(cases.values()):
        replaced = cast(
            "dict[str, Any]",
            core_schema.chain_schema(
                [
                    cast("core_schema.CoreSchema", replaced),
                    core_schema.str_schema(
                        to_lower=bool(cases["to_lower"]),
                        to_upper=bool(cases["to_upper"]),
                    ),
                ]
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


def distinct_items(
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
            DUPLICATE, "items must be unique", {"duplicates": repeats}
        )
    validated = items().validate_json(encode(value), strict=True)
    try:
        return made(validated)
    except TypeError:
        raise pydantic_core.PydanticKnownError(
            "set_item_not_hashable"
        ) from None


_UNKNOWN: Final = object()


def options_node(
    node: dict[str, Any], options: list[Any], enum_node: Any
) -> dict[str, Any]:
    """A ``Literal`` (or an enum, *enum_node*) matched by JSON equality.

    pydantic matches options as Python does, so ``true`` passes for
    ``Literal[1]`` or an ``IntEnum`` member of value 1; in JSON they
    differ, and ``1.0`` is ``1``. Options that are not JSON scalars
    leave the node to pydantic.
    """
    values = [getattr(option, "value", option) for option in options]
    if not all(is_scalar(value) for value in values) or all(
        isinstance(value, str) for value in values
    ):
        return node  # pydantic's own matching is JSON's here
    # (not with None among strings: pydantic-core 2.46 takes any string
    # for the None member of an enum that also has "")
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

    return plain_node(node, match)


def _options_text(options: list[Any]) -> str:
    """``'a' or 1``, as pydantic lists literal and enum options."""
    shown = [repr(getattr(option, "value", option)) for option in options]
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def is_scalar(value: object) -> bool:
    """Whether *value* is None, a string or a number (a bool too)."""
    return value is None or isinstance(value, (str, int, float))


# -- field names where only aliases are keys ----------------------------------


def _alias_keys(alias: object) -> set[str]:
    """The top-level JSON keys a ``validation_alias`` takes."""
    if isinstance(alias, str):
        return {alias}
    if not isinstance(alias, list):
        return set()
    paths = alias if alias and isinstance(alias[0], list) else [alias]
    return {path[0] for path in paths if path and isinstance(path[0], str)}


def _fields(node: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(name, field)`` of a model-fields, typed-dict, dataclass-args node."""
    fields = node.get("fields")
    if isinstance(fields, dict):
        return [(str(name), field) for name, field in fields.items()]
    if isinstance(fields, list):
        return [(str(field.get("name")), field) for field in fields]
    return []


@functools.cache
def reports_field_names() -> bool:
    """Whether pydantic-core refuses a field's name where its alias is due.

    pydantic-core 2.46 (pydantic 2.13) drops such a key silently instead
    of reporting ``extra_forbidden``; earlier and later ones report it,
    as toolctx's rules say (an unknown key is refused).
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
        return any(e["type"] == "extra_forbidden" for e in exc.errors())
    return True


def refused_names(
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
    taken: set[str] = set()
    names: set[str] = set()
    for name, field in _fields(node):
        keys = _alias_keys(field.get("validation_alias"))
        taken |= keys or {name}
        if keys and name not in keys:
            names.add(name)
    return names - taken
