"""The official MCP SDKs (Python and TypeScript) on the tracker, through runserver and uvicorn,
with personal tokens issued for members the project made itself."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.clients import node
from tests.existing.conftest import Guided
from tests.existing.harness import orm
from tests.shop.mcp_story import mcp_session
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOOLS = {"tracker_list_projects", "tracker_create_project", "tracker_archive_project"}


async def _python_story(url: str, owner: str, member: str, key: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    create = {"name": f"Rocket {key}", "description": "Up", "idempotencyKey": key}
    async with mcp_session(url, owner) as session:
        seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}
        first = await session.call_tool("tracker_create_project", create)
        again = await session.call_tool("tracker_create_project", create)
        taken = await session.call_tool(
            "tracker_create_project", {**create, "idempotencyKey": f"{key}-again"}
        )
        listed = await session.call_tool("tracker_list_projects", {})
        seen.update(
            first=first.structured_content,
            again=again.structured_content,
            taken=taken.model_dump(mode="json", by_alias=True, exclude_none=True),
            listed=listed.structured_content["projects"],
        )
    async with mcp_session(url, member) as session:
        seen["member_tools"] = {tool.name for tool in (await session.list_tools()).tools}
    return seen


@pytest.mark.parametrize("kind", ["runserver", "uvicorn"])
def test_the_python_sdk_lists_and_calls_the_tools(
    guided_tracker: Guided, tracker_servers: dict[str, str], kind: str
) -> None:
    url = tracker_servers[kind]
    owner = guided_tracker.token("ada@acme.example", "acme")
    member = guided_tracker.token("bob@acme.example", "acme")
    seen = asyncio.run(_python_story(url, owner, member, key=f"py-{kind}"))

    assert seen["tools"] == TOOLS
    # A member of acme: no archive tool (MANAGE_PROJECTS is owners and admins).
    assert seen["member_tools"] == TOOLS - {"tracker_archive_project"}
    first = seen["first"]
    assert first["replayed"] is False and first["project"]["name"] == f"Rocket py-{kind}"
    assert seen["again"] == {**first, "replayed": True}
    assert tool_error(seen["taken"])["code"] == "Project.NameTaken"
    assert first["project"] in seen["listed"]
    # The row is the project's own, made by its service: visible on its API to acme's members.
    created = orm(
        guided_tracker.tracker,
        f"p = Project.objects.get(pk={first['project']['id']})\n"
        "print(p.organization.slug, p.created_by.email)",
    )
    assert "acme ada@acme.example" in created


@pytest.mark.parametrize("kind", ["runserver", "uvicorn"])
def test_the_typescript_sdk_lists_and_calls_the_tools(
    guided_tracker: Guided, tracker_servers: dict[str, str], kind: str, tmp_path: Path
) -> None:
    node.require(node.SDK_DRIVER, node.SDK)
    create = {"name": f"Balloon ts-{kind}", "idempotencyKey": f"ts-{kind}"}
    plan = {
        "url": f"{tracker_servers[kind]}/mcp",
        "sessions": [
            {
                "name": "owner of globex",
                "bearer": guided_tracker.token("cy@globex.example", "globex"),
                "era": "2025-11-25",
                "steps": [
                    {"op": "list"},
                    {"op": "call", "name": "tracker_create_project", "arguments": create},
                    {"op": "call", "name": "tracker_create_project", "arguments": create},
                    {"op": "call", "name": "tracker_list_projects", "arguments": {}},
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
    tools, first, again, listed = (step["result"] for step in session["steps"])
    assert {tool["name"] for tool in tools["tools"]} == TOOLS
    created = first["structuredContent"]
    assert created["replayed"] is False
    assert again["structuredContent"] == {**created, "replayed": True}
    # globex's projects only: acme's never show.
    names = [project["name"] for project in listed["structuredContent"]["projects"]]
    assert f"Balloon ts-{kind}" in names
    assert not any(name.startswith("Rocket") for name in names)
