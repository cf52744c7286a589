"""Reading a tool function's signature into the tool's parameters.

:func:`read_parameters` turns a function's signature, type hints and
docstring into the model-visible :class:`~toolctx.tools.params.Param`
list, the names of the parameters that receive the ``ExecutionContext``,
and the resolved hints, rejecting with :class:`~toolctx.SchemaError`
what cannot become a JSON parameter. :func:`admits_none` says whether a
hint takes ``None``. :class:`~toolctx.FunctionTool` builds on both.
"""

from __future__ import annotations

import inspect
import types
import typing

from collections.abc import Callable, Mapping
from typing import Any

from toolctx.context.execution import ExecutionContext
from toolctx.context.keys import MISSING, type_name
from toolctx.exceptions import SchemaError
from toolctx.tools.params import Param


def _is_context_hint(hint: object) -> bool:
    """``ExecutionContext``, ``ExecutionContext | None``, ``Annotated``."""
    if hint is ExecutionContext:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _is_context_hint(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return len(members) == 1 and _is_context_hint(members[0])
    return False


def admits_none(hint: object) -> bool:
    """Whether ``None`` is a value of *hint* (unknown forms: assume so)."""
    if hint is None or hint is type(None) or hint is Any or hint is object:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return admits_none(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(admits_none(a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        return None in typing.get_args(hint)
    value = getattr(hint, "__value__", None)  # PEP 695 alias
    if value is not None:
        return admits_none(value)
    supertype = getattr(hint, "__supertype__", None)  # NewType
    if supertype is not None:
        return admits_none(supertype)
    return not isinstance(hint, type) and origin is None


def _as_written(fn: Callable[..., Any], name: str, hint: object) -> object:
    """*name*'s annotation as written.

    CPython 3.10's ``get_type_hints`` adds ``Optional`` to a parameter
    that defaults to None; the written one says whether the author did.
    """
    try:
        written = inspect.get_annotations(fn, eval_str=True).get(name, hint)
    except Exception:  # noqa: BLE001 - the resolved hint is good enough
        return hint
    return written


def _field_default(
    default: object,
) -> tuple[object, Callable[[], object] | None] | None:
    """``(default, factory)`` of a pydantic ``= Field(...)`` default.

    None when *default* is not a pydantic ``FieldInfo`` (pydantic is not
    imported here: a ``FieldInfo`` can only exist once it is).
    """
    cls = type(default)
    if cls.__name__ != "FieldInfo" or not cls.__module__.startswith(
        "pydantic"
    ):
        return None
    factory = getattr(default, "default_factory", None)
    value = getattr(default, "default", MISSING)
    if type(value).__name__ == "PydanticUndefinedType":
        value = MISSING
    return value, factory if callable(factory) else None


def _annotated_default(
    hint: object,
) -> tuple[object, Callable[[], object] | None] | None:
    """``(default, factory)`` of ``Annotated[T, Field(default=...)]``.

    The last pydantic ``FieldInfo`` in the hint's metadata that sets a
    default or a default factory, as pydantic reads it; None when none
    does.
    """
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    found = None
    for item in getattr(hint, "__metadata__", ()):
        field = _field_default(item)
        if field is not None and (field[0] is not MISSING or field[1]):
            found = field
    return found


def _field_param(
    name: str, hint: object, default: object, description: str | None
) -> Param | None:
    """The parameter a pydantic ``Field`` default makes, else None.

    ``= Field(...)`` or, with no default of the function's own,
    ``Annotated[T, Field(default=...)]``: the validator fills the
    default (or calls the factory) when the argument is absent.
    """
    field = _field_default(default)
    annotation = hint
    if field is not None:
        annotation = typing.Annotated[hint, default]
    if default is MISSING or field == (MISSING, None):
        # the function's own default wins; pydantic merges the Fields
        field = _annotated_default(hint) or field
    if field is None:
        return None
    value, factory = field
    return Param(name, annotation, value, description, factory, fill=True)


def _missing_annotation(owner: str, name: str, doc: str | None) -> str:
    """The message for a parameter without a type annotation."""
    from toolctx._docstrings import documented_type

    documented = documented_type(doc, name)
    head = (
        f"Cannot build a schema for parameter {name!r} of {owner}: it has "
        "no type annotation."
    )
    if documented is None:
        return f"{head} Annotate it, e.g. `{name}: str`."
    return (
        f"{head} The docstring gives its type: annotate it "
        f"`{name}: {documented}`."
    )


def read_parameters(
    fn: Callable[..., Any],
    owner: str,
    docs: Mapping[str, str],
    raw_doc: str | None = None,
) -> tuple[list[Param], tuple[str, ...], dict[str, Any]]:
    """The model-visible parameters, the injected ones, and all the hints."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        msg = f"Cannot read the signature of {owner}: {exc}"
        raise SchemaError(msg, function=owner) from None
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - reported as SchemaError
        msg = (
            f"Cannot resolve the type hints of {owner}: "
            f"{type(exc).__name__}: {exc}. Make every annotation importable "
            "at module level."
        )
        raise SchemaError(msg, function=owner) from None
    params: list[Param] = []
    ctx_params: list[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            kind = {
                p.VAR_POSITIONAL: "*args",
                p.VAR_KEYWORD: "**kwargs",
                p.POSITIONAL_ONLY: "positional-only",
            }[p.kind]
            msg = (
                f"Cannot use parameter {p.name!r} of {owner} in a tool: "
                f"{kind} parameters have no JSON name. Declare every "
                "parameter as a normal or keyword-only one."
            )
            raise SchemaError(msg, function=owner, parameter=p.name)
        if p.name not in hints:
            msg = _missing_annotation(owner, p.name, raw_doc)
            raise SchemaError(msg, function=owner, parameter=p.name)
        hint = hints[p.name]
        if _is_context_hint(hint):
            ctx_params.append(p.name)
            continue
        default = MISSING if p.default is p.empty else p.default
        param = _field_param(p.name, hint, default, docs.get(p.name))
        if param is not None:
            params.append(param)
            continue
        written = _as_written(fn, p.name, hint) if default is None else hint
        if default is None and not admits_none(written):
            shown = type_name(written)
            msg = (
                f"Parameter {p.name!r} of {owner} defaults to None, but its "
                f"type {shown} does not admit None. Write "
                f"`{p.name}: {shown} | None = None`, or give it a default "
                "of its own type."
            )
            raise SchemaError(msg, function=owner, parameter=p.name)
        params.append(Param(p.name, hint, default, docs.get(p.name)))
    return params, tuple(ctx_params), hints
