"""One typed value to JSON and back: the typed values of contexts.

``ContextKey`` values, published metadata and session state are stored
in JSON by the type their key declares. These two functions are the
round trip, with the same strict rules as tool arguments.
"""

from __future__ import annotations

from toolctx._types.output import to_json
from toolctx._types.problems import problems_of, render_path
from toolctx._types.validate import check_for
from toolctx.exceptions import ArgumentError, ToolArgumentsError


__all__ = ["structure_value", "unstructure_value"]


def structure_value(data: object, tp: object) -> object:
    """Validate and structure one JSON value as the type *tp*.

    Same strict rules as tool arguments; paths in the errors are
    relative to *data* (empty for *data* itself). The check of *tp* is
    compiled once and kept.

    Raises:
        ToolArgumentsError: Every problem with *data* (a ``ValueError``).
        SchemaError: *tp* is not a supported type.
    """
    check = check_for(tp)
    try:
        return check(data)
    except Exception as exc:  # noqa: BLE001 - reported
        raise ToolArgumentsError(
            [
                ArgumentError(render_path(path), msg)
                for path, msg in problems_of(exc)
            ]
        ) from None


def unstructure_value(value: object, tp: object) -> object:
    """Return *value*, declared as *tp*, as JSON data.

    The conversion follows the runtime type of *value*, exactly as a
    tool's output (so a subclass keeps its own fields); *tp* is checked
    to be supported, so that ``structure_value(unstructure_value(v, tp),
    tp)`` can read it back.

    Raises:
        TypeError: *value* has no JSON form.
        SchemaError: *tp* is not a supported type (also a TypeError).
    """
    check_for(tp)
    return to_json(value)
