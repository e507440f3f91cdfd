"""Issue 13's story with real parts: a uvicorn server, the official ``mcp`` SDK's OAuth client,
headless Chromium for the person.

The client meets a 401, discovers the authorization server from its challenge (RFC 9728 → RFC
8414), identifies itself by a client ID metadata document served from a local server (and, in
the second test, registers dynamically instead), sends the person's browser to the consent page
with PKCE; the person signs in, picks the farm *hillside* among their two farms and approves.
The client then lists and calls that farm's tools with the person's role there, refreshes its
token (rotation), revokes it, and the old tokens are refused with 401.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from cluck.models import Farm, Flock
from tests.mcp_tools.servers import free_port
from tests.tenancy.oauth.browser import EMAIL, PASSWORD, chromium, sign_in_and_consent

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def public_client_provider(
    base: str,
    callback: str,
    storage: Any,
    seen: dict[str, Any],
    *,
    client_name: str,
    redirect_handler: Any,
    client_metadata_url: str | None = None,
) -> OAuthClientProvider:
    """The SDK's OAuth provider for a public client whose browser leg (``redirect_handler``)
    leaves the callback URL in ``seen["callback"]``."""

    async def callback_handler() -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(seen["callback"]).query)
        return AuthorizationCodeResult(
            code=query["code"][0], state=query["state"][0], iss=query.get("iss", [None])[0]
        )

    return OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=client_name,
            redirect_uris=[callback],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.fixture
def cimd_document() -> Iterator[str]:
    """A client ID metadata document on a local server; its client_id names that URL.

    Like Claude Code's, it declares ``http://localhost/callback`` with no port: the client
    listens on a random port, which RFC 8252 §7.3 says must match.
    """
    port = free_port()
    client_id = f"https://127.0.0.1:{port}/oauth/client-metadata.json"
    document = json.dumps(
        {
            "client_id": client_id,
            "client_name": "Cluck test client (CIMD)",
            "redirect_uris": ["http://localhost/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path != "/oauth/client-metadata.json":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield client_id
    finally:
        httpd.shutdown()
        httpd.server_close()


async def _story(base: str, *, day: str, client_metadata_url: str | None) -> dict[str, Any]:
    callback = f"http://localhost:{free_port()}/callback"
    storage = MemoryStorage()
    seen: dict[str, Any] = {"authorize_urls": []}

    async with chromium() as browser:

        async def redirect_handler(url: str) -> None:
            seen["authorize_urls"].append(url)
            seen["callback"] = await sign_in_and_consent(
                browser,
                url,
                email=EMAIL,
                password=PASSWORD,
                farm="Hillside",
                callback_prefix=callback,
            )

        provider = public_client_provider(
            base,
            callback,
            storage,
            seen,
            client_name="Cluck test client (DCR)",
            redirect_handler=redirect_handler,
            client_metadata_url=client_metadata_url,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = await session.list_tools()
            flocks = await session.call_tool("cluck_list_flocks", {})
            flock_id = next(
                flock["flockId"]
                for flock in flocks.structured_content["flocks"]
                if flock["acceptsProductionToday"]
            )
            recorded = await session.call_tool(
                "cluck_record_daily_entry",
                {
                    "idempotencyKey": "oauth-e2e-1",
                    "flock": flock_id,
                    "date": day,
                    "totalEggs": 500,
                    "crackedEggs": 3,
                    "dirtyEggs": 2,
                    "mortalityCount": 0,
                },
            )
            first_tokens = storage.tokens
            # The access token "expires": the provider refreshes (rotation) before the call.
            provider.context.token_expiry_time = 1.0
            again = await session.call_tool("cluck_list_flocks", {})
            second_tokens = storage.tokens
        seen.update(
            tools={tool.name for tool in tools.tools},
            flocks=flocks.structured_content,
            recorded=recorded.structured_content or recorded.content,
            again=again.structured_content,
            first=first_tokens,
            second=second_tokens,
            client_id=storage.client_info.client_id if storage.client_info else None,
        )
    return seen


def _free_day() -> str:
    """A day before the demo's recorded history on hillside, still after its placements."""
    return (Farm.objects.get(code="hillside").today() - dt.timedelta(days=20)).isoformat()


def _mcp_status(base: str, token: str) -> httpx.Response:
    return httpx.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        timeout=30,
    )


def _check_story(base: str, seen: dict[str, Any]) -> None:
    # Discovery went from the 401 to the consent page, with PKCE S256 and the resource.
    authorize = parse_qs(urlsplit(seen["authorize_urls"][0]).query)
    assert authorize["code_challenge_method"] == ["S256"]
    assert authorize["resource"] == [f"{base}/mcp"]
    assert parse_qs(urlsplit(seen["callback"]).query)["iss"] == [base]
    # The chosen farm, with the person's role there (Manager of hillside): hillside's flocks
    # only, and the production write tools a Manager has.
    hillside = set(Flock.all_tenants.filter(farm__code="hillside").values_list("name", flat=True))
    listed = {item["name"] for item in seen["flocks"]["flocks"]}
    assert listed and listed <= hillside, listed
    assert "cluck_record_daily_entry" in seen["tools"]
    recorded = seen["recorded"]
    assert isinstance(recorded, dict), recorded
    assert recorded["replayed"] is False and recorded["status"] == "Draft"
    assert seen["again"] == seen["flocks"]
    first, second = seen["first"], seen["second"]
    assert first.access_token.startswith("ck_oat_") and first.refresh_token.startswith("ck_ort_")
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token  # rotated on use
    # The first access token died with the rotation; the second works until revoked.
    assert _mcp_status(base, first.access_token).status_code == 401
    assert _mcp_status(base, second.access_token).status_code == 200
    revoked = httpx.post(
        f"{base}/oauth/revoke/",
        data={
            "token": second.refresh_token,
            "token_type_hint": "refresh_token",
            "client_id": seen["client_id"],
        },
        timeout=30,
    )
    assert revoked.status_code == 200, revoked.text
    refused = _mcp_status(base, second.access_token)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    assert "resource_metadata=" in refused.headers["WWW-Authenticate"]
    refresh = httpx.post(
        f"{base}/oauth/token/",
        data={
            "grant_type": "refresh_token",
            "refresh_token": second.refresh_token,
            "client_id": seen["client_id"],
        },
        timeout=30,
    )
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"


def test_sdk_client_signs_in_by_cimd_picks_a_farm_and_works_in_it(server, cimd_document):
    seen = asyncio.run(_story(server, day=_free_day(), client_metadata_url=cimd_document))
    assert seen["client_id"] == cimd_document
    _check_story(server, seen)


def test_sdk_client_registers_dynamically_when_it_has_no_metadata_document(server):
    seen = asyncio.run(_story(server, day=_free_day(), client_metadata_url=None))
    assert seen["client_id"] and not seen["client_id"].startswith("https://")
    _check_story(server, seen)
