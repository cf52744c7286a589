"""Check a plain tool's arguments against its own JSON Schema (opt-in).

A :func:`toolctx.tool` function's arguments are checked by the type model
that also wrote its schema. A plain tool (``definition()`` and
``execute()``) brings its own schema, and nothing checks the model's
arguments against it unless the host asks:
``registry.register(tool, check_arguments=True)`` compiles a
:class:`SchemaStructurer` from ``definition().parameters`` with the
``jsonschema`` library (extra ``toolctx[jsonschema]``), and the
dispatcher runs it where it runs a function tool's checks. A problem is
reported like a function tool's: one
:class:`~toolctx.exceptions.ToolArgumentsError` naming every wrong
argument by its path.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import importlib
import re

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

from toolctx._frozen import thaw
from toolctx._types.messages import (
    BOUNDS,
    clip,
    counted,
    show_bound,
    show_option,
    show_value,
)
from toolctx._types.patterns import PatternError, compile_pattern
from toolctx._types.problems import render_path, unexpected
from toolctx.exceptions import ArgumentError, SchemaError, ToolArgumentsError


if TYPE_CHECKING:
    from toolctx._types.problems import Problem

__all__ = ["EXTRA", "SchemaStructurer"]

EXTRA: Final = "toolctx[jsonschema]"
"""The extra that installs what :class:`SchemaStructurer` needs."""

_TYPE_WORDS: Final[dict[str, str]] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}

_COUNT_WORDS: Final[dict[str, tuple[str, str]]] = {
    "minLength": ("at least", "character"),
    "maxLength": ("at most", "character"),
    "minItems": ("at least", "item"),
    "maxItems": ("at most", "item"),
    "minProperties": ("at least", "property"),
    "maxProperties": ("at most", "property"),
}


def _jsonschema(owner: str) -> Any:
    """The ``jsonschema`` module, or an ImportError naming the extra."""
    try:
        # untyped (no stubs in the typing extra): used as Any
        jsonschema = importlib.import_module("jsonschema")
    except ImportError:
        msg = (
            f"Checking the arguments of {owner} against its schema needs "
            f"the jsonschema package: pip install '{EXTRA}'."
        )
        raise ImportError(msg, name="jsonschema") from None
    return jsonschema


def _validator_class(jsonschema: Any, schema: dict[str, Any]) -> Any:
    """The schema's own draft (``$schema``), by default Draft 2020-12.

    JSON's ``object`` is any mapping and ``array`` a list or a tuple, so
    arguments a host hands over as read-only mappings check as JSON.
    """
    base = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "object": lambda _, v: isinstance(v, cabc.Mapping),
            "array": lambda _, v: isinstance(v, (list, tuple)),
        }
    )
    return jsonschema.validators.extend(
        base, _ecma_keywords(jsonschema), type_checker=checker
    )


@functools.lru_cache(maxsize=256)
def _ecma(pattern: str) -> re.Pattern[str]:
    """*pattern* compiled with its JSON Schema (ECMA-262) meaning."""
    return compile_pattern(pattern)


def _ecma_keywords(jsonschema: Any) -> dict[str, Any]:  # noqa: C901
    r"""The keywords that read patterns, reading them as ECMA-262.

    ``pattern``, ``patternProperties`` and ``additionalProperties`` mean
    what they mean on every other path of toolctx: ``$`` is the end of
    the text, ``\d`` is ASCII.
    """
    error = jsonschema.ValidationError

    def pattern(validator: Any, patrn: str, instance: Any, _: Any) -> Any:
        if validator.is_type(instance, "string") and not _ecma(patrn).search(
            instance
        ):
            yield error(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: Any, instance: Any, _: Any
    ) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if _ecma(patrn).search(key):
                    yield from validator.descend(
                        value, subschema, path=key, schema_path=patrn
                    )

    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Any:
        if not validator.is_type(instance, "object"):
            return
        extras = _additional(schema, instance)
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(
                    instance[extra], additional, path=extra
                )
        elif not additional and extras:
            names = ", ".join(repr(e) for e in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield error(
                f"Additional properties are not allowed ({names} {verb} "
                "unexpected)"
            )

    return {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }


def _check_patterns(schema: object, owner: str) -> None:
    """Refuse, at registration, a pattern toolctx cannot run as ECMA-262."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        found = (
            [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        )
        props = node.get("patternProperties")
        if isinstance(props, dict):
            found.extend(props)
        for patrn in found:
            try:
                _ecma(patrn)
            except PatternError as exc:
                msg = (
                    f"The parameters of {owner} hold the pattern "
                    f"{clip(repr(patrn))}, which is not an ECMA-262 "
                    f"regular expression toolctx can run ({exc}). Fix its "
                    "definition() or register it without check_arguments."
                )
                raise SchemaError(msg) from None
        stack.extend(node.values())


