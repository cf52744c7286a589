"""``python -m toolctx``: the ``toolctx`` command line."""

from __future__ import annotations

from toolctx.cli._main import main


if __name__ == "__main__":
    raise SystemExit(main())
