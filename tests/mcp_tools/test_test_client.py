"""``mcp_tools.testing.client``: the in-process client and the helpers a project pins its tools
with.

``transactional_db``: tools run in worker threads with their own connections.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from mcp_tools.testing.client import (
    ERAS,
    FORCED_CREDENTIAL,
    ForcedCredential,
    MCPClient,
    MCPProtocolError,
    assert_replays_once,
    assert_tenant_isolated,
    assert_tool_invisible,
)
from tenancy.models import AccessToken
from tests.factories import CustomerFactory, FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _reset_counts() -> None:
    controls.executions.clear()


def _member(roles: list[str], farm: Any = None) -> Any:
    return MembershipFactory(tenant=farm or FarmFactory(), roles=roles)


@pytest.mark.parametrize("era", ERAS)
def test_a_member_client_lists_and_calls_tools_with_no_token_minted(era: str) -> None:
    member = _member(["Admin"])
    CustomerFactory(farm=member.tenant, name="Acme Eggs Ltd")
    client = MCPClient(user=member.user, tenant=member.tenant, era=era)
    names = {tool["name"] for tool in client.list_tools()}
    assert {"cluck_list_customers", "mcptest_record_note"} <= names
    result = client.call_tool("cluck_list_customers")
    assert not result.is_error
    assert [c["name"] for c in result.structured["customers"]] == ["Acme Eggs Ltd"]
    assert not AccessToken.objects.exists()


@pytest.mark.parametrize("era", ERAS)
def test_protocol_errors_raise_with_their_json_rpc_code(era: str) -> None:
    member = _member(["Admin"])
    client = MCPClient(membership=member, era=era)
    with pytest.raises(MCPProtocolError) as raised:
        client.call_tool("no_such_tool", {})
    assert raised.value.code == -32602


@pytest.mark.parametrize("era", ERAS)
def test_tool_errors_come_back_in_the_documented_shape(era: str) -> None:
    client = MCPClient(membership=_member(["Admin"]), era=era)
    result = client.call_tool("mcptest_record_note", {"text": 5}, idempotency_key="k")
    assert result.is_error and result.structured is None
    assert result.error_code == "Tool.InvalidArguments"
    assert result.error is not None and result.error["data"]["errors"]
    assert "mcptest_record_note" not in controls.executions


@pytest.mark.parametrize("era", ERAS)
def test_resources_and_prompts_come_back_as_a_client_receives_them(era: str) -> None:
    client = MCPClient(membership=_member(["Admin"]), era=era)
    assert "farm://grades" in {r["uri"] for r in client.list_resources()}
    (contents,) = client.read_resource("farm://grades")["contents"]
    assert contents["uri"] == "farm://grades" and contents["mimeType"] == "application/json"
    with pytest.raises(MCPProtocolError) as raised:
        client.read_resource("farm://flocks/999999")
    assert raised.value.code == -32602
    assert "cluck_summarise_day" in {p["name"] for p in client.list_prompts()}
    messages = client.get_prompt("cluck_summarise_day", {"date": "2026-01-01"})["messages"]
    assert messages and messages[0]["role"] == "user"


def test_a_token_client_is_the_bearer_it_carries() -> None:
    member = _member(["Admin"])
    client = MCPClient(token=bearer_for(member))
    assert "cluck_list_customers" in {tool["name"] for tool in client.list_tools()}
    with pytest.raises(MCPProtocolError) as raised:
        MCPClient(token="ck_pat_not-a-token").list_tools()
    assert raised.value.code == -32014 and raised.value.status == 401


def test_mint_token_issues_a_real_personal_token() -> None:
    member = _member(["Admin"])
    client = MCPClient(user=member.user, tenant=member.tenant, mint_token=True)
    assert client.bearer is not None and client.bearer.startswith("ck_pat_")
    assert client.list_tools()
    assert AccessToken.objects.filter(membership_id=member.pk).exists()


def test_a_user_outside_the_tenant_gets_no_client() -> None:
    member = _member(["Admin"])
    with pytest.raises(ValueError):
        MCPClient(user=member.user, tenant=FarmFactory())


def test_a_disabled_member_is_refused_like_any_token() -> None:
    member = _member(["Admin"])
    client = MCPClient(membership=member)
    type(member).objects.filter(pk=member.pk).update(disabled_at="2026-01-01T00:00:00Z")
    with pytest.raises(MCPProtocolError) as raised:
        client.list_tools()
    assert raised.value.code == -32014


@mutation(
    "mcp_tools/testing/client.py",
    find="if not isinstance(forced, ForcedCredential):",
    replace="if forced is None:",
)
@mutation(
    "mcp_tools/testing/client.py",
    find="    if not hmac.compare_digest(forced.secret, raw):\n",
    replace="    if False:\n",
)
def test_a_forced_credential_cannot_be_reached_from_a_real_request() -> None:
    """What a server can put in a request is strings: the client's bearer alone, or with any
    string under the environ key, is a 401; so is a credential object with another secret.
    Mutation: accept any value under the key (not only the object) → the string one is
    accepted or crashes → red. Mutation: drop the secret comparison → red."""
    member = _member(["Admin"])
    client = MCPClient(membership=member)
    body = client.message("tools/list")
    headers = {
        "Accept": "application/json",
        "MCP-Protocol-Version": client.era,
        "Mcp-Method": "tools/list",
        "Authorization": f"Bearer {client.bearer}",
    }
    plain = Client()
    extras: list[dict[str, Any]] = [
        {},
        {FORCED_CREDENTIAL: client.bearer},
        {FORCED_CREDENTIAL: str(member.pk)},
    ]
    for extra in extras:
        response = plain.post(
            "/mcp", body, content_type="application/json", headers=headers, **extra
        )
        assert response.status_code == 401, (extra, response.content)
        assert response.json()["error"]["code"] == -32014
    other: dict[str, Any] = {FORCED_CREDENTIAL: ForcedCredential(member.pk, "mcp-test-other")}
    response = plain.post("/mcp", body, content_type="application/json", headers=headers, **other)
    assert response.status_code == 401


# --- the helpers -----------------------------------------------------------------------------


@mutation(
    "mcp_tools/catalogue/surfaces.py",
    find="admitted = [spec for spec in specs if evaluate_role(spec.policy, actor)]",
    replace="admitted = list(specs)",
)
@pytest.mark.parametrize("era", ERAS)
def test_assert_tool_invisible_holds_for_a_role_outside_the_policy(era: str) -> None:
    """ReadOnly is outside SalesFlow and ProductionWrite. Mutation: stop filtering the
    prepared surface by role → the tools are listed → the helper is red."""
    client = MCPClient(membership=_member(["ReadOnly"]), era=era)
    assert_tool_invisible(client, "cluck_list_customers")
    assert_tool_invisible(client, "mcptest_record_note")
    with pytest.raises(AssertionError):
        assert_tool_invisible(MCPClient(membership=_member(["Admin"])), "cluck_list_customers")


@mutation(
    "tenancy/scoping.py",
    find='clone = self.filter(**{f"{self.tenant_field}_id": tenant_id})',
    replace="clone = self.all()",
)
@pytest.mark.usefixtures("rls_off")
@pytest.mark.parametrize("era", ERAS)
def test_assert_tenant_isolated_holds_for_another_farms_customers(era: str) -> None:
    """Mutation: ``for_tenant`` stops narrowing to the tenant → the other farm's customer is
    listed → the helper is red.
    Row-level security is off here (``rls_off``): this guards the tools' own scoping."""
    member = _member(["Admin"])
    CustomerFactory(farm=member.tenant, name="Our Customer")
    theirs = CustomerFactory(farm=FarmFactory(), name="Their Customer")
    client = MCPClient(membership=member, era=era)
    result = assert_tenant_isolated(
        client,
        "cluck_list_customers",
        foreign=["Their Customer", theirs.pk],  # type: ignore[attr-defined]
    )
    assert [c["name"] for c in result.structured["customers"]] == ["Our Customer"]
    with pytest.raises(AssertionError):
        assert_tenant_isolated(client, "cluck_list_customers", foreign=["Our Customer"])


@mutation(
    "mcp_tools/execution/writes.py",
    find="caller_key=port.sha256_hex(key),",
    replace="caller_key=port.sha256_hex(key + ctx.request_id),",
)
@pytest.mark.parametrize("era", ERAS)
def test_assert_replays_once_holds_for_a_write_tool(era: str) -> None:
    """Mutation: bind the caller key to the request (every retry a new key) → the retry
    runs again → the helper is red."""
    client = MCPClient(membership=_member(["Admin"]), era=era)
    assert_replays_once(client, "mcptest_record_note", {"text": "hello"})
