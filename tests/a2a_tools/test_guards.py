"""The A2A half keeps every guarantee of the MCP half. Each docstring names the mutation that
was applied to the code and seen to turn the test red.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from a2a_tools.skills import build_projection, projectable
from cluck.models import Customer, DailyEntry, Flock, SalesOrder
from mcp_tools import execution
from mcp_tools.catalogue.surfaces import active_catalogue
from tenancy import active_roles
from tests.a2a_tools.conftest import A2AClient, artifact_data, error_reason, projected, task_error
from tests.cluck.mcp_helpers import Tools, demo_bearer, sunrise
from tests.mcp_tools.conftest import McpClient
from tests.mutations import Edit, mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = pytest.mark.django_db(transaction=True)

DEMO_USERS = [
    "owner@sunrise.example",
    "manager@sunrise.example",
    "sales@sunrise.example",
    "worker@sunrise.example",
    "readonly@sunrise.example",
    "owner@hillside.example",
]


@pytest.fixture
def demo(transactional_db: Any) -> dict[str, str]:
    call_command("seed_demo", verbosity=0)
    return {email: demo_bearer(email) for email in DEMO_USERS}


@mutation(
    "a2a_tools/skills.py",
    find="    public = _card(catalogue, None)\n",
    replace=(
        "    widest = max(catalogue.surfaces.values(), key=lambda surface: len(surface.tools))\n"
        "    public = _card(catalogue, [s for s in widest.tools.values() if projectable(s)])\n"
    ),
)
def test_the_public_card_lists_no_skill_of_any_role(client: Any) -> None:
    """Mutation: build the public card with the widest (Owner) surface's projectable specs
    (``_card(catalogue, specs)`` in ``build_projection``) → red."""
    card = json.loads(client.get("/.well-known/agent-card.json").content)
    assert card["skills"] == []
    every_tool = {spec.name for spec in active_catalogue().specs}
    text = json.dumps(card)
    assert not {name for name in every_tool if f'"{name}"' in text}
    assert "params" not in card["capabilities"]["extensions"][0]


@mutation(
    "a2a_tools/skills.py",
    find="specs = [spec for spec in surface.tools.values() if projectable(spec)]",
    replace="specs = [spec for spec in catalogue.specs if projectable(spec)]",
)
def test_each_roles_skills_are_exactly_the_tools_its_tools_list_shows(
    demo: dict[str, str],
) -> None:
    """Computed per role from tools/list over /mcp with the same bearer, never hard-coded.

    Identity-factory tools are built per request and never retained, so no prepared card
    can carry them: they stay MCP-only (docs/a2a.md), like raw tools.

    Mutation: in ``build_projection`` project ``catalogue.specs`` instead of
    ``surface.tools.values()`` → red."""
    seen_roles = set()
    for email in DEMO_USERS:
        bearer = demo[email]
        listed = Tools(bearer).names()
        skills = set(A2AClient(bearer).skills())
        assert skills == projected(listed), email
        seen_roles.add(email.split("@")[0])
    assert len(seen_roles) == len(list(active_roles()))


@mutation(
    "a2a_tools/skills.py",
    find="specs = [spec for spec in surface.tools.values() if projectable(spec)]",
    replace="specs = list(surface.tools.values())",
)
def test_every_surface_projects_exactly_its_projectable_tools() -> None:
    """The same equality on the prepared objects, for every declared role.

    Mutation: drop the ``projectable(spec)`` filter in ``build_projection`` → red (the
    capability-requiring fixture tool would become a skill)."""
    catalogue = active_catalogue()
    projection = build_projection(catalogue)
    assert set(projection.surfaces) == set(catalogue.surfaces)
    for role, surface in catalogue.surfaces.items():
        expected = {name for name, spec in surface.tools.items() if projectable(spec)}
        assert set(projection.surfaces[role].skills) == expected
    assert any(not projectable(spec) for spec in catalogue.specs)


def _leaks(words: set[str], reply: dict[str, Any], sent: dict[str, Any]) -> set[str]:
    text, echoed = json.dumps(reply), json.dumps(sent)
    return {word for word in words if word in text and word not in echoed}


@mutation(
    "cluck/selectors/flocks.py",
    find="return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))",
    replace='return Flock.objects.unscoped("x").filter(flock_scope_filter(caller))',
)
@pytest.mark.usefixtures("rls_off")
def test_a_hillside_token_reads_nothing_of_sunrise_through_any_skill(
    demo: dict[str, str],
) -> None:
    """Mutation: in ``cluck.selectors.flocks.accessible_flocks`` replace
    ``Flock.objects.for_tenant(caller.tenant)`` with ``Flock.objects.unscoped("x")`` → red.
    Row-level security is off here (``rls_off``): this guards the tools' own scoping."""
    farm = sunrise()
    owner = A2AClient(demo["owner@sunrise.example"])
    hillside = A2AClient(demo["owner@hillside.example"])
    flock_ids = list(Flock.objects.for_tenant(farm).values_list("pk", flat=True))
    order = SalesOrder.objects.for_tenant(farm).first()
    entry = DailyEntry.objects.for_tenant(farm).first()
    customer = Customer.objects.for_tenant(farm).first()
    assert order and entry and customer
    words = set(Flock.objects.for_tenant(farm).values_list("name", flat=True)) | set(
        Customer.objects.for_tenant(farm).values_list("name", flat=True)
    )
    record = {
        "flock": flock_ids[0],
        "date": "2026-01-10",
        "totalEggs": 900,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 1,
    }
    today = dt.date.today()
    report = {"fromDate": str(today - dt.timedelta(days=700)), "toDate": str(today)}
    calls_: list[tuple[str, dict[str, Any], str | None]] = [
        ("cluck_list_flocks", {}, None),
        ("cluck_list_egg_grades", {}, None),
        ("cluck_read_stock", {}, None),
        ("cluck_list_daily_entries", {}, None),
        ("cluck_list_customers", {}, None),
        ("cluck_list_orders", {}, None),
        ("cluck_read_receivables", {}, None),
        ("cluck_list_daily_entries", {"flock": str(flock_ids[0])}, None),
        ("cluck_list_orders", {"orderId": order.pk}, None),
        ("cluck_record_daily_entry", record, "x-1"),
        ("cluck_submit_daily_entry", {"dailyEntryId": entry.pk}, "x-2"),
        ("cluck_production_report", report, None),
        ("cluck_production_report", {**report, "flock": str(flock_ids[0])}, None),
    ]
    assert {name for name, _, _ in calls_} == {
        name for name in owner.skills() if name.startswith("cluck_")
    }
    for name, arguments, key in calls_:
        reply = hillside.send(name, arguments, key=key)
        assert not _leaks(words, reply, arguments), name
        if {"flock", "orderId", "dailyEntryId"} & set(arguments):
            assert task_error(reply["result"]["task"])["code"].endswith("NotFound"), reply

    # Tasks are the caller's own: sunrise's task is "not found" for hillside.
    mine = owner.task("cluck_list_flocks", {})
    missing = hillside.rpc("GetTask", {"id": mine["id"]})
    assert missing["error"]["code"] == -32001
    listed = hillside.rpc("ListTasks", {})["result"]["tasks"]
    assert mine["id"] not in {task["id"] for task in listed}


