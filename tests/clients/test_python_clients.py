"""Issue 11's client matrix, Python side: real third-party MCP clients against a real server.

Each client runs the same scenario against uvicorn serving the demo farms: ``tools/list`` as
owner and as readonly, a read (``cluck_list_flocks``), a write (``cluck_record_daily_entry``)
and its replay (``replayed: true``), and the errors a caller must be able to act on —
``Flock.Ambiguous`` with the candidate ids in ``data.candidates``, ``Idempotency.KeyReused``,
``Tool.InvalidArguments`` — plus a hidden tool (readonly calling a write tool), which is the
JSON-RPC error -32602. What is asserted is what the client hands *its* caller: our error code
must survive every client's own result handling, which is exactly what issue 11 lost in the
TypeScript clients.

Clients and where they run (pins: pyproject.toml, installed by ./scripts/test):

- fastmcp ``Client`` (needs ``mcp>=2.3``): ``clients`` extra, project venv, speaks 2026-07-28;
- openai-agents ``MCPServerStreamableHttp`` (``mcp<3``): ``clients`` extra, project venv,
  speaks 2026-07-28 (its ``mcp.Client`` in auto mode);
- langchain-mcp-adapters ``MultiServerMCPClient`` (``mcp<2``): ``clients-mcp1`` dependency
  group, var/clients-mcp1, speaks 2025-11-25 (the handshake era).

``langchain-mcp-adapters`` 0.3.2 (the newest) requires ``mcp<2``, and the project requires
``mcp>=2.3``: one venv cannot hold both, so ./scripts/test installs the ``clients-mcp1``
dependency group into var/clients-mcp1 and ``mcp1_driver.py`` runs there in a subprocess,
printing its observations as JSON. The two mcp-2 clients run in-process.

How each client surfaces the two kinds of error (``EXPECTED_SURFACES`` pins it, so a client
upgrade that changes it is noticed):

- fastmcp ``call_tool`` raises ``fastmcp.exceptions.ToolError`` whose message is the result's
  text (our ``{"error": ...}`` JSON); a JSON-RPC error raises ``mcp.MCPError`` (``.code``).
- Agents SDK ``call_tool`` returns the raw ``CallToolResult`` (``is_error``, our text block); a
  JSON-RPC error raises ``mcp.MCPError``. Through an agent (``MCPUtil`` function tools) the
  model reads the text block, so it sees our code; a JSON-RPC error reaches the model only as
  the SDK's generic "An error occurred while running the tool" (its default
  ``failure_error_function``).
- langchain ``ainvoke`` with a tool call returns ``ToolMessage(status="error")`` holding the text;
  a JSON-RPC error raises ``McpError`` out of ``ainvoke``. Invoked with plain arguments (no tool
  call), an error comes back as the bare content blocks, indistinguishable from a success.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from django.core.management import call_command

from cluck.models import DailyEntry, Farm, Flock
from tests.cluck.mcp_helpers import demo_bearer
from tests.mcp_tools.servers import ROOT, serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MCP1_PYTHON = ROOT / "var" / "clients-mcp1" / "bin" / "python"
MCP1_DRIVER = ROOT / "tests" / "clients" / "mcp1_driver.py"
RECORD = "cluck_record_daily_entry"
LIST_FLOCKS = "cluck_list_flocks"
INVALID_PARAMS = -32602

Steps = list[tuple[str, dict[str, Any]]]
Observations = dict[str, dict[str, Any]]
Runner = Callable[[str, dict[str, str], Steps], Coroutine[Any, Any, Observations]]

EXPECTED_SURFACES = {
    "fastmcp": {
        "tool_error": "raises fastmcp.exceptions.ToolError",
        "rpc_error": "raises mcp.MCPError",
    },
    "openai-agents": {
        "tool_error": "returns CallToolResult(is_error=True)",
        "rpc_error": "raises mcp.MCPError",
    },
    "langchain-mcp-adapters": {
        "tool_error": "ToolMessage(status='error')",
        "rpc_error": "raises mcp.shared.exceptions.McpError",
    },
}


@pytest.fixture(scope="module")
def server_url(django_db_setup: Any) -> Iterator[str]:
    # One server for every client: it keeps nothing between requests, so each test's fresh
    # demo data (and fresh tokens) is all it needs.
    with serve("uvicorn") as url:
        yield f"{url}/mcp"


@pytest.fixture
def farm_server(server_url: str, transactional_db: Any) -> tuple[str, dict[str, str]]:
    call_command("seed_demo", verbosity=0)
    bearers = {role: demo_bearer(f"{role}@sunrise.example") for role in ("owner", "readonly")}
    return server_url, bearers


def _error_object(text: str) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(text)["error"]
    return error


# --- the clients --------------------------------------------------------------------------


async def _fastmcp(url: str, bearers: dict[str, str], steps: Steps) -> Observations:
    pytest.importorskip("fastmcp", reason="the clients extra is not installed (./scripts/test)")
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport
    from fastmcp.exceptions import ToolError
    from mcp import MCPError

    observations: Observations = {}
    async with AsyncExitStack() as stack:
        clients: dict[str, Any] = {}
        for name, step in steps:
            role = step["as"]
            if role not in clients:
                transport = StreamableHttpTransport(url, auth=bearers[role])
                clients[role] = await stack.enter_async_context(Client(transport, timeout=30))
            client = clients[role]
            if step.get("list"):
                observations[name] = {"tools": sorted(t.name for t in await client.list_tools())}
                continue
            try:
                result = await client.call_tool(step["tool"], step["arguments"])
            except ToolError as exc:
                observations[name] = {
                    "tool_error": _error_object(str(exc)),
                    "surface": "raises fastmcp.exceptions.ToolError",
                }
            except MCPError as exc:
                observations[name] = {
                    "rpc_error": {"code": exc.code, "message": exc.message},
                    "surface": "raises mcp.MCPError",
                }
            else:
                observations[name] = {"result": result.structured_content, "surface": "returns"}
    return observations


async def _openai_agents(url: str, bearers: dict[str, str], steps: Steps) -> Observations:
    pytest.importorskip("agents", reason="the clients extra is not installed (./scripts/test)")
    from agents import Agent, FunctionTool, RunContextWrapper
    from agents.mcp import MCPServerStreamableHttp, MCPUtil
    from agents.tool_context import ToolContext
    from mcp import MCPError

    observations: Observations = {}
    async with AsyncExitStack() as stack:
        servers: dict[str, Any] = {}
        for name, step in steps:
            role = step["as"]
            if role not in servers:
                params = {"url": url, "headers": {"Authorization": f"Bearer {bearers[role]}"}}
                server = MCPServerStreamableHttp(
                    params,  # type: ignore[arg-type]
                    name=f"cluck-{role}",
                    client_session_timeout_seconds=30,
                )
                servers[role] = await stack.enter_async_context(server)
            server = servers[role]
            if step.get("list"):
                observations[name] = {"tools": sorted(t.name for t in await server.list_tools())}
                continue
            try:
                result = await server.call_tool(step["tool"], step["arguments"])
            except MCPError as exc:
                observations[name] = {
                    "rpc_error": {"code": exc.code, "message": exc.message},
                    "surface": "raises mcp.MCPError",
                }
                continue
            if result.is_error:
                (block,) = result.content
                observations[name] = {
                    "tool_error": _error_object(block.text),
                    "surface": "returns CallToolResult(is_error=True)",
                }
            else:
                observations[name] = {"result": result.structured_content, "surface": "returns"}
            if step.get("model_view"):
                # What an agent's model reads: the SDK's function tool around the same server.
                tools = await MCPUtil.get_function_tools(
                    server, False, RunContextWrapper(None), Agent(name="matrix")
                )
                tool = next(t for t in tools if t.name == step["tool"])
                assert isinstance(tool, FunctionTool), tool
                arguments = json.dumps(step["arguments"])
                context = ToolContext(
                    None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=arguments
                )
                output = await tool.on_invoke_tool(context, arguments)
                observations[name]["model_text"] = output["text"]
    return observations


async def _langchain(url: str, bearers: dict[str, str], steps: Steps) -> Observations:
    if not MCP1_PYTHON.exists():
        pytest.skip("var/clients-mcp1 is not installed (./scripts/test creates it)")
    request = json.dumps({"url": url, "bearers": bearers, "steps": steps})
    completed = await asyncio.to_thread(
        subprocess.run,
        [str(MCP1_PYTHON), str(MCP1_DRIVER)],
        input=request,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    observations: Observations = json.loads(completed.stdout)["observations"]
    return observations


CLIENTS: dict[str, Runner] = {
    "fastmcp": _fastmcp,
    "openai-agents": _openai_agents,
    "langchain-mcp-adapters": _langchain,
}


# --- the scenario -------------------------------------------------------------------------


def _steps(day: str, active_flock_id: int) -> Steps:
    entry = {
        "date": day,
        "totalEggs": 950,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 2,
        "grades": [{"grade": "Large", "quantity": 900}, {"grade": "Medium", "quantity": 35}],
    }
    write = {**entry, "idempotencyKey": "matrix-write", "flock": active_flock_id}
    return [
        ("owner_tools", {"as": "owner", "list": True}),
        ("readonly_tools", {"as": "readonly", "list": True}),
        ("read", {"as": "owner", "tool": LIST_FLOCKS, "arguments": {}}),
        (
            "ambiguous",
            {
                "as": "owner",
                "tool": RECORD,
                "arguments": {
                    **entry,
                    "idempotencyKey": "matrix-ambiguous",
                    "flock": "House 2 Brown",
                },
            },
        ),
        ("write", {"as": "owner", "tool": RECORD, "arguments": write}),
        ("replay", {"as": "owner", "tool": RECORD, "arguments": write}),
        (
            "key_reused",
            {"as": "owner", "tool": RECORD, "arguments": {**write, "mortalityCount": 3}},
        ),
        (
            "invalid",
            {"as": "owner", "tool": LIST_FLOCKS, "arguments": {"limit": 0}, "model_view": True},
        ),
        (
            "hidden",
            {
                "as": "readonly",
                "tool": RECORD,
                "arguments": {**write, "idempotencyKey": "matrix-hidden"},
            },
        ),
    ]


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_python_client_hands_results_and_our_error_codes_to_its_caller(
    farm_server: tuple[str, dict[str, str]], client: str
) -> None:
    url, bearers = farm_server
    farm = Farm.objects.get(code="sunrise")
    day = (farm.today() - dt.timedelta(days=20)).isoformat()
    brown = Flock.objects.for_tenant(farm).filter(name="House 2 Brown")
    active = brown.get(status="Active")
    seen = asyncio.run(CLIENTS[client](url, bearers, _steps(day, active.pk)))

    assert {LIST_FLOCKS, RECORD, "cluck_read_receivables"} <= set(seen["owner_tools"]["tools"])
    assert LIST_FLOCKS in seen["readonly_tools"]["tools"]
    assert RECORD not in seen["readonly_tools"]["tools"]

    names = [flock["name"] for flock in seen["read"]["result"]["flocks"]]
    assert names.count("House 2 Brown") == 2 and "House 1 White" in names

    ambiguous = seen["ambiguous"]["tool_error"]
    assert ambiguous["code"] == "Flock.Ambiguous"
    candidates = {c["flockId"] for c in ambiguous["data"]["candidates"]}
    assert candidates == set(brown.values_list("pk", flat=True))

    written, replayed = seen["write"]["result"], seen["replay"]["result"]
    assert written["replayed"] is False and written["status"] == "Draft"
    assert replayed["replayed"] is True and replayed["dailyEntryId"] == written["dailyEntryId"]
    assert DailyEntry.objects.for_tenant(farm).filter(flock=active, date=day).count() == 1

    assert seen["key_reused"]["tool_error"]["code"] == "Idempotency.KeyReused"

    invalid = seen["invalid"]["tool_error"]
    assert invalid["code"] == "Tool.InvalidArguments"
    assert [e["field"] for e in invalid["data"]["errors"]] == ["limit"]
    if "model_text" in seen["invalid"]:
        assert _error_object(seen["invalid"]["model_text"])["code"] == "Tool.InvalidArguments"

    assert seen["hidden"]["rpc_error"]["code"] == INVALID_PARAMS

    surfaces = {
        kind: {o["surface"] for o in seen.values() if kind in o}
        for kind in ("tool_error", "rpc_error")
    }
    assert surfaces == {kind: {s} for kind, s in EXPECTED_SURFACES[client].items()}
