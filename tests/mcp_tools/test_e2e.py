"""Real clients against real servers: the official ``mcp`` SDK client in both eras over
uvicorn, and a plain HTTP client against ``manage.py runserver`` (WSGI)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def uvicorn_url(django_db_setup: Any) -> Iterator[str]:
    with serve("uvicorn") as url:
        yield url


@pytest.fixture
def bearer(transactional_db: Any, settings: Any) -> str:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    return bearer_for(membership)  # type: ignore[arg-type]


def _http(bearer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


async def _handshake_era(url: str, bearer: str) -> dict[str, Any]:
    async with (
        _http(bearer) as http,
        streamable_http_client(url, http_client=http) as (
            read,
            write,
            *_,
        ),
    ):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            whoami = await session.call_tool("mcptest_whoami", {"asOfDate": "2026-02-03"})
            write_args = {"text": "e2e", "idempotencyKey": "e2e-key"}
            first = await session.call_tool("mcptest_record_note", write_args)
            second = await session.call_tool("mcptest_record_note", write_args)
            failed = await session.call_tool("test_error_handling", {})
            return {
                "version": init.protocol_version,
                "capabilities": init.capabilities.model_dump(by_alias=True, exclude_none=True),
                "tools": {tool.name for tool in tools.tools},
                "whoami": whoami.structured_content,
                "first": first.structured_content,
                "second": second.structured_content,
                "failed": failed.is_error,
            }


async def _modern_era(url: str, bearer: str) -> dict[str, Any]:
    async with _http(bearer) as http:
        client = Client(streamable_http_client(url, http_client=http), mode="2026-07-28")
        async with client:
            tools = await client.list_tools()
            whoami = await client.call_tool("mcptest_whoami", {})
            return {
                "tools": {tool.name for tool in tools.tools},
                "whoami": whoami.structured_content,
            }


async def _auto_era(url: str, bearer: str) -> str | None:
    async with _http(bearer) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("mcptest_whoami", {})
            return (result.structured_content or {}).get("protocol_version")


def test_sdk_client_session_on_2025_11_25(uvicorn_url, bearer):
    seen = asyncio.run(_handshake_era(f"{uvicorn_url}/mcp", bearer))
    assert seen["version"] == "2025-11-25"
    # Nothing that needs a session: no list-change notifications, no subscriptions.
    assert seen["capabilities"]["tools"] == {"listChanged": False}
    assert seen["capabilities"]["resources"] == {"subscribe": False, "listChanged": False}
    assert {"prompts", "completions", "logging", "tasks"} <= set(seen["capabilities"])
    assert {"mcptest_whoami", "mcptest_record_note"} <= seen["tools"]
    assert seen["whoami"]["role"] == "Owner"
    assert seen["whoami"]["as_of_date"] == "2026-02-03"
    assert seen["first"]["replayed"] is False
    assert seen["second"] == {**seen["first"], "replayed": True}
    assert seen["failed"] is True


def test_sdk_client_on_2026_07_28(uvicorn_url, bearer):
    seen = asyncio.run(_modern_era(f"{uvicorn_url}/mcp", bearer))
    assert "mcptest_whoami" in seen["tools"]
    assert seen["whoami"]["protocol_version"] == "2026-07-28"
    assert asyncio.run(_auto_era(f"{uvicorn_url}/mcp", bearer)) == "2026-07-28"


def test_works_under_manage_py_runserver_wsgi(bearer, django_db_setup):
    with serve("runserver") as url:
        headers = {
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
        }
        for _ in range(2):  # a second request proves nothing outlived the first's event loop
            response = httpx.post(
                f"{url}/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "mcptest_whoami", "arguments": {}},
                },
                headers=headers,
                timeout=30,
            )
            assert response.status_code == 200, response.text
            assert response.json()["result"]["structuredContent"]["role"] == "Owner"
            assert "mcp-session-id" not in response.headers
        assert httpx.get(f"{url}/mcp", headers=headers).status_code == 405
