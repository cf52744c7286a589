"""One type model: a type hint analysed once, everything else derived.

:mod:`toolctx._types.model` turns a type hint into a small tree of
:class:`~toolctx._types.model.Node` objects (kind, children, values,
constraints, description, the classes it refers to). From that tree come
the JSON Schema (:mod:`toolctx._types.schema`) and the strict validator
compiled once per tool (:mod:`toolctx._types.validate`);
:mod:`toolctx._types.output` turns return values into JSON data, and
:mod:`toolctx._types.pydantic` delegates pydantic models to pydantic. The
package knows no toolctx domain class: refusals of host-only objects are
registered from above.
"""
