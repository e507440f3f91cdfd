"""Per-tenant switches (read-only mode, disabled tools, plan gating) and quotas (a tool's own
rate, a tenant's budget), over ``/mcp``, ``/a2a`` and the switches' REST view."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.test import Client, override_settings
from pydantic import BaseModel

from mcp_tools.authoring.registry import Registry
from mcp_tools.call.context import CallContext
from mcp_tools.catalogue.surfaces import activated, active_catalogue, build_catalogue
from mcp_tools.operator import switches
from tenancy import AUTHENTICATED, Role
from tests.a2a_tools.conftest import A2AClient
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)

SWITCHES_URL = "/api/v1/mcp/switches/"
KEY = "5f0c6a52-3c8e-4a0e-9d0e-6f1f2b7c9a11"


def _api(client: McpClient) -> Client:
    return Client(headers={"Authorization": f"Bearer {client.bearer}"})


def set_switches(client: McpClient, **body: Any) -> Any:
    response = _api(client).put(
        SWITCHES_URL,
        json.dumps(body),
        content_type="application/json",
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert response.status_code == 200, response.content
    return response.json()


def listed(client: McpClient) -> dict[str, dict[str, Any]]:
    """Every tool of the caller's ``tools/list`` (all pages), by name."""
    tools: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        page = client.list_tools(cursor)["result"]
        tools.update({tool["name"]: tool for tool in page["tools"]})
        cursor = page.get("nextCursor")
        if not cursor:
            return tools


def write_tools_of(role: str) -> list[str]:
    surface = active_catalogue().surfaces[
        next(r for r in active_catalogue().surfaces if r.label == role)
    ]
    return sorted(name for name, spec in surface.tools.items() if not spec.read_only)


@mutation(
    "mcp_tools/operator/switches.py",
    find="        if self.read_only and not spec.read_only:",
    replace="        if False:",
)
def test_read_only_mode_hides_and_refuses_every_write_tool(mcp_client):
    """Guard: once a tenant admin flips read-only mode over REST, ``tools/list`` (both eras)
    holds no write tool and every write tool of the owner's surface is refused -32602 before
    it runs, as an unknown one; reads go on. Mutation: ``Switches.admits`` ignores
    ``read_only`` → write tools listed and run → red."""
    owner = mcp_client("Owner")
    writes = write_tools_of("Owner")
    assert writes and set(writes) <= set(listed(owner))
    assert set_switches(owner, readOnly=True) == {"readOnly": True, "disabledTools": []}

    tools = listed(owner)
    assert tools and all(tool["annotations"]["readOnlyHint"] for tool in tools.values())
    modern = json.loads(owner.modern("tools/list", {}).content)["result"]["tools"]
    assert not {tool["name"] for tool in modern} & set(writes)
    for name in writes:
        refused = owner.call(name, {"idempotencyKey": "ro-1"})
        assert refused["error"]["code"] == -32602, (name, refused)
    assert owner.call("mcptest_whoami")["result"]["isError"] is False


def test_read_only_mode_refuses_write_skills_over_a2a_too(mcp_client):
    owner = mcp_client("Owner")
    set_switches(owner, readOnly=True)
    a2a = A2AClient(owner.bearer, owner.membership)
    reply = a2a.send("mcptest_record_note", {"text": "x"}, key="ro-a2a")
    assert reply["error"]["code"] == -32602
    assert "result" in a2a.send("mcptest_whoami", {})


def test_switches_belong_to_one_tenant(mcp_client):
    alice, bob = mcp_client("Owner"), mcp_client("Owner")
    set_switches(alice, readOnly=True, disabledTools=["mcptest_whoami"])
    assert "mcptest_record_note" in listed(bob) and "mcptest_whoami" in listed(bob)
    assert bob.call("mcptest_whoami")["result"]["isError"] is False


def test_a_disabled_tool_is_hidden_and_refused_and_can_be_enabled_again(mcp_client):
    owner = mcp_client("Owner")
    set_switches(owner, disabledTools=["mcptest_whoami"])
    assert "mcptest_whoami" not in listed(owner)
    assert owner.call("mcptest_whoami")["error"]["code"] == -32602
    assert "mcptest_record_note" in listed(owner)
    assert set_switches(owner, disabledTools=[]) == {"readOnly": False, "disabledTools": []}
    assert owner.call("mcptest_whoami")["result"]["isError"] is False


PLAN_TOOLS = frozenset({"mcptest_whoami", "mcptest_crash"})


def plan_switches(ctx: CallContext) -> switches.Switches | None:
    """A project resolver: a plan admits two tools, and a ReadOnly member's credential is
    read-only whatever the tenant's switches say."""
    if ctx.role.label == "ReadOnly":
        return switches.Switches.of(read_only=True)
    return switches.Switches.of(allowed=PLAN_TOOLS)


@override_settings(MCP_TOOLS_TENANT_SWITCHES="tests.mcp_tools.test_switches.plan_switches")
def test_a_project_resolver_gates_tools_by_plan_and_discovery_and_calls_agree(mcp_client):
    owner = mcp_client("Owner")
    assert set(listed(owner)) == PLAN_TOOLS
    assert (
        owner.call("mcptest_record_note", {"text": "x", "idempotencyKey": "p"})["error"]["code"]
        == -32602
    )
    assert owner.call("mcptest_whoami")["result"]["isError"] is False


