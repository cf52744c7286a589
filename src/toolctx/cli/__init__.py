"""The ``toolctx`` command: list, call and serve a registry's tools.

``toolctx list app:registry`` prints the tool list (ours or a provider's),
``toolctx call app:registry NAME '{"a": 1}'`` dispatches one call and
prints the result, ``toolctx serve app:registry`` serves the tools over
MCP (stdio, or streamable HTTP with ``--transport http``).

The target is ``MODULE:ATTRIBUTE`` or ``path/to/app.py:ATTRIBUTE``; the
attribute names a :class:`~toolctx.Registry`, a
:class:`~toolctx.Dispatcher` (whose interceptors then run), or a function
that returns one, called with no arguments. A module is imported with
``--app-dir`` (default: the current directory) first on ``sys.path``; a
file with its own folder first, so that its imports work.

Exit codes: 0 success, 1 the call returned an error result (or a tool list
cannot be rendered, or the dispatcher itself raised), 2 a usage error (bad
target, bad JSON, missing extra), 130 interrupted. Usage errors and a
dispatcher that raises are reported as one line on stderr, without a
traceback.

Example:
    >>> from toolctx.cli import main
    >>> main(["list", "no-colon-here"])
    2

.. versionadded:: 0.1.0
"""

from __future__ import annotations

from toolctx.cli._main import main


__all__ = ["main"]
