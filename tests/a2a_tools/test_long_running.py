"""Long-running skills: ``returnImmediately`` (or a ``required`` tool) runs the skill as an MCP
task, in the MCP task store and runner, and GetTask / CancelTask read and cancel it there — one
task over both protocols, owned by the same member.

Tasks run in this process's task pool, so these tests use committed data (``transaction=True``)
and poll like a client does.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest

from mcp_tools.models import TaskRecord
from mcp_tools.tasks.engine import task_engine
from tests.a2a_tools.conftest import A2AClient, artifact_data, skill_message, task_error
from tests.factories import MembershipFactory, bearer_for
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
TERMINAL = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED")


@pytest.fixture(autouse=True)
def _tasks_finish_before_the_database_goes():
    yield
    deadline = time.monotonic() + 15
    while task_engine.in_use and time.monotonic() < deadline:
        TaskRecord.objects.filter(status="working").update(status="cancelled")
        time.sleep(0.05)


def _report_arguments() -> dict[str, Any]:
    today = dt.date.today()
    return {"fromDate": str(today - dt.timedelta(days=90)), "toDate": str(today)}


def _start(client: A2AClient, skill: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {**skill_message(skill, arguments), "configuration": {"returnImmediately": True}}
    reply = client.rpc("SendMessage", params)
    assert "result" in reply, reply
    task: dict[str, Any] = reply["result"]["task"]
    return task


def _poll(client: A2AClient, task_id: str, until: tuple[str, ...] = TERMINAL) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        task: dict[str, Any] = client.rpc("GetTask", {"id": task_id})["result"]
        if task["status"]["state"] in until or time.monotonic() > deadline:
            return task
        time.sleep(0.05)


def _mcp(client: A2AClient) -> McpClient:
    return McpClient(client.bearer, client.membership)


def _mcp_get(client: A2AClient, task_id: str) -> dict[str, Any]:
    response = _mcp(client).modern("tasks/get", {"taskId": task_id}, capabilities=TASKS)
    body: dict[str, Any] = json.loads(response.content)
    return body


@mutation("a2a_tools/rpc.py", find="and configuration.return_immediately", replace="and False")
def test_return_immediately_answers_working_then_the_synchronous_result(a2a_client: Any) -> None:
    """Mutation: ignore ``configuration.return_immediately`` in ``send_message`` → red (the
    report finishes within the request, as before)."""
    client = a2a_client()
    arguments = _report_arguments()
    synchronous = client.task("cluck_production_report", arguments)
    assert synchronous["status"]["state"] == "TASK_STATE_COMPLETED"

    working = _start(client, "cluck_production_report", arguments)
    assert working["status"]["state"] == "TASK_STATE_WORKING", working
    assert working["metadata"] == {"skill": "cluck_production_report"}
    record = TaskRecord.objects.get(task_id=working["id"])  # the MCP store's own row
    assert record.operation == "cluck_production_report"
    assert working["contextId"] == record.context_id != ""
    done = _poll(client, working["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert done["contextId"] == working["contextId"]
    assert artifact_data(done) == artifact_data(synchronous)
    (artifact,) = done["artifacts"]
    assert (artifact["artifactId"], artifact["name"]) == (f"{done['id']}-result", "result")


def test_an_error_before_the_hand_over_is_a_failed_task_at_once(a2a_client: Any) -> None:
    client = a2a_client()
    too_long = {"fromDate": "2020-01-01", "toDate": "2026-01-31"}
    failed = _start(client, "cluck_production_report", too_long)
    assert task_error(failed)["code"] == "Validation.Failed"
    assert client.rpc("GetTask", {"id": failed["id"]})["result"] == failed
    assert not TaskRecord.objects.exists()


def test_without_return_immediately_an_optional_tool_runs_within_the_request(
    a2a_client: Any,
) -> None:
    task = a2a_client().task("slow_compute", {"seconds": 0.1, "label": "sync"})
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert not TaskRecord.objects.exists()


def test_a_required_tool_runs_as_a_task_and_its_tool_error_fails_it(a2a_client: Any) -> None:
    client = a2a_client()
    working = client.task("failing_job")
    assert working["status"]["state"] == "TASK_STATE_WORKING"
    failed = _poll(client, working["id"])
    assert task_error(failed)["code"] == "Job.Failed"


def test_one_task_store_serves_both_protocols(a2a_client: Any) -> None:
    client = a2a_client()
    # Created over MCP (the tasks extension), read over A2A with the same bearer.
    created = json.loads(
        _mcp(client)
        .modern(
            "tools/call",
            {"name": "cluck_production_report", "arguments": _report_arguments()},
            capabilities=TASKS,
        )
        .content
    )["result"]
    assert created["resultType"] == "task", created
    over_a2a = _poll(client, created["taskId"])
    assert over_a2a["status"]["state"] == "TASK_STATE_COMPLETED"
    over_mcp = _mcp_get(client, created["taskId"])["result"]
    assert artifact_data(over_a2a) == over_mcp["result"]["structuredContent"]

    # Created over A2A, read over MCP.
    working = _start(client, "slow_compute", {"seconds": 0.2, "label": "a2a"})
    assert _mcp_get(client, working["id"])["result"]["status"] in ("working", "completed")
    done = _poll(client, working["id"])
    got = _mcp_get(client, working["id"])["result"]
    assert got["status"] == "completed"
    assert got["result"]["content"][0]["text"] == "Computed a2a in 0.2 s"
    assert done["artifacts"][0]["parts"][0]["text"] == "Computed a2a in 0.2 s"


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
def test_a_long_running_task_is_its_creators_only(a2a_client: Any) -> None:
    """Mutation: drop ``owner_key`` from ``TaskStore._owned`` → red (a colleague on the same
    farm reads and cancels the task over A2A); drop ``tenant_key`` too → red for the member of
    another farm. A2A reads the MCP store through the owner-scoped ``get_task`` before any
    cancel, so a foreign id is -32001 for both methods."""
    owner = a2a_client()
    working = _start(owner, "slow_compute", {"seconds": 30})
    assert working["status"]["state"] == "TASK_STATE_WORKING"
    membership = MembershipFactory(tenant=owner.membership.tenant, roles=["Admin"])
    colleague = A2AClient(bearer_for(membership), membership)  # type: ignore[arg-type]
    stranger = a2a_client()
    for other in (colleague, stranger):
        for method in ("GetTask", "CancelTask"):
            reply = other.rpc(method, {"id": working["id"]})
            assert reply["error"]["code"] == -32001, (method, reply)
    assert owner.rpc("GetTask", {"id": working["id"]})["result"]["status"]["state"] == (
        "TASK_STATE_WORKING"
    )
    assert TaskRecord.objects.get(task_id=working["id"]).status == "working"


@mutation(
    "a2a_tools/rpc.py",
    find='        if task["status"]["state"] in (WORKING, INPUT_REQUIRED):',
    replace="        if False:",
)
def test_cancel_task_cancels_a_working_task_once(a2a_client: Any) -> None:
    """Mutation: skip the MCP store in ``cancel_task`` → red (a working task is refused as not
    cancelable and goes on running)."""
    client = a2a_client()
    working = _start(client, "slow_compute", {"seconds": 30})
    canceled = client.rpc("CancelTask", {"id": working["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert TaskRecord.objects.get(task_id=working["id"]).status == "cancelled"
    assert _mcp_get(client, working["id"])["result"]["status"] == "cancelled"
    assert _poll(client, working["id"])["status"]["state"] == "TASK_STATE_CANCELED"
    again = client.rpc("CancelTask", {"id": working["id"]})
    assert again["error"]["code"] == -32002
    assert again["error"]["data"][0]["metadata"]["state"] == "TASK_STATE_CANCELED"


def test_a_finished_long_running_task_is_not_cancelable(a2a_client: Any) -> None:
    client = a2a_client()
    working = _start(client, "slow_compute", {"seconds": 0.1})
    assert _poll(client, working["id"])["status"]["state"] == "TASK_STATE_COMPLETED"
    reply = client.rpc("CancelTask", {"id": working["id"]})
    assert reply["error"]["code"] == -32002
    assert reply["error"]["data"][0]["metadata"]["state"] == "TASK_STATE_COMPLETED"
    assert TaskRecord.objects.get(task_id=working["id"]).status == "completed"


def test_a_long_running_task_accepts_no_further_message(a2a_client: Any) -> None:
    client = a2a_client()
    working = _start(client, "slow_compute", {"seconds": 30})
    follow_up = skill_message("slow_compute", {"seconds": 0}, taskId=working["id"])
    reply = client.rpc("SendMessage", follow_up)
    assert reply["error"]["code"] == -32004, reply