def test_a_narrowed_surface_is_built_once_per_switch_state():
    catalogue = active_catalogue()
    role = next(r for r in catalogue.surfaces if isinstance(r, Role) and r.label == "Owner")
    surface = catalogue.surfaces[role]
    state = switches.Switches.of(read_only=True)
    first = switches.narrow(catalogue, surface, state)
    again = switches.narrow(catalogue, surface, switches.Switches.of(read_only=True))
    assert again is first and first is not surface
    assert surface.tools.keys() > first.tools.keys()  # the prepared surface is untouched
    assert switches.narrow(catalogue, surface, None) is surface


# --- the REST view ----------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["Sales", "Worker", "ReadOnly"])
def test_only_a_tenant_admin_may_flip_the_switches(mcp_client, role):
    member = mcp_client(role)
    body = json.dumps({"readOnly": True})
    response = _api(member).put(
        SWITCHES_URL, body, content_type="application/json", headers={"Idempotency-Key": KEY}
    )
    assert response.status_code == 403
    assert _api(member).get(SWITCHES_URL).status_code == 403


@pytest.mark.parametrize(
    "body",
    [{"readOnly": "maybe"}, {"disabledTools": "mcptest_whoami"}, [1], {"disabledTools": [1] * 501}],
)
def test_bad_switch_bodies_are_400_and_change_nothing(mcp_client, body):
    owner = mcp_client("Owner")
    response = _api(owner).put(
        SWITCHES_URL,
        json.dumps(body),
        content_type="application/json",
        headers={"Idempotency-Key": KEY},
    )
    assert response.status_code == 400
    assert _api(owner).get(SWITCHES_URL).json() == {"readOnly": False, "disabledTools": []}


# --- quotas -----------------------------------------------------------------------------------


class Count(BaseModel):
    calls: int


RUNS: list[str] = []


def _rated_catalogue() -> Any:
    registry = Registry()

    @registry.tool(
        name="quota_limited",
        read_only=True,
        policy=AUTHENTICATED,
        description="At most two calls a minute per tenant.",
        rate="2/m",
    )
    def limited(ctx: CallContext) -> Count:
        RUNS.append("quota_limited")
        return Count(calls=len(RUNS))

    @registry.tool(
        name="quota_free",
        read_only=True,
        policy=AUTHENTICATED,
        description="No rate of its own.",
    )
    def free(ctx: CallContext) -> Count:
        RUNS.append("quota_free")
        return Count(calls=len(RUNS))

    return build_catalogue(registry, page_size=50, server_name="t", server_version="1")


def _tool_error(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["isError"] is True, result
    return json.loads(result["content"][0]["text"])["error"]


@mutation(
    "mcp_tools/operator/switches.py",
    find='        over, retry = _count(TOOL_RATE_GROUP, rate, f"tenant:{tenant}:tool:{spec.name}")',
    replace="        over, retry = False, 0",
)
def test_a_per_tool_limit_refuses_the_next_call_with_a_retry_hint(mcp_client):
    """Guard: ``@tool(rate="2/m")``: the tenant's third call in the minute is the tool error
    ``Rate.Limited`` with ``retryAfter`` and the tool does not run; another member of the same
    tenant shares the limit, another tenant does not, and other tools are not limited.
    Mutation: never count the tool's own rate → the third call runs → red."""
    owner = mcp_client("Owner")
    colleague = mcp_client("Manager", farm=owner.membership.tenant)
    stranger = mcp_client("Owner")
    RUNS.clear()
    with activated(_rated_catalogue()):
        assert owner.call("quota_limited")["result"]["isError"] is False
        assert colleague.call("quota_limited")["result"]["isError"] is False
        before = list(RUNS)
        error = _tool_error(owner.call("quota_limited"))
        assert RUNS == before
        assert error["code"] == "Rate.Limited"
        assert 1 <= error["data"]["retryAfter"] <= 60
        assert stranger.call("quota_limited")["result"]["isError"] is False
        assert owner.call("quota_free")["result"]["isError"] is False


@override_settings(MCP_TOOLS_TENANT_RATE="3/m")
def test_a_tenant_budget_is_shared_by_its_members_over_every_tool(mcp_client):
    owner = mcp_client("Owner")
    colleague = mcp_client("Manager", farm=owner.membership.tenant)
    stranger = mcp_client("Owner")
    RUNS.clear()
    with activated(_rated_catalogue()):
        owner.call("quota_free")
        colleague.call("quota_free")
        owner.call("quota_limited")
        error = _tool_error(colleague.call("quota_free"))
        assert error["code"] == "Rate.Limited" and error["data"]["retryAfter"] >= 1
        assert stranger.call("quota_free")["result"]["isError"] is False


# --- registration -----------------------------------------------------------------------------


@pytest.mark.parametrize("rate", ["10 per minute", "0/m", "10/w", "/m", 10])
def test_a_malformed_rate_is_refused_at_registration(rate):
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="rate"):

        @Registry().tool(name="bad_rate", read_only=True, description="x", rate=rate)
        def bad(ctx: CallContext) -> Count:
            return Count(calls=0)


def test_audit_arguments_must_name_arguments_of_the_tool_and_match_their_wire_names():
    from django.core.exceptions import ImproperlyConfigured

    registry = Registry()

    @registry.tool(name="kept", read_only=True, description="x", audit_arguments=["as_of"])
    def kept(ctx: CallContext, *, as_of: str) -> Count:
        return Count(calls=0)

    (spec,) = registry.specs()
    assert spec.audit_arguments == ("asOf",)
    with pytest.raises(ImproperlyConfigured, match="audit_arguments"):

        @Registry().tool(name="bad", read_only=True, description="x", audit_arguments=["nope"])
        def bad(ctx: CallContext, *, as_of: str) -> Count:
            return Count(calls=0)
