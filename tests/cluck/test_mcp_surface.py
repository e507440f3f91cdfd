"""The farm's resources, prompt, confirmation before submit and report task.

In-process against the seeded demo farms (committed once for the module: resources, prompts
and tools run in worker threads on their own connections). The cross-farm and role guards name
the mutation that turns them red.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from cluck.models import DailyEntry, EggGrade, Flock
from mcp_tools.tasks.engine import task_engine
from tests.cluck.mcp_helpers import Tools, demo_bearer, sunrise
from tests.mutations import mutation
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]
MODERN = "2026-07-28"
ELICIT: dict[str, Any] = {"elicitation": {}}
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
USERS = (
    "owner@sunrise.example",
    "worker@sunrise.example",
    "readonly@sunrise.example",
    "owner@hillside.example",
)
NAMES = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
}


@pytest.fixture(scope="module")
def demo(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, str]]:
    with django_db_blocker.unblock():
        call_command("seed_demo", verbosity=0)
        bearers = {email: demo_bearer(email) for email in USERS}
    yield bearers
    deadline = time.monotonic() + 15
    while task_engine.in_use and time.monotonic() < deadline:
        time.sleep(0.05)
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


class Modern:
    """2026-07-28 requests with chosen client capabilities."""

    def __init__(self, bearer: str) -> None:
        self.client, self.bearer, self._id = Client(), bearer, 0

    def send(self, method: str, params: dict[str, Any], caps: dict[str, Any] | None = None) -> Any:
        self._id += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps or {},
        }
        body = {
            "jsonrpc": "2.0",
            "id": self._id,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = {
            "Authorization": f"Bearer {self.bearer}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
        }
        if method in NAMES:
            headers["Mcp-Name"] = params[NAMES[method]]
        response = self.client.post(
            "/mcp", json.dumps(body), content_type="application/json", headers=headers
        )
        return json.loads(response.content)


def _hand(demo: dict[str, str], email: str) -> Tools:
    return Tools(demo[email])


def _read(tools: Tools, uri: str) -> dict[str, Any]:
    return tools.rpc("resources/read", {"uri": uri})


def _sunrise_flock(name: str = "House 1 White") -> Flock:
    return Flock.objects.for_tenant(sunrise()).get(name=name)


# --- resources ---------------------------------------------------------------------------------


def test_the_farms_resources_read_through_the_same_selectors(demo):
    owner = _hand(demo, "owner@sunrise.example")
    flock = _sunrise_flock()
    (card,) = _read(owner, f"farm://flocks/{flock.pk}")["result"]["contents"]
    assert (
        card["mimeType"] == "text/markdown"
        and f"# Flock House 1 White (#{flock.pk})" in card["text"]
    )
    (grades,) = _read(owner, "farm://grades")["result"]["contents"]
    names = {g["name"] for g in json.loads(grades["text"])["grades"]}
    assert {"Large", "Medium"} <= names
    entry = DailyEntry.objects.for_tenant(sunrise()).order_by("-date").first()
    assert entry is not None
    (day,) = _read(owner, f"farm://days/{entry.date.isoformat()}")["result"]["contents"]
    assert entry.pk in {e["dailyEntryId"] for e in json.loads(day["text"])["entries"]}


@mutation(
    "cluck/selectors/flocks.py",
    find="return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))",
    replace='return Flock.objects.unscoped("x").filter(flock_scope_filter(caller))',
)
@mutation(
    "cluck/selectors/daily_entries.py",
    find="    return DailyEntry.objects.for_tenant(caller.tenant).filter(",
    replace='    return DailyEntry.objects.unscoped("x").filter(',
)
@pytest.mark.usefixtures("rls_off")
def test_a_resource_of_farm_a_is_never_readable_from_farm_b(demo):
    """Mutation: in ``cluck.selectors.flocks.accessible_flocks`` use
    ``Flock.objects.unscoped("x")`` instead of ``for_tenant(caller.tenant)`` → red (the template
    path reads sunrise's record card); in ``cluck.selectors.daily_entries.accessible_entries``
    likewise with ``DailyEntry`` → red (hillside's day resource lists sunrise's entries).
    Row-level security is off here (``rls_off``): this guards the tools' own scoping."""
    hillside = _hand(demo, "owner@hillside.example")
    sunrise_words = set(Flock.objects.for_tenant(sunrise()).values_list("name", flat=True))
    for flock in Flock.objects.for_tenant(sunrise()):
        uri = f"farm://flocks/{flock.pk}"
        assert _read(hillside, uri)["error"] == {
            "code": -32602,
            "message": "Resource not found",
            "data": {"uri": uri},
        }
    days = DailyEntry.objects.for_tenant(sunrise()).values_list("date", flat=True).distinct()[:5]
    for day in days:
        (contents,) = _read(hillside, f"farm://days/{day.isoformat()}")["result"]["contents"]
        mine = json.loads(contents["text"])["entries"]
        assert not any(e["flockName"] in sunrise_words for e in mine), mine
    (grades,) = _read(hillside, "farm://grades")["result"]["contents"]
    sunrise_grade_ids = set(EggGrade.objects.for_tenant(sunrise()).values_list("pk", flat=True))
    assert not sunrise_grade_ids & {g["eggGradeId"] for g in json.loads(grades["text"])["grades"]}
    ref = {"type": "ref/resource", "uri": "farm://flocks/{flock_id}"}
    suggested = hillside.rpc(
        "completion/complete", {"ref": ref, "argument": {"name": "flock_id", "value": ""}}
    )
    sunrise_ids = {str(f.pk) for f in Flock.objects.for_tenant(sunrise())}
    assert not sunrise_ids & set(suggested["result"]["completion"]["values"])


@mutation(
    "cluck/selectors/flocks.py",
    find="return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))",
    replace="return Flock.objects.for_tenant(caller.tenant)",
)
def test_a_workers_unassigned_flock_is_not_a_resource_they_can_read(demo):
    """Mutation: in ``cluck.selectors.flocks.accessible_flocks`` drop
    ``.filter(flock_scope_filter(caller))`` → red (the Worker reads the unassigned card)."""
    worker = _hand(demo, "worker@sunrise.example")
    assigned, other = (
        _sunrise_flock("House 1 White"),
        Flock.objects.for_tenant(sunrise()).exclude(name="House 1 White").first(),
    )
    assert other is not None
    assert _read(worker, f"farm://flocks/{assigned.pk}")["result"]["contents"]
    assert _read(worker, f"farm://flocks/{other.pk}")["error"]["code"] == -32602


# --- the prompt ----------------------------------------------------------------------------------


def test_summarise_a_day_embeds_the_days_entries_and_completes_from_the_callers_data(demo):
    owner = _hand(demo, "owner@sunrise.example")
    entry = DailyEntry.objects.for_tenant(sunrise()).order_by("-date").first()
    assert entry is not None
    got = owner.rpc(
        "prompts/get",
        {
            "name": "cluck_summarise_day",
            "arguments": {"date": entry.date.isoformat(), "flock": "House 1 White"},
        },
    )["result"]
    kinds = [m["content"]["type"] for m in got["messages"]]
    assert kinds == ["text", "resource", "resource"]
    uris = [m["content"]["resource"]["uri"] for m in got["messages"][1:]]
    assert uris == [f"farm://days/{entry.date.isoformat()}", f"farm://flocks/{_sunrise_flock().pk}"]
    default_day = owner.rpc("prompts/get", {"name": "cluck_summarise_day"})["result"]
    assert "(yesterday)" in default_day["messages"][0]["content"]["text"]
    ref = {"type": "ref/prompt", "name": "cluck_summarise_day"}
    names = owner.rpc(
        "completion/complete", {"ref": ref, "argument": {"name": "flock", "value": "house 2"}}
    )
    assert names["result"]["completion"]["values"] == ["House 2 Brown"]
    hillside = _hand(demo, "owner@hillside.example")
    theirs = hillside.rpc(
        "completion/complete", {"ref": ref, "argument": {"name": "flock", "value": "house 1"}}
    )
    assert "House 1 White" not in theirs["result"]["completion"]["values"]
    refused = hillside.rpc(
        "prompts/get",
        {"name": "cluck_summarise_day", "arguments": {"flock": str(_sunrise_flock().pk)}},
    )
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"]["error"]["code"] == "Flock.NotFound"


# --- confirmation before an irreversible submit ------------------------------------------------


def _draft(owner: Tools, key: str, day: dt.date) -> int:
    # The active House 2 Brown was placed 35 days ago and has two weeks of seeded entries:
    # days 20-23 back are free and after its placement.
    flock = Flock.objects.for_tenant(sunrise()).get(name="House 2 Brown", status="Active")
    recorded = owner.ok(
        "cluck_record_daily_entry",
        {
            "idempotencyKey": key,
            "flock": flock.pk,
            "date": day.isoformat(),
            "totalEggs": 100,
            "crackedEggs": 2,
            "dirtyEggs": 3,
            "mortalityCount": 1,
            "grades": [{"grade": "Large", "quantity": 95}],
        },
    )
    return int(recorded["dailyEntryId"])


def test_submit_asks_to_confirm_the_figures_when_the_client_can_ask(demo):
    owner = _hand(demo, "owner@sunrise.example")
    modern = Modern(demo["owner@sunrise.example"])
    entry_id = _draft(owner, "confirm-1", sunrise().today() - dt.timedelta(days=20))
    call = {
        "name": "cluck_submit_daily_entry",
        "arguments": {"idempotencyKey": "submit-confirm-1", "dailyEntryId": entry_id},
    }
    asked = modern.send("tools/call", call, ELICIT)["result"]
    assert asked["resultType"] == "input_required"
    ((key, question),) = asked["inputRequests"].items()
    assert "100 eggs collected" in question["params"]["message"]
    assert question["params"]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert DailyEntry.all_tenants.get(pk=entry_id).status == "Draft"  # nothing happened yet
    answer = {key: {"action": "accept", "content": {"confirm": True}}}
    done = modern.send(
        "tools/call",
        {**call, "inputResponses": answer, "requestState": asked["requestState"]},
        ELICIT,
    )
    assert done["result"]["structuredContent"]["status"] == "Submitted"
    assert DailyEntry.all_tenants.get(pk=entry_id).status == "Submitted"


@mutation(
    "cluck/mcp/production.py",
    find="    if not (\n        answer.accepted\n",
    replace="    if False and not (\n        answer.accepted\n",
)
@mutation(
    "cluck/mcp/production.py",
    find='        f"confirm-submit-v{draft.version}", message=_figures(draft)',
    replace='        "confirm-submit", message=_figures(draft)',
)
def test_a_declined_or_stale_confirmation_submits_nothing(demo):
    """Mutations: in ``cluck.mcp.production._confirm_submit`` ignore the answer (``if False
    and not (...)``) → red (a decline submits); key the question without the draft's version
    (``"confirm-submit"``) → red (a yes to the old figures submits the edited draft)."""
    owner = _hand(demo, "owner@sunrise.example")
    modern = Modern(demo["owner@sunrise.example"])
    day = sunrise().today() - dt.timedelta(days=21)
    entry_id = _draft(owner, "confirm-2", day)
    call = {
        "name": "cluck_submit_daily_entry",
        "arguments": {"idempotencyKey": "submit-confirm-2", "dailyEntryId": entry_id},
    }
    asked = modern.send("tools/call", call, ELICIT)["result"]
    (key,) = asked["inputRequests"]
    declined = modern.send(
        "tools/call",
        {
            **call,
            "inputResponses": {key: {"action": "decline"}},
            "requestState": asked["requestState"],
        },
        ELICIT,
    )["result"]
    assert tool_error(declined)["code"] == "DailyEntry.SubmitNotConfirmed"
    asked_again = modern.send("tools/call", call, ELICIT)["result"]
    # The draft changes between the question and the answer: the yes was for other figures.
    _draft(owner, "confirm-2b", day)
    yes = {
        key: {"action": "accept", "content": {"confirm": True}}
        for key in asked_again["inputRequests"]
    }
    stale = modern.send(
        "tools/call",
        {**call, "inputResponses": yes, "requestState": asked_again["requestState"]},
        ELICIT,
    )
    assert stale["result"]["resultType"] == "input_required"
    assert DailyEntry.all_tenants.get(pk=entry_id).status == "Draft"


def test_submit_proceeds_as_before_when_the_client_cannot_ask(demo):
    owner = _hand(demo, "owner@sunrise.example")
    handshake_entry = _draft(owner, "confirm-3", sunrise().today() - dt.timedelta(days=22))
    submitted = owner.ok(
        "cluck_submit_daily_entry", {"idempotencyKey": "submit-3", "dailyEntryId": handshake_entry}
    )
    assert submitted["status"] == "Submitted"
    modern_entry = _draft(owner, "confirm-4", sunrise().today() - dt.timedelta(days=23))
    no_elicitation = Modern(demo["owner@sunrise.example"]).send(
        "tools/call",
        {
            "name": "cluck_submit_daily_entry",
            "arguments": {"idempotencyKey": "submit-4", "dailyEntryId": modern_entry},
        },
    )
    assert no_elicitation["result"]["structuredContent"]["status"] == "Submitted"


# --- the report task -----------------------------------------------------------------------------


def test_the_production_report_runs_as_a_task_and_synchronously_alike(demo):
    bearer = demo["owner@sunrise.example"]
    modern = Modern(bearer)
    today = sunrise().today()
    arguments = {
        "fromDate": (today - dt.timedelta(days=90)).isoformat(),
        "toDate": today.isoformat(),
    }
    synchronous = Tools(bearer).ok("cluck_production_report", arguments)
    created = modern.send(
        "tools/call", {"name": "cluck_production_report", "arguments": arguments}, TASKS
    )["result"]
    assert created["resultType"] == "task"
    deadline = time.monotonic() + 15
    while True:
        task = modern.send("tasks/get", {"taskId": created["taskId"]}, TASKS)["result"]
        if task["status"] != "working" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert task["status"] == "completed", task
    assert task["result"]["structuredContent"] == synchronous
    assert len(synchronous["months"]) in (4, 5) and synchronous["totalEggs"] > 0
    assert sum(m["totalEggs"] for m in synchronous["months"]) == synchronous["totalEggs"]


def test_a_bad_report_request_is_answered_at_once_not_as_a_task(demo):
    hillside = Modern(demo["owner@hillside.example"])
    args = {"fromDate": "2026-01-01", "toDate": "2026-01-31", "flock": str(_sunrise_flock().pk)}
    foreign = hillside.send(
        "tools/call", {"name": "cluck_production_report", "arguments": args}, TASKS
    )["result"]
    assert tool_error(foreign)["code"] == "Flock.NotFound"
    too_long = {"fromDate": "2020-01-01", "toDate": "2026-01-31"}
    refused = hillside.send(
        "tools/call", {"name": "cluck_production_report", "arguments": too_long}, TASKS
    )
    assert tool_error(refused["result"])["code"] == "Validation.Failed"
