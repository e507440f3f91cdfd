"""Counting on Redis borrows pooled connections: one pool per process, not one connection per
request (issue 22: every counted call opened a fresh TCP connection to Redis).

A real uvicorn server of the farm with ``CACHE_URL`` on a real Redis answers ``CALLS`` counted
``/mcp`` calls one after another; Redis's own ``total_connections_received`` says how many
connections the server opened meanwhile.
"""

from __future__ import annotations

import json

import httpx
import pytest
import redis

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import serve
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CALLS = 40
# Sequential calls need one connection; a few more are tolerated (the pool may open one per
# thread that happens to overlap), never one per call.
MOST_CONNECTIONS = 4


def _opened(client: redis.Redis) -> int:
    return int(client.info("stats")["total_connections_received"])


@mutation(
    "cluck/settings.py",
    find='            "OPTIONS": {"pool_class": "tenancy.redis_pool.ProcessConnectionPool"},\n',
    replace="",
)
def test_counted_calls_share_one_pooled_redis_connection(redis_url: str) -> None:
    """Mutation: drop the shared pool class from the farm's Redis cache (Django's default:
    a pool per cache handle, a handle per request) → red (about one connection per call)."""
    bearer = bearer_for(MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"]))
    env = {"CACHE_URL": redis_url, "MCP_TOOLS_RATE": "100000/h", "TENANCY_API_RATE": "100000/m"}
    watcher = redis.Redis.from_url(redis_url)
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    with serve(env=env) as url, httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        warm = http.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
        assert warm.status_code == 200, warm.text
        before = _opened(watcher)
        for n in range(1, CALLS + 1):
            body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"})
            response = http.post("/mcp", content=body)
            assert response.status_code == 200, response.text
        opened = _opened(watcher) - before
    counted = int(watcher.dbsize())
    watcher.close()
    assert counted >= 1, "nothing was counted on Redis"
    assert opened <= MOST_CONNECTIONS, f"{opened} Redis connections for {CALLS} calls"