@final
class SchemaStructurer:
    """Checks a plain tool's arguments against its ``parameters`` schema.

    Built once, at registration: the schema is checked against its
    metaschema and compiled then, so a call only runs the validator.
    Valid arguments pass unchanged; ``format`` is an annotation (as Draft
    2020-12 says) unless *formats* asks for it to be asserted.

    Args:
        schema: The tool's ``definition().parameters``.
        owner: How to name the tool in errors (``tool 'search'``).
        formats: Assert ``format`` (``date-time``, ``email``, ``uuid``...)
            with jsonschema's format checker; some formats need packages
            jsonschema documents (``rfc3339-validator`` for
            ``date-time``), and a format whose package is missing is not
            checked.

    Raises:
        ImportError: jsonschema is not installed (the message names the
            extra ``toolctx[jsonschema]``).
        SchemaError: *schema* is not a valid JSON Schema.
    """

    __slots__ = ("_validator", "structure")

    structure: Callable[[Mapping[str, object]], dict[str, object]]
    """Return *args* if they are valid, else raise ``ToolArgumentsError``.

    Raises:
        ToolArgumentsError: Every problem, each with its argument path.
    """

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        owner: str = "a tool",
        formats: bool = False,
    ) -> None:
        jsonschema = _jsonschema(owner)
        plain = thaw(schema)
        cls = _validator_class(jsonschema, plain)
        try:
            cls.check_schema(plain)
        except jsonschema.SchemaError as exc:
            where = render_path(tuple(exc.absolute_path)) or "the top level"
            msg = (
                f"The parameters of {owner} are not a valid JSON Schema: "
                f"{clip(exc.message)} (at {where}). Fix its definition() "
                f"or register it without check_arguments."
            )
            raise SchemaError(msg) from None
        _check_patterns(plain, owner)
        checker = cls.FORMAT_CHECKER if formats else None
        # An empty registry: a "$ref" resolves inside the schema or not at
        # all, never by fetching a URL.
        registry = importlib.import_module("referencing").Registry()
        self._validator = cls(plain, format_checker=checker, registry=registry)
        self.structure = self._structure

    def _structure(self, args: Mapping[str, object]) -> dict[str, object]:
        try:
            errors = list(self._validator.iter_errors(args))
        except RecursionError:
            raise ToolArgumentsError(
                [ArgumentError("", "the arguments are nested too deeply")]
            ) from None
        except Exception as exc:
            # The schema cannot be applied (a "$ref" that resolves to
            # nothing...): not the model's doing, but no call either.
            name = type(exc).__name__
            why = 'a "$ref" in it does not resolve' if "Ref" in name else name
            msg = (
                "could not check the arguments against the tool's schema "
                f"({why}); the tool cannot be called now"
            )
            raise ToolArgumentsError([ArgumentError("", msg)]) from exc
        if not errors:
            return args if type(args) is dict else dict(args)
        problems: list[Problem] = []
        for error in errors:
            problems.extend(_problems(error))
        problems.sort(key=lambda p: tuple(str(part) for part in p[0]))
        raise ToolArgumentsError(
            [ArgumentError(render_path(path), msg) for path, msg in problems]
        )


def _types(value: object) -> str:
    names = [value] if isinstance(value, str) else list(_iter(value))
    words = [_TYPE_WORDS.get(str(name), repr(name)) for name in names]
    return " or ".join(words) if words else "a value"


def _iter(value: object) -> Iterable[object]:
    return value if isinstance(value, (list, tuple)) else ()


def _expected_of(schema: object) -> str:
    """`` (expected a string)`` for a property schema with a ``type``."""
    if isinstance(schema, Mapping) and "type" in schema:
        return f" (expected {_types(schema['type'])})"
    return ""


def _problems(error: Any) -> list[Problem]:
    """The ``(path, message)`` problems of one jsonschema error."""
    path: tuple[str | int, ...] = tuple(error.absolute_path)
    keyword = error.validator
    value = error.validator_value
    given = error.instance
    top = not path
    if keyword == "required" and isinstance(given, Mapping):
        noun = "argument" if top else "property"
        properties = error.schema.get("properties", {})
        return [
            (
                (*path, str(name)),
                f"missing required {noun}{_expected_of(properties.get(name))}",
            )
            for name in _iter(value)
            if name not in given
        ]
    if keyword == "additionalProperties" and isinstance(given, Mapping):
        extra = _additional(error.schema, given)
        allowed = list(error.schema.get("properties", {}))
        listed = (
            f"allowed: {', '.join(map(str, allowed))}"
            if allowed
            else "none allowed"
        )
        noun = "argument" if top else "property"
        found = unexpected(extra, f"unexpected {noun} ({listed})", f"{noun}s")
        return [((*path, *where), msg) for where, msg in found]
    return [(path, _message(keyword, value, given, error))]


def _additional(
    schema: Mapping[str, Any], given: Mapping[Any, Any]
) -> list[Any]:
    """The keys of *given* that neither ``properties`` nor patterns take."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in given
        if key not in properties
        and not any(_ecma(p).search(str(key)) for p in patterns)
    ]


def _message(keyword: str, value: object, given: object, error: Any) -> str:
    """What was expected and what was given, in @tool's words."""
    got = show_value(given, None)
    if keyword == "type":
        return f"expected {_types(value)}, got {got}"
    if keyword == "enum":
        options = ", ".join(show_option(v) for v in _iter(value))
        return f"expected one of {options}, got {got}"
    if keyword == "const":
        return f"expected {show_option(value)}, got {got}"
    if keyword == "pattern":
        return f"expected a string matching {clip(str(value))!r}, got {got}"
    if keyword == "format":
        return (
            f"expected a string in the format {clip(str(value))!r}, got {got}"
        )
    if keyword in BOUNDS:
        bound = f"{BOUNDS[keyword][0]} {show_bound(value)}"
        return f"expected a number {bound}, got {got}"
    if keyword == "multipleOf":
        return f"expected a multiple of {show_bound(value)}, got {got}"
    if keyword in _COUNT_WORDS and isinstance(given, cabc.Sized):
        side, noun = _COUNT_WORDS[keyword]
        return f"expected {side} {counted(value, noun)}, got {len(given)}"
    return clip(str(error.message))
