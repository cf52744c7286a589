"""Pydantic v2 models as tool parameters and return values.

Only imported once a model is used (the type model asks
:func:`toolctx._types.pydantic_check.is_model` first, which never imports
pydantic). Everything here is delegated to pydantic, under toolctx's
rules, through each model's plan (:mod:`~toolctx._types.pydantic_plan`):

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

import math

from typing import TYPE_CHECKING, Any, cast

import pydantic_core

from toolctx._text import message_of
from toolctx._types.messages import show_value
from toolctx._types.output import MAX_INT, MAX_INT_DIGITS, NotJSONError
from toolctx._types.output_scalars import checked_text
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx._types.pydantic_plan import plan_of
from toolctx._types.pydantic_schema import renamed, settle


if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

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
