"""``ENGINE = "cluck.postgres"``: Django's PostgreSQL backend, pooled connections probed.

A psycopg pool keeps idle connections for the next request. When PostgreSQL restarts, every
one of them is dead, and each request that draws one fails: about fifteen failed requests
after a restart before the pool had cycled them out. Django's own remedy,
``CONN_HEALTH_CHECKS``, makes the pool run a query on every checkout (psycopg_pool's
``check_connection``): about 0.25 ms per checkout on the bench machine, and an MCP tool call
checks out twice. ``OPTIONS["pool"]["check"]`` cannot be set instead: Django passes ``check=``
itself, and the pool refuses the duplicate keyword.

``probe_connection`` costs one ``poll`` system call. An idle connection has nothing to read;
one the server has closed (restart, failover, ``pg_terminate_backend``, idle timeout) has a
FATAL message or end-of-file waiting. Only then is the real check run, which fails, and the
pool discards the connection and lends another (or opens a new one). A connection lost
without the server closing it (a cable pulled) is not seen here; its first query fails.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool


def probe_connection(conn: psycopg.Connection[Any]) -> None:
    """Raise if the server has closed ``conn``; cheap when it has not (a pool ``check``).

    One dead idle connection means the others died with it (a restart): the whole pool is
    drained at once. psycopg_pool's check loop backs off 1 s, 2 s, 4 s between the candidates
    it draws, so walking four dead ones one by one outlasts the pool timeout although fresh
    connections are ready; after a drain the loop waits once, for a new connection.
    """
    try:
        _probe(conn)
    except psycopg.Error:
        pool = getattr(conn, "_pool", None)
        if isinstance(pool, ConnectionPool):
            pool.drain()
        raise


def _probe(conn: psycopg.Connection[Any]) -> None:
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    if poller.poll(0):
        # Something arrived on an idle connection: a FATAL notice and EOF, or a NOTIFY.
        ConnectionPool.check_connection(conn)


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> Any:
        pool = super().pool
        # psycopg_pool keeps ``check=`` as ``_check``; Django left it None (no
        # CONN_HEALTH_CHECKS). tests/cluck/test_outage.py pins the attribute.
        if pool is not None and pool._check is None:
            pool._check = probe_connection
        return pool
