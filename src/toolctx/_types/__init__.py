"""One type model: a type hint analysed once, everything else derived.

:mod:`toolctx._types.model` turns a type hint into a small tree of
:class:`~toolctx._types.nodes.Node` objects (kind, children, values,
constraints, description, the classes it refers to), reading typing
forms (:mod:`~toolctx._types.forms`), ``Annotated`` metadata
(:mod:`~toolctx._types.metadata`) and classes
(:mod:`~toolctx._types.classes`, their fields read by
:mod:`~toolctx._types.class_info`). From that tree come the JSON Schema
(:mod:`toolctx._types.schema`, its defaults and bounds written by
:mod:`~toolctx._types.schema_values`) and the strict validator compiled
once per tool (:mod:`toolctx._types.validate`, with the checks of
:mod:`~toolctx._types.scalars`, :mod:`~toolctx._types.formats`,
:mod:`~toolctx._types.containers`, :mod:`~toolctx._types.objects` and
:mod:`~toolctx._types.constraints`, worded by
:mod:`~toolctx._types.messages`, reported as
:mod:`~toolctx._types.problems`); :mod:`toolctx._types.output` turns
return values into JSON data (its scalars in
:mod:`~toolctx._types.output_scalars`), :mod:`toolctx._types.decode`
turns argument text into a dict (strictly parsed and checked by
:mod:`~toolctx._types.strict_json`), and :mod:`toolctx._types.pydantic`
delegates pydantic models to pydantic (their schemas in
``pydantic_schema``, pydantic's errors in toolctx's words in
``pydantic_problems``). The package knows no toolctx domain class:
refusals of host-only objects are registered from above.
"""
