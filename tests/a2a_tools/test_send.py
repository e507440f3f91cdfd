"""``SendMessage``: a skill runs like ``tools/call`` and comes back as a finished task."""

from __future__ import annotations

from typing import Any

import pytest

from tests.a2a_tools.conftest import artifact_data, error_reason, skill_message, task_error
from tests.mutations import mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_read_skill_runs_through_the_call_context_of_the_caller(a2a_client: Any) -> None:
    client = a2a_client("Worker")
    task = client.task("mcptest_whoami", {"asOfDate": "2026-01-02"})
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    who = artifact_data(task)
    membership = client.membership
    assert who["tenant_id"] == membership.tenant_id and who["user_id"] == membership.user_id
    assert who["role"] == "Worker"
    assert who["protocol_version"] == "a2a/1.0" and who["as_of_date"] == "2026-01-02"
    assert task["artifacts"][0]["parts"][0]["mediaType"] == "application/json"
    assert task["history"][0]["parts"][0]["data"]["skill"] == "mcptest_whoami"
    assert task["metadata"] == {"skill": "mcptest_whoami"}


def test_text_and_content_results_become_parts(a2a_client: Any) -> None:
    client = a2a_client()
    text = client.task("test_simple_text")["artifacts"][0]["parts"]
    assert text == [
        {"text": "This is a simple text response for testing.", "mediaType": "text/plain"}
    ]
    image = client.task("test_image_content")["artifacts"][0]["parts"][0]
    assert image["mediaType"] == "image/png" and image["raw"]


def test_a_write_skill_replays_under_its_key_and_refuses_the_key_with_other_arguments(
    a2a_client: Any,
) -> None:
    client = a2a_client()
    before = controls.executions["mcptest_record_note"]
    first = artifact_data(client.task("mcptest_record_note", {"text": "hi"}, key="k-1"))
    again = artifact_data(client.task("mcptest_record_note", {"text": "hi"}, key="k-1"))
    assert first["replayed"] is False and again == {**first, "replayed": True}
    reused = client.task("mcptest_record_note", {"text": "ho"}, key="k-1")
    assert task_error(reused)["code"] == "Idempotency.KeyReused"
    assert controls.executions["mcptest_record_note"] == before + 1


def test_a_write_skill_without_its_key_is_invalid_arguments(a2a_client: Any) -> None:
    error = task_error(a2a_client().task("mcptest_record_note", {"text": "hi"}))
    assert error["code"] == "Tool.InvalidArguments"
    assert [e["field"] for e in error["data"]["errors"]] == ["idempotencyKey"]


def test_the_key_travels_in_the_metadata_never_among_the_arguments(a2a_client: Any) -> None:
    reply = a2a_client().send("mcptest_record_note", {"text": "hi", "idempotencyKey": "k"})
    assert reply["error"]["code"] == -32602


def test_invalid_arguments_are_a_failed_task_with_the_fields(a2a_client: Any) -> None:
    task = a2a_client().task("mcptest_whoami", {"asOfDate": "not a date", "extra": 1})
    error = task_error(task)
    assert error["code"] == "Tool.InvalidArguments"
    assert {e["field"] for e in error["data"]["errors"]} == {"asOfDate", "extra"}


def test_a_domain_error_is_a_failed_task_with_its_stable_code(a2a_client: Any) -> None:
    task = a2a_client().task("mcptest_refuse", {"text": "no"}, key="r-1")
    error = task_error(task)
    assert error == {"code": "Test.Refused", "message": "refused: no", "data": {"text": "no"}}
    parts = task["status"]["message"]["parts"]
    assert parts[1] == {"text": "Test.Refused: refused: no"}
    assert task["status"]["message"]["role"] == "ROLE_AGENT"


def test_a_crash_is_an_internal_error_with_a_request_id_and_no_detail(a2a_client: Any) -> None:
    task = a2a_client().task("mcptest_crash")
    error = task_error(task)
    assert error["code"] == "Tool.InternalError" and error["data"]["requestId"]
    assert "secret" not in str(task)


