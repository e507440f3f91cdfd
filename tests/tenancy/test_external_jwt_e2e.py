"""Real MCP clients with an external issuer's JWT access token, against the farm on uvicorn.

The server process is configured by environment (``CLUCK_EXTERNAL_JWT_ISSUER``) to trust a
local issuer (``tests.tenancy.external_issuer``) that this test runs and whose keys it
generates. The python ``mcp`` SDK (both eras) and the TypeScript SDK send the token as any
bearer; the server maps its claims to the member and answers as that member.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.clients import node
from tests.factories import FarmFactory, MembershipFactory
from tests.mcp_tools.servers import ServerURL, serve
from tests.tenancy.external_issuer import LocalIssuer, local_issuer

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def server(issuer: LocalIssuer, django_db_setup: Any) -> Iterator[ServerURL]:
    # DEBUG: the local issuer is plain http on loopback, which tenancy.E022 refuses otherwise.
    env = {"CLUCK_EXTERNAL_JWT_ISSUER": issuer.url, "DEBUG": "true"}
    with serve("uvicorn", env=env) as url:
        _wait_for_the_key_set(issuer, url)
        yield url


def _wait_for_the_key_set(issuer: LocalIssuer, server: str, seconds: float = 20.0) -> None:
    """A fresh server refuses JWTs (401 ``Auth.SigningKeysUnavailable``, "retry shortly") until
    its one background fetch of the key set lands: retry as a client would, then the tests run
    on a server that holds the keys."""
    deadline = time.monotonic() + seconds
    while True:
        reply = _list_tools(server, issuer.token(aud="https://warm-up.example/mcp"))
        if reply.json()["error"]["data"]["code"] != "Auth.SigningKeysUnavailable":
            return
        assert time.monotonic() < deadline, "the server never fetched the issuer's key set"
        time.sleep(0.2)


def _list_tools(server: str, token: str) -> httpx2.Response:
    """A plain-HTTP ``tools/list`` with ``token`` as the bearer."""
    return httpx2.post(
        f"{server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=30,
    )


@pytest.fixture
def member(transactional_db: Any, settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return MembershipFactory(tenant=FarmFactory(), roles=["Manager"])


def _token(issuer: LocalIssuer, server: str, member: Any, **claims: Any) -> str:
    mapped = {"aud": f"{server}/mcp", "sub": member.user.email, "tenant": member.tenant.code}
    return issuer.token(**{**mapped, **claims})


def _http(token: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)


async def _handshake(url: str, token: str) -> dict[str, Any]:
    async with _http(token) as http, streamable_http_client(url, http_client=http) as streams:
        read, write, *_ = streams
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("mcptest_whoami", {})
            return dict(result.structured_content or {})


async def _modern(url: str, token: str) -> dict[str, Any]:
    async with _http(token) as http:
        client = Client(streamable_http_client(url, http_client=http), mode="2026-07-28")
        async with client:
            result = await client.call_tool("mcptest_whoami", {})
            return dict(result.structured_content or {})


def test_python_sdk_acts_as_the_member_the_token_names(issuer, server, member):
    token = _token(issuer, server, member)
    for run in (_handshake, _modern):
        whoami = asyncio.run(run(f"{server}/mcp", token))
        assert whoami["tenant_id"] == member.tenant_id, run
        assert whoami["user_id"] == member.user_id, run
        assert whoami["role"] == "Manager", run


def test_a_token_for_another_audience_is_refused_over_http(issuer, server, member):
    token = _token(issuer, server, member, aud="https://elsewhere.example/mcp")
    reply = _list_tools(server, token)
    assert reply.status_code == 401
    assert reply.json()["error"]["data"]["code"] == "Auth.InvalidAudience"
    assert "resource_metadata=" in reply.headers["WWW-Authenticate"]
    metadata = httpx2.get(f"{server}/.well-known/oauth-protected-resource/mcp", timeout=30)
    assert issuer.url in metadata.json()["authorization_servers"]


def test_typescript_sdk_with_the_token(issuer, server, member, tmp_path: Path):
    node.require(node.SDK_DRIVER, node.SDK)
    plan = {
        "url": f"{server}/mcp",
        "sessions": [
            {
                "name": "external",
                "bearer": _token(issuer, server, member),
                "era": "2025-11-25",
                "steps": [
                    {"op": "list"},
                    {"op": "call", "name": "mcptest_whoami", "arguments": {}},
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
    listed, called = session["steps"]
    assert "mcptest_whoami" in {tool["name"] for tool in listed["result"]["tools"]}, listed
    whoami = called["result"]["structuredContent"]
    assert (whoami["tenant_id"], whoami["user_id"]) == (member.tenant_id, member.user_id)
