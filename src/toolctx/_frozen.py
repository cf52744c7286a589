"""Read-only mappings for context metadata and state snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, cast, final


@final
class FrozenDict(dict[str, object]):
    """A ``dict`` whose mutating methods raise ``TypeError``.

    Reads run at ``dict`` speed and ``json.dumps`` accepts it as it is.
    Nested dicts, lists and sets are frozen too (see :func:`deep_freeze`),
    so a tool cannot change what other calls will see.
    """

    __slots__ = ("_label",)

    _label: str

    def _readonly(self, *_args: object, **_kwargs: object) -> NoReturn:
        msg = (
            f"{self._label} is read-only. Derive a new context instead "
            "(ctx.with_metadata(...) for metadata; toolctx.set_state(...) "
            "to change session state from a tool)."
        )
        raise TypeError(msg)

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset((k, _hashable(v)) for k, v in self.items()))

    def __repr__(self) -> str:
        return dict.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(self), self._label))


def _rebuild(data: dict[str, object], label: str) -> FrozenDict:
    return freeze_mapping(data, label, deep=False)


def _hashable(value: object) -> object:
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


def deep_freeze(value: object, label: str) -> object:
    """Return *value* with dicts, lists and sets replaced by frozen ones."""
    tp = type(value)
    if tp is FrozenDict or tp in _ATOMS:
        return value
    if isinstance(value, Mapping):
        return freeze_mapping(value, label)
    if tp is list or tp is tuple:
        return tuple(deep_freeze(v, label) for v in value)  # type: ignore[attr-defined]
    if tp is set or tp is frozenset:
        return frozenset(value)  # type: ignore[call-overload]
    return value


_ATOMS = frozenset({str, int, float, bool, type(None), bytes})


def freeze_mapping(
    data: Mapping[str, object] | Iterable[tuple[str, object]],
    label: str,
    *,
    deep: bool = True,
) -> FrozenDict:
    """Return a :class:`FrozenDict` copy of *data*.

    With *deep* (the default) nested dicts, lists and sets are frozen too;
    without it only the top level is, so values keep their own types.
    """
    if type(data) is FrozenDict and data._label == label:  # noqa: SLF001
        return data
    items = data.items() if isinstance(data, Mapping) else data
    out = FrozenDict()
    out._label = label  # noqa: SLF001
    for key, value in items:
        if type(key) is not str:
            msg = f"{label} keys must be str, got {key!r}."
            raise TypeError(msg)
        dict.__setitem__(
            out, key, deep_freeze(value, label) if deep else value
        )
    return out


EMPTY_METADATA = freeze_mapping({}, "ExecutionContext.metadata")
EMPTY_STATE = freeze_mapping({}, "ExecutionContext.state")
EMPTY_VALUES = freeze_mapping({}, "ExecutionContext.values")


def thaw(value: object) -> Any:
    """A deep copy of JSON-like *value* made of plain dicts and lists.

    Mappings (read-only ones included) become ``dict``; lists, tuples and
    frozensets ``list``; everything else is returned as it is. The copy
    shares nothing mutable with *value*, so callers may change it freely.
    """
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (tuple, list, frozenset)):
        return [thaw(item) for item in value]
    return value


MAX_DATA_DEPTH = 200
"""Deepest nesting of objects and arrays in stored data that is read back.

Each value of what ``from_dict`` and the session stores read (an entry
of the state or of metadata, a typed value, an output, an argument of a
held call) may nest at most this many levels; deeper data is refused with
a :class:`~toolctx.exceptions.ContextDataError`, on writing as on
reading, before any of the recursive walkers (:func:`deep_freeze`,
:func:`thaw`, the converters) could exhaust the stack. It is well above
the arguments' default limit of 64 and below what those walkers can take.
"""


def nested_deeper(value: object, limit: int) -> bool:
    """Whether *value* nests mappings and sequences over *limit* levels.

    ``{"a": [1]}`` nests two levels, a scalar none. Walks level by level
    without recursion, so any depth is measured safely; strings and bytes
    are not sequences here.
    """
    level = [value] if _nests(value) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[object] = []
        for item in level:
            below.extend(
                item.values()
                if isinstance(item, Mapping)
                else cast("Iterable[object]", item)
            )
        level = [item for item in below if _nests(item)]
    return False


def _nests(item: object) -> bool:
    return isinstance(item, (Mapping, list, tuple, set, frozenset))


def depth_problem(
    value: object, what: str, *, envelope: int = 0
) -> str | None:
    """Why *value* cannot be stored, if it nests past MAX_DATA_DEPTH.

    *envelope* is how many levels of toolctx's own records wrap the data
    in *value*: 1 for a mapping whose entries are the data (state,
    metadata), :data:`CONTEXT_ENVELOPE` for a stored context. The message
    names *what*, and the entry at fault when *envelope* is 1 or more;
    None when *value* is shallow enough. Callers raise it as a
    :class:`~toolctx.exceptions.ContextDataError`.
    """
    if not nested_deeper(value, MAX_DATA_DEPTH + envelope):
        return None
    if envelope and isinstance(value, Mapping):
        for key, item in value.items():
            if nested_deeper(item, MAX_DATA_DEPTH + envelope - 1):
                what = f"{what} entry {key!r:.80}"
                break
    return (
        f"{what} is nested deeper than {MAX_DATA_DEPTH} levels of objects "
        "and arrays, the most toolctx stores and reads back."
    )


ENTRIES = 1
"""The envelope of a mapping whose entries are the data (state, metadata)."""

CONTEXT_ENVELOPE = 4
"""Levels a stored context adds above its data: the context, its
``prior_results`` list, a result, and the result's metadata mapping."""
