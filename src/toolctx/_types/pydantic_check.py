"""Is a type a pydantic model? Answered without importing pydantic.

The type model asks :func:`is_model` of every class it meets; pydantic
itself is imported (by :mod:`toolctx._types.pydantic`) only once a model
is actually used. A class can only be a ``BaseModel`` subclass when
``pydantic.main`` has been imported already, so the check looks there
and nowhere else.
"""

from __future__ import annotations

import sys


class UnsupportedModelError(TypeError):
    """A pydantic model toolctx cannot take as a parameter or return type.

    Raised when a model's schema, validator or serializer is built (at
    decoration). ``reason`` says why and what to do, in words that fit
    a :class:`~toolctx.exceptions.SchemaError` message.

    Attributes:
        reason: Why the model is not supported, and how to fix it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def is_model(tp: object) -> bool:
    """Whether *tp* is a pydantic v2 ``BaseModel`` subclass.

    Never imports pydantic: when ``pydantic.main`` is not in
    ``sys.modules`` no model class can exist, and the answer is False.
    ``pydantic.BaseModel`` itself is not a model anyone can validate, so
    it is False too; pydantic v1 models (``pydantic.v1``) are False.
    """
    main = sys.modules.get("pydantic.main")
    base = getattr(main, "BaseModel", None)
    if base is None or not isinstance(tp, type) or tp is base:
        return False
    try:
        return issubclass(tp, base)
    except TypeError:  # a generic alias that claims to be a type
        return False