@mutation(
    "a2a_tools/tasks.py",
    find="A2ATask.objects.filter(pk=task_id, tenant_id=owner.tenant_id, user_id=owner.user_id)",
    replace="A2ATask.objects.filter(pk=task_id, tenant_id=owner.tenant_id)",
)
def test_a_task_is_readable_only_by_the_member_who_created_it(demo: dict[str, str]) -> None:
    """Same tenant, another member: not found, exactly like a missing task.

    Mutation: drop ``user_id=owner.user_id`` from ``DatabaseTaskStore.get`` → red."""
    owner = A2AClient(demo["owner@sunrise.example"])
    manager = A2AClient(demo["manager@sunrise.example"])
    task = owner.task("cluck_list_flocks", {})
    assert owner.rpc("GetTask", {"id": task["id"]})["result"]["id"] == task["id"]
    theirs = manager.rpc("GetTask", {"id": task["id"]})
    nobody = manager.rpc("GetTask", {"id": "0" * 32})
    assert theirs["error"] == {**nobody["error"], "data": theirs["error"]["data"]}
    assert theirs["error"]["code"] == -32001
    assert manager.rpc("CancelTask", {"id": task["id"]})["error"]["code"] == -32001


@mutation(
    "cluck/mcp/_shared.py",
    find=(
        "    return Caller(tenant=ctx.tenant, actor=ctx.actor, "
        'scope=ctx.row_scope, channel="mcp")\n'
    ),
    replace=(
        "    from tenancy.context import RowScope\n"
        "\n"
        "    owners = RowScope()\n"
        "    owners.resolve(unrestricted=True)\n"
        '    return Caller(tenant=ctx.tenant, actor=ctx.actor, scope=owners, channel="mcp")\n'
    ),
)
def test_the_workers_flock_scope_holds_through_a2a(demo: dict[str, str]) -> None:
    """Mutation: make the tool call the handler with an owner's flock scope
    (``Caller(..., scope=<unrestricted RowScope>)`` in ``cluck.mcp._shared.caller_of``) → red."""
    worker = A2AClient(demo["worker@sunrise.example"])
    listed = artifact_data(worker.task("cluck_list_flocks", {}))
    assert [flock["name"] for flock in listed["flocks"]] == ["House 1 White"]
    other = Flock.objects.for_tenant(sunrise()).get(name="House 2 Brown", status="Active")
    refused = worker.task(
        "cluck_record_daily_entry",
        {
            "flock": other.pk,
            "date": sunrise().today().isoformat(),
            "totalEggs": 900,
            "crackedEggs": 10,
            "dirtyEggs": 5,
            "mortalityCount": 1,
        },
        key="w-a2a-1",
    )
    assert task_error(refused)["code"] == "FlockScope.NotAssigned"
    today = sunrise().today()
    assert not DailyEntry.objects.for_tenant(sunrise()).filter(flock=other, date=today).exists()


