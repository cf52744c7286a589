"""Everything toolctx builds once per pydantic model: its plan.

:func:`plan_of` returns the cached :class:`Plan` of a model class (built
again when the class is rebuilt): its validator under toolctx's rules
(:mod:`~toolctx._types.pydantic_rules`), its JSON-mode serializer, and
its JSON Schemas (:mod:`~toolctx._types.pydantic_schema`), made on first
use. :meth:`Plan.validate` reports pydantic's errors as toolctx's
problems (:mod:`~toolctx._types.pydantic_problems`).
"""

from __future__ import annotations

import threading

from typing import TYPE_CHECKING, Any, Final, cast

import pydantic_core

from toolctx._text import message_of
from toolctx._types.problems import InvalidValueError
from toolctx._types.pydantic_check import UnsupportedModelError, is_model
from toolctx._types.pydantic_nodes import DUPLICATE, encode
from toolctx._types.pydantic_problems import (
    data_path,
    duplicate,
    merged_problems,
    not_json_problem,
    one_problem,
)
from toolctx._types.pydantic_rules import Rewriter
from toolctx._types.pydantic_schema import children, generate, resolved


if TYPE_CHECKING:
    import pydantic

    from pydantic_core import core_schema

    from toolctx._types.problems import PathParts, Problem
    from toolctx._types.pydantic_problems import Found
    from toolctx._types.pydantic_schema import JSONSchema, Mode


class Plan:
    """Everything toolctx builds once for one model class.

    Attributes:
        cls: The model.
        source: The model's own core schema.
        validator: Validates under toolctx's rules (see
            :mod:`toolctx._types.pydantic`).
        serializer: Dumps in JSON mode, keeping NaN and infinities as
            floats so that :func:`~toolctx._types.pydantic.dump` can
            refuse them.
        by_alias: Whether output keys are the fields' aliases.
    """

    def __init__(self, cls: type[pydantic.BaseModel]) -> None:
        self.cls = cls
        self.source: Any = cls.__pydantic_core_schema__
        config = _model_config(self.source)
        rewriter = Rewriter()
        self.validator = pydantic_core.SchemaValidator(
            rewriter.rewrite(self.source, "ignore"), config
        )
        self.names = frozenset(rewriter.names)
        out_config = dict(config or {})
        if "ser_json_inf_nan" not in cls.model_config:
            out_config["ser_json_inf_nan"] = "constants"
        self.serializer = pydantic_core.SchemaSerializer(
            self.source, cast("core_schema.CoreConfig", out_config)
        )
        self.by_alias = bool(cls.model_config.get("serialize_by_alias"))
        self._schemas: dict[str, tuple[JSONSchema, dict[str, JSONSchema]]]
        self._schemas = {}

    def validate(self, data: object) -> Any:
        """*data* (JSON) as an instance of the model.

        Raises:
            InvalidValueError: Every problem, with paths relative to
                *data*.
        """
        try:
            text = encode(data)
        except (TypeError, ValueError, RecursionError):
            raise InvalidValueError([not_json_problem(data)]) from None
        try:
            value = self.validator.validate_json(text, strict=True)
        except pydantic_core.ValidationError as exc:
            raise InvalidValueError(self._problems(exc, data)) from None
        if self.names:
            found = self._named_keys(data, set())
            if found:
                raise InvalidValueError(merged_problems(found))
        return value

    def schema(self, mode: Mode) -> tuple[JSONSchema, dict[str, JSONSchema]]:
        """``(schema, defs)`` of the model in *mode* (shared: copy it)."""
        found = self._schemas.get(mode)
        if found is None:
            found = generate(self.source, mode, self.by_alias)
            self._schemas[mode] = found
        return found

    def _problems(
        self, exc: pydantic_core.ValidationError, data: object
    ) -> list[Problem]:
        found: list[Found] = []
        for error in exc.errors(include_url=False):
            found.extend(self._problem(error, data))
        if self.names:
            reported = {path for path, *_ in found}
            for extra in self._named_keys(data, reported):
                found.insert(_place(found, extra[0]), extra)
        return merged_problems(found)

    def _named_keys(
        self, data: object, reported: set[PathParts]
    ) -> list[Found]:
        """An aliased field's name given as a key, where only aliases are.

        Some pydantic-core versions drop such a key silently; toolctx
        refuses it as any unknown key (not again where already
        *reported*). The JSON data is walked along the validation schema,
        in its order: a key is unknown where no object schema at its
        place names it.
        """
        schema, defs = self.schema("validation")
        found: list[Found] = []
        # a stack of objects to visit, and of an object's own problems to
        # add once its children's are (pydantic reports unknown keys last)
        pending: list[tuple[object, list[object], PathParts] | list[Found]]
        pending = [(data, [schema], ())]
        while pending:
            task = pending.pop()
            if isinstance(task, list):
                found.extend(task)
                continue
            value, schemas, path = task
            nodes = [n for s in schemas for n in resolved(s, defs)]
            if isinstance(value, dict):
                items: list[tuple[str | int, object]] = list(value.items())
            elif isinstance(value, list):
                items = list(enumerate(value))
            else:
                continue
            own: list[Found] = []
            inside: list[tuple[object, list[object], PathParts]] = []
            for part, item in items:
                where = (*path, part)
                if self._unknown(part, nodes):
                    if where not in reported:
                        own.append(self._extra(where))
                    continue
                inner = [c for n in nodes for c in children(n, part)]
                inside.append((item, inner, where))
            pending.append(own)
            pending.extend(reversed(inside))  # visited in data order
        return found

    def _unknown(self, part: str | int, nodes: list[JSONSchema]) -> bool:
        """Whether the key *part* is one of :attr:`names` no node takes."""
        if part not in self.names:
            return False
        objects = [n for n in nodes if isinstance(n.get("properties"), dict)]
        return bool(objects) and all(
            part not in n["properties"]
            and n.get("additionalProperties") is False
            for n in objects
        )

    def _problem(
        self, error: pydantic_core.ErrorDetails, data: object
    ) -> list[Found]:
        """The problems one pydantic error stands for."""
        kind = error["type"]
        ctx: dict[str, Any] = dict(error.get("ctx") or {})
        path = data_path(error["loc"], data, keep_last=kind == "missing")
        if kind == DUPLICATE:
            return [
                ((*path, index), None, None, duplicate(first))
                for index, first in ctx.get("duplicates", ())
            ]
        if kind in {"extra_forbidden", "unexpected_keyword_argument"}:
            return [self._extra(path)]
        return [one_problem(error, kind, ctx, path)]

    def _extra(self, path: PathParts) -> Found:
        """The problem of the unexpected key at *path*."""
        names = self._allowed(path[:-1])
        if names is None:
            return (path, None, None, "unexpected property")
        allowed = ", ".join(names) if names else "none"
        return (path, None, None, f"unexpected property (allowed: {allowed})")

    def _allowed(self, path: PathParts) -> list[str] | None:
        """The keys the object at *path* takes, when the schema says."""
        schema, defs = self.schema("validation")
        nodes = list(resolved(schema, defs))
        for part in path:
            nodes = [
                found
                for node in nodes
                for child in children(node, part)
                for found in resolved(child, defs)
            ]
        options = {
            tuple(node["properties"])
            for node in nodes
            if isinstance(node.get("properties"), dict)
            and node.get("additionalProperties") is False
        }
        return list(options.pop()) if len(options) == 1 else None


