"""Server-to-client requests in the 2025-11-25 era, without sessions (``mcp_tools.asking.mailbox``).

A ``tools/call`` answered as SSE carries the tool's ``elicitation/create`` with a server-chosen
id; the client's answer is a separate POST that may land on another replica. Two real uvicorn
replicas on one test database: the call is made on one, answered on the other. The answer is
bound to the member and to the call that asked, and is taken once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from queue import Queue
from typing import Any

import httpx
import pytest

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import ServerURL, serve
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

HANDSHAKE = "2025-11-25"
APP = "tests.testapps.mcp_fixtures.asgi:application"
CONTENT = {"username": "ann", "email": "ann@example.com"}


@pytest.fixture
def members(transactional_db: Any, settings: Any) -> dict[str, str]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    farm = FarmFactory()
    return {
        name: bearer_for(MembershipFactory(tenant=farm, roles=["Admin"]))  # type: ignore[arg-type]
        for name in ("ann", "bob")
    }


@pytest.fixture
def replicas(members: dict[str, str]) -> Iterator[tuple[ServerURL, ServerURL]]:
    env = {"MCP_FIXTURES_BEARER": members["ann"], "MCP_TOOLS_CALL_TIMEOUT_SECONDS": "20"}
    with serve("uvicorn", app=APP, env=env) as one, serve("uvicorn", app=APP, env=env) as two:
        yield one, two


@pytest.fixture
def server(members: dict[str, str]) -> Iterator[ServerURL]:
    env = {"MCP_FIXTURES_BEARER": members["ann"]}
    with serve("uvicorn", app=APP, env=env) as url:
        yield url


def _headers(bearer: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": HANDSHAKE,
    }


def _post(url: str, bearer: str, message: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"{url}/mcp", json={"jsonrpc": "2.0", **message}, headers=_headers(bearer), timeout=30
    )


def _initialize(url: str, bearer: str, capabilities: dict[str, Any]) -> None:
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": capabilities,
        "clientInfo": {"name": "cluck-tests", "version": "0.1.0"},
    }
    assert _post(url, bearer, {"id": 0, "method": "initialize", "params": params}).is_success


class Call:
    """A ``tools/call`` read as SSE on a thread: its events arrive on ``events``."""

    def __init__(self, url: str, bearer: str, call_id: int, arguments: dict[str, Any]) -> None:
        self.events: Queue[dict[str, Any] | None] = Queue()
        body = {
            "jsonrpc": "2.0",
            "id": call_id,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": arguments},
        }
        self._thread = threading.Thread(target=self._read, args=(url, bearer, body), daemon=True)
        self._thread.start()

    def _read(self, url: str, bearer: str, body: dict[str, Any]) -> None:
        try:
            with httpx.stream(
                "POST", f"{url}/mcp", json=body, headers=_headers(bearer), timeout=30
            ) as response:
                if not response.headers["content-type"].startswith("text/event-stream"):
                    self.events.put(json.loads(response.read()))
                    return
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        self.events.put(json.loads(line[len("data: ") :]))
        finally:
            self.events.put(None)

    def next(self) -> dict[str, Any]:
        event = self.events.get(timeout=30)
        assert event is not None, "the stream ended early"
        return event

    def result_text(self) -> str:
        final = self.next()
        assert "result" in final, final
        text: str = final["result"]["content"][0]["text"]
        return text


def _answer(request: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    return {"id": request["id"], "result": {"action": "accept", "content": content}}


@mutation(
    "mcp_tools/asking/mailbox.py",
    find="        request_id=request_id, tenant_key=str(tenant), owner_key=str(owner)\n",
    replace="        request_id=request_id, tenant_key=str(tenant)\n",
)
def test_an_answer_posted_to_another_replica_reaches_only_its_members_call_once(
    replicas: tuple[ServerURL, ServerURL], members: dict[str, str]
) -> None:
    """Mutation: file an answer without checking the member it was sent to (no ``owner_key``
    in ``mailbox.deliver``'s filter) → Bob's POST for Ann's question is accepted (202) and
    Ann's call returns Bob's answer → red."""
    one, two = replicas
    ann, bob = members["ann"], members["bob"]
    _initialize(two, ann, {"elicitation": {}})
    call = Call(one, ann, 41, {"message": "Who are you?"})
    asked = call.next()
    assert asked["method"] == "elicitation/create" and isinstance(asked["id"], str)
    assert asked["params"]["message"] == "Who are you?"
    assert set(asked["params"]["requestedSchema"]["properties"]) == {"username", "email"}

    foreign = _post(two, bob, _answer(asked, {"username": "bob", "email": "bob@example.com"}))
    assert foreign.status_code == 404, foreign.text
    assert foreign.json()["error"]["data"] == {"reason": "unknown"}

    delivered = _post(two, ann, _answer(asked, CONTENT))  # the other replica
    assert (delivered.status_code, delivered.content) == (202, b"")
    text = call.result_text()
    assert "action=accept" in text and "ann@example.com" in text and "bob" not in text

    replayed = _post(one, ann, _answer(asked, CONTENT))
    assert replayed.status_code == 409
    assert replayed.json()["error"]["data"] == {"reason": "answered"}


@mutation(
    "mcp_tools/asking/mailbox.py",
    find="        mine = ClientRequest.objects.filter(\n            request_id=request_id,\n",
    replace="        mine = ClientRequest.objects.filter(\n",
)
def test_each_call_receives_the_answer_to_its_own_request_only(
    replicas: tuple[ServerURL, ServerURL], members: dict[str, str]
) -> None:
    """Mutation: let a waiting call read any answered row of its member, tool and call id (no
    ``request_id`` in ``StreamAsker._wait``'s filter) → the second call (two clients of one
    member, both numbering their call 51) takes the answer meant for the first → red."""
    one, two = replicas
    ann = members["ann"]
    _initialize(one, ann, {"elicitation": {}})
    first = Call(one, ann, 51, {"message": "first"})
    first_asked = first.next()
    second = Call(two, ann, 51, {"message": "second"})
    second_asked = second.next()
    assert first_asked["id"] != second_asked["id"]

    assert _post(two, ann, _answer(first_asked, CONTENT)).status_code == 202
    assert "ann@example.com" in first.result_text()
    other = {"username": "ann2", "email": "second@example.com"}
    assert _post(one, ann, _answer(second_asked, other)).status_code == 202
    assert "second@example.com" in second.result_text()


def test_a_client_that_did_not_declare_or_cannot_answer_gets_client_capability_required(
    server: ServerURL, members: dict[str, str]
) -> None:
    ann = members["ann"]
    _initialize(server, ann, {})
    reply = Call(server, ann, 61, {"message": "?"}).next()  # one JSON answer: nothing was sent
    error = json.loads(reply["result"]["content"][0]["text"])["error"]
    assert reply["result"]["isError"] is True
    assert error["code"] == "Client.CapabilityRequired"
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}

    _initialize(server, ann, {"elicitation": {}})
    call = Call(server, ann, 71, {"message": "?"})
    asked = call.next()
    refusal = {"id": asked["id"], "error": {"code": -32601, "message": "Method not found"}}
    assert _post(server, ann, refusal).status_code == 202
    final = call.next()
    error = json.loads(final["result"]["content"][0]["text"])["error"]
    assert error["code"] == "Client.CapabilityRequired"