@mutation(
    "mcp_tools/execution/writes.py",
    find="operation_key=port.sha256_hex(spec.operation_key),",
    replace=(
        "operation_key=port.sha256_hex(\n"
        '            spec.operation_key.replace("mcp:", "a2a:", 1)\n'
        '            if ctx.protocol_version.startswith("a2a")\n'
        "            else spec.operation_key\n"
        "        ),"
    ),
)
def test_mcp_and_a2a_share_one_execution_for_the_same_key_and_arguments(
    mcp_client_pair: tuple[McpClient, A2AClient],
) -> None:
    """The idempotency unit is (tenant, tool, key); the protocol is transport. A write made
    over MCP is replayed, not repeated, over A2A (and the other way round); the same key with
    other arguments is KeyReused on either.

    Mutation: give A2A writes their own operation key (``a2a:tool:<name>`` instead of
    ``spec.operation_key`` in ``execution.writes.scope_for``, via a per-protocol prefix)
    → red."""
    mcp, a2a = mcp_client_pair
    before = controls.executions["mcptest_record_note"]
    written = mcp.call("mcptest_record_note", {"idempotencyKey": "both-1", "text": "hi"})
    note = written["result"]["structuredContent"]
    assert note["replayed"] is False
    replayed = artifact_data(a2a.task("mcptest_record_note", {"text": "hi"}, key="both-1"))
    assert replayed == {**note, "replayed": True}
    assert controls.executions["mcptest_record_note"] == before + 1

    reused = a2a.task("mcptest_record_note", {"text": "other"}, key="both-1")
    assert task_error(reused)["code"] == "Idempotency.KeyReused"

    first = artifact_data(a2a.task("mcptest_record_note", {"text": "a2a"}, key="both-2"))
    again = mcp.call("mcptest_record_note", {"idempotencyKey": "both-2", "text": "a2a"})
    assert again["result"]["structuredContent"] == {**first, "replayed": True}
    assert controls.executions["mcptest_record_note"] == before + 2


@pytest.fixture
def mcp_client_pair(a2a_client: Any) -> Iterator[tuple[McpClient, A2AClient]]:
    a2a = a2a_client("Owner")
    yield McpClient(a2a.bearer, a2a.membership), a2a


