"""The server's ``tools/list`` answer, built once per registry change.

The shapes are :mod:`toolctx.providers.mcp`'s, the one place toolctx
builds MCP's wire format (``tools()`` for the listing,
``result_message()`` for each call's result); the server sends exactly
what a host answering with those functions would. What is particular to
the server lives here:

- :class:`Listing`: the ``tools/list`` result validated into the SDK's
  model once per registry change (the model fills what each protocol
  version requires), not once per request.
- :meth:`Listing.restore_schemas`: the SDK re-validates a result against
  the negotiated protocol version's model on the way out, which moves a
  schema's ``type`` after its ``properties``; a schema the SDK left
  otherwise equal is put back as we built it, key order included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast, final

import attrs

from toolctx.providers.mcp import tools


if TYPE_CHECKING:
    import mcp_types

    from toolctx._tools.registry import Registry
    from toolctx.providers.mcp import ToolDict


_SCHEMAS = ("inputSchema", "outputSchema")


@final
@attrs.frozen
class Listing:
    """One ``tools/list`` answer, and its entries by tool name.

    Attributes:
        result: The validated ``ListToolsResult``.
        entries: Each tool's entry as :func:`toolctx.providers.mcp.tools`
            built it.
    """

    result: mcp_types.ListToolsResult
    entries: dict[str, ToolDict]

    @classmethod
    def of(cls, registry: Registry) -> Listing:
        """The listing of *registry*'s tools, in registration order."""
        import mcp_types

        listed = tools(registry)
        result = mcp_types.ListToolsResult.model_validate({"tools": listed})
        return cls(result, {entry["name"]: entry for entry in listed})

    def restore_schemas(self, result: dict[str, Any]) -> None:
        """Put our schemas back into *result*, the dumped answer.

        Only where the SDK's schema still equals ours, so that a change
        the SDK made on purpose is kept.
        """
        listed = result.get("tools")
        if not isinstance(listed, list):
            return
        for item in cast("list[object]", listed):
            if not isinstance(item, dict):
                continue
            sent = cast("dict[str, Any]", item)
            ours = self.entries.get(sent.get("name", ""))
            if ours is None:
                continue
            for key in _SCHEMAS:
                schema = ours.get(key)
                if schema is not None and sent.get(key) == schema:
                    sent[key] = schema
