"""Declared non-blocking tools (``async def``): awaited on the server's event loop, under the
same concurrency slots and deadline as a tool in a worker thread.

Driven against uvicorn (one process, its event loop on the main thread): only a real server
shows which thread ran the tool and only a real connection can be cut. What a tool saw is a
``SideEffect`` row written by the server process (``mcptest_async_sleep``).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import httpx
import pytest

from mcp_tools import execution
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, modern_meta
from tests.mcp_tools.servers import serve
from tests.mutations import Edit, mutation
from tests.testapps.idem.models import SideEffect

TIMED_OUT = -32011
OVERLOADED = -32010
DEADLINE = 4.0  # on_loop_settings.MCP_TOOLS_CALL_TIMEOUT_SECONDS

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ERAS = pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])


@pytest.fixture(scope="module")
def server(django_db_setup: Any) -> Any:
    env = {
        "MCP_TOOLS_RATE": "100000/m",
        # Under row-level security (the farm's default) an async read runs on a worker thread:
        # its queries need that thread's transaction under the tools' role. The loop serves
        # tools only with it off, the documented rule (docs/mcp_tools.md), so it is off here.
        "CLUCK_RLS": "0",
        "DJANGO_SETTINGS_MODULE": "tests.mcp_tools.on_loop_settings",
    }
    with serve("uvicorn", env=env) as url:
        yield f"{url}/mcp"


@pytest.fixture
def bearer(transactional_db: Any, settings: Any) -> str:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return bearer_for(MembershipFactory(tenant=FarmFactory(), roles=["Admin"]))  # type: ignore[arg-type]


def _request(
    bearer: str, arguments: dict[str, Any], *, modern: bool, progress: bool = False
) -> tuple[bytes, dict[str, str]]:
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    meta: dict[str, Any] = {"progressToken": "p1"} if progress else {}
    if modern:
        meta.update(modern_meta())
        headers.update(
            {
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "mcptest_async_sleep",
            }
        )
    else:
        headers["MCP-Protocol-Version"] = HANDSHAKE
    params: dict[str, Any] = {"name": "mcptest_async_sleep", "arguments": arguments}
    if meta:
        params["_meta"] = meta
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(body).encode(), headers


def _call(url: str, bearer: str, arguments: dict[str, Any], *, modern: bool) -> dict[str, Any]:
    body, headers = _request(bearer, arguments, modern=modern)
    answer: dict[str, Any] = httpx.post(url, content=body, headers=headers, timeout=30).json()
    return answer


def _labels() -> set[str]:
    return set(SideEffect.objects.values_list("label", flat=True))


def _wait_for(condition: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@mutation(
    "mcp_tools/methods/tools.py",
    find="        isinstance(spec, ToolSpec)\n        and spec.on_loop\n",
    replace="        False\n        and spec.on_loop\n",
)
@ERAS
def test_an_async_tool_runs_on_the_servers_event_loop(
    server: str, bearer: str, modern: bool
) -> None:
    """Mutation: ``on_loop`` always False in ``_call`` (the tool then runs in a worker thread,
    awaited on a loop of its own: ``run_read``) → red: the thread is not uvicorn's main
    thread."""
    label = uuid.uuid4().hex
    answer = _call(server, bearer, {"label": label}, modern=modern)
    assert answer["result"]["isError"] is False, answer
    assert answer["result"]["structuredContent"] == {
        "thread": "MainThread",
        "label": label,
        "steps_reported": 0,
    }
    assert f"finished:{label}" in _labels()


@mutation(
    "mcp_tools/execution/bounds.py",
    find="        async with asyncio.timeout(timeout):\n            return await place.run(limit)",
    replace="        if True:\n            return await place.run(limit)",
)
@ERAS
def test_an_async_tool_past_its_deadline_is_cancelled_and_gives_its_slot_back(
    server: str, bearer: str, modern: bool
) -> None:
    """The deadline answers TIMED_OUT and cancels the tool where it awaits; the one slot is
    free for the next call at once.

    Mutation: no ``asyncio.timeout`` in ``run_on_loop`` → red (the call runs its 10 s and
    succeeds)."""
    label = uuid.uuid4().hex
    started = time.monotonic()
    answer = _call(server, bearer, {"label": label, "seconds": 10}, modern=modern)
    assert answer["error"]["code"] == TIMED_OUT, answer
    assert time.monotonic() - started < DEADLINE + 3
    _wait_for(lambda: f"cancelled:{label}" in _labels())
    assert f"finished:{label}" not in _labels()
    after = _call(server, bearer, {"label": f"{label}-after"}, modern=modern)
    assert after["result"]["isError"] is False, after


@mutation(
    Edit(
        "mcp_tools/execution/bounds.py",
        find="        await _take_slot(limit)\n    try:\n",
        replace="        pass\n    try:\n",
    ),
    Edit(
        "mcp_tools/execution/bounds.py",
        find="    def ended(self) -> None:\n        slots.release()\n",
        replace="    def ended(self) -> None:\n        pass\n",
    ),
)
def test_an_async_tool_holds_a_concurrency_slot_while_it_runs(server: str, bearer: str) -> None:
    """With one slot, a second call while an async tool awaits is refused OVERLOADED; once it
    has returned, calls are served again.

    Mutations: ``run_on_loop`` takes no slot → red (the second call is served); it never gives
    its slot back → red (the call after is refused)."""
    label = uuid.uuid4().hex

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with httpx.AsyncClient(timeout=30) as client:
            body, headers = _request(bearer, {"label": label, "seconds": 1}, modern=True)
            holder = asyncio.ensure_future(client.post(server, content=body, headers=headers))
            await asyncio.sleep(0.4)
            body, headers = _request(bearer, {"label": f"{label}-2"}, modern=True)
            second = (await client.post(server, content=body, headers=headers)).json()
            return (await holder).json(), second

    held, second = asyncio.run(scenario())
    assert held["result"]["isError"] is False, held
    assert second["error"]["code"] == OVERLOADED, second
    after = _call(server, bearer, {"label": f"{label}-after"}, modern=True)
    assert after["result"]["isError"] is False, after
    assert execution.slots.in_use == 0  # this process's slots: untouched by the server's


@mutation(
    "mcp_tools/serving/streaming.py",
    find="            # http.disconnect and closes this iterator). That cancels the call.\n"
    "            call.cancel()\n",
    replace="            pass\n",
)
@ERAS
def test_a_client_that_goes_away_mid_stream_cancels_an_async_tool_and_frees_its_slot(
    server: str, bearer: str, modern: bool
) -> None:
    """A cut stream cancels the tool where it awaits, well before its deadline.

    Mutation: the stream's end does not cancel the call (``streaming.stream``) → red (the
    tool sleeps on until the deadline)."""
    label = uuid.uuid4().hex
    body, headers = _request(
        bearer, {"label": label, "seconds": 10, "steps": 2}, modern=modern, progress=True
    )
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(server, content=body, headers=headers, timeout=0.5)
    started = time.monotonic()
    _wait_for(lambda: f"cancelled:{label}" in _labels(), timeout=DEADLINE)
    assert time.monotonic() - started < DEADLINE / 2
    after = _call(server, bearer, {"label": f"{label}-after"}, modern=modern)
    assert after["result"]["isError"] is False, after


@mutation(
    "mcp_tools/methods/tools.py",
    find="        streamed = _bounded(job, on_loop, exchange, outlives_view=True)\n",
    replace="        streamed = _bounded(job, on_loop, exchange)\n",
)
@ERAS
def test_an_async_tool_streams_its_progress_and_uses_the_orm_after_its_view_returned(
    server: str, bearer: str, modern: bool
) -> None:
    """Progress reported from the loop reaches the client on the call's own stream, and the
    tool's async ORM work after the stream began (its view has returned) still runs.

    Mutation: the streamed call keeps the request's thread for its thread-sensitive work →
    red (that thread has moved on: ``CurrentThreadExecutor already quit``, an internal
    error)."""
    label = uuid.uuid4().hex
    body, headers = _request(bearer, {"label": label, "steps": 3}, modern=modern, progress=True)
    events = []
    with httpx.stream("POST", server, content=body, headers=headers, timeout=30) as response:
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line.removeprefix("data: ")))
    progress = [
        e["params"]["progress"] for e in events if e.get("method") == "notifications/progress"
    ]
    assert progress == [0, 1, 2]
    result = events[-1]["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["steps_reported"] == 3
