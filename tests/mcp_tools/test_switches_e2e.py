"""The operator's kit with real clients over real HTTP (uvicorn): a tenant admin flips
read-only mode over REST; the python ``mcp`` SDK and the TypeScript SDK then see no write tool
and are refused one; a tenant budget refuses the next call with a retry hint; the server
process writes the audit rows of what they did."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.test import Client
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcp_tools.models import CallAudit
from tests.clients import node
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

HANDSHAKE = "2025-11-25"
WRITE = "mcptest_record_note"


@pytest.fixture(scope="module")
def budget_server(django_db_setup: Any) -> Iterator[str]:
    # A tenant budget of four tool calls a minute; audit and stored switches as the farm has.
    with serve("uvicorn", env={"MCP_TOOLS_TENANT_RATE": "4/m", "MCP_TOOLS_AUDIT": "1"}) as url:
        yield url


@pytest.fixture
def owner(transactional_db: Any, settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    membership.bearer = bearer_for(membership)  # type: ignore[arg-type,attr-defined]
    return membership


def flip_read_only(bearer: str) -> None:
    response = Client(headers={"Authorization": f"Bearer {bearer}"}).put(
        "/api/v1/mcp/switches/",
        json.dumps({"readOnly": True}),
        content_type="application/json",
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert response.status_code == 200, response.content


def audit_rows(tenant_id: Any, expected: int, timeout: float = 20.0) -> list[CallAudit]:
    """The server's audit rows for the tenant, once ``expected`` of them are written (the
    server's writer thread writes them shortly after each call answered)."""
    deadline = time.monotonic() + timeout
    while True:
        rows = list(CallAudit.objects.filter(tenant_key=str(tenant_id)).order_by("id"))
        if len(rows) >= expected or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


async def _python_sdk(url: str, bearer: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {bearer}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        try:
            await session.call_tool(WRITE, {"text": "x", "idempotencyKey": "e2e-ro"})
            refused: Any = None
        except MCPError as exc:
            refused = exc.code
        whoami = await session.call_tool("mcptest_whoami", {})
        return {
            "tools": {tool.name: tool for tool in tools.tools},
            "refused": refused,
            "whoami": whoami.is_error,
        }


def test_python_sdk_sees_read_only_mode_and_its_calls_are_audited(budget_server, owner):
    flip_read_only(owner.bearer)
    seen = asyncio.run(_python_sdk(f"{budget_server}/mcp", owner.bearer))
    assert WRITE not in seen["tools"] and "mcptest_whoami" in seen["tools"]
    assert all(tool.annotations.read_only_hint for tool in seen["tools"].values())
    assert seen["refused"] == -32602
    assert seen["whoami"] is False
    # The refused write named no tool of the (narrowed) surface: audited is the read alone.
    rows = audit_rows(owner.tenant_id, 1)
    assert [(r.tool, r.outcome, r.protocol) for r in rows] == [("mcptest_whoami", "ok", "mcp")]
    assert rows[0].actor_id == str(owner.user_id) and rows[0].credential == "token"


def test_typescript_sdk_is_refused_over_the_tenant_budget_with_a_retry_hint(
    budget_server, owner, tmp_path: Path
):
    node.require(node.SDK_DRIVER, node.SDK)
    flip_read_only(owner.bearer)
    call = {"op": "call", "name": "mcptest_whoami", "arguments": {}}
    write = {"op": "call", "name": WRITE, "arguments": {"text": "x", "idempotencyKey": "ts"}}
    plan = {
        "url": f"{budget_server}/mcp",
        "sessions": [
            {
                "name": "owner",
                "bearer": owner.bearer,
                "era": HANDSHAKE,
                "steps": [{"op": "list"}, write, call, call, call, call, call],
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
    listing, refused_write, *calls = session["steps"]
    assert WRITE not in {tool["name"] for tool in listing["result"]["tools"]}
    assert refused_write["thrown"]["code"] == -32602
    results = [step["result"] for step in calls]
    assert [r["isError"] for r in results] == [False, False, False, False, True]
    error = json.loads(results[-1]["content"][0]["text"])["error"]
    assert error["code"] == "Rate.Limited" and error["data"]["retryAfter"] >= 1
    rows = audit_rows(owner.tenant_id, 5)
    assert [r.outcome for r in rows] == ["ok"] * 4 + ["tool_error"]
    assert rows[-1].error_code == "Rate.Limited"
