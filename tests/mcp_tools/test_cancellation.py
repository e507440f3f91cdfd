"""Cancellation over a real server: a closed response stream cancels its call.

The 2026-07-28 spec says a closed response stream MUST be treated as cancellation (and the
server SHOULD stop the work); the handshake era also has ``notifications/cancelled``. Driven
against uvicorn because only a real connection closes (Django's test clients cannot hang up);
what a tool saw is a ``SideEffect`` row, written by the server process.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, modern_meta
from tests.mcp_tools.servers import serve
from tests.mutations import Edit, mutation
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

LIMIT = 8  # MCP_TOOLS_MAX_CONCURRENT_CALLS, the default the server runs with
OVERLOADED = -32010


@pytest.fixture(scope="module")
def server(django_db_setup: Any) -> Iterator[str]:
    # The retry loops below must not meet the per-member rate before the bound they test.
    with serve("uvicorn", env={"MCP_TOOLS_RATE": "100000/m"}) as url:
        yield f"{url}/mcp"


@pytest.fixture
def farm(transactional_db: Any, settings: Any) -> Any:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return FarmFactory()


def _member(farm: Any) -> str:
    return bearer_for(MembershipFactory(tenant=farm, roles=["Admin"]))  # type: ignore[arg-type]


def _request(
    bearer: str,
    name: str,
    arguments: dict[str, Any],
    *,
    rid: Any = 1,
    modern: bool = False,
    progress: bool = True,
) -> tuple[bytes, dict[str, str]]:
    meta: dict[str, Any] = {"progressToken": f"p{rid}"} if progress else {}
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if modern:
        meta.update(modern_meta())
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"})
        headers["Mcp-Name"] = name
    else:
        headers["MCP-Protocol-Version"] = HANDSHAKE
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(body).encode(), headers


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))


async def _cut_after_first_event(url: str, request: tuple[bytes, dict[str, str]]) -> None:
    """Open a streamed call, read its first notification, then hang up."""
    body, headers = request
    async with httpx.AsyncClient(timeout=30) as client:
        async with client.stream("POST", url, content=body, headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    assert json.loads(line.removeprefix("data: "))["method"].startswith(
                        "notifications/"
                    )
                    return


async def _served_after(url: str, request: tuple[bytes, dict[str, str]], deadline: float) -> float:
    """Seconds until the call is served, retrying while it is refused as overloaded."""
    body, headers = request
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=30) as client:
        while True:
            answer = (await client.post(url, content=body, headers=headers)).json()
            if answer.get("error", {}).get("code") != OVERLOADED:
                assert answer["result"]["isError"] is False, answer
                return time.monotonic() - started
            assert time.monotonic() < deadline, "still overloaded"
            await asyncio.sleep(0.05)


def _post(url: str, request: tuple[bytes, dict[str, str]]) -> dict[str, Any]:
    body, headers = request
    return httpx.post(url, content=body, headers=headers, timeout=60).json()


def _wait_for(condition: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@mutation(
    "mcp_tools/execution/bounds.py",
    find="            self.on_cancel()\n        self.hold.cancelled(limit)\n",
    replace="            self.on_cancel()\n",
)
@mutation(
    "mcp_tools/methods/tools.py",
    find="    return bounds.run_bounded(job, on_cancel=exchange.cancel)",
    replace="    return bounds.run_bounded(job)",
)
def test_abandoned_streams_free_their_slots_at_once_and_their_tools_stop(server, farm):
    """Every slot busy with a streamed call whose client hangs up: the next calls are served
    at once, while the abandoned tools are still asleep before their next checkpoint, and
    each of them then sees its cancellation and stops.

    Mutations: keep the slot until the thread returns (no draining) → red (served only after
    the 3 s sleep); never tell the tool (no ``on_cancel``) → red (no tool sees it).
    """
    bearer = _member(farm)
    slow = {"steps": 3, "stepSeconds": 3}

    async def scenario() -> list[float]:
        await asyncio.gather(
            *(
                _cut_after_first_event(
                    server,
                    _request(
                        bearer, "mcptest_slow_steps", {**slow, "label": f"gone-{i}"}, modern=True
                    ),
                )
                for i in range(LIMIT)
            )
        )
        deadline = time.monotonic() + 10
        next_calls = (
            _served_after(
                server, _request(bearer, "mcptest_whoami", {}, rid=100 + i, modern=True), deadline
            )
            for i in range(LIMIT)
        )
        return await asyncio.gather(*next_calls)

    waited = asyncio.run(scenario())
    # Well before the abandoned tools wake up (3 s): their slots were freed on the hang-up.
    assert max(waited) < 1.5, waited
    gone = SideEffect.objects.filter(label__startswith="cancelled:gone-")
    _wait_for(lambda: gone.count() == LIMIT)


@mutation(
    "mcp_tools/call/exchange.py",
    find="    ) -> None:\n        self.check_cancelled()\n        if self.task is not None:",
    replace="    ) -> None:\n        if self.task is not None:",
)
def test_a_write_cut_before_its_commit_rolls_back_and_a_retry_executes(server, farm):
    """The tool sees the cut at its next progress report: its row and its claim go, and the
    retry with the same key runs the write (``replayed: false``), once.

    Mutation: ``report_progress`` is no checkpoint → red (the cut write commits; the retry
    replays it).
    """
    bearer = _member(farm)
    arguments = {
        "label": "cut-before-commit",
        "steps": 10,
        "stepSeconds": 0.1,
        "idempotencyKey": uuid.uuid4().hex,
    }
    asyncio.run(_cut_after_first_event(server, _request(bearer, "mcptest_slow_note", arguments)))
    retried = _post(server, _request(bearer, "mcptest_slow_note", arguments, progress=False))
    assert retried["result"]["structuredContent"]["replayed"] is False
    assert SideEffect.objects.filter(label="cut-before-commit").count() == 1


@mutation(
    "mcp_tools/execution/writes.py",
    find="            return port.Failure(failure)\n        if unit is not None:",
    replace="            return port.Failure(failure)\n        ctx.check_cancelled()\n"
    "        if unit is not None:",
)
def test_a_write_past_its_last_checkpoint_commits_and_stays_replayable(server, farm):
    """Cut while the tool works on after its last checkpoint: the framework adds no
    checkpoint of its own, so the write commits and is published; the retry replays it.

    Mutation: check for cancellation between the tool's return and the commit → red.
    """
    bearer = _member(farm)
    arguments = {
        "label": "cut-after-checkpoints",
        "steps": 1,
        "stepSeconds": 0,
        "tailSeconds": 1,
        "idempotencyKey": uuid.uuid4().hex,
    }
    asyncio.run(_cut_after_first_event(server, _request(bearer, "mcptest_slow_note", arguments)))
    # The retry waits for the live claim, then replays what it published.
    retried = _post(server, _request(bearer, "mcptest_slow_note", arguments, progress=False))
    assert retried["result"]["structuredContent"]["replayed"] is True
    assert SideEffect.objects.filter(label="cut-after-checkpoints").count() == 1


def _notify_cancelled(url: str, bearer: str, rid: Any) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    headers = {"Authorization": f"Bearer {bearer}", "MCP-Protocol-Version": HANDSHAKE}
    assert httpx.post(url, json=body, headers=headers).status_code == 202


def _streamed_call_cancelled_by(url: str, caller: str, canceller: str, label: str) -> Any:
    """A streamed call of ``caller`` (id 41); ``canceller`` cancels id 41 once it streams."""
    body, headers = _request(
        caller, "mcptest_slow_steps", {"label": label, "steps": 10, "stepSeconds": 0.1}, rid=41
    )
    with httpx.stream("POST", url, content=body, headers=headers, timeout=30) as response:
        events = _events(response.iter_lines())
        assert next(events)["method"] == "notifications/progress"
        _notify_cancelled(url, canceller, 41)
        return [event for event in events if "id" in event][-1]


@mutation(
    "mcp_tools/call/cancellation.py",
    find="return (str(tenant_id), str(user_id), _jsonrpc.dumps(request_id).decode())",
    replace='return (str(tenant_id), "", _jsonrpc.dumps(request_id).decode())',
)
@mutation(
    Edit(
        "mcp_tools/eras/handshake.py",
        find="                cancellation.cancel_notified(",
        replace="                (",
    ),
)
def test_handshake_era_notifications_cancelled_cancels_the_members_own_call(server, farm):
    """``notifications/cancelled`` (a POST of its own) stops the call with that id of the same
    member on this process; the call answers -32800 and the tool saw it. Another member of
    the same tenant naming the same id cancels nothing.

    Mutations: the in-flight key ignores the acting user → red; the handshake era drops the
    notification → red.
    """
    owner, colleague = _member(farm), _member(farm)
    untouched = _streamed_call_cancelled_by(server, owner, colleague, "not-theirs")
    assert untouched["result"]["content"][0]["text"] == "done not-theirs"
    cancelled = _streamed_call_cancelled_by(server, owner, owner, "mine")
    assert cancelled["id"] == 41 and cancelled["error"]["code"] == -32800
    # The answer does not wait for the tool: it sees the cancellation at its next report.
    _wait_for(lambda: SideEffect.objects.filter(label="cancelled:mine").exists())
    assert not SideEffect.objects.filter(label="cancelled:not-theirs").exists()
