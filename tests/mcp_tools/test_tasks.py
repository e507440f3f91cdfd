"""Tasks: stored in the database (any replica answers), owned by one actor, swept when old.

Both projections of the one store: the 2026-07-28 extension (``io.modelcontextprotocol/tasks``)
and the 2025-11-25 core tasks. Tasks run in a worker pool of this process, so these tests use
committed data (``transaction=True``) and poll like a client does.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from mcp_tools.models import RequestStateRedemption, TaskRecord
from mcp_tools.tasks.engine import task_engine
from tests.factories import MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, McpClient
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
WITH_INPUT = {"elicitation": {}, **TASKS}


@pytest.fixture(autouse=True)
def _tasks_finish_before_the_database_goes():
    yield
    deadline = time.monotonic() + 15
    while task_engine.in_use and time.monotonic() < deadline:
        TaskRecord.objects.filter(status="working").update(status="cancelled")
        time.sleep(0.05)


def _body(response: Any) -> dict[str, Any]:
    return json.loads(response.content)


def _create(client: Any, name: str, arguments: dict[str, Any], caps: dict[str, Any] = TASKS) -> str:
    result = _body(
        client.modern("tools/call", {"name": name, "arguments": arguments}, capabilities=caps)
    )["result"]
    assert result["resultType"] == "task", result
    return str(result["taskId"])


def _get(client: Any, task_id: str, caps: dict[str, Any] = TASKS) -> Any:
    return client.modern("tasks/get", {"taskId": task_id}, capabilities=caps)


def _wait(
    client: Any, task_id: str, until: tuple[str, ...] = ("completed", "failed", "cancelled")
) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        task = _body(_get(client, task_id))["result"]
        if task["status"] in until or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


def test_a_task_handle_then_its_inlined_result(mcp_client):
    client = mcp_client()
    created = _body(
        client.modern(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0.2}},
            capabilities=TASKS,
        )
    )["result"]
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(
        created
    )
    assert "requestState" not in created and "result" not in created
    assert TaskRecord.objects.filter(task_id=created["taskId"]).exists()  # durable before answered
    done = _wait(client, created["taskId"])
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["content"][0]["text"].startswith("Computed")


def test_without_the_extension_an_optional_tool_runs_synchronously(mcp_client):
    result = _body(
        mcp_client().modern("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.01}})
    )["result"]
    assert result["resultType"] == "complete" and "taskId" not in result


@mutation(
    "mcp_tools/tasks/store.py",
    find="            owner_key=owner.owner_key,\n            expires_at__gt",
    replace="            expires_at__gt",
)
@mutation(
    "mcp_tools/tasks/store.py",
    find=(
        "            tenant_key=owner.tenant_key,\n"
        "            owner_key=owner.owner_key,\n"
        "            expires_at__gt"
    ),
    replace="            expires_at__gt",
)
def test_a_task_of_one_actor_is_invisible_to_every_other(mcp_client):
    """Mutation: drop ``owner_key`` from the filter in ``TaskStore._owned`` → red (a colleague
    on the same farm could read, cancel and answer the task); drop ``tenant_key`` too → red for
    the member of another farm."""
    owner = mcp_client()
    task_id = _create(owner, "confirm_delete", {"filename": "secret.txt"}, WITH_INPUT)
    assert _wait(owner, task_id, ("input_required",))["status"] == "input_required"
    colleague = McpClient(
        bearer_for(MembershipFactory(tenant=owner.membership.tenant, roles=["Admin"]))  # type: ignore[arg-type]
    )
    stranger = mcp_client()
    for other in (colleague, stranger):
        for method, params in (
            ("tasks/get", {"taskId": task_id}),
            ("tasks/cancel", {"taskId": task_id}),
            (
                "tasks/update",
                {
                    "taskId": task_id,
                    "inputResponses": {
                        "confirm": {"action": "accept", "content": {"confirm": True}}
                    },
                },
            ),
        ):
            response = other.modern(method, params, capabilities=WITH_INPUT)
            assert response.status_code == 400, (method, response.content)
            error = _body(response)["error"]
            assert (error["code"], error["message"]) == (-32602, "Unknown task")
    assert _wait(owner, task_id, ("input_required",))["status"] == "input_required"


def test_a_task_asks_for_input_and_resumes_when_answered(mcp_client):
    client = mcp_client()
    task_id = _create(client, "multi_input", {}, WITH_INPUT)
    waiting = _wait(client, task_id, ("input_required",))
    assert set(waiting["inputRequests"]) == {"name", "confirm"}
    answer = {"action": "accept", "content": {"name": "x", "confirm": True}}
    ack = _body(
        client.modern(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"name": answer}},
            capabilities=WITH_INPUT,
        )
    )["result"]
    assert ack["resultType"] == "complete" and "status" not in ack
    assert list(_body(_get(client, task_id))["result"]["inputRequests"]) == ["confirm"]
    client.modern(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {"confirm": answer}},
        capabilities=WITH_INPUT,
    )
    assert _wait(client, task_id)["result"]["content"][0]["text"] == "Got 2 answers"


def test_cancel_tool_errors_and_crashes_settle_as_the_extension_says(mcp_client):
    client = mcp_client()
    running = _create(client, "slow_compute", {"seconds": 30})
    ack = _body(client.modern("tasks/cancel", {"taskId": running}, capabilities=TASKS))["result"]
    assert ack["resultType"] == "complete" and "taskId" not in ack
    assert _wait(client, running)["status"] == "cancelled"
    failing = _wait(client, _create(client, "failing_job", {}))
    assert failing["status"] == "completed" and failing["result"]["isError"] is True
    crashed = _wait(client, _create(client, "protocol_error_job", {}))
    assert crashed["status"] == "failed" and crashed["error"]["code"] == -32603
    assert "result" not in crashed


def test_tasks_methods_need_the_extension_and_the_routing_header(mcp_client):
    client = mcp_client()
    task_id = _create(client, "slow_compute", {"seconds": 0.05})
    refused = client.modern("tasks/get", {"taskId": task_id})
    assert refused.status_code == 400 and _body(refused)["error"]["code"] == -32021
    mismatched = client.modern(
        "tasks/get", {"taskId": task_id}, capabilities=TASKS, **{"Mcp-Name": "other"}
    )
    assert mismatched.status_code == 400 and _body(mismatched)["error"]["code"] == -32020
    for removed in ("tasks/result", "tasks/list"):
        assert client.modern(removed, {"taskId": task_id}, capabilities=TASKS).status_code == 404
    required = client.modern("tools/call", {"name": "failing_job", "arguments": {}})
    assert _body(required)["error"]["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    _wait(client, task_id)


@mutation(
    "mcp_tools/tasks/store.py",
    find="            and row.lease_expires_at < timezone.now()\n",
    replace="            and False\n",
)
def test_a_task_whose_worker_is_lost_reads_as_failed(mcp_client):
    """A claimed task (its one attempt used: the tool declares no ``task_retry``) whose lease
    lapsed. Mutation: drop the lease check in ``TaskStore.get`` → red (a task whose worker died
    would stay ``working`` for ever)."""
    client = mcp_client()
    now = timezone.now()
    TaskRecord.objects.create(
        task_id="lost-task",
        tenant_key=str(client.membership.tenant.pk),
        owner_key=str(client.membership.user.pk),
        operation="slow_compute",
        status="working",
        created_at=now,
        updated_at=now,
        expires_at=now + dt.timedelta(hours=1),
        lease_expires_at=now - dt.timedelta(seconds=1),
        attempts=1,
        max_attempts=1,
    )
    task = _body(_get(client, "lost-task"))["result"]
    assert task["status"] == "failed" and task["error"]["code"] == -32603


def test_the_sweep_purges_expired_tasks_and_request_states(mcp_client):
    client = mcp_client()
    past = timezone.now() - dt.timedelta(seconds=1)
    TaskRecord.objects.create(
        task_id="old-task",
        tenant_key=str(client.membership.tenant.pk),
        owner_key=str(client.membership.user.pk),
        operation="slow_compute",
        status="completed",
        created_at=past,
        updated_at=past,
        expires_at=past,
    )
    RequestStateRedemption.objects.create(nonce="old-nonce", expires_at=past)
    assert client.modern("tasks/get", {"taskId": "old-task"}, capabilities=TASKS).status_code == 400
    call_command("purge_mcp_tools", verbosity=0)
    assert not TaskRecord.objects.filter(task_id="old-task").exists()
    assert not RequestStateRedemption.objects.filter(nonce="old-nonce").exists()


def _handshake(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return client.rpc(method, params, **{"MCP-Protocol-Version": HANDSHAKE})


def test_the_2025_11_25_core_tasks_projection(mcp_client):
    client = mcp_client()
    listed = {t["name"]: t for t in client.list_tools()["result"]["tools"]}
    assert listed["slow_compute"]["execution"] == {"taskSupport": "optional"}
    created = _handshake(
        client,
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 0.1}, "task": {"ttl": 60000}},
    )["result"]["task"]
    assert created["status"] == "working" and created["ttl"] > 0
    outcome = _handshake(client, "tasks/result", {"taskId": created["taskId"]})["result"]
    assert outcome["content"][0]["text"].startswith("Computed")
    assert outcome["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": created["taskId"]}
    assert (
        _handshake(client, "tasks/get", {"taskId": created["taskId"]})["result"]["status"]
        == "completed"
    )
    cancelled = _handshake(client, "tasks/cancel", {"taskId": created["taskId"]})
    assert cancelled["error"]["code"] == -32602  # terminal already
    assert _handshake(client, "tasks/list", {})["error"]["code"] == -32601
    required = _handshake(client, "tools/call", {"name": "failing_job", "arguments": {}})
    assert required["error"]["code"] == -32602
