"""Database outage: pooled connections probed before use; 503 in each endpoint's shape."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import OperationalError, connection
from psycopg_pool import ConnectionPool

from cluck.postgres.base import probe_connection
from mcp_tools.serving.error_pages import database_unavailable
from tests.mutations import mutation

pytestmark = [pytest.mark.postgres]


def _terminate(pid: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])


@mutation(
    "cluck/postgres/base.py",
    find="            pool._check = probe_connection\n",
    replace="            pass\n",
)
@pytest.mark.django_db
def test_the_farm_pool_probes_connections_before_lending_them() -> None:
    """Mutation: drop the ``_check`` assignment in ``cluck.postgres.base.DatabaseWrapper.pool``
    → red (psycopg_pool renaming the attribute would also turn this red)."""
    wrapper: Any = connection
    assert wrapper.pool is not None
    assert wrapper.pool._check is probe_connection


@mutation(
    "cluck/postgres/base.py",
    find="    poller = select.poll()\n",
    replace="    return\n    poller = select.poll()\n",
)
@pytest.mark.django_db
def test_a_connection_the_server_closed_is_never_lent_again() -> None:
    """A pooled connection whose backend was terminated (as by a PostgreSQL restart) is
    discarded at checkout, and the caller gets a live one.

    Mutation: make ``probe_connection`` return without polling → red (the stale connection
    is lent and its first query fails).
    """
    params = connection.get_connection_params()
    params["autocommit"] = True
    with ConnectionPool(kwargs=params, min_size=1, max_size=1, check=probe_connection) as pool:
        with pool.connection() as conn:
            stale_pid = conn.info.backend_pid
        _terminate(stale_pid)
        time.sleep(0.2)  # the FATAL notice and EOF reach the idle socket
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != stale_pid


@pytest.mark.parametrize(
    ("sqlstate", "unavailable"),
    [(None, True), ("08006", True), ("53300", True), ("57P01", True), ("40P01", False)],
)
def test_only_connection_and_shutdown_errors_count_as_an_outage(
    sqlstate: str | None, unavailable: bool
) -> None:
    """A deadlock (40P01) is not an outage; a refused or dropped connection is."""
    cause: Any = Exception()
    cause.sqlstate = sqlstate
    error = OperationalError()
    error.__cause__ = cause
    assert database_unavailable(error) is unavailable
