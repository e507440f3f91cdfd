"""Counting on Redis borrows pooled connections: one pool per process, not one connection per
request (issue 22: every counted call opened a fresh TCP connection to Redis).

A real uvicorn server of the farm with ``CACHE_URL`` on a real Redis answers ``CALLS`` counted
``/mcp`` calls one after another; Redis's own ``total_connections_received`` says how many
connections the server opened meanwhile.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

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
    find='"OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},\n',
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


def _commands_during(redis_url: str, act: Callable[[], None]) -> list[dict[str, Any]]:
    """Every command Redis ran while ``act`` ran, as ``MONITOR`` reports them (a script's
    own commands have the client type ``lua``)."""
    done = f"cluck-test-done-{uuid.uuid4().hex}"
    seen: list[dict[str, Any]] = []
    watching = threading.Event()

    def watch() -> None:
        with redis.Redis.from_url(redis_url).monitor() as monitor:
            watching.set()
            while True:
                command = monitor.next_command()
                if done in command["command"]:
                    # The marker's own connection (its handshake) is not the server's.
                    marker = command["client_port"]
                    seen[:] = [c for c in seen if c["client_port"] != marker]
                    return
                seen.append(command)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert watching.wait(10)
    time.sleep(0.2)  # MONITOR is registered once the server has read it
    act()
    with redis.Redis.from_url(redis_url) as client:
        client.echo(done)
    watcher.join(10)
    assert not watcher.is_alive(), "MONITOR never saw the end marker"
    return seen


@mutation(
    "tenancy/rates/throttling.py",
    find=(
        "    if isinstance(cache, RedisCache):\n"
        "        return _count_on_redis(request, budget, cache)\n"
    ),
    replace="",
)
def test_a_counted_call_is_one_round_trip_to_redis(redis_url: str) -> None:
    """Each counted call sends Redis one command (the counting script), where django-ratelimit
    sends two (``SET … NX`` then ``INCRBY``); the count itself is checked across processes in
    tests/tenancy/test_rate_counting_processes.py.

    Mutation: count on Redis through django-ratelimit's ``get_usage`` again → red (two
    commands per call)."""
    bearer = bearer_for(MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"]))
    env = {"CACHE_URL": redis_url, "MCP_TOOLS_RATE": "100000/h", "TENANCY_API_RATE": "100000/m"}
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    calls = 5
    with serve(env=env) as url, httpx.Client(base_url=url, headers=headers, timeout=30) as http:

        def ping(n: int) -> None:
            body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"})
            response = http.post("/mcp", content=body)
            assert response.status_code == 200, response.text

        ping(0)  # the script is loaded on first use (EVALSHA refused, then EVAL)

        def calls_in_turn() -> None:
            for n in range(1, calls + 1):
                ping(n)

        seen = _commands_during(redis_url, calls_in_turn)
    sent = [
        command["command"].split()[0].upper() for command in seen if command["client_type"] != "lua"
    ]
    counted = [command for command in seen if command["client_type"] == "lua"]
    assert sent == ["EVALSHA"] * calls, sent
    assert counted, "the script counted nothing"
