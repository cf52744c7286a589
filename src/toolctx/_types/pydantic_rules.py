"""A model's core schema, rewritten to validate by toolctx's rules.

:class:`Rewriter` walks a model's pydantic-core schema once and replaces
the nodes whose pydantic behaviour differs from toolctx's (the table in
:mod:`toolctx._types.pydantic`) with those of
:mod:`~toolctx._types.pydantic_nodes`; the result is compiled into the
model's own ``SchemaValidator``.
"""

from __future__ import annotations

import functools

from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from toolctx._types.pydantic_check import UnsupportedModelError
from toolctx._types.pydantic_nodes import (
    ARGS,
    adopt_dataclass,
    adopt_model,
    after_node,
    distinct_items,
    integer_node,
    keep_args,
    options_node,
    pattern_node,
    plain_node,
    refused_names,
    reports_field_names,
)


if TYPE_CHECKING:
    from collections.abc import Mapping


_MODEL_SLOTS: Final = (
    "__pydantic_fields_set__",
    "__pydantic_extra__",
    "__pydantic_private__",
)
_CLASS_KINDS: Final = frozenset({"model", "dataclass", "typed-dict"})
_FIELDS_KINDS: Final = frozenset(
    {"model-fields", "typed-dict", "dataclass-args"}
)
_NOT_SCHEMAS: Final = frozenset(
    {
        "cls",
        "config",
        "custom_error_context",
        "default",
        "expected",
        "function",
        "members",
        "metadata",
        "missing",
        "ref",
        "schema_ref",
        "serialization",
    }
)
"""Core-schema keys whose values are data, not schemas to rewrite."""


class Rewriter:
    """A model's core schema, rewritten to validate under toolctx's rules.

    - ``int``: an integral float (``1.0``) is the integer (JSON Schema's
      rule); strict pydantic refuses it otherwise.
    - ``literal``/``enum``: ``true`` is not ``1`` nor ``1`` ``true``
      (pydantic matches them as Python does).
    - ``set``/``frozenset``: repeated items are refused, not merged
      (the schema says ``uniqueItems``).
    - ``str`` with a ``pattern``: the pattern means what the schema says
      (ECMA-262), also for a mapping's keys.
    - model fields, TypedDicts, dataclasses: unknown keys are refused
      unless the class allows extras (``extra="allow"``). Where
      pydantic-core drops an aliased field's name silently (2.12, 2.13),
      :attr:`names` holds such names for the plan to refuse.
    - ``model`` and pydantic ``dataclass``: validated by the rewritten
      schema itself. pydantic-core would use the class's own prebuilt
      validator for such a node, which knows none of the above; so the
      node names a stand-in class with the same layout, and the result
      is adopted into the real class as pydantic-core builds it
      (``__dict__``, fields set, extra, private, then
      ``model_post_init``; a dataclass's fields, then ``__post_init__``).
    """

    def __init__(self) -> None:
        self.names: set[str] = set()
        """Field names the validator drops silently where it should
        refuse them (:func:`~toolctx._types.pydantic_nodes.refused_names`):
        the plan refuses them itself."""
        self._shells: dict[type, type] = {}
        self._config: Any = None
        self._definitions: list[Any] = []

    def rewrite(self, node: Any, extra: str) -> Any:
        """*node* rewritten; *extra* the enclosing class's extra setting."""
        if isinstance(node, list):
            return [self.rewrite(item, extra) for item in node]
        if isinstance(node, tuple):
            return tuple(self.rewrite(item, extra) for item in node)
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        config = node.get("config")
        outer = self._config
        if kind in _CLASS_KINDS and isinstance(config, dict):
            default = "ignore" if kind == "model" else extra
            extra = str(config.get("extra_fields_behavior", default))
            self._config = config
        try:
            out = {
                key: value
                if key in _NOT_SCHEMAS
                else self.rewrite(value, extra)
                for key, value in node.items()
            }
        finally:
            self._config = outer
        if kind == "definitions":
            self._definitions.extend(out["definitions"])
        if kind == "dict" and "keys_schema" in node:
            # JSON keys: pydantic's, but for the meaning of a pattern
            out["keys_schema"] = patterns_only(node["keys_schema"])
        if kind in _FIELDS_KINDS:
            if out.get("extra_behavior", extra) == "allow":
                return out
            out["extra_behavior"] = "forbid"
            if not reports_field_names():
                fields_config = config if isinstance(config, dict) else outer
                self.names |= refused_names(out, fields_config)
            return out
        return self._special(kind, out)

    def _special(self, kind: object, out: dict[str, Any]) -> dict[str, Any]:
        """The node *out* (children rewritten), rewritten itself."""
        if kind == "model":
            return self._model(out)
        if kind == "dataclass" and prebuilt(out):
            return self._dataclass(out)
        if kind == "int":
            return integer_node(out)
        if kind == "literal":
            return options_node(out, list(out.get("expected", ())), None)
        if kind == "enum":
            return options_node(out, list(out.get("members", ())), out)
        if kind in {"set", "frozenset"}:
            return self._set(out)
        if kind == "str" and out.get("pattern") is not None:
            return pattern_node(out)
        return out

    def _set(self, node: dict[str, Any]) -> dict[str, Any]:
        """A set: a JSON array of distinct items (the schema's uniqueItems).

        pydantic merges repeated items silently; toolctx refuses them.
        Items are told apart as the JSON values they are, as
        ``uniqueItems`` does (``[1, 2]`` is not ``[2, 1]``, ``[true]``
        not ``[1]``), so the check needs the JSON array itself: the node
        becomes a function of it, which validates the items as a list in
        strict JSON mode with a validator of their own (built on first
        use, when the definitions they may refer to are all rewritten),
        then makes the set.
        """
        keys = ("items_schema", "min_length", "max_length", "strict")
        as_list = {"type": "list", **{k: node[k] for k in keys if k in node}}
        config = self._config
        built: list[pydantic_core.SchemaValidator] = []

        def items() -> pydantic_core.SchemaValidator:
            if not built:
                schema: dict[str, Any] = as_list
                if self._definitions:
                    schema = {
                        "type": "definitions",
                        "schema": as_list,
                        "definitions": self._definitions,
                    }
                built.append(pydantic_core.SchemaValidator(schema, config))
            return built[0]

        kind = "set_type" if node["type"] == "set" else "frozen_set_type"
        made = set if node["type"] == "set" else frozenset
        return plain_node(
            node, functools.partial(distinct_items, made, kind, items)
        )

    def _model(self, node: dict[str, Any]) -> dict[str, Any]:
        cls = node["cls"]
        if node.get("custom_init"):
            msg = (
                f"{cls.__qualname__} defines its own __init__, which "
                f"toolctx cannot run under its validation rules; move that "
                f"logic to a model_validator or to model_post_init"
            )
            raise UnsupportedModelError(msg)
        post_init = node.pop("post_init", None)
        node["cls"] = self._shell(cls)
        node.pop("metadata", None)
        adopt = functools.partial(adopt_model, cls, post_init)
        return after_node(adopt, node)

    def _dataclass(self, node: dict[str, Any]) -> dict[str, Any]:
        """A pydantic dataclass: a stand-in too, adopted afterwards.

        pydantic-core sets the fields on the stand-in (its ``__dict__``, or
        its slots) and calls its ``__post_init__`` with the init-only
        values, which the stand-in keeps for the real one.
        """
        cls = node["cls"]
        fields = tuple(node.get("fields", ()))
        slots = bool(node.get("slots"))
        layout = (*fields, ARGS) if slots else ("__dict__", ARGS)
        node["cls"] = self._shell(cls, layout, {"__post_init__": keep_args})
        node.pop("metadata", None)
        post_init = bool(node.get("post_init"))
        adopt = functools.partial(adopt_dataclass, cls, fields, post_init)
        return after_node(adopt, node)

    def _shell(
        self,
        cls: type,
        slots: tuple[str, ...] = ("__dict__", *_MODEL_SLOTS),
        methods: dict[str, Any] | None = None,
    ) -> type:
        """A plain class laid out like *cls* (no prebuilt validator)."""
        shell = self._shells.get(cls)
        if shell is None:
            namespace = {
                "__slots__": slots,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                **(methods or {}),
            }
            shell = type(cls.__name__, (), namespace)
            self._shells[cls] = shell
        return shell


def patterns_only(node: Any) -> Any:
    """*node* with only its string patterns rewritten (ECMA-262's meaning).

    For a mapping's keys, which stay pydantic's otherwise (JSON keys are
    strings that pydantic reads as the key type).
    """
    if isinstance(node, list):
        return [patterns_only(item) for item in node]
    if isinstance(node, tuple):
        return tuple(patterns_only(item) for item in node)
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key in _NOT_SCHEMAS else patterns_only(value)
        for key, value in node.items()
    }
    if out.get("type") == "str" and out.get("pattern") is not None:
        return pattern_node(out)
    return out


def prebuilt(node: Mapping[str, Any]) -> bool:
    """Whether pydantic-core validates a class node with its own validator."""
    cls = node.get("cls")
    return (
        isinstance(cls, type)
        and bool(cls.__dict__.get("__pydantic_complete__"))
        and "generic_origin" not in node
    )
