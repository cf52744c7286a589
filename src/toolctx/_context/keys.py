"""Typed slots: ``ContextKey[T]`` and the runtime type check behind it."""

from __future__ import annotations

import builtins
import threading

from typing import Any, Generic, TypeVar, cast, final, overload

from toolctx._types.instance import matches
from toolctx._types.nodes import MISSING, Missing, type_name
from toolctx.exceptions import ContextKeyConflictError, ContextValueTypeError


__all__ = [
    "ContextKey",
    "RawValue",
    "known_key",
    "matches",
    "type_name",
]


T = TypeVar("T")


@final
class RawValue:
    """A typed value whose key this process does not know (yet).

    Made by ``ExecutionContext.from_dict`` for a slot name no
    :class:`ContextKey` has claimed. ``ExecutionContext.get(key)``
    structures it once the key exists; serializing writes ``data`` back
    unchanged, so nothing is silently dropped.
    """

    __slots__ = ("data",)

    def __init__(self, data: object) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawValue):
            return NotImplemented
        return bool(self.data == other.data)

    def __hash__(self) -> int:
        return hash(("RawValue", repr(self.data)))

    def __repr__(self) -> str:
        return f"RawValue({self.data!r})"


_KNOWN: dict[str, object] = {}
_KNOWN_KEYS: dict[str, ContextKey[Any]] = {}
_LOCK = threading.Lock()


@final
class ContextKey(Generic[T]):
    """A typed slot on an :class:`~toolctx.ExecutionContext`.

    ``ContextKey("tenant", str)`` is a ``ContextKey[str]``: mypy infers the
    value type for :meth:`ExecutionContext.get` and ``require``. The name
    identifies the slot everywhere (serialized contexts, other processes),
    so two keys with one name and different types are an error.

    Args:
        name: The slot's name; unique per type in the process.
        type: The value type. Plain classes, ``list[int]``-style generics,
            ``Optional``/unions, ``Literal`` and ``Any`` are checked.
        default: Returned by ``get`` and ``require`` when the slot is not
            set. Omit it to make ``require`` raise instead.

    Raises:
        ContextKeyConflictError: Another key has this name and another type.

    Example:
        >>> TENANT = ContextKey("doc_tenant", str)
        >>> TENANT
        ContextKey('doc_tenant', str)

    .. versionadded:: 0.1.0
    """

    __slots__ = ("default", "name", "type")

    name: str
    type: Any
    default: T | Missing

    @overload
    def __init__(self, name: str, type: builtins.type[T]) -> None: ...
    @overload
    def __init__(
        self, name: str, type: builtins.type[T], *, default: T
    ) -> None: ...
    @overload
    def __init__(self, name: str, type: Any) -> None: ...
    @overload
    def __init__(self, name: str, type: Any, *, default: T) -> None: ...
    def __init__(
        self,
        name: str,
        type: Any,  # noqa: A002
        *,
        default: T | Missing = MISSING,
    ) -> None:
        if not isinstance(cast("object", name), str) or not name:
            msg = f"ContextKey name must be a non-empty str, got {name!r}."
            raise TypeError(msg)
        if default is not MISSING and not matches(default, type):
            msg = (
                f"ContextKey {name!r}: default {default!r} is not a "
                f"{type_name(type)}."
            )
            raise ContextValueTypeError(msg)
        with _LOCK:
            known = _KNOWN.get(name, MISSING)
            if known is not MISSING and known != type:
                msg = (
                    f"ContextKey {name!r} already exists with type "
                    f"{type_name(known)}; cannot redeclare it as "
                    f"{type_name(type)}. Reuse the existing key (define it "
                    f"once at module level) or pick another name."
                )
                raise ContextKeyConflictError(msg)
            _KNOWN[name] = type
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "default", default)
        with _LOCK:
            _KNOWN_KEYS.setdefault(name, self)

    def __setattr__(self, name: str, value: object) -> None:
        msg = "ContextKey is immutable."
        raise AttributeError(msg)

    def __repr__(self) -> str:
        extra = (
            "" if self.default is MISSING else f", default={self.default!r}"
        )
        return f"ContextKey({self.name!r}, {type_name(self.type)}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextKey):
            return NotImplemented
        return bool(self.name == other.name and self.type == other.type)

    def __hash__(self) -> int:
        return hash(("ContextKey", self.name))

    def __reduce__(self) -> tuple[Any, ...]:
        if self.default is MISSING:
            return (ContextKey, (self.name, self.type))
        return (_key_with_default, (self.name, self.type, self.default))

    def check(self, value: object) -> T:
        """Return *value* if it is a ``T``; else raise ContextValueTypeError.

        .. versionadded:: 0.1.0
        """
        if not matches(value, self.type):
            msg = (
                f"ContextKey {self.name!r} holds {type_name(self.type)}, "
                f"got {value!r} ({type(value).__name__})."
            )
            raise ContextValueTypeError(msg)
        return cast("T", value)


def _key_with_default(name: str, tp: Any, default: Any) -> ContextKey[Any]:
    return ContextKey(name, tp, default=default)


def known_key(name: str) -> ContextKey[Any] | None:
    """Return the first key created under *name* in this process, if any."""
    return _KNOWN_KEYS.get(name)
