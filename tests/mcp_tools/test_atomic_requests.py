"""``/mcp`` and the health probes in a project with ``ATOMIC_REQUESTS = True``.

Django refuses to wrap an async view in the request transaction: without the view's opt-out
(``tenancy.handles_own_transactions``) every ``/mcp`` call is a 500. A write tool still commits
its effect and its idempotency record together, in its own ``IdempotentUnit``.
``transactional_db``: tools run in worker threads with their own connections.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.atomic_requests import atomic_requests
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, MODERN
from tests.mcp_tools.servers import serve
from tests.mutations import mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _atomic_requests() -> Iterator[None]:
    controls.executions.clear()
    with atomic_requests():
        yield


def _structured(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    assert reply["result"]["isError"] is False, reply
    return dict(reply["result"]["structuredContent"])


@mutation(
    "mcp_tools/serving/views.py",
    find=(
        "@handles_own_transactions  # async: Django refuses ATOMIC_REQUESTS for it "
        "(500 on every call)\n"
    ),
    replace="",
)
def test_mcp_serves_both_eras_and_replays_a_keyed_write_under_atomic_requests(
    mcp_client: Any,
) -> None:
    """/mcp under ATOMIC_REQUESTS: a 2025-11-25 keyed write runs once and replays, a
    2026-07-28 call answers.

    Mutation: drop ``handles_own_transactions`` from ``mcp_view`` → Django raises "You cannot
    use ATOMIC_REQUESTS with async views" on every call → red.
    """
    client = mcp_client("Worker")
    args = {"text": "under atomic requests", "idempotencyKey": "atomic-1"}
    first = _structured(client.call("mcptest_record_note", args))
    again = _structured(client.call("mcptest_record_note", args))
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert again["note_id"] == first["note_id"]
    assert controls.executions["mcptest_record_note"] == 1

    modern = client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    assert modern.status_code == 200, modern.content
    assert json.loads(modern.content)["result"]["structuredContent"]["protocol_version"] == MODERN


def test_the_health_probes_answer_under_atomic_requests(client: Any) -> None:
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.content


@pytest.mark.e2e
def test_the_farm_served_by_uvicorn_with_atomic_requests_answers_mcp() -> None:
    """End to end: ``CLUCK_ATOMIC_REQUESTS=1`` (the farm's switch) under uvicorn, through
    ``mcp_tools.serving.asgi``'s handler; a keyed write runs once and replays."""
    membership: Any = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    bearer = bearer_for(membership)
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": HANDSHAKE,
    }
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "mcptest_record_note",
            "arguments": {"text": "e2e", "idempotencyKey": "atomic-e2e"},
        },
    }
    with serve("uvicorn", env={"CLUCK_ATOMIC_REQUESTS": "1"}) as url:
        replies = [httpx.post(f"{url}/mcp", json=call, headers=headers, timeout=30) for _ in "12"]
    for reply in replies:
        assert reply.status_code == 200, reply.text
    first, again = (_structured(reply.json()) for reply in replies)
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert again["note_id"] == first["note_id"]
