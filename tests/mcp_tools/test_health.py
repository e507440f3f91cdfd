"""``/healthz`` and ``/readyz``: cheap, unauthenticated, no tenant data; readiness fails while
the database is down or a migration is pending."""

from __future__ import annotations

import httpx
import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client
from django.urls import reverse

from mcp_tools.observability.health import migration_leaves
from tests.mcp_tools.servers import free_port, serve
from tests.mutations import Edit, mutation


@mutation(
    "cluck/urls.py", find='    path("", include("mcp_tools.observability.urls")),\n', replace=""
)
def test_the_routes_are_included_by_the_farm():
    """Mutation: drop ``include("mcp_tools.observability.urls")`` from ``cluck/urls.py`` → red."""
    assert (reverse("healthz"), reverse("readyz"), reverse("metrics")) == (
        "/healthz",
        "/readyz",
        "/metrics",
    )


@mutation(
    "mcp_tools/observability/health.py",
    find="@ignores_ambient_credentials\ndef healthz(",
    replace="def healthz(",
)
def test_healthz_answers_without_reading_a_bearer_or_the_database():
    """No database access is allowed in this test (pytest-django raises on any). A stale bearer
    sent along (a load balancer reusing headers) must not turn the probe into a 401 or a token
    lookup. Mutation: drop ``@ignores_ambient_credentials`` from ``healthz`` → red."""
    response = Client().get("/healthz", headers={"Authorization": "Bearer ck_pat_" + "z" * 43})
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")


@mutation(
    "mcp_tools/observability/health.py",
    find="@ignores_ambient_credentials\ndef readyz(",
    replace="def readyz(",
)
@pytest.mark.django_db
def test_readyz_is_ready_when_the_database_answers_and_every_migration_is_applied():
    """Unauthenticated: a bearer sent along is not read (no 401, no token lookup). Mutation:
    drop ``@ignores_ambient_credentials`` from ``readyz`` → red."""
    response = Client().get("/readyz", headers={"Authorization": "Bearer ck_pat_" + "z" * 43})
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "migrations": "ok"}}


@mutation(
    "mcp_tools/observability/health.py",
    find='"pending" if _migrations_pending() else "ok"',
    replace='"ok"',
)
@pytest.mark.django_db
def test_readyz_is_unavailable_while_a_migration_is_pending():
    """A deployment whose code is ahead of ``migrate``. Mutation: skip ``_migrations_pending``
    in ``readiness`` → red."""
    app, name = sorted(migration_leaves())[0]
    MigrationRecorder(connection).migration_qs.filter(app=app, name=name).delete()
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": "ok", "migrations": "pending"},
    }


@mutation(
    "mcp_tools/observability/health.py",
    find="@require_safe\n@ignores_ambient_credentials\ndef readyz(",
    replace="@ignores_ambient_credentials\ndef readyz(",
)
def test_readyz_answers_only_get_and_head():
    """Mutation: drop ``@require_safe`` from ``readyz`` → red (the POST reaches the probe,
    which reads the database: this test allows none)."""
    assert Client().post("/readyz").status_code == 405


@mutation(
    Edit(
        "mcp_tools/observability/health.py",
        find="from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections",
        replace=(
            "from django.db import DEFAULT_DB_ALIAS, DatabaseError, ProgrammingError, connections"
        ),
    ),
    Edit(
        "mcp_tools/observability/health.py",
        find='    except DatabaseError:\n        logger.warning("readiness: database %r',
        replace='    except ProgrammingError:\n        logger.warning("readiness: database %r',
    ),
)
@pytest.mark.e2e
def test_with_the_database_down_readyz_is_unavailable_and_healthz_still_ok():
    """A real server whose database refuses connections. Mutation: catch only
    ``ProgrammingError`` in ``_database_answers`` → red (the refused connection escapes the
    probe, whose answer is no longer its JSON). Answering "ok" for the database that raised
    is not enough to turn it red: the read of ``django_migrations`` then fails and
    ``readiness`` reports the database unreachable all the same."""
    nowhere = f"postgres://nobody:nothing@127.0.0.1:{free_port()}/none"
    env = {"DATABASE_URL": nowhere, "CLUCK_DB_POOL": "0"}
    with serve(env=env) as url:
        ready = httpx.get(f"{url}/readyz", timeout=30)
        alive = httpx.get(f"{url}/healthz", timeout=30)
    assert ready.status_code == 503, ready.text
    assert ready.json() == {
        "status": "unavailable",
        "checks": {"database": "unreachable", "migrations": "unknown"},
    }
    assert alive.status_code == 200 and alive.json() == {"status": "ok"}