def _place(found: list[Found], path: PathParts) -> int:
    """Where pydantic would report the unknown key at *path*.

    After the other problems of its object (pydantic reports unknown
    keys last), else before the first problem of a later field of an
    enclosing object, else last.
    """
    parent = path[:-1]
    inside = [
        index
        for index, (other, *_) in enumerate(found)
        if other[: len(parent)] == parent
    ]
    if inside:
        return inside[-1] + 1
    for depth in range(len(parent) - 1, -1, -1):
        outer = parent[:depth]
        for index, (other, *_) in enumerate(found):
            if (
                other[:depth] == outer
                and len(other) > depth
                and other[depth] != parent[depth]
            ):
                return index
    return len(found)


_plans: dict[type, Plan] = {}
_lock: Final = threading.Lock()


def plan_of(cls: type) -> Plan:
    """The (cached) plan of the model *cls*."""
    plan = _plans.get(cls)
    if plan is not None and plan.source is _own_schema(cls):
        return plan
    with _lock:
        plan = _plans.get(cls)
        if plan is None or plan.source is not _own_schema(cls):
            plan = Plan(_ready(cls))
            _plans[cls] = plan
    return plan


def _own_schema(cls: type) -> object:
    return cls.__dict__.get("__pydantic_core_schema__")


def _ready(cls: type) -> type[pydantic.BaseModel]:
    """*cls*, checked to be a complete pydantic v2 model."""
    if not is_model(cls):
        name = getattr(cls, "__qualname__", repr(cls))
        msg = f"{name} is not a pydantic v2 model (a BaseModel subclass)"
        raise UnsupportedModelError(msg)
    model = cast("type[pydantic.BaseModel]", cls)
    if not model.__pydantic_complete__:
        try:
            model.model_rebuild(raise_errors=True)
        except Exception as exc:  # noqa: BLE001 - reported as the reason
            detail = message_of(exc, 300)
            msg = (
                f"the model is not fully defined ({detail}); define the "
                f"types it refers to, then call "
                f"{model.__name__}.model_rebuild()"
            )
            raise UnsupportedModelError(msg) from None
    return model


def _model_config(schema: Any) -> core_schema.CoreConfig | None:
    """The core config of the model node a model's core schema holds."""
    node = _model_node(schema)
    config = node.get("config") if node is not None else None
    return cast("core_schema.CoreConfig | None", config)


def _model_node(schema: Any) -> dict[str, Any] | None:
    """The ``model`` node under a model's wrappers and definitions."""
    definitions: dict[str, Any] = {}
    node = schema
    for _ in range(100):  # wrappers are few; never loop forever
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind == "model":
            return node
        if kind == "definitions":
            for item in node.get("definitions", ()):
                definitions[item.get("ref")] = item
        if kind == "definition-ref":
            node = definitions.get(str(node.get("schema_ref")))
        else:
            node = node.get("schema")
    return None
