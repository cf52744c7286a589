"""toolctx.tools."""
