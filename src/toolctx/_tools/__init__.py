"""toolctx._tools."""