@mutation(
    "a2a_tools/invocation.py",
    find=(
        "    spec = surface.skills.get(name)\n"
        "    # Defense in depth, as tools/call does: ask the live policy again.\n"
        "    if spec is None or not evaluate(spec.policy, ctx.actor):\n"
        "        return None\n"
    ),
    replace=(
        "    from a2a_tools.skills import projection\n"
        "\n"
        "    for each in projection().surfaces.values():\n"
        "        spec = each.skills.get(name)\n"
        "        if spec is not None:\n"
        "            break\n"
    ),
)
def test_a_hidden_skill_is_answered_exactly_like_an_unknown_one(a2a_client: Any) -> None:
    """Mutation: skip ``visible_skill``'s live policy check and look the skill up in every
    role's surface → red (the hidden call would run)."""
    readonly = a2a_client("ReadOnly")
    hidden = readonly.send("mcptest_owner_report", {})
    unknown = readonly.send("mcptest_no_such_report", {})
    assert hidden["error"]["code"] == unknown["error"]["code"] == -32602
    assert hidden["error"]["message"].replace("mcptest_owner_report", "?") == unknown["error"][
        "message"
    ].replace("mcptest_no_such_report", "?")
    assert error_reason(hidden) == error_reason(unknown) == "INVALID_PARAMS"


def test_a_skill_that_needs_an_mcp_capability_is_unknown_over_a2a(a2a_client: Any) -> None:
    assert a2a_client().send("test_missing_capability", {})["error"]["code"] == -32602


def _prose(client: Any, **extra: Any) -> dict[str, Any]:
    params = skill_message("x", {}, **extra)
    params["message"]["parts"] = [{"text": "please list my flocks"}]
    return client.rpc("SendMessage", params)


