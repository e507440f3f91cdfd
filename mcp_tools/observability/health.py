"""``/healthz`` (the process answers) and ``/readyz`` (it can serve: database and migrations).

Both are cheap, unauthenticated and say nothing about any tenant: a bearer sent along is not
read (no token lookup), and the answers are fixed JSON bodies.

- ``/healthz``: 200 whenever the process can answer a request. It touches nothing else, so a
  database outage does not make an orchestrator restart healthy processes.
- ``/readyz``: 200 when every configured database answers and the default database has every
  migration this code knows applied; otherwise 503 with which check failed. The migration
  leaves are read from disk once per process (the code does not change while it runs); each
  probe then costs one query per database plus one read of ``django_migrations``.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from tenancy import handles_own_transactions, ignores_ambient_credentials

logger = logging.getLogger(__name__)


@login_not_required
@handles_own_transactions
@never_cache
@require_safe
@ignores_ambient_credentials
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers."""
    return JsonResponse({"status": "ok"})


@functools.cache
def migration_leaves() -> frozenset[tuple[str, str]]:
    """The last migration of every app, as this code has them (read from disk once)."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return frozenset(loader.graph.leaf_nodes())


def _database_answers(alias: str) -> bool:
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        logger.warning("readiness: database %r does not answer", alias, exc_info=True)
        return False
    return True


def _migrations_pending() -> bool:
    applied = MigrationRecorder(connections[DEFAULT_DB_ALIAS]).applied_migrations()
    return any(leaf not in applied for leaf in migration_leaves())


def readiness() -> dict[str, Any]:
    """``{"database": "ok"|"unreachable", "migrations": "ok"|"pending"|"unknown"}``."""
    reachable = all(_database_answers(alias) for alias in connections)
    checks = {"database": "ok" if reachable else "unreachable", "migrations": "unknown"}
    if reachable:
        try:
            checks["migrations"] = "pending" if _migrations_pending() else "ok"
        except DatabaseError:
            logger.warning("readiness: django_migrations could not be read", exc_info=True)
            checks["database"] = "unreachable"
    return checks


# Outside ATOMIC_REQUESTS: opening a transaction on every alias before the view would turn an
# unreachable database into a 500 instead of this view's 503.
@login_not_required
@handles_own_transactions
@never_cache
@require_safe
@ignores_ambient_credentials
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when the database answers and no migration is pending, else 503."""
    checks = readiness()
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse(
        {"status": "ready" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )
