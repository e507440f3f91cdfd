"""An MCP client signs in by OAuth (tenancy.oauth) on the tracker: the person signs in on the
project's own login page (allauth's, ``LOGIN_URL``), consents, and the client's token calls the
tools; a change to the person's ``orgs.Membership`` row applies to that token's next call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.existing.conftest import Guided
from tests.existing.harness import (
    PASSWORD,
    listed_tools,
    orm,
    refusal_code,
    rpc,
    seed,
)
from tests.project_harness import free_port
from tests.tenancy.oauth.browser import chromium, require_chromium, sign_in_and_consent
from tests.tenancy.oauth.test_e2e_sdk import MemoryStorage, public_client_provider

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FAY = "fay@acme.example"  # owner of acme, signs in only here


async def _sign_in(base: str) -> dict[str, Any]:
    callback = f"http://localhost:{free_port()}/callback"
    storage = MemoryStorage()
    seen: dict[str, Any] = {"sign_in_pages": []}
    async with chromium() as browser:

        async def redirect_handler(url: str) -> None:
            seen["callback"] = await sign_in_and_consent(
                browser,
                url,
                email=FAY,
                password=PASSWORD,
                farm="Acme",
                callback_prefix=callback,
                sign_in_pages=seen["sign_in_pages"],
            )

        provider = public_client_provider(
            base,
            callback,
            storage,
            seen,
            client_name="Tracker test client",
            redirect_handler=redirect_handler,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}
            listed = await session.call_tool("tracker_list_projects", {})
            seen["listed"] = listed.structured_content
    assert storage.tokens is not None
    seen["access_token"] = storage.tokens.access_token
    return seen


@pytest.fixture(scope="module")
def signed_in(guided_tracker: Guided, tracker_servers: dict[str, str]) -> Iterator[dict[str, Any]]:
    require_chromium()
    seed(guided_tracker.tracker, [("acme", FAY, "owner")])
    yield asyncio.run(_sign_in(tracker_servers["uvicorn"]))


def test_the_person_signs_in_on_the_projects_own_login_page(
    signed_in: dict[str, Any], tracker_servers: dict[str, str]
) -> None:
    (page,) = signed_in["sign_in_pages"]
    parts = urlsplit(page)
    assert parts.path == "/accounts/login/", page
    (next_url,) = parse_qs(parts.query)["next"]
    assert next_url.startswith("/oauth/authorize/?"), next_url


def test_the_oauth_token_calls_the_tools_until_the_membership_changes(
    guided_tracker: Guided, signed_in: dict[str, Any], tracker_servers: dict[str, str]
) -> None:
    url, token = tracker_servers["uvicorn"], signed_in["access_token"]
    assert token.startswith("ck_oat_")
    assert "tracker_archive_project" in signed_in["tools"]
    assert isinstance(signed_in["listed"]["projects"], list)
    assert "tracker_archive_project" in listed_tools(url, token)

    orm(
        guided_tracker.tracker,
        f"Membership.objects.filter(user__email={FAY!r}).update(role='member')",
    )
    assert refusal_code(rpc(url, token, "tools/list")) == "Auth.CredentialsSuperseded"
