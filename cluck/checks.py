"""System checks of the farm project (deployment, connection pooling)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_secret_key_source(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A key generated under var/ is fine on loopback; a deployment sets its own."""
    if getattr(settings, "SECRET_KEY_FILE", None) is None:
        return []
    return [
        checks.Warning(
            f"SECRET_KEY was generated for this installation ({settings.SECRET_KEY_FILE}).",
            hint="Set SECRET_KEY in the environment of a deployed server.",
            id="cluck.W001",
        )
    ]


# PgBouncer's default port, and host names that say "pooler": a guess, since a pooler speaks
# PostgreSQL's protocol and names itself nowhere in it.
POOLER_PORTS = frozenset({"6432"})
POOLER_HOST_WORDS = ("pgbouncer", "pooler", "odyssey", "pgcat", "supavisor")


def _looks_pooled(database: Any) -> bool:
    host = str(database.get("HOST") or "").lower()
    return str(database.get("PORT") or "") in POOLER_PORTS or any(
        word in host for word in POOLER_HOST_WORDS
    )


@checks.register()
def check_pooled_sessions(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Session state (prepared statements, WITH HOLD cursors) on what looks like a pooler."""
    return pooled_session_warnings(settings.DATABASES)


def pooled_session_warnings(databases: Any) -> list[checks.CheckMessage]:
    """``cluck.W002`` / ``W003`` for each database of ``databases`` (a ``DATABASES`` dict)."""
    found: list[checks.CheckMessage] = []
    for alias, database in databases.items():
        if "postgres" not in database.get("ENGINE", "") or not _looks_pooled(database):
            continue
        if database.get("OPTIONS", {}).get("prepare_threshold") is not None:
            found.append(
                checks.Warning(
                    f"Database {alias!r} looks like a connection pooler (port "
                    f"{database.get('PORT')}, host {database.get('HOST')!r}) and psycopg "
                    "prepares statements on it.",
                    hint="Behind PgBouncer in transaction mode unset "
                    "CLUCK_DB_PREPARE_THRESHOLD (docs/deploying.md#pgbouncer), unless the "
                    "pooler carries prepared statements (PgBouncer >= 1.21 with "
                    "max_prepared_statements).",
                    id="cluck.W002",
                )
            )
        if not database.get("DISABLE_SERVER_SIDE_CURSORS"):
            found.append(
                checks.Warning(
                    f"Database {alias!r} looks like a connection pooler and server-side "
                    "cursors are on.",
                    hint="Unset CLUCK_DB_SERVER_SIDE_CURSORS behind a pooler in transaction "
                    "mode (docs/deploying.md#pgbouncer).",
                    id="cluck.W003",
                )
            )
    return found
