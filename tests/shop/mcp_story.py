"""The shop's MCP story through the official ``mcp`` SDK client, as Claude Code would drive it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.tool_errors import tool_error

TEA = {"name": "Tea", "price": "4.50", "idempotencyKey": "add-tea"}


def _http(bearer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


@asynccontextmanager
async def mcp_session(url: str, bearer: str) -> AsyncIterator[ClientSession]:
    """A handshake-era session (``initialize`` first) on ``url``/mcp."""
    async with (
        _http(bearer) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _dump(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def _products(session: ClientSession) -> list[dict[str, Any]]:
    result = await session.call_tool("shop_list_products", {})
    products: list[dict[str, Any]] = result.structured_content["products"]
    return products


async def _story(url: str, owner: str, other: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with mcp_session(url, owner) as session:
        seen["tools"] = {tool.name: _dump(tool) for tool in (await session.list_tools()).tools}
        seen["before"] = await _products(session)
        seen["added"] = _dump(await session.call_tool("shop_add_product", TEA))
        seen["replayed"] = _dump(await session.call_tool("shop_add_product", TEA))
        seen["reused"] = _dump(await session.call_tool("shop_add_product", {**TEA, "price": "5"}))
        again = {**TEA, "idempotencyKey": "add-tea-again"}
        seen["taken"] = _dump(await session.call_tool("shop_add_product", again))
    async with mcp_session(url, other) as session:
        seen["other_before"] = await _products(session)
        # The same key and arguments as the first store's call: its own write, never a replay.
        seen["other_added"] = _dump(await session.call_tool("shop_add_product", TEA))
        seen["other_after"] = await _products(session)
    async with _http(owner) as http:
        # The 2026-07-28 era, through the SDK's high-level client.
        async with Client(
            streamable_http_client(f"{url}/mcp", http_client=http), mode="2026-07-28"
        ) as client:
            result = await client.call_tool("shop_list_products", {})
            seen["after"] = result.structured_content["products"]
    return seen


def run_story(url: str, *, owner: str, other: str) -> None:
    """Two stores' owners use the tools; assert what each may see and what each write did."""
    seen = asyncio.run(_story(url, owner, other))

    assert set(seen["tools"]) == {"shop_list_products", "shop_add_product"}
    write_schema = seen["tools"]["shop_add_product"]["inputSchema"]
    assert "idempotencyKey" in write_schema["required"]
    assert "idempotencyKey" not in seen["tools"]["shop_list_products"]["inputSchema"].get(
        "properties", {}
    )
    assert seen["tools"]["shop_list_products"]["annotations"]["readOnlyHint"] is True

    assert seen["before"] == []
    added = seen["added"]["structuredContent"]
    assert added["replayed"] is False and added["product"]["name"] == "Tea"
    assert added["product"]["price"] == "4.50"
    replayed = seen["replayed"]["structuredContent"]
    assert replayed == {**added, "replayed": True}
    assert tool_error(seen["reused"])["code"] == "Idempotency.KeyReused"
    assert tool_error(seen["taken"])["code"] == "Product.NameTaken"

    assert seen["other_before"] == []
    theirs = seen["other_added"]["structuredContent"]
    assert theirs["replayed"] is False and theirs["product"]["id"] != added["product"]["id"]
    assert seen["other_after"] == [theirs["product"]]
    assert seen["after"] == [added["product"]]


async def _call_tool(url: str, bearer: str, era: str, tool: str, arguments: dict[str, Any]) -> Any:
    if era == "handshake":
        async with mcp_session(url, bearer) as session:
            return await session.call_tool(tool, arguments)
    async with (
        _http(bearer) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="2026-07-28") as client,
    ):
        return await client.call_tool(tool, arguments)


def call_tool(url: str, bearer: str, era: str, tool: str, **arguments: Any) -> Any:
    """One ``tools/call`` through the SDK: ``era`` ``"handshake"`` (a session, ``initialize``
    first) or ``"modern"`` (the 2026-07-28 era); the SDK's ``CallToolResult``."""
    return asyncio.run(_call_tool(url, bearer, era, tool, arguments))


async def _tool_names(url: str, bearer: str) -> set[str]:
    async with mcp_session(url, bearer) as session:
        return {tool.name for tool in (await session.list_tools()).tools}


def tool_names(url: str, bearer: str) -> set[str]:
    return asyncio.run(_tool_names(url, bearer))
