"""One type model: a type hint analysed once, everything else derived.

:mod:`toolctx._types.model` turns a type hint into a small tree of
:class:`~toolctx._types.model.Node` objects (kind, children, values,
description, the classes it refers to); the JSON Schema
(:mod:`toolctx._types.schema`) is rendered from that tree. The package
knows no toolctx domain class.
"""
