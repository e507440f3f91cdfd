"""The farm's confirm-before-submit in the TypeScript SDK 1.x (2025-11-25, what Claude Code and
Claude Desktop speak): the server asks on the ``tools/call`` stream, the SDK's elicitation
handler answers with a separate POST, and the submit goes ahead only on a yes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from cluck.models import DailyEntry
from tests.clients import node
from tests.clients.conftest import DemoServer
from tests.clients.test_node_clients import HANDSHAKE, record_args, returned
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db]


def _draft(server: DemoServer, key: str, day: str) -> int:
    """A Draft daily entry recorded through /mcp (plain JSON, handshake era)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "cluck_record_daily_entry",
            "arguments": record_args(key, server.house_2_brown["Active"], day),
        },
    }
    headers = {
        "Authorization": f"Bearer {server.bearers['owner']}",
        "Accept": "application/json",
        "MCP-Protocol-Version": HANDSHAKE,
    }
    reply = httpx.post(server.url, json=body, headers=headers, timeout=30).json()
    entry_id: int = reply["result"]["structuredContent"]["dailyEntryId"]
    return entry_id


def _submit(key: str, entry_id: int) -> dict[str, Any]:
    arguments = {"idempotencyKey": key, "dailyEntryId": entry_id}
    return {"op": "call", "name": "cluck_submit_daily_entry", "arguments": arguments}


def test_typescript_sdk_1x_confirms_a_submit_through_its_elicitation_handler(
    demo_server: DemoServer, tmp_path: Path
) -> None:
    node.require(node.SDK_DRIVER, node.SDK)
    server = demo_server
    declined_id = _draft(server, "ts-elicit-draft-1", server.days_ago(30))
    confirmed_id = _draft(server, "ts-elicit-draft-2", server.days_ago(31))
    plan = {
        "url": server.url,
        "sessions": [
            {
                "name": "owner, confirms",
                "bearer": server.bearers["owner"],
                "era": HANDSHAKE,
                "elicitation": [
                    {"action": "decline"},
                    {"action": "accept", "content": {"confirm": True}},
                ],
                "steps": [
                    {"op": "list"},
                    _submit("ts-elicit-submit-1", declined_id),
                    _submit("ts-elicit-submit-2", confirmed_id),
                ],
            }
        ],
    }
    run = subprocess.run(
        [str(node.NODE), str(node.SDK_DRIVER)],
        input=json.dumps(plan),
        cwd=node.CLIENTS,
        env=node.client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    (session,) = json.loads(run.stdout)["sessions"]
    assert session["protocolVersion"] == HANDSHAKE
    _, declined, confirmed = session["steps"]

    asked = session["elicitations"]
    assert len(asked) == 2, asked
    assert all("cannot be undone" in question["message"] for question in asked)
    assert set(asked[0]["requestedSchema"]["properties"]) == {"confirm"}

    refusal = tool_error(returned(declined))
    assert refusal["code"] == "DailyEntry.SubmitNotConfirmed", refusal
    entries = DailyEntry.objects.unscoped("test: read back what the server wrote")
    assert entries.get(pk=declined_id).status == "Draft"  # declining wrote nothing

    submitted = returned(confirmed)
    assert submitted["isError"] is False, submitted
    assert submitted["structuredContent"]["status"] == "Submitted"
    assert entries.get(pk=confirmed_id).status == "Submitted"
