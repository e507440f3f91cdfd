"""Fixtures of the deployment tests: a real PgBouncer (transaction mode) and a real Redis."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from django.db import connection

from cluck.devpgbouncer import pgbouncer
from cluck.devredis import redis_server


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real Redis for the module (Debian's redis-server; ``./scripts/ensure-redis``)."""
    with redis_server() as url:
        yield url


@pytest.fixture(scope="module")
def pgbouncer_server() -> Iterator[str]:
    """PgBouncer in transaction mode before the harness's PostgreSQL (its server URL, any
    database); ``./scripts/ensure-pgbouncer`` installs it."""
    with pgbouncer(os.environ["DATABASE_URL"]) as url:
        yield url


@pytest.fixture
def pooled_database_url(pgbouncer_server: str, transactional_db: None) -> str:
    """This test's database, reached through PgBouncer: what the servers under test use."""
    name = connection.settings_dict["NAME"]
    return urlsplit(pgbouncer_server)._replace(path=f"/{name}").geturl()
