"""``subscriptions/listen`` (2026-07-28) against the farm on uvicorn, streams read over HTTP.

The server runs with ``MCP_TOOLS_SUBSCRIPTIONS=1``; changes are published from this test
process (another "replica": they reach the server only through the shared change table).
"""

from __future__ import annotations

import datetime as dt
import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from cluck.services.daily_entries import daily_entry_record
from mcp_tools.subscriptions.bus import notify_resource_updated
from tests.factories import (
    FarmFactory,
    FlockFactory,
    MembershipFactory,
    bearer_for,
    person_caller,
    provisioned_farm,
)
from tests.mcp_tools.conftest import MODERN, modern_meta
from tests.mcp_tools.servers import ServerURL, serve
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ACK = "notifications/subscriptions/acknowledged"
UPDATED = "notifications/resources/updated"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# Long enough for a poller round on a loaded machine; a quiet stream waits it out in full.
HEAR_SECONDS = 10.0
QUIET_SECONDS = 3.0


@pytest.fixture(scope="module")
def server(django_db_setup: Any) -> Iterator[ServerURL]:
    env = {"MCP_TOOLS_SUBSCRIPTIONS": "1"}
    with serve("uvicorn", env=env) as url:
        yield url


@pytest.fixture(autouse=True)
def _fast_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _headers(bearer: str, method: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }


def _body(request_id: Any, notifications: dict[str, Any]) -> str:
    params = {"notifications": notifications, "_meta": modern_meta()}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen"}
    return json.dumps({**message, "params": params})


