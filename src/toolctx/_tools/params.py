"""The parameter list shared by schema generation and argument structuring."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

import attrs

from toolctx._types.nodes import MISSING


@final
@attrs.frozen
class Param:
    """One model-visible parameter of a tool function.

    Attributes:
        name: The parameter name (also the JSON property name).
        annotation: The resolved type hint, ``Annotated`` extras kept.
        default: The default, or ``MISSING`` when required (or made by
            *default_factory*).
        description: From the docstring, or None.
        default_factory: Makes the default for each call (pydantic
            ``Field(default_factory=...)``), or None.
        fill: The function's own default is not the value to use (it is a
            pydantic ``FieldInfo``): the validator supplies *default* (or
            calls *default_factory*) when the argument is absent.
    """

    name: str
    annotation: Any
    default: object = MISSING
    description: str | None = None
    default_factory: Callable[[], object] | None = None
    fill: bool = False

    @property
    def required(self) -> bool:
        """Whether the model must supply this argument."""
        return self.default is MISSING and self.default_factory is None

    def fill_value(self) -> object:
        """The value to pass when the argument is absent and *fill* is set."""
        if self.default_factory is not None:
            return self.default_factory()
        return self.default
