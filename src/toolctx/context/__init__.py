"""toolctx.context."""
