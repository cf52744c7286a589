"""toolctx._context."""
