"""Build frozen attrs records fast: a generated constructor per record.

Dispatch builds one ExecutionContext and one ToolResult per call. Both are
frozen, slotted attrs classes: their __setattr__ raises, so every field of
a new instance is stored through its slot descriptor's __set__ (what the
generated __init__ does too, through object.__setattr__), about 65 ns a
field. A function made by :func:`record_builder` instead creates an
instance of a private subclass that adds no slots and whose __setattr__ is
object's: each field is then a plain attribute store, which the
interpreter turns into a direct slot write. Assigning __class__ at the end
makes it an instance of the class itself, with the class's layout,
indistinguishable from one built by __init__. On free-threaded builds
__class__ assignment stops the world, so there the builders keep the
descriptor stores.
"""

from __future__ import annotations

import inspect
import linecache
import sys

from collections.abc import Callable, Mapping
from typing import Any, Final, Generic, ParamSpec, TypeVar, final

import attrs


P = ParamSpec("P")
R = TypeVar("R")


def _free_threaded() -> bool:
    """Whether this CPython is a free-threaded (no-GIL) build."""
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    if is_gil_enabled is None:  # before 3.13 there is no such build
        return False
    if not is_gil_enabled():
        return True
    import sysconfig  # a free-threaded build may run with the GIL enabled

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


PLAIN_STORES: Final = not _free_threaded()
"""Whether builders may build through a plain-store subclass."""


@final
@attrs.frozen
class Builders(Generic[P, R]):
    """Both functions compiled for one :func:`record_builder` stub.

    Attributes:
        fast: Plain stores, then ``__class__`` assignment; None where that
            is unsafe (free-threaded builds) or does not round-trip.
        slots: One slot descriptor ``__set__`` per field; works everywhere.
    """

    fast: Callable[P, R] | None
    slots: Callable[P, R]


_BUILDERS: dict[object, Builders[Any, Any] | Callable[[], Any]] = {}
_INTERNAL = frozenset({"_record", "_cls", "_builder", "_new"})


def builders(builder: Callable[P, R]) -> Builders[P, R]:
    """Return both variants behind a function made by :func:`record_builder`.

    The function itself is ``fast`` where available, else ``slots``.
    Where ``fast`` is in use, ``slots`` is compiled on this first request
    (for tests and benchmarks) rather than at import.
    """
    found = _BUILDERS[builder]
    if not isinstance(found, Builders):
        found = _BUILDERS[builder] = found()
    return found


