"""Finished tasks: GetTask, ListTasks and CancelTask for the tasks the caller created, and the
retention sweep."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from a2a_tools.models import A2ATask
from a2a_tools.purge import EXPIRING
from mcp_tools.management.retention import sweep
from tests.a2a_tools.conftest import skill_message
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_task_returns_the_stored_task_and_trims_its_history(a2a_client: Any) -> None:
    client = a2a_client()
    task = client.task("mcptest_whoami")
    fetched = client.rpc("GetTask", {"id": task["id"]})["result"]
    assert fetched == task
    trimmed = client.rpc("GetTask", {"id": task["id"], "historyLength": 0})["result"]
    assert "history" not in trimmed and trimmed["artifacts"] == task["artifacts"]
    assert client.rpc("GetTask", {"id": task["id"], "historyLength": 5})["result"] == task
    assert client.rpc("GetTask", {"id": task["id"], "historyLength": -1})["error"]["code"] == -32602
    assert client.rpc("GetTask", {"id": ""})["error"]["code"] == -32602
    assert client.rpc("GetTask", {"id": "missing"})["error"]["code"] == -32001


def test_send_message_trims_the_history_it_returns(a2a_client: Any) -> None:
    params = {**skill_message("mcptest_whoami", {}), "configuration": {"historyLength": 0}}
    task = a2a_client().rpc("SendMessage", params)["result"]["task"]
    assert "history" not in task


def test_a_finished_task_cannot_be_canceled(a2a_client: Any) -> None:
    client = a2a_client()
    task = client.task("mcptest_whoami")
    reply = client.rpc("CancelTask", {"id": task["id"]})
    assert reply["error"]["code"] == -32002
    assert reply["error"]["data"][0]["metadata"]["state"] == "TASK_STATE_COMPLETED"
    assert client.rpc("CancelTask", {"id": "missing"})["error"]["code"] == -32001


def test_a_task_waiting_for_input_is_canceled_once(a2a_client: Any) -> None:
    client = a2a_client()
    params = skill_message("x", {})
    params["message"]["parts"] = [{"text": "hello"}]
    waiting = client.rpc("SendMessage", params)["result"]["task"]
    canceled = client.rpc("CancelTask", {"id": waiting["id"]})["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert canceled["history"] == [*waiting["history"], waiting["status"]["message"]]
    assert client.rpc("GetTask", {"id": waiting["id"]})["result"] == canceled
    again = client.rpc("CancelTask", {"id": waiting["id"]})
    assert again["error"]["code"] == -32002
    assert again["error"]["data"][0]["metadata"]["state"] == "TASK_STATE_CANCELED"
    follow_up = skill_message("mcptest_whoami", {}, taskId=waiting["id"])
    assert client.rpc("SendMessage", follow_up)["error"]["code"] == -32004


def test_list_tasks_pages_newest_first_with_filters(a2a_client: Any) -> None:
    client = a2a_client()
    made = [client.task("mcptest_whoami")["id"] for _ in range(3)]
    failed = client.task("mcptest_refuse", {"text": "no"}, key="f-1")["id"]
    first = client.rpc("ListTasks", {"pageSize": 2})["result"]
    assert first["totalSize"] == 4 and first["pageSize"] == 2
    assert [t["id"] for t in first["tasks"]] == [failed, made[2]]
    assert all("artifacts" not in t for t in first["tasks"])
    second = client.rpc("ListTasks", {"pageSize": 2, "pageToken": first["nextPageToken"]})
    assert [t["id"] for t in second["result"]["tasks"]] == [made[1], made[0]]
    assert second["result"]["nextPageToken"] == ""

    only_failed = client.rpc("ListTasks", {"status": "TASK_STATE_FAILED"})["result"]
    assert [t["id"] for t in only_failed["tasks"]] == [failed]
    with_artifacts = client.rpc("ListTasks", {"includeArtifacts": True, "historyLength": 0})
    newest_completed = with_artifacts["result"]["tasks"][1]
    assert newest_completed["artifacts"] and "history" not in newest_completed

    context = client.rpc("SendMessage", skill_message("mcptest_whoami", {}, contextId="ctx-9"))
    in_context = client.rpc("ListTasks", {"contextId": "ctx-9"})["result"]
    assert [t["id"] for t in in_context["tasks"]] == [context["result"]["task"]["id"]]
    stamp = context["result"]["task"]["status"]["timestamp"]
    after = client.rpc("ListTasks", {"statusTimestampAfter": stamp})["result"]
    assert [t["id"] for t in after["tasks"]] == [context["result"]["task"]["id"]]


@pytest.mark.parametrize(
    "params",
    [{"pageSize": 0}, {"pageSize": 101}, {"pageToken": "garbage!"}, {"status": "TASK_STATE_NOPE"}],
)
def test_list_tasks_refuses_bad_parameters(a2a_client: Any, params: dict[str, Any]) -> None:
    assert a2a_client().rpc("ListTasks", params)["error"]["code"] == -32602


def test_the_sweep_deletes_tasks_past_the_retention(a2a_client: Any) -> None:
    client = a2a_client()
    old = client.task("mcptest_whoami")["id"]
    fresh = client.task("mcptest_whoami")["id"]
    A2ATask.objects.filter(pk=old).update(updated_at=timezone.now() - dt.timedelta(days=30))
    assert sweep(EXPIRING, batch_size=1).deleted == 1
    assert set(A2ATask.objects.values_list("pk", flat=True)) == {fresh}
    out = StringIO()
    call_command("purge_a2a_tasks", stdout=out)
    assert out.getvalue().strip() == (
        "a2a_tools_tasks: 0 deleted (older than 7d, A2A_TOOLS_TASK_RETENTION_HOURS)"
    )
    assert client.rpc("GetTask", {"id": old})["error"]["code"] == -32001


def _wal_fsyncs() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        # This backend's own counters; pending ones are flushed when this statement ends.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            "SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_get_backend_io(pg_backend_pid()) "
            "WHERE object = 'wal'"
        )
        return int(cursor.fetchone()[0])


@mutation(
    "a2a_tools/tasks.py",
    find="SELECT set_config('synchronous_commit', 'off', true)",
    replace="SELECT 1",
)
@mutation(
    "a2a_tools/tasks.py",
    find="set_config('synchronous_commit', 'off', true)",
    replace="set_config('synchronous_commit', 'off', false)",
)
@pytest.mark.postgres
def test_a_task_row_commits_without_waiting_for_the_wal_and_only_that_row() -> None:
    """The row's own transaction skips the WAL flush (synchronous_commit off); the session
    keeps its setting, so the next write of the request is durable as usual.

    Mutations: drop the ``set_config`` CTE from ``_insert_without_waiting_for_the_wal`` → red
    (one WAL fsync per row); make it session-wide (``set_config(..., false)``) → red."""
    from django.db import connection

    from a2a_tools.invocation import Turn
    from a2a_tools.shapes import input_required_task
    from a2a_tools.tasks import DatabaseTaskStore, TaskOwner

    store, owner = DatabaseTaskStore(), TaskOwner(tenant_id="1", user_id=1)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    before = _wal_fsyncs()
    for index in range(5):
        store.save(owner, input_required_task(message, turn=Turn(f"t{index}", "c")), skill="")
    assert _wal_fsyncs() == before
    stored = store.get(owner, "t4")
    assert stored is not None and stored["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
