"""``subscriptions/listen`` with the python ``mcp`` SDK's own client (``Client.listen``) over
Streamable HTTP at 2026-07-28, against the farm on uvicorn (``MCP_TOOLS_SUBSCRIPTIONS=1``).

The change comes from another SDK client's ``cluck_record_daily_entry`` call: the server
process records the entry and announces it (``cluck.resource_changes``) through the shared
change table to the listening streams. The SDK validates every frame of the stream (the
acknowledgement, the notifications tagged with the subscription id): what it hands back as a
typed ``ResourceUpdated`` event is what it accepted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, ServerEvent, Subscription

from tests.factories import FlockFactory, MembershipFactory, bearer_for, provisioned_farm
from tests.mcp_tools.servers import ServerURL, serve
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MODERN = "2026-07-28"
# Long enough for a poller round (0.5 s) on a loaded machine; a quiet stream waits it out.
HEAR_SECONDS = 15.0
QUIET_SECONDS = 3.0


@pytest.fixture(scope="module")
def server(django_db_setup: Any) -> Iterator[ServerURL]:
    with serve("uvicorn", env={"MCP_TOOLS_SUBSCRIPTIONS": "1"}) as url:
        yield url


@pytest.fixture(autouse=True)
def _fast_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


class Farm:
    """A provisioned farm with one flock and two admins: one listens, the other records."""

    def __init__(self) -> None:
        self.farm = provisioned_farm()
        self.flock = FlockFactory.create(farm=self.farm)
        self.listener = bearer_for(MembershipFactory.create(tenant=self.farm, roles=["Admin"]))
        self.recorder = bearer_for(MembershipFactory.create(tenant=self.farm, roles=["Admin"]))
        self.uri = f"farm://flocks/{self.flock.pk}"
        self.day = (self.farm.today() - dt.timedelta(days=1)).isoformat()


def _http(bearer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


def _client(url: str, http: httpx2.AsyncClient) -> Client:
    return Client(
        streamable_http_client(f"{url}/mcp", http_client=http),
        mode=MODERN,
        read_timeout_seconds=30,
    )


async def _record(url: str, farm: Farm, key: str) -> None:
    """Another SDK client of ``farm`` records a daily entry of its flock (a tool call)."""
    async with _http(farm.recorder) as http, _client(url, http) as client:
        result = await client.call_tool(
            "cluck_record_daily_entry",
            {
                "idempotencyKey": key,
                "flock": farm.flock.pk,
                "date": farm.day,
                "totalEggs": 900,
                "crackedEggs": 0,
                "dirtyEggs": 0,
                "mortalityCount": 0,
            },
        )
        assert not result.is_error, result
        assert result.structured_content and result.structured_content["dailyEntryId"]


async def _next(subscription: Subscription, seconds: float = HEAR_SECONDS) -> ServerEvent:
    with anyio.fail_after(seconds):
        return await anext(subscription)


async def _silent(subscription: Subscription, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await anext(subscription)
        return False
    return True


def test_sdk_listener_hears_a_daily_entry_recorded_by_another_client(server):
    farm = Farm()

    async def story() -> tuple[list[str] | None, ServerEvent]:
        async with (
            _http(farm.listener) as http,
            _client(server, http) as client,
            client.listen(resource_subscriptions=[farm.uri]) as subscription,
        ):
            assert client.protocol_version == MODERN
            honoured = subscription.honored.resource_subscriptions
            await _record(server, farm, "sdk-listen-1")
            heard = await _next(subscription)
            return honoured, heard

    honoured, heard = asyncio.run(story())
    assert honoured == [farm.uri]
    assert heard == ResourceUpdated(uri=farm.uri)


@mutation(
    "mcp_tools/subscriptions/bus.py",
    find="                if tenant_key and tenant_key != listener.tenant_key:\n"
    "                    continue\n",
    replace="",
)
def test_sdk_listener_of_one_farm_hears_nothing_of_the_other(server):
    """Farm A's listener asks for the day B records on too (a URI both farms read). B
    records an entry: B's SDK listener hears it, A's hears nothing within a bounded wait; then
    A records and A's first event is its own flock's. Mutation: drop the tenant check of
    delivery → A hears B's change of the day → red."""
    farm_a, farm_b = Farm(), Farm()
    assert farm_a.day == farm_b.day
    day = f"farm://days/{farm_a.day}"

    async def story() -> tuple[Any, ServerEvent, bool, ServerEvent]:
        async with (
            _http(farm_a.listener) as http_a,
            _http(farm_b.listener) as http_b,
            _client(server, http_a) as client_a,
            _client(server, http_b) as client_b,
            client_a.listen(resource_subscriptions=[day, farm_a.uri]) as heard_by_a,
            client_b.listen(resource_subscriptions=[farm_b.uri]) as heard_by_b,
        ):
            honoured_a = heard_by_a.honored.resource_subscriptions
            await _record(server, farm_b, "sdk-listen-b")
            b_heard = await _next(heard_by_b)
            # One poller round hands a change to every stream: by now A would have it too.
            a_silent = await _silent(heard_by_a, QUIET_SECONDS)
            await _record(server, farm_a, "sdk-listen-a")
            a_heard = await _next(heard_by_a)
            return honoured_a, b_heard, a_silent, a_heard

    honoured_a, b_heard, a_silent, a_heard = asyncio.run(story())
    assert honoured_a == [day, farm_a.uri]
    assert b_heard == ResourceUpdated(uri=farm_b.uri)
    assert a_silent, "farm A's listener heard farm B's change"
    assert a_heard == ResourceUpdated(uri=farm_a.uri)
