"""The call pipeline: how a model's tool call becomes a result.

- :mod:`~toolctx._dispatch.core`: the sans-IO core (prepare a call, finish
  it), the steps every path shares, the one interceptor loop and a call
  ready to run.
- :mod:`~toolctx._dispatch.run`, :mod:`~toolctx._dispatch.stream`,
  :mod:`~toolctx._dispatch.executor`: the shells that run a body (the only
  places that bind a call's context); ``run`` also holds the awaiting
  primitives.
- :mod:`~toolctx._dispatch.workers`: the worker threads of sync tools
  under ``adispatch``.
- :mod:`~toolctx._dispatch.worker`: the worker function ``run_remote``,
  which runs a :class:`~toolctx.remote.RemoteCall` in another process.
- :mod:`~toolctx._dispatch.dispatcher`: :class:`~toolctx.Dispatcher`.

The public names are re-exported by :mod:`toolctx`.
"""
