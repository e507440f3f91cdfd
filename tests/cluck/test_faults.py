"""Faults on real processes: PostgreSQL stopped and restarted under load, a server killed in
the middle of a write. Real uvicorn servers, a real PostgreSQL, a real HTTP client.

Every write carries an ``Idempotency-Key`` and is retried with the same key until it gets a
2xx, as a client should; the database must end with each write exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from typing import Any

import httpx
import psycopg
import pytest

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.faults import own_postgres
from tests.mcp_tools import servers
from tests.mcp_tools.servers import serve
from tests.mutations import mutation
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

WRITERS = 3
WRITES_PER_WRITER = 25
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}


@mutation(
    "cluck/api/errors.py",
    find=(
        "    page = _json_error_page(request, 500)\n"
        "    if page is not None:\n"
        "        return page\n"
        "    response = server_error(request)\n"
    ),
    replace=(
        "    if outage_status(500) == 503:\n"
        "        return server_error(request)\n"
        "    page = _json_error_page(request, 500)\n"
        "    if page is not None:\n"
        "        return page\n"
        "    response = server_error(request)\n"
    ),
)
@pytest.mark.django_db(transaction=True)
def test_postgresql_stopped_and_restarted_under_load_loses_and_doubles_nothing() -> None:
    """While PostgreSQL is down, REST answers 503 problem JSON and /mcp a 503 JSON-RPC error,
    both with ``Retry-After``; no request that starts after it is back fails with a 5xx (the
    pool's stale connections are probed and replaced, not handed out; a key whose claim
    outlived the outage answers 409 until its lease ends); every retried write lands exactly
    once.

    Mutation: return Django's HTML 500 from ``server_error_view``'s outage branch → the 503
    assertions fail. (The pool's probe is not this guard's: the writers' failing requests
    during the outage use up every pooled connection, so none is stale when the server is
    back. ``test_idle_pooled_connections_are_replaced_after_a_restart`` guards it.)
    """
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    token = bearer_for(membership)
    auth = {"Authorization": f"Bearer {token}"}
    with own_postgres() as postgres:
        database_url = postgres.copy_database(servers.test_database_url())
        env = {
            "DATABASE_URL": database_url,
            "CLUCK_DB_POOL_TIMEOUT": "1",
            "MCP_TOOLS_RATE": "100000/m",
            "TENANCY_API_RATE": "100000/m",
            "LOG_LEVEL": "WARNING",
        }
        with serve(env=env) as url:
            log: list[tuple[float, float, int]] = []  # (start, end, status)
            keys = [
                [f"w{w}-{i}-{uuid.uuid4().hex[:8]}" for i in range(WRITES_PER_WRITER)]
                for w in range(WRITERS)
            ]
            errors: list[str] = []

            def writer(own: list[str]) -> None:
                with httpx.Client(base_url=url, headers=auth, timeout=15) as http:
                    for key in own:
                        for _ in range(400):
                            started = time.monotonic()
                            try:
                                status = http.post(
                                    "/api/v1/customers/",
                                    json={"name": key, "phone": "0917"},
                                    headers={"Idempotency-Key": key},
                                ).status_code
                            except httpx.TransportError:
                                status = 0
                            log.append((started, time.monotonic(), status))
                            if status in (200, 201):
                                break
                            if status not in (0, 409, 503):
                                errors.append(f"{key}: {status}")
                                return
                            time.sleep(0.05)
                        else:
                            errors.append(f"{key}: never written")

            threads = [threading.Thread(target=writer, args=(own,), daemon=True) for own in keys]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30
            while sum(1 for _, _, s in log if s in (200, 201)) < 10:
                assert time.monotonic() < deadline, (errors, log[-5:])
                time.sleep(0.05)

            postgres.stop()
            with httpx.Client(base_url=url, headers=auth, timeout=20) as http:
                rest = http.get("/api/v1/me/")
                mcp = http.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS)
            assert rest.status_code == 503, rest.text
            assert rest.headers["content-type"] == "application/problem+json"
            assert rest.json()["code"] == "Http.DatabaseUnavailable"
            assert int(rest.headers["Retry-After"]) > 0
            assert mcp.status_code == 503, mcp.text
            assert mcp.headers["content-type"] == "application/json"
            assert mcp.json()["error"]["code"] == -32603 and mcp.json()["id"] is None
            assert int(mcp.headers["Retry-After"]) > 0
            time.sleep(0.5)  # writers keep failing with 503s meanwhile

            postgres.start()
            back = time.monotonic()
            with httpx.Client(base_url=url, headers=auth, timeout=15) as http:
                first_rest = http.get("/api/v1/me/")
                first_mcp = http.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS)
            assert first_rest.status_code == 200, first_rest.text
            assert first_mcp.status_code == 200, first_mcp.text
            for thread in threads:
                thread.join(60)
            assert errors == []
            after = [status for start, _, status in log if start > back]
            # No stale connection survives the restart: nothing after it is a 5xx. A 409 is the
            # documented answer for a key whose claim committed just before the stop and whose
            # lease still runs; a dropped keep-alive connection (0) is retried like any other.
            assert after and not [status for status in after if status >= 500], after
            assert sum(1 for status in after if status in (200, 201)) >= len(after) - WRITERS
            assert any(status == 503 for _, _, status in log)

        with psycopg.connect(database_url) as conn:
            rows = conn.execute(
                "SELECT name, count(*) FROM cluck_customer GROUP BY name"
            ).fetchall()
    written = {name: count for name, count in rows}
    expected = {key for own in keys for key in own}
    assert set(written) == expected  # nothing lost
    assert set(written.values()) == {1}  # nothing doubled


@mutation(
    "cluck/postgres/base.py",
    find="    try:\n        _probe(conn)\n",
    replace="    return\n    try:\n        _probe(conn)\n",
)
@pytest.mark.django_db(transaction=True)
def test_idle_pooled_connections_are_replaced_after_a_restart() -> None:
    """PostgreSQL restarts while the server is idle, so every pooled connection it holds is
    dead; the very next requests, REST and /mcp, are served — none is handed a stale one.

    Mutations (each seen red): make ``cluck.postgres.base.probe_connection`` return at once →
    the requests after the restart get 503 on the dead pooled connections; drop its
    ``pool.drain()`` → the first request walks the dead connections with psycopg_pool's
    1 s/2 s/4 s backoff and gets 503 after the pool timeout.
    """
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    auth = {"Authorization": f"Bearer {bearer_for(membership)}"}
    with own_postgres() as postgres:
        # The default pool timeout: new connections replace the dead ones within it.
        env = {
            "DATABASE_URL": postgres.copy_database(servers.test_database_url()),
            "LOG_LEVEL": "WARNING",
        }
        with serve(env=env) as url, httpx.Client(base_url=url, headers=auth, timeout=15) as http:
            # Fill the pool: concurrent requests each hold a connection, then return it idle.
            def warm() -> None:
                with httpx.Client(base_url=url, headers=auth, timeout=15) as own:
                    for _ in range(5):
                        assert own.get("/api/v1/me/").status_code == 200

            warmers = [threading.Thread(target=warm) for _ in range(4)]
            for thread in warmers:
                thread.start()
            for thread in warmers:
                thread.join(60)
            postgres.stop()
            postgres.start()
            statuses = []
            for _ in range(8):
                statuses.append(http.get("/api/v1/me/").status_code)
                statuses.append(http.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS).status_code)
            assert statuses == [200] * len(statuses)


@mutation(
    "idempotency/unit.py",
    find=(
        "            with transaction.atomic(using=self.using):\n                outcome = work()\n"
    ),
    replace=(
        "            outcome = work()\n            with transaction.atomic(using=self.using):\n"
    ),
)
@pytest.mark.django_db(transaction=True)
def test_a_server_killed_mid_write_executes_the_write_once_after_restart() -> None:
    """The process serving a write is killed (SIGKILL) inside the write's transaction; the
    client retries the same key against a restarted server: the write runs exactly once,
    and a further retry replays it.

    Mutation: run the work outside the publish's transaction (the work commits on its own,
    then the publish) → red: the killed attempt's write survives it and the retry, stealing
    the abandoned claim, writes again.
    """
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    headers = {
        "Authorization": f"Bearer {bearer_for(membership)}",
        "Idempotency-Key": "killed-" + uuid.uuid4().hex,
    }
    body = {"label": "killed"}
    env = {"IDEMPOTENCY_LEASE_SECONDS": "2", "LOG_LEVEL": "CRITICAL"}
    with serve(env=env) as url:
        outcome: dict[str, Any] = {}

        def doomed() -> None:
            try:
                outcome["r"] = httpx.post(
                    f"{url}/idem-test/effects/",
                    json=body,
                    headers={**headers, "X-Sleep": "20"},
                    timeout=30,
                )
            except httpx.TransportError as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=doomed, daemon=True)
        thread.start()
        _wait_for_open_write(membership.tenant_id)
        os.kill(url.process.pid, signal.SIGKILL)
        thread.join(30)
        assert "error" in outcome  # the client saw the connection die
    with serve(env=env) as url:
        statuses = []
        for _ in range(100):
            response = httpx.post(f"{url}/idem-test/effects/", json=body, headers=headers)
            statuses.append(response.status_code)
            if response.status_code == 201:
                break
            assert response.status_code == 409, response.text  # the dead lease, until it expires
            time.sleep(0.2)
        assert statuses[-1] == 201
        again = httpx.post(f"{url}/idem-test/effects/", json=body, headers=headers)
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
        assert json.loads(again.content) == json.loads(response.content)
    assert SideEffect.objects.filter(label="killed").count() == 1


def _wait_for_open_write(tenant_id: int) -> None:
    """Until a server connection sits inside the write's transaction (row inserted, asleep)."""
    deadline = time.monotonic() + 20
    with psycopg.connect(servers.test_database_url(), autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' "
                "AND datname = current_database() AND query ILIKE %s",
                ["%idem_testapp_sideeffect%"],
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the write never started")