class Stream:
    """One open listen stream; its SSE messages arrive on ``messages`` from a reader thread."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for line in self.response.iter_lines():
                if line.startswith("data: "):
                    self.messages.put(json.loads(line[len("data: ") :]))
        except httpx.HTTPError:
            pass

    def next(self, timeout: float = HEAR_SECONDS) -> dict[str, Any]:
        return self.messages.get(timeout=timeout)

    def closed(self, timeout: float) -> None:
        """The server ended the response within ``timeout`` seconds."""
        self._reader.join(timeout)
        assert not self._reader.is_alive(), "the stream is still open"

    def silent_for(self, seconds: float) -> bool:
        try:
            self.messages.get(timeout=seconds)
        except queue.Empty:
            return True
        return False


@contextmanager
def listening(
    server: str, bearer: str, notifications: dict[str, Any], request_id: Any = 7
) -> Iterator[Stream]:
    with (
        httpx.Client(timeout=httpx.Timeout(30, read=None)) as client,
        client.stream(
            "POST",
            f"{server}/mcp",
            content=_body(request_id, notifications),
            headers=_headers(bearer, "subscriptions/listen"),
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Stream(response)


def test_discovery_declares_change_notifications_in_the_2026_era(server):
    member: Any = MembershipFactory(tenant=FarmFactory())
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": modern_meta()},
        }
    )
    reply = httpx.post(
        f"{server}/mcp", content=body, headers=_headers(bearer_for(member), "server/discover")
    ).json()
    capabilities = reply["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    # The 2025-11-25 handshake declares none: there is no listen stream in that era.
    init = httpx.post(
        f"{server}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        headers={
            "Authorization": f"Bearer {bearer_for(member)}",
            "Accept": "application/json, text/event-stream",
        },
    ).json()
    assert init["result"]["capabilities"]["resources"]["subscribe"] is False


def test_the_acknowledgement_honours_what_the_caller_may_read(server):
    farm = FarmFactory()
    flock: Any = FlockFactory(farm=farm)
    member: Any = MembershipFactory(tenant=farm)
    uris = ["farm://grades", f"farm://flocks/{flock.pk}"]
    asked = {"toolsListChanged": True, "resourceSubscriptions": uris}
    with listening(server, bearer_for(member), asked, request_id="listen-1") as stream:
        ack = stream.next()
    assert ack["method"] == ACK
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": uris,
    }
    assert ack["params"]["_meta"][SUBSCRIPTION_ID] == "listen-1"


@pytest.mark.parametrize("uri", ["farm://nowhere", "farm://flocks/{missing}"])
def test_a_uri_the_caller_cannot_read_refuses_the_listen_as_a_read(server, uri):
    """An unknown URI and a flock that does not exist: the listen is refused with the very
    error ``resources/read`` of that URI gives, and no stream opens."""
    farm = FarmFactory()
    member: Any = MembershipFactory(tenant=farm)
    uri = uri.format(missing=FlockFactory.create(farm=farm).pk + 1000)
    asked = {"toolsListChanged": True, "resourceSubscriptions": ["farm://grades", uri]}
    refused = refused_listen(server, bearer_for(member), asked)
    assert refused["error"] == read_error(server, bearer_for(member), uri)
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"] == {"uri": uri}


def test_a_new_daily_entry_notifies_a_listening_client(server):
    farm = provisioned_farm()
    flock: Any = FlockFactory(farm=farm)
    member: Any = MembershipFactory(tenant=farm, roles=["Admin"])
    day = farm.today() - dt.timedelta(days=1)
    uris = [f"farm://flocks/{flock.pk}", f"farm://days/{day.isoformat()}"]
    with listening(server, bearer_for(member), {"resourceSubscriptions": uris}) as stream:
        assert stream.next()["method"] == ACK
        owner_records(farm, flock, day)
        heard = [stream.next(), stream.next()]
    assert {message["method"] for message in heard} == {UPDATED}
    assert sorted(message["params"]["uri"] for message in heard) == sorted(uris)
    assert all(message["params"]["_meta"][SUBSCRIPTION_ID] == 7 for message in heard)


@mutation(
    "mcp_tools/methods/subscriptions.py",
    find="        if len(wanted) > limit:",
    replace="        if False:",
)
def test_the_resource_subscriptions_of_a_listen_are_bounded(server):
    """Each URI costs a read when the stream opens: 65 distinct URIs (one past
    ``MCP_TOOLS_LISTEN_MAX_RESOURCE_SUBSCRIPTIONS``) are refused as invalid params before any
    stream opens (a list holding a number never gets here: the envelope's schema refuses it).
    Mutation: drop the bound → the listen opens a stream → red."""
    farm = FarmFactory()
    member: Any = MembershipFactory(tenant=farm)
    days = [f"farm://days/2026-01-{n:02d}" for n in range(1, 32)]
    days += [f"farm://days/2026-03-{n:02d}" for n in range(1, 32)]
    uris = ["farm://grades", *days, "farm://days/2026-05-01", "farm://days/2026-05-02"]
    refused = refused_listen(server, bearer_for(member), {"resourceSubscriptions": uris})
    assert refused["error"]["code"] == -32602
    assert "at most 64" in refused["error"]["message"]


@mutation(
    "mcp_tools/subscriptions/bus.py",
    find="                if tenant_key and tenant_key != listener.tenant_key:\n"
    "                    continue\n",
    replace="",
)
def test_a_listener_of_one_tenant_hears_nothing_of_another(server):
    """Both tenants listen to the same URI (a day both can read); a change in B reaches B's
    stream and never A's. Mutation: drop the tenant check of delivery → A hears B's change
    → red."""
    farm_a, farm_b = FarmFactory(), FarmFactory()
    member_a: Any = MembershipFactory(tenant=farm_a)
    member_b: Any = MembershipFactory(tenant=farm_b)
    uri = "farm://days/2026-03-01"
    asked = {"resourceSubscriptions": [uri]}
    with (
        listening(server, bearer_for(member_a), asked) as stream_a,
        listening(server, bearer_for(member_b), asked) as stream_b,
    ):
        assert stream_a.next()["method"] == ACK
        assert stream_b.next()["method"] == ACK
        notify_resource_updated(uri, tenant=farm_b)
        assert stream_b.next()["params"]["uri"] == uri
        assert stream_a.silent_for(QUIET_SECONDS)
        notify_resource_updated(uri, tenant=farm_a)
        assert stream_a.next()["params"]["uri"] == uri


def test_listeners_per_member_are_bounded(server, settings):
    member: Any = MembershipFactory(tenant=FarmFactory())
    bearer = bearer_for(member)
    asked = {"toolsListChanged": True}
    with (
        listening(server, bearer, asked) as one,
        listening(server, bearer, asked) as two,
        listening(server, bearer, asked) as three,
    ):
        for stream in (one, two, three):
            assert stream.next()["method"] == ACK
        refused = httpx.post(
            f"{server}/mcp",
            content=_body(9, asked),
            headers=_headers(bearer, "subscriptions/listen"),
            timeout=30,
        )
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == -32015
        assert refused.headers["Retry-After"]
        # Another member of the same tenant has a bound of their own.
        other: Any = MembershipFactory(tenant=member.tenant)
        with listening(server, bearer_for(other), asked) as theirs:
            assert theirs.next()["method"] == ACK


def test_listen_is_not_a_method_of_the_handshake_era(server):
    member: Any = MembershipFactory(tenant=FarmFactory())
    reply = httpx.post(
        f"{server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {}},
        headers={
            "Authorization": f"Bearer {bearer_for(member)}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=30,
    )
    assert reply.json()["error"]["code"] == -32601


def test_a_closed_stream_frees_its_place(server):
    member: Any = MembershipFactory(tenant=FarmFactory())
    bearer = bearer_for(member)
    asked = {"toolsListChanged": True}
    with listening(server, bearer, asked) as one, listening(server, bearer, asked) as two:
        assert one.next()["method"] == ACK and two.next()["method"] == ACK
        with listening(server, bearer, asked) as three:
            assert three.next()["method"] == ACK
        # The third stream closed: the server notices at the latest when its next keep-alive
        # (15 s) finds the connection gone, and its row goes on the next poller round.
        deadline = time.monotonic() + 15 + 2 * HEAR_SECONDS
        while True:
            with listening_or_refused(server, bearer, asked) as fourth:
                if fourth is not None:
                    assert fourth.next()["method"] == ACK
                    break
            assert time.monotonic() < deadline, "the closed stream still counts"
            time.sleep(0.5)


def owner_records(farm: Any, flock: Any, day: dt.date) -> None:
    """An owner of ``farm`` records a daily entry of ``flock`` for ``day`` (the service)."""
    daily_entry_record(
        caller=person_caller(farm=farm, roles=["Admin"]),
        flock_id=flock.pk,
        date=day,
        total_eggs=900,
        cracked_eggs=0,
        dirty_eggs=0,
        mortality_count=0,
    )


def refused_listen(server: str, bearer: str, notifications: dict[str, Any]) -> dict[str, Any]:
    """A listen that must be refused before any stream opens: its JSON-RPC error body."""
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST",
            f"{server}/mcp",
            content=_body(5, notifications),
            headers=_headers(bearer, "subscriptions/listen"),
        ) as response,
    ):
        # Judged by the headers: an opened stream would never end.
        assert not response.headers["content-type"].startswith("text/event-stream"), (
            "the listen opened a stream"
        )
        body: dict[str, Any] = json.loads(response.read())
    assert "error" in body, body
    return body


def read_error(server: str, bearer: str, uri: str) -> dict[str, Any]:
    """The error ``resources/read`` of ``uri`` answers this caller."""
    params = {"uri": uri, "_meta": modern_meta()}
    message = {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": params}
    headers = _headers(bearer, "resources/read") | {"Mcp-Name": uri}
    response = httpx.post(f"{server}/mcp", content=json.dumps(message), headers=headers, timeout=30)
    error: dict[str, Any] = response.json()["error"]
    return error


@contextmanager
def listening_or_refused(
    server: str, bearer: str, notifications: dict[str, Any]
) -> Iterator[Stream | None]:
    with (
        httpx.Client(timeout=httpx.Timeout(30, read=None)) as client,
        client.stream(
            "POST",
            f"{server}/mcp",
            content=_body(11, notifications),
            headers=_headers(bearer, "subscriptions/listen"),
        ) as response,
    ):
        if response.status_code == 429:
            yield None
        else:
            assert response.status_code == 200, response.read()
            yield Stream(response)
