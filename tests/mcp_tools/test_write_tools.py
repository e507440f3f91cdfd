"""Write tools run inside the idempotent unit (guards 20–22, replay, released claims).

``transactional_db``: tools run in worker threads with their own DB connections, so the data
the test creates must be committed for them to see it.
"""

from __future__ import annotations

import pytest

from tests.mutations import mutation
from tests.testapps.mcp_fixtures import controls
from tests.tool_errors import tool_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _reset_counts():
    controls.executions.clear()


def _structured(response):
    return response["result"]["structuredContent"]


def test_replay_returns_the_stored_result_and_runs_nothing(mcp_client):
    client = mcp_client("Worker")
    args = {"text": "hello", "idempotencyKey": "key-1"}
    first = _structured(client.call("mcptest_record_note", args))
    second = _structured(client.call("mcptest_record_note", args))
    assert first["replayed"] is False and second["replayed"] is True
    assert second["note_id"] == first["note_id"]
    assert controls.executions["mcptest_record_note"] == 1


@mutation(
    "mcp_tools/execution/writes.py",
    find=(
        "fingerprint=port.bound_fingerprint(\n"
        "            port.fingerprint_json(arguments), user_id=str(ctx.us"
        "er_id)\n"
        "        ),"
    ),
    replace='fingerprint="one-fingerprint",',
)
def test_same_key_with_other_arguments_is_key_reused(mcp_client):
    """Guard 22. Mutation: drop the fingerprint from the scope (use a constant) → red."""
    client = mcp_client()
    client.call("mcptest_record_note", {"text": "a", "idempotencyKey": "k"})
    result = client.call("mcptest_record_note", {"text": "b", "idempotencyKey": "k"})["result"]
    assert result["isError"] is True
    assert tool_error(result)["code"] == "Idempotency.KeyReused"
    assert controls.executions["mcptest_record_note"] == 1


def test_fingerprint_is_taken_after_canonicalisation(mcp_client):
    """A defaulted argument spelled out is the same call, not a key reuse."""
    client = mcp_client()
    first = client.call("mcptest_record_note", {"text": "a", "idempotencyKey": "k"})
    again = client.call("mcptest_record_note", {"text": "a", "pages": 1, "idempotencyKey": "k"})
    assert _structured(again)["note_id"] == _structured(first)["note_id"]


@mutation(
    "mcp_tools/authoring/spec.py",
    find='return f"mcp:tool:{self.name}"',
    replace='return "mcp:tool"',
)
def test_two_real_write_tools_with_the_same_key_never_collide(mcp_client):
    """Guard 20. Mutation: make ``ToolSpec.operation_key`` return "mcp:tool" for every tool
    → red (the second tool replays the first's result)."""
    client = mcp_client()
    args = {"text": "same", "idempotencyKey": "shared-key"}
    note = _structured(client.call("mcptest_record_note", args))
    other = _structured(client.call("mcptest_record_other", args))
    assert other["replayed"] is False
    assert other["note_id"] != note["note_id"]
    assert controls.executions["mcptest_record_other"] == 1


@mutation(
    "mcp_tools/execution/writes.py",
    find="port.fingerprint_json(arguments), user_id=str(ctx.user_id)",
    replace="port.fingerprint_json(arguments), user_id=None",
)
def test_same_key_from_two_members_of_one_tenant_never_replays(mcp_client):
    """The acting user is part of the fingerprint: a second member reusing a key is refused,
    never handed the first member's result. Mutation: drop ``user`` from the fingerprint → red."""
    owner = mcp_client("Owner")
    worker = mcp_client("Worker", farm=owner.membership.tenant)
    args = {"text": "same", "idempotencyKey": "shared-key"}
    first = _structured(owner.call("mcptest_record_note", args))
    second = worker.call("mcptest_record_note", args)["result"]
    assert first["replayed"] is False
    assert second["isError"] is True
    assert tool_error(second)["code"] == "Idempotency.KeyReused"
    assert first["note_id"] not in str(second)


def test_a_domain_failure_releases_the_claim(mcp_client):
    client = mcp_client()
    args = {"text": "x", "idempotencyKey": "k-fail"}
    for _ in range(2):
        result = client.call("mcptest_refuse", args)["result"]
        assert result["isError"] is True
        error = tool_error(result)
        assert error["code"] == "Test.Refused" and error["data"] == {"text": "x"}
    assert controls.executions["mcptest_refuse"] == 2  # nothing stored, so it ran again


def test_a_missing_or_empty_idempotency_key_is_invalid_arguments(mcp_client):
    client = mcp_client()
    for args in (
        {"text": "x"},
        {"text": "x", "idempotencyKey": ""},
        {"text": "x", "idempotencyKey": "k" * 256},
    ):
        result = client.call("mcptest_record_note", args)["result"]
        assert tool_error(result)["code"] == "Tool.InvalidArguments"
    assert controls.executions["mcptest_record_note"] == 0