def record_builder(
    cls: type[R], copy_from: str | None = None, **sources: str
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Replace a stub by a function that builds a *cls* instance fast.

    The stub gives the name, the positional parameters, the annotations
    and the docstring; the body is generated. Every attrs field of *cls*
    (by attribute name) is set from the parameter *sources* names for it,
    else from the parameter of the same name, else from the same attribute
    of the parameter *copy_from*: a field added to *cls* later can never be
    left unset. No converter or validator runs, so callers pass values that
    are valid as they are (frozen mappings, tuples).

    Raises:
        TypeError: The stub's parameters are not plain positional ones, a
            field has no source, a source names no field or parameter, or
            a parameter is not used.
    """

    def decorate(stub: Callable[P, R]) -> Callable[P, R]:
        params = _plain_parameters(stub)
        exprs = _field_sources(cls, stub.__name__, params, copy_from, sources)

        def with_slots(fast: Callable[P, R] | None) -> Builders[P, R]:
            body = _slots_body(cls, exprs)
            return Builders(fast=fast, slots=_compile(stub, params, body))

        builder = _plain_store_class(cls)
        if builder is None:
            only = with_slots(None)
            _BUILDERS[only.slots] = only
            return only.slots
        fast = _compile(stub, params, _fast_body(cls, builder, exprs))
        _BUILDERS[fast] = lambda: with_slots(fast)
        return fast

    return decorate


def _plain_parameters(stub: Callable[..., Any]) -> tuple[str, ...]:
    """The names of *stub*'s parameters, all positional, none defaulted."""
    code = stub.__code__
    if (
        code.co_kwonlyargcount
        or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        or stub.__defaults__
    ):
        msg = (
            f"{stub.__name__}() must take plain positional parameters "
            "without defaults to be a record builder."
        )
        raise TypeError(msg)
    return tuple(code.co_varnames[: code.co_argcount])


def _field_sources(
    cls: type[Any],
    name: str,
    params: tuple[str, ...],
    copy_from: str | None,
    sources: Mapping[str, str],
) -> dict[str, str]:
    """Map each field of *cls* to the expression that gives its value."""
    exprs: dict[str, str] = {}
    for field in attrs.fields(cls):
        if field.name in sources:
            exprs[field.name] = sources[field.name]
        elif field.name in params:
            exprs[field.name] = field.name
        elif copy_from is not None:
            exprs[field.name] = f"{copy_from}.{field.name}"
        else:
            msg = (
                f"{name}() has no parameter for the {cls.__name__} field "
                f"{field.name!r}: add one or name its source."
            )
            raise TypeError(msg)
    unused = set(params) - set(exprs.values()) - {copy_from}
    named = {*sources.values(), *([copy_from] if copy_from else [])}
    wrong = (set(sources) - set(exprs)) | (named - set(params))
    clash = {p for p in params if p in _INTERNAL or p.startswith("_set_")}
    problems = [
        f"{what} {sorted(names)}"
        for what, names in (
            ("unused parameters", unused),
            ("sources naming no field or parameter", wrong),
            ("reserved parameter names", clash),
        )
        if names
    ]
    if problems:
        msg = f"{name}() does not fit {cls.__name__}: {'; '.join(problems)}."
        raise TypeError(msg)
    return exprs


def _slots_body(
    cls: type[Any], exprs: Mapping[str, str]
) -> tuple[list[str], dict[str, Any]]:
    """Lines and globals: ``object.__new__``, one descriptor store a field."""
    namespace: dict[str, Any] = {"_cls": cls, "_new": object.__new__}
    lines = ["_record = _new(_cls)"]
    for i, (field, expr) in enumerate(exprs.items()):
        namespace[f"_set_{i}"] = getattr(cls, field).__set__
        lines.append(f"_set_{i}(_record, {expr})")
    lines.append("return _record")
    return lines, namespace


def _fast_body(
    cls: type[Any], builder: type[Any], exprs: Mapping[str, str]
) -> tuple[list[str], dict[str, Any]]:
    """Lines and globals: plain stores on a *builder*, then ``__class__``."""
    lines = ["_record = _builder()"]
    lines.extend(f"_record.{field} = {expr}" for field, expr in exprs.items())
    lines.extend(("_record.__class__ = _cls", "return _record"))
    return lines, {"_cls": cls, "_builder": builder}


def _compile(
    stub: Callable[P, R],
    params: tuple[str, ...],
    body: tuple[list[str], dict[str, Any]],
) -> Callable[P, R]:
    """Compile *body* as a function with *stub*'s name, parameters, docs."""
    lines, namespace = body
    namespace["__name__"] = stub.__module__
    source = "".join(
        [f"def {stub.__name__}({', '.join(params)}):\n"]
        + [f"    {line}\n" for line in lines]
    )
    filename = f"<toolctx builder {stub.__module__}.{stub.__qualname__}>"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - trusted
    # Tracebacks, profilers and debuggers can show the generated lines.
    linecache.cache[filename] = (
        len(source),
        None,
        source.splitlines(keepends=True),
        filename,
    )
    function: Callable[P, R] = namespace[stub.__name__]
    function.__qualname__ = stub.__qualname__
    function.__doc__ = stub.__doc__
    function.__annotations__ = stub.__annotations__
    return function


def _plain_store_class(cls: type[R]) -> type[R] | None:
    """A private plain-store subclass of *cls*, or None where unsafe."""
    if not PLAIN_STORES:
        return None
    builder: type[R] = type(
        f"_{cls.__name__}Builder",
        (cls,),
        {
            "__slots__": (),
            "__module__": cls.__module__,
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
            "__init__": object.__init__,
        },
    )
    return builder if _round_trips(cls, builder) else None


def _round_trips(cls: type[Any], builder: type[Any]) -> bool:
    """Whether *builder* makes frozen *cls* instances holding their fields.

    Builds one with plain stores of a marker per field and checks that it
    became a *cls*, reads back every marker, and still refuses stores.
    """
    names = [field.name for field in attrs.fields(cls)]
    values = [object() for _ in names]
    try:
        record = builder()
        for name, value in zip(names, values, strict=True):
            setattr(record, name, value)
        record.__class__ = cls
    except (TypeError, AttributeError):  # other layout; stores refused
        return False
    if type(record) is not cls or any(
        getattr(record, name) is not value
        for name, value in zip(names, values, strict=True)
    ):
        return False
    try:
        setattr(record, names[0], None)
    except attrs.exceptions.FrozenInstanceError:
        return True
    return False
