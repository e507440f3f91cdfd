"""The farm's whole MCP surface through real clients against a real uvicorn server.

- The official Python SDK (``mcp``), 2026-07-28 (``Client``): resources, templates, the prompt,
  completions, the confirmation before submit (the SDK answers the ``InputRequiredResult`` with
  its elicitation callback and echoes the request state) and the report as a task (a small
  ``ClientExtension`` claims ``resultType: "task"`` and polls ``tasks/get``).
- The same SDK in the handshake era (``ClientSession``): progress streamed on the call's own
  response, and submit proceeding without a question (no input requests in that era).
- The TypeScript SDK from a Node script: 1.x (``@modelcontextprotocol/sdk``, 2025-11-25) for
  resources, templates, the prompt, completions, progress, submit and the report as a
  2025-11-25 core task (``callToolStream``); 2.x (``@modelcontextprotocol/client``,
  2026-07-28) for the confirmation before submit (its elicitation handler answers the
  ``InputRequiredResult``; the SDK echoes the request state), a resource and the prompt.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import anyio
import httpx2
import pytest
from django.core.management import call_command
from mcp import Client, ClientSession
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp_types import (
    CallToolResult,
    ElicitResult,
    PromptReference,
    Request,
    RequestParams,
    Result,
)
from pydantic import ConfigDict, Field

from cluck.caller import Caller
from cluck.models import DailyEntry, EggGrade, Flock
from cluck.services import daily_entries as entry_services
from tests.clients import node
from tests.cluck.mcp_helpers import demo_bearer, sunrise
from tests.mcp_tools.servers import serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SCRIPT = Path(__file__).resolve().parent / "ts_surface.mjs"


@pytest.fixture
def demo_server(transactional_db: Any) -> Iterator[tuple[str, dict[str, str]]]:
    call_command("seed_demo", verbosity=0)
    bearers = {who: demo_bearer(f"{who}@sunrise.example") for who in ("owner", "manager")}
    with serve("uvicorn") as url:
        yield f"{url}/mcp", bearers


def _http(bearer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30)


# --- the tasks extension, as a client extension of the Python SDK --------------------------------


class CreatedTask(Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class TaskIdParams(RequestParams):
    task_id: str = Field(alias="taskId")


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param: ClassVar[str | None] = "taskId"  # Mcp-Name: <taskId> (SEP-2663)


class DetailedTask(Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str = Field(alias="taskId")
    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TasksExtension(ClientExtension):
    identifier = "io.modelcontextprotocol/tasks"

    def __init__(self) -> None:
        self.polls: list[str] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        request = GetTask(params=TaskIdParams(taskId=created.task_id))
        with anyio.fail_after(30):
            while True:
                task = await ctx.session.send_request(request, DetailedTask)
                self.polls.append(task.status)
                if task.status == "completed" and task.result is not None:
                    return CallToolResult.model_validate(task.result)
                if task.status in ("failed", "cancelled"):
                    raise RuntimeError(f"task {task.status}: {task.error}")
                await anyio.sleep((created.poll_interval_ms or 200) / 1000)


# --- Python SDK, 2026-07-28 ----------------------------------------------------------------------


async def _modern_story(
    url: str, bearer: str, draft_id: int, report: dict[str, str], flock_id: int
) -> dict[str, Any]:
    asked: list[str] = []

    async def confirm(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    tasks = TasksExtension()
    async with _http(bearer) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode="2026-07-28",
            elicitation_callback=confirm,
            extensions=[tasks],
        )
        async with client:
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            grades = await client.read_resource("farm://grades")
            card = await client.read_resource(f"farm://flocks/{flock_id}")
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("cluck_summarise_day", {"flock": "House 1 White"})
            names = await client.complete(
                PromptReference(type="ref/prompt", name="cluck_summarise_day"),
                {"name": "flock", "value": "house 2"},
            )
            submitted = await client.call_tool(
                "cluck_submit_daily_entry",
                {"idempotencyKey": "e2e-modern-submit", "dailyEntryId": draft_id},
            )
            report_result = await client.call_tool("cluck_production_report", report)
    return {
        "resources": {str(r.uri) for r in resources.resources},
        "templates": {t.uri_template for t in templates.resource_templates},
        "grades": json.loads(grades.contents[0].text),  # type: ignore[union-attr]
        "card": card.contents[0].text,  # type: ignore[union-attr]
        "prompts": {p.name for p in prompts.prompts},
        "prompt_kinds": [m.content.type for m in prompt.messages],
        "names": names.completion.values,
        "asked": asked,
        "submitted": submitted.structured_content,
        "report": report_result.structured_content,
        "polls": tasks.polls,
    }


# --- Python SDK, handshake era -------------------------------------------------------------------


async def _handshake_story(
    url: str, bearer: str, draft_id: int, report: dict[str, str]
) -> dict[str, Any]:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with (
        _http(bearer) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        streamed = await session.call_tool(
            "cluck_production_report", report, progress_callback=on_progress
        )
        submitted = await session.call_tool(
            "cluck_submit_daily_entry",
            {"idempotencyKey": "e2e-handshake-submit", "dailyEntryId": draft_id},
        )
        read_back = await session.read_resource("farm://grades")
    return {
        "capabilities": init.capabilities.model_dump(by_alias=True, exclude_none=True),
        "progress": seen,
        "report": streamed.structured_content,
        "submitted": submitted.structured_content,
        "grades": read_back.contents[0].text,  # type: ignore[union-attr]
    }


def _drafts(count: int) -> list[int]:
    """Drafts ready to submit (graded eggs add up), recorded through the service."""
    farm = sunrise()
    caller = Caller.system(farm, label="e2e")
    flock = Flock.objects.for_tenant(farm).get(name="House 1 White")
    large = EggGrade.objects.for_tenant(farm).get(name="Large")
    return [
        entry_services.daily_entry_record(
            caller=caller,
            flock_id=flock.pk,
            date=farm.today() - dt.timedelta(days=60 + offset),
            total_eggs=100,
            cracked_eggs=2,
            dirty_eggs=3,
            discarded_eggs=0,
            mortality_count=1,
            grades=[entry_services.GradeLineInput(egg_grade_id=large.pk, quantity=95)],
        ).entry.pk
        for offset in range(count)
    ]


def test_the_whole_surface_through_the_python_sdk(demo_server):
    url, bearers = demo_server
    today = sunrise().today()
    report = {"fromDate": (today - dt.timedelta(days=75)).isoformat(), "toDate": today.isoformat()}
    modern_draft, handshake_draft = _drafts(2)
    flock = Flock.objects.for_tenant(sunrise()).get(name="House 1 White")
    story = asyncio.run(_modern_story(url, bearers["owner"], modern_draft, report, flock.pk))
    assert {"farm://grades"} <= story["resources"]
    assert {"farm://flocks/{flock_id}", "farm://days/{date}"} <= story["templates"]
    assert {g["name"] for g in story["grades"]["grades"]} >= {"Large", "Medium"}
    assert story["card"].startswith("# Flock House 1 White")
    assert "cluck_summarise_day" in story["prompts"]
    assert story["prompt_kinds"] == ["text", "resource", "resource"]
    assert story["names"] == ["House 2 Brown"]
    # The confirmation before the irreversible submit: asked once, answered, then submitted.
    assert len(story["asked"]) == 1 and "100 eggs collected" in story["asked"][0]
    assert story["submitted"]["status"] == "Submitted"
    # The report ran as a task: a handle, polled to completion through tasks/get.
    assert story["polls"][-1] == "completed"
    assert story["report"]["totalEggs"] > 0 and len(story["report"]["months"]) >= 3

    handshake = asyncio.run(_handshake_story(url, bearers["manager"], handshake_draft, report))
    assert {"resources", "prompts", "completions", "logging", "tasks"} <= set(
        handshake["capabilities"]
    )
    months = len(handshake["report"]["months"])
    assert [done for done, _, _ in handshake["progress"]] == list(range(months + 1))
    assert handshake["progress"][-1][2] == "done"
    assert handshake["submitted"]["status"] == "Submitted"  # no question: that era cannot ask
    assert DailyEntry.all_tenants.get(pk=handshake_draft).status == "Submitted"


# --- TypeScript SDK 1.x --------------------------------------------------------------------------


def test_the_whole_surface_through_the_typescript_sdk(demo_server, tmp_path):
    # The pinned TypeScript SDK 1.x of clients/node: missing fails, unless CLUCK_SKIP_NODE=1.
    node.require(node.SDK)
    url, bearers = demo_server
    draft_id, modern_draft_id = _drafts(2)
    today = sunrise().today()
    flock = Flock.objects.for_tenant(sunrise()).get(name="House 1 White")
    script = tmp_path / "ts_surface.mjs"
    shutil.copy(SCRIPT, script)
    (tmp_path / "node_modules").symlink_to(node.MODULES)
    result = subprocess.run(
        [str(node.NODE), str(script)],
        env={
            **os.environ,
            "MCP_URL": url,
            "MCP_BEARER": bearers["owner"],
            "DRAFT_ID": str(draft_id),
            "MODERN_DRAFT_ID": str(modern_draft_id),
            "FLOCK_ID": str(flock.pk),
            "FROM_DATE": (today - dt.timedelta(days=75)).isoformat(),
            "TO_DATE": today.isoformat(),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    lines = [x for x in result.stdout.splitlines() if x.startswith('{"sdk":')]
    assert len(lines) == 1, result.stdout[-3000:] + result.stderr[-3000:]
    (line,) = lines
    story = json.loads(line)
    assert story["sdk"].startswith("1.")
    assert story["protocolVersion"] == "2025-11-25"
    assert "farm://grades" in story["resources"]
    assert "farm://flocks/{flock_id}" in story["templates"]
    assert story["card"].startswith("# Flock House 1 White")
    assert story["promptKinds"] == ["text", "resource", "resource"]
    assert story["completions"] == ["House 1 White"]
    assert story["progress"] and story["progress"][-1]["message"] == "done"
    assert story["submitted"]["status"] == "Submitted"
    assert story["taskStatuses"][0] == "working" and story["taskStatuses"][-1] == "completed"
    assert story["taskReport"]["totalEggs"] == story["syncReport"]["totalEggs"] > 0
    modern = story["modern"]
    assert modern["protocolVersion"] == "2026-07-28"
    assert {"Large", "Medium"} <= set(modern["grades"])
    assert modern["promptKinds"][:2] == ["text", "resource"]
    # The confirmation before the irreversible submit: asked once, answered, then submitted.
    assert len(modern["asked"]) == 1 and "100 eggs collected" in modern["asked"][0]
    assert modern["confirmed"]["status"] == "Submitted"
    assert DailyEntry.all_tenants.get(pk=modern_draft_id).status == "Submitted"