@pytest.fixture
def _released_afterwards() -> Iterator[None]:
    controls.release.clear()
    yield
    controls.release.set()
    _wait_for(lambda: execution.slots.in_use == 0)


def _wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@mutation(
    Edit(
        "mcp_tools/execution/bounds.py",
        find="                close_old_connections()\n                hold.returned()\n",
        replace="                close_old_connections()\n",
    ),
    Edit(
        "mcp_tools/execution/bounds.py",
        find="        value, error = await asyncio.shield(done)\n",
        replace="        value, error = await asyncio.shield(done)\n        slots.release()\n",
    ),
    Edit(
        "mcp_tools/execution/bounds.py",
        find="    except TimeoutError:\n        raise _timed_out(timeout) from None\n    finally:",
        replace=(
            "    except TimeoutError:\n"
            "        slots.release()\n"
            "        raise _timed_out(timeout) from None\n    finally:"
        ),
    ),
)
@pytest.mark.usefixtures("_released_afterwards")
# A 0.5 s hint (jittered ±50 %) always rounds up to Retry-After: 1.
@override_settings(
    MCP_TOOLS_MAX_CONCURRENT_CALLS=1,
    MCP_TOOLS_CALL_TIMEOUT_SECONDS=0.3,
    MCP_TOOLS_OVERLOAD_RETRY_AFTER_MS=500,
)
def test_a_timed_out_skill_keeps_its_slot_until_the_tool_really_returns(a2a_client: Any) -> None:
    """The deadline answers the caller (-32603, reason DEADLINE_EXCEEDED); the tool still runs
    and holds its slot, so the next call — over either protocol — is overloaded (reason
    OVERLOADED, Retry-After) until it returns.

    Mutation: release the slot in ``run_bounded`` on timeout instead of in the worker
    thread's ``finally`` → red."""
    client = a2a_client("Owner")
    mcp = McpClient(client.bearer, client.membership)
    started = time.monotonic()
    timed_out = client.send("mcptest_block", {"maxSeconds": 10})
    assert timed_out["error"]["code"] == -32603
    assert error_reason(timed_out) == "DEADLINE_EXCEEDED"
    assert time.monotonic() - started < 5
    assert execution.slots.in_use == 1
    response = client.message("SendMessage", {"message": _message("mcptest_whoami")})
    overloaded = json.loads(response.content)
    assert response.status_code == 200 and response["Retry-After"] == "1"
    assert overloaded["error"]["code"] == -32603 and error_reason(overloaded) == "OVERLOADED"
    assert mcp.call("mcptest_whoami")["error"]["code"] == execution.OVERLOADED
    controls.release.set()
    _wait_for(lambda: execution.slots.in_use == 0)
    assert client.task("mcptest_whoami")["status"]["state"] == "TASK_STATE_COMPLETED"


@mutation(
    "mcp_tools/execution/bounds.py",
    find="            if self.in_use >= limit or self._waiters:\n                return False\n",
    replace="",
)
@pytest.mark.usefixtures("_released_afterwards")
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_OVERLOAD_RETRY_AFTER_MS=500)
def test_a_skill_beyond_the_concurrency_limit_is_overloaded(a2a_client: Any) -> None:
    """Mutation: make ``_Slots.try_acquire`` always succeed → red."""
    blocked, other = a2a_client("Owner"), a2a_client("Owner")
    outcome: dict[str, Any] = {}

    def blocked_call() -> None:
        try:
            outcome["task"] = blocked.task("mcptest_block", {})
        finally:
            connection.close()

    thread = threading.Thread(target=blocked_call)
    thread.start()
    _wait_for(lambda: execution.slots.in_use == 1)
    refused = other.send("mcptest_whoami", {})
    assert refused["error"]["code"] == -32603 and error_reason(refused) == "OVERLOADED"
    assert refused["error"]["data"][0]["metadata"] == {"retryAfterSeconds": "1"}
    controls.release.set()
    thread.join(10)
    assert artifact_data(outcome["task"])["released"] is True


def _message(skill: str) -> dict[str, Any]:
    from tests.a2a_tools.conftest import skill_message

    return skill_message(skill, {})["message"]
