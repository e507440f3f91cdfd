"""Issue 5's end-to-end story: a real uvicorn server, the official ``mcp`` SDK client, the demo.

owner lists flocks → records a day on "House 2 Brown" (ambiguous → error → retries with the
id) → replays it (``replayed: true``) → reuses the key with other arguments (KeyReused) →
submits it → reads stock that now includes it; invalid arguments are ``Tool.InvalidArguments``;
a worker sees only "House 1 White" and calling a tool its role lacks is -32602 (2026-07-28);
sales sees receivables with money strings; readonly sees no write tools and calling one is
-32602 (handshake era). tests/clients/ runs the same cases through third-party clients.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Iterator
from typing import Any

import httpx2
import pytest
from django.core.management import call_command
from mcp import Client, ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from cluck.models import Farm, Flock
from tests.cluck.mcp_helpers import demo_bearer
from tests.mcp_tools.servers import serve
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def sdk_tool_error(result: Any) -> dict[str, Any]:
    return tool_error(result.model_dump(mode="json", by_alias=True, exclude_none=True))


@pytest.fixture
def demo_server(transactional_db: Any) -> Iterator[tuple[str, dict[str, str]]]:
    call_command("seed_demo", verbosity=0)
    bearers = {
        role: demo_bearer(f"{role}@{farm}.example")
        for role, farm in [
            ("owner", "sunrise"),
            ("worker", "sunrise"),
            ("sales", "sunrise"),
            ("readonly", "sunrise"),
        ]
    }
    with serve("uvicorn") as url:
        yield f"{url}/mcp", bearers


def _http(bearer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


async def _owner_story(url: str, bearer: str, day: str) -> dict[str, Any]:
    async with (
        _http(bearer) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        flocks = (await session.call_tool("cluck_list_flocks", {})).structured_content
        args = {
            "idempotencyKey": "e2e-record-1",
            "flock": "House 2 Brown",
            "date": day,
            "totalEggs": 950,
            "crackedEggs": 10,
            "dirtyEggs": 5,
            "mortalityCount": 2,
            "grades": [{"grade": "Large", "quantity": 900}, {"grade": "Medium", "quantity": 35}],
        }
        ambiguous = await session.call_tool("cluck_record_daily_entry", args)
        candidates = sdk_tool_error(ambiguous)["data"]["candidates"]
        active = next(c for c in candidates if c["status"] == "Active")
        retry = {**args, "idempotencyKey": "e2e-record-2", "flock": active["flockId"]}
        recorded = await session.call_tool("cluck_record_daily_entry", retry)
        replayed = await session.call_tool("cluck_record_daily_entry", retry)
        reused = await session.call_tool("cluck_record_daily_entry", {**retry, "mortalityCount": 3})
        invalid = await session.call_tool("cluck_list_flocks", {"limit": 0})
        entry_id = recorded.structured_content["dailyEntryId"]
        submitted = await session.call_tool(
            "cluck_submit_daily_entry", {"idempotencyKey": "e2e-submit-1", "dailyEntryId": entry_id}
        )
        stock = await session.call_tool("cluck_read_stock", {"asOfDate": day})
        return {
            "flocks": flocks,
            "ambiguous": ambiguous,
            "recorded": recorded.structured_content,
            "replayed": replayed.structured_content,
            "reused": reused,
            "invalid": invalid,
            "submitted": submitted.structured_content,
            "stock": stock.structured_content,
        }


async def _hidden_tool_code(call: Awaitable[Any]) -> int:
    with pytest.raises(MCPError) as raised:
        await call
    return raised.value.code


async def _worker_view(url: str, bearer: str) -> tuple[list[str], int]:
    # The 2026-07-28 era, through the SDK's high-level client.
    async with _http(bearer) as http:
        async with Client(
            streamable_http_client(url, http_client=http), mode="2026-07-28"
        ) as client:
            result = await client.call_tool("cluck_list_flocks", {})
            names = [flock["name"] for flock in result.structured_content["flocks"]]
            hidden = await _hidden_tool_code(client.call_tool("cluck_read_receivables", {}))
            return names, hidden


async def _readonly_view(url: str, bearer: str) -> tuple[set[str], int]:
    async with (
        _http(bearer) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        hidden = await _hidden_tool_code(
            session.call_tool("cluck_record_daily_entry", {"idempotencyKey": "e2e-hidden"})
        )
        return names, hidden


async def _receivables(url: str, bearer: str) -> dict[str, Any]:
    async with _http(bearer) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("cluck_read_receivables", {"owingOnly": True})
            return result.structured_content


def test_the_farm_story_through_the_official_sdk(demo_server: tuple[str, dict[str, str]]) -> None:
    url, bearers = demo_server
    farm = Farm.objects.get(code="sunrise")
    day = (farm.today() - dt.timedelta(days=20)).isoformat()
    story = asyncio.run(_owner_story(url, bearers["owner"], day))

    names = [flock["name"] for flock in story["flocks"]["flocks"]]
    assert names.count("House 2 Brown") == 2 and "House 1 White" in names

    assert story["ambiguous"].is_error
    assert sdk_tool_error(story["ambiguous"])["code"] == "Flock.Ambiguous"

    recorded, replayed = story["recorded"], story["replayed"]
    assert recorded["status"] == "Draft" and recorded["replayed"] is False
    assert replayed["replayed"] is True and replayed["dailyEntryId"] == recorded["dailyEntryId"]
    active = Flock.objects.for_tenant(farm).get(name="House 2 Brown", status="Active")
    assert recorded["flockName"] == active.name

    assert sdk_tool_error(story["reused"])["code"] == "Idempotency.KeyReused"
    invalid = sdk_tool_error(story["invalid"])
    assert invalid["code"] == "Tool.InvalidArguments"
    assert [error["field"] for error in invalid["data"]["errors"]] == ["limit"]

    assert story["submitted"]["status"] == "Submitted"
    stock = {line["gradeName"]: line["available"] for line in story["stock"]["grades"]}
    assert stock["Large"] >= 900 and stock["Medium"] >= 35

    worker_flocks, worker_hidden = asyncio.run(_worker_view(url, bearers["worker"]))
    assert worker_flocks == ["House 1 White"]
    assert worker_hidden == -32602

    receivables = asyncio.run(_receivables(url, bearers["sales"]))
    assert receivables["customers"]
    owed = receivables["customers"][0]["outstanding"]
    assert owed["currency"] == "PHP" and isinstance(owed["amount"], str) and "." in owed["amount"]

    readonly_tools, readonly_hidden = asyncio.run(_readonly_view(url, bearers["readonly"]))
    assert "cluck_list_flocks" in readonly_tools
    assert not {"cluck_record_daily_entry", "cluck_submit_daily_entry"} & readonly_tools
    assert readonly_hidden == -32602
