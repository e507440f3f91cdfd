"""What PgBouncer's server connections hold after tool calls went through them (issue 35): the
farm's, the shop's and the tracker's row-level security tests behind PgBouncer in transaction
mode ask each server connection, as the next client would see it."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import psycopg

POOL = 2  # PgBouncer's server connections (pool_size): every_server_connection holds all

# What a transaction finds on its server connection: the role, the tenant setting, whether it
# is read-only, and how many tenants' rows of a declared table it sees.
STATE = (
    "SELECT current_setting('role'), coalesce(current_setting(%s, true), ''), "
    "current_setting('transaction_read_only'), (SELECT count(DISTINCT {column}) FROM {table})"
)


def every_server_connection(
    pooled_url: str, table: str, column: str, setting: str = "tenancy.tenant"
) -> list[tuple[Any, ...]]:
    """``STATE`` on each of the pool's server connections: ``POOL`` clients, each holding a
    transaction open, so that PgBouncer gives each a server connection of its own."""
    with ExitStack() as stack:
        clients = [
            stack.enter_context(psycopg.connect(pooled_url, prepare_threshold=None))
            for _ in range(POOL)
        ]
        pids = [client.execute("SELECT pg_backend_pid()").fetchone() for client in clients]
        assert len(set(pids)) == POOL, pids  # every server connection, once
        query = STATE.format(table=table, column=column)
        return [tuple(client.execute(query, [setting]).fetchone() or ()) for client in clients]
