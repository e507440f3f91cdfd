"""Across replicas: real ``uvicorn cluck.asgi:application`` processes on one PostgreSQL, a real
HTTP client, concurrent identical writes. The side effect (a ``Customer.Create`` audit row)
must happen exactly once."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.db import connection

from cluck.devdb import _with_database
from cluck.models import AuditEvent, Customer
from tests.factories import MembershipFactory, bearer_for
from tests.mutations import Edit, mutation
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

REPLICAS = 2
REQUESTS = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _test_database_url() -> str:
    # The servers must use the test database this test writes its fixtures to.
    return _with_database(os.environ["DATABASE_URL"], connection.settings_dict["NAME"])


@pytest.fixture(scope="module")
def replica_urls(django_db_setup: Any) -> Iterator[list[str]]:
    """Started once per module (start-up dominates the cost); each test still gets a clean
    database from ``transactional_db``, and the servers close connections per request."""
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "IDEMPOTENCY_MAX_WAIT_SECONDS": "15",
        "LOG_LEVEL": "ERROR",
    }
    ports = [_free_port() for _ in range(REPLICAS)]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "cluck.asgi:application",
                "--lifespan",
                "off",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for port in ports
    ]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        deadline = time.monotonic() + 90
        for url, process in zip(urls, processes, strict=True):
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"server died: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
                try:
                    httpx.get(url + "/api/v1/me/", timeout=5)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def servers(replica_urls: list[str], transactional_db: Any) -> list[str]:
    return replica_urls


async def _fire(urls: list[str], path: str, bearer: str, key: str, body: Any) -> list[Any]:
    headers = {"Authorization": f"Bearer {bearer}", "Idempotency-Key": key}
    limits = httpx.Limits(max_connections=REQUESTS)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        return list(
            await asyncio.gather(
                *(
                    client.post(urls[i % len(urls)] + path, json=body, headers=headers)
                    for i in range(REQUESTS)
                )
            )
        )


@mutation(
    Edit(
        "idempotency/unit.py",
        find="claim = self._claim(scope, owner, deadline)",
        replace="claim = _Claimed()",
    ),
    Edit(
        "idempotency/unit.py",
        find="if not self._publish(scope, owner, payload):",
        replace="if not (self._publish(scope, owner, payload) or True):",
    ),
)
def test_concurrent_identical_writes_across_replicas_happen_exactly_once(
    servers: list[str],
) -> None:
    """Mutation: skip ``_claim`` (every request counts as claimed) and ignore the publish
    result (execute-then-store, no arbiter) → every replica executes → more than one
    ``Customer.Create`` audit row → red."""
    membership: Any = MembershipFactory()
    farm = membership.tenant
    bearer = bearer_for(membership)
    body = {"name": "Replica Ana", "phone": "+63 900 000 0000"}
    responses = asyncio.run(_fire(servers, "/api/v1/customers/", bearer, str(uuid.uuid4()), body))

    statuses = [r.status_code for r in responses]
    assert len(responses) == REQUESTS  # none lost
    assert set(statuses) <= {201, 409}, statuses
    executed = [
        r for r in responses if r.status_code == 201 and "idempotent-replayed" not in r.headers
    ]
    replayed = [r for r in responses if r.headers.get("idempotent-replayed") == "true"]
    conflicts = [r for r in responses if r.status_code == 409]
    print(f"executed={len(executed)} replayed={len(replayed)} conflicts={len(conflicts)}")
    assert len(executed) == 1
    assert len(executed) + len(replayed) + len(conflicts) == REQUESTS
    assert all(r.content == executed[0].content for r in replayed)
    assert all(r.json()["code"] == "Idempotency.InProgress" for r in conflicts)
    assert AuditEvent.all_tenants.filter(farm=farm, action="Customer.Create").count() == 1
    assert Customer.all_tenants.filter(farm=farm).count() == 1


@mutation(
    "idempotency/middleware.py",
    find="        return self._run(scope, request, view_func, view_args, view_kwargs)\n",
    replace=(
        "        self._run(scope, request, lambda *a, **k: HttpResponse(), view_args,"
        " view_kwargs)\n"
        "        return None\n"
    ),
)
def test_under_uvicorn_a_non_2xx_rolls_back_the_views_own_writes(servers: list[str]) -> None:
    """The view runs inside the unit's transaction under ASGI as well: its side-effect row
    disappears with the 422, and the retry with the same key runs again.

    Mutation: return ``None`` from ``process_view`` after claiming (let Django call the view
    outside the transaction) → the 422's row survives → red.
    """
    membership: Any = MembershipFactory()
    headers = {"Authorization": f"Bearer {bearer_for(membership)}", "Idempotency-Key": "k"}
    url = servers[0] + "/idem-test/effects/"
    refused = httpx.post(url, json={"label": "x", "status": 422}, headers=headers, timeout=10)
    assert refused.status_code == 422
    assert not SideEffect.objects.filter(tenant_id=str(membership.tenant_id)).exists()
    done = httpx.post(servers[1] + "/idem-test/effects/", json={"label": "y"}, headers=headers)
    assert done.status_code == 201
    assert list(SideEffect.objects.values_list("label", flat=True)) == ["y"]
