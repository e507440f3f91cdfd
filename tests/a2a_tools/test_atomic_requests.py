"""``/a2a`` in a project with ``ATOMIC_REQUESTS = True``: served outside the request
transaction (``tenancy.handles_own_transactions``); a keyed skill runs once and replays.
``transactional_db``: skills run in worker threads with their own connections."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.a2a_tools.conftest import artifact_data
from tests.atomic_requests import atomic_requests
from tests.testapps.mcp_fixtures import controls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _atomic_requests() -> Iterator[None]:
    controls.executions.clear()
    with atomic_requests():
        yield


def test_a_keyed_skill_runs_once_and_replays_under_atomic_requests(a2a_client: Any) -> None:
    client = a2a_client("Owner")
    arguments = {"text": "under atomic requests"}
    first = client.task("mcptest_record_note", arguments, key="atomic-a2a")
    again = client.task("mcptest_record_note", arguments, key="atomic-a2a")
    assert first["status"]["state"] == again["status"]["state"] == "TASK_STATE_COMPLETED", first
    assert artifact_data(again)["note_id"] == artifact_data(first)["note_id"]
    assert controls.executions["mcptest_record_note"] == 1
    assert client.client.get("/.well-known/agent-card.json").status_code == 200
