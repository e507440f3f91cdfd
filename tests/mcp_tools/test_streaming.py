"""Streamed responses: one request's notifications, then its result, on its own response.

A stream happens only when the client accepts ``text/event-stream``, asked for notifications on
this request (a progress token; 2026-07-28 a log level), the tool reports before it returns, and
the request is served over ASGI. Everything else is the plain JSON answer it always was.
Driven through Django's ``AsyncClient`` (an ASGI request, like uvicorn's).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, modern_meta
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)
SSE = "application/json, text/event-stream"


@pytest.fixture(autouse=True)
def _close_the_async_clients_connection():
    yield
    # AsyncClient runs the sync middleware in asgiref's thread-sensitive thread and keeps that
    # thread's connection open (the test client disconnects close_old_connections); close it
    # there, or the test database cannot be dropped.
    asyncio.run(sync_to_async(connections.close_all)())


@pytest.fixture
def bearer() -> str:
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    return bearer_for(membership)  # type: ignore[arg-type]


def _post(
    bearer: str,
    method: str,
    params: dict[str, Any],
    *,
    accept: str = SSE,
    modern: bool = False,
) -> tuple[Any, Any]:
    headers = {"Authorization": f"Bearer {bearer}", "Accept": accept}
    if modern:
        params = {**params, "_meta": {**modern_meta(), **params.get("_meta", {})}}
        headers.update(
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": params["name"]}
        )
    else:
        headers["MCP-Protocol-Version"] = HANDSHAKE
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})

    async def run() -> tuple[Any, Any]:
        response = await AsyncClient().post(
            "/mcp", body, content_type="application/json", headers=headers
        )
        if not response.streaming:
            return response, json.loads(response.content)
        stream = response.streaming_content  # type: ignore[attr-defined]
        raw = b"".join([chunk async for chunk in stream])
        events = []
        for block in raw.decode().split("\n\n"):
            if block.strip():
                lines = dict(line.split(": ", 1) for line in block.splitlines())
                assert lines["event"] == "message" and "id" not in lines  # no resumption
                events.append(json.loads(lines["data"]))
        return response, events

    return asyncio.run(run())


def test_progress_is_streamed_on_the_requests_own_response_then_the_result(bearer):
    params = {
        "name": "mcptest_streamed_count",
        "arguments": {"steps": 3},
        "_meta": {"progressToken": "p1"},
    }
    response, events = _post(bearer, "tools/call", params)
    assert response["Content-Type"] == "text/event-stream"
    assert response.get("Mcp-Session-Id") is None
    assert isinstance(events, list)
    progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("p1", 1, 3),
        ("p1", 2, 3),
        ("p1", 3, 3),
    ]
    assert events[-1]["id"] == 7
    assert events[-1]["result"]["content"][0]["text"] == "counted 3"


@mutation(
    "mcp_tools/call/exchange.py",
    find="        if self.progress_token is None:\n            return\n        params",
    replace="        params",
)
def test_no_token_no_report_json_only_or_wsgi_answer_plain_json(bearer, mcp_client):
    """Mutation: in ``Exchange.report_progress`` emit even without a progress token → red."""
    no_token = {"name": "mcptest_streamed_count", "arguments": {"steps": 3}}
    response, body = _post(bearer, "tools/call", no_token)
    assert response["Content-Type"] == "application/json" and body["result"]
    silent = {"name": "mcptest_whoami", "arguments": {}, "_meta": {"progressToken": "p2"}}
    response, body = _post(bearer, "tools/call", silent)
    assert response["Content-Type"] == "application/json" and body["result"]
    tokened = {**no_token, "_meta": {"progressToken": "p3"}}
    response, body = _post(bearer, "tools/call", tokened, accept="application/json")
    assert response["Content-Type"] == "application/json" and body["result"]
    # The WSGI test client (runserver): the event loop dies with the view, so never a stream.
    wsgi = mcp_client().rpc(
        "tools/call", tokened, **{"MCP-Protocol-Version": HANDSHAKE, "Accept": SSE}
    )
    assert wsgi["result"]["content"][0]["text"] == "counted 3"


def test_handshake_era_log_messages_stream_at_the_configured_level(bearer, settings):
    params = {"name": "test_tool_with_logging", "arguments": {}}
    _, events = _post(bearer, "tools/call", params)
    assert [e["params"]["data"] for e in events if e.get("method") == "notifications/message"] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    settings.MCP_TOOLS_LOG_LEVEL = "warning"
    response, body = _post(bearer, "tools/call", params)
    assert response["Content-Type"] == "application/json" and body["result"]["isError"] is False


def test_modern_log_messages_only_when_the_request_opts_in(bearer):
    params: dict[str, Any] = {"name": "test_tool_with_logging", "arguments": {}}
    response, body = _post(bearer, "tools/call", params, modern=True)
    assert response["Content-Type"] == "application/json"
    opted = {**params, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}
    response, events = _post(bearer, "tools/call", opted, modern=True)
    assert response["Content-Type"] == "text/event-stream"
    assert sum(e.get("method") == "notifications/message" for e in events) == 3
    assert events[-1]["result"]["resultType"] == "complete"
