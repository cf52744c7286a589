"""The parameter list shared by schema generation and argument structuring."""

from __future__ import annotations

from typing import Any, final

import attrs

from toolctx._keys import MISSING


@final
@attrs.frozen
class Param:
    """One model-visible parameter of a tool function.

    Attributes:
        name: The parameter name (also the JSON property name).
        annotation: The resolved type hint, ``Annotated`` extras kept.
        default: The Python default, or ``MISSING`` when required.
        description: From the docstring, or None.
    """

    name: str
    annotation: Any
    default: object = MISSING
    description: str | None = None

    @property
    def required(self) -> bool:
        """Whether the model must supply this argument."""
        return self.default is MISSING