def test_a_prose_message_waits_for_an_invocation_with_its_shape(a2a_client: Any) -> None:
    client = a2a_client()
    task = _prose(client)["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    error = task["status"]["message"]["parts"][0]["data"]["error"]
    assert error["code"] == "A2A.InvocationRequired" and '"skill"' in error["message"]
    assert client.rpc("GetTask", {"id": task["id"]})["result"] == task


def test_an_invocation_continues_the_task_waiting_for_it(a2a_client: Any) -> None:
    client = a2a_client()
    waiting = _prose(client, contextId="chat-1")["result"]["task"]
    follow_up = skill_message("mcptest_whoami", {}, taskId=waiting["id"])
    task = client.rpc("SendMessage", follow_up)["result"]["task"]
    assert (task["id"], task["contextId"]) == (waiting["id"], "chat-1")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and artifact_data(task)["role"]
    prose, prompt, invocation = task["history"]
    assert prose == waiting["history"][0] and prompt == waiting["status"]["message"]
    assert invocation["parts"][0]["data"]["skill"] == "mcptest_whoami"
    assert invocation["contextId"] == "chat-1"
    assert client.rpc("GetTask", {"id": task["id"]})["result"] == task
    again = client.rpc("SendMessage", skill_message("mcptest_whoami", {}, taskId=task["id"]))
    assert again["error"]["code"] == -32004


def test_more_prose_keeps_the_task_waiting_and_grows_its_history(a2a_client: Any) -> None:
    client = a2a_client()
    waiting = _prose(client)["result"]["task"]
    again = _prose(client, taskId=waiting["id"])["result"]["task"]
    assert again["id"] == waiting["id"]
    assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert len(again["history"]) == 3


def test_a_follow_up_naming_another_context_is_invalid(a2a_client: Any) -> None:
    client = a2a_client()
    waiting = _prose(client)["result"]["task"]
    follow_up = skill_message("mcptest_whoami", {}, taskId=waiting["id"], contextId="other")
    assert client.rpc("SendMessage", follow_up)["error"]["code"] == -32602
    state = client.rpc("GetTask", {"id": waiting["id"]})["result"]["status"]["state"]
    assert state == "TASK_STATE_INPUT_REQUIRED"


@mutation("a2a_tools/tasks.py", find="            state=expected_state,\n", replace="")
def test_a_follow_up_that_loses_the_race_for_the_task_is_refused(
    a2a_client: Any, monkeypatch: Any
) -> None:
    """The continued task is replaced only while it still waits (compare-and-set on its state).

    Mutation: make ``DatabaseTaskStore.update`` ignore ``expected_state`` → red (the canceled
    task is overwritten as completed)."""
    from a2a_tools.tasks import DatabaseTaskStore

    client = a2a_client()
    waiting = _prose(client)["result"]["task"]
    real_update = DatabaseTaskStore.update

    def cancel_first(self: Any, owner: Any, task: Any, **kw: Any) -> bool:
        # Another request cancels the task between this one's read and its write.
        monkeypatch.setattr(DatabaseTaskStore, "update", real_update)
        assert client.rpc("CancelTask", {"id": waiting["id"]})["result"]["id"] == waiting["id"]
        return real_update(self, owner, task, **kw)

    monkeypatch.setattr(DatabaseTaskStore, "update", cancel_first)
    follow_up = skill_message("mcptest_whoami", {}, taskId=waiting["id"])
    assert client.rpc("SendMessage", follow_up)["error"]["code"] == -32004
    stored = client.rpc("GetTask", {"id": waiting["id"]})["result"]
    assert stored["status"]["state"] == "TASK_STATE_CANCELED"


@pytest.mark.parametrize(
    "parts",
    [
        [{"data": {"skill": "mcptest_whoami"}}, {"text": "and hello"}],
        [{"data": ["mcptest_whoami"]}],
        [{"data": {"name": "mcptest_whoami"}}],
        [{"data": {"skill": "mcptest_whoami", "arguments": [1]}}],
        [{"data": {"skill": "mcptest_whoami", "arguments": {}, "extra": 1}}],
    ],
)
def test_a_malformed_invocation_is_invalid_params(a2a_client: Any, parts: list[Any]) -> None:
    params = skill_message("x", {})
    params["message"]["parts"] = parts
    assert a2a_client().rpc("SendMessage", params)["error"]["code"] == -32602


def test_a_data_part_of_another_media_type_is_not_supported(a2a_client: Any) -> None:
    params = skill_message("mcptest_whoami", {})
    params["message"]["parts"][0]["mediaType"] = "text/csv"
    assert a2a_client().rpc("SendMessage", params)["error"]["code"] == -32005


def test_a_client_that_accepts_no_json_output_is_refused(a2a_client: Any) -> None:
    params = {
        **skill_message("mcptest_whoami", {}),
        "configuration": {"acceptedOutputModes": ["text/plain"]},
    }
    assert a2a_client().rpc("SendMessage", params)["error"]["code"] == -32005
    params["configuration"]["acceptedOutputModes"] = ["text/plain", "application/json"]
    assert "result" in a2a_client().rpc("SendMessage", params)


def test_required_message_fields_are_checked(a2a_client: Any) -> None:
    client = a2a_client()
    params = skill_message("mcptest_whoami", {})
    del params["message"]["messageId"]
    assert client.rpc("SendMessage", params)["error"]["code"] == -32602
    params = skill_message("mcptest_whoami", {})
    params["message"]["role"] = "ROLE_UNSPECIFIED"
    assert client.rpc("SendMessage", params)["error"]["code"] == -32602


def test_a_client_context_id_is_kept_and_one_is_made_otherwise(a2a_client: Any) -> None:
    client = a2a_client()
    params = skill_message("mcptest_whoami", {}, contextId="conversation-7")
    assert client.rpc("SendMessage", params)["result"]["task"]["contextId"] == "conversation-7"
    assert client.task("mcptest_whoami")["contextId"]


def test_a_message_to_a_finished_task_is_unsupported_and_to_a_missing_one_not_found(
    a2a_client: Any,
) -> None:
    client = a2a_client()
    task = client.task("mcptest_whoami")
    follow_up = skill_message("mcptest_whoami", {}, taskId=task["id"])
    assert client.rpc("SendMessage", follow_up)["error"]["code"] == -32004
    missing = skill_message("mcptest_whoami", {}, taskId="nope")
    assert client.rpc("SendMessage", missing)["error"]["code"] == -32001


@mutation(
    "a2a_tools/invocation.py",
    find='    arguments = data.get("arguments", {})\n',
    replace=(
        "    from google.protobuf.json_format import MessageToDict, ParseDict\n"
        "    from google.protobuf.struct_pb2 import Struct\n"
        "\n"
        '    arguments = MessageToDict(ParseDict(data.get("arguments") or {}, Struct()))\n'
    ),
)
def test_large_integers_reach_the_tool_exactly(a2a_client: Any) -> None:
    """Arguments are read from the JSON as sent, never through a protobuf Struct (doubles):
    2**60 + 1 arrives as itself, so the MCP write under the same key is replayed, not refused.

    Mutation: read ``arguments`` through a protobuf ``Struct`` (what ``Part.data`` holds) and
    ``MessageToDict`` in ``invocation`` → red (the double rounds it to 2**60 and the
    fingerprint differs: KeyReused)."""
    from tests.mcp_tools.conftest import McpClient

    client = a2a_client()
    big = 2**60 + 1
    mcp = McpClient(client.bearer).call(
        "mcptest_record_note", {"idempotencyKey": "big-1", "text": "x", "pages": big}
    )
    note = mcp["result"]["structuredContent"]
    task = client.task("mcptest_record_note", {"text": "x", "pages": big}, key="big-1")
    assert artifact_data(task) == {**note, "replayed": True}
