"""The root of toolctx's exceptions, and how they pickle.

:class:`ToolctxError` is the base class of every exception toolctx
raises on purpose; its ``__reduce__`` pickles an exception as its
arguments and attributes, so subclasses with their own ``__init__``
cross processes intact.
"""

from __future__ import annotations

from typing import Any


PUBLIC_MODULE = "toolctx.exceptions"
"""The module users import every exception from: the classes' ``__module__``.

One string object, so that a pickle names the module once, as it did when
the exceptions lived in one file.
"""


class ToolctxError(Exception):
    """Base class of every exception toolctx raises on purpose.

    .. versionadded:: 0.1.0
    """

    __module__ = PUBLIC_MODULE

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle as (args, attributes) without calling __init__ again, so
        # that subclasses with their own __init__ signature cross processes
        # intact (process pools, Dask).
        return (_unpickle, (type(self), self.args, self.__dict__))


def _unpickle(
    cls: type[ToolctxError], args: tuple[Any, ...], state: dict[str, Any]
) -> ToolctxError:
    exc = cls.__new__(cls, *args)
    # OSError's __new__ (TimeoutError's) leaves args to an overridden
    # __init__, which is not called here.
    exc.args = args
    exc.__dict__.update(state)
    return exc


_unpickle.__module__ = PUBLIC_MODULE  # pickles name it there
