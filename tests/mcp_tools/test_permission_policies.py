"""Django permissions as policies (``tenancy.has_perm``) and roles from Django groups."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from mcp_tools import CallContext
from mcp_tools.authoring.registry import Registry
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from tenancy import Policy, has_perm
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

VIEW_GROUPS = has_perm("auth.view_group", name="ViewGroups")
OWNERS = Policy("PermTestOwners", {"Owner"})
HIDDEN = -32602


def _tool(ctx: CallContext) -> str:
    return "ok"


def _catalogue() -> Any:
    registry = Registry()
    for name, policy in (("perm_groups", VIEW_GROUPS), ("perm_owners", OWNERS)):
        registry.tool(
            name=name, read_only=True, mirrors_no_route="t", description="d", policy=policy
        )(_tool)
    registry.tool(name="perm_anyone", read_only=True, mirrors_no_route="t", description="d")(_tool)
    # One tool per page: a page holding only ungated tools stays prepared bytes.
    return build_catalogue(registry, page_size=1, server_name="t", server_version="1")


def _names(client: McpClient) -> set[str]:
    names: set[str] = set()
    cursor = None
    while True:
        result = client.list_tools(cursor)["result"]
        names |= {tool["name"] for tool in result["tools"]}
        cursor = result.get("nextCursor")
        if not cursor:
            return names


def _modern_names(client: McpClient) -> set[str]:
    names: set[str] = set()
    params: dict[str, Any] = {}
    while True:
        result = client.modern("tools/list", params).json()["result"]
        names |= {tool["name"] for tool in result["tools"]}
        if not result.get("nextCursor"):
            return names
        params = {"cursor": result["nextCursor"]}


@mutation(
    "tenancy/roles.py",
    find="        return self.perms <= load_permissions(actor)\n",
    replace="        return True\n",
)
@pytest.mark.django_db
def test_has_perm_policies_filter_tools_list_and_refuse_calls(mcp_client: Any) -> None:
    """Red if the user's permissions were not asked (the role alone would admit)."""
    client = mcp_client("Owner")
    with activated(_catalogue()):
        assert "perm_groups" not in _names(client)
        assert "perm_groups" not in _modern_names(client)
        assert {"perm_owners", "perm_anyone"} <= _names(client)
        assert client.call("perm_groups", {})["error"]["code"] == HIDDEN

        client.membership.user.user_permissions.add(
            Permission.objects.get(codename="view_group", content_type__app_label="auth")
        )
        # Each request reads the user afresh: the grant is seen on the next one.
        assert "perm_groups" in _names(client)
        assert "perm_groups" in _modern_names(client)
        assert client.call("perm_groups", {})["result"]["isError"] is False


@mutation(
    "mcp_tools/methods/tools.py",
    find="                    continue  # a has_perm policy this user does not meet\n",
    replace="                    pass\n",
)
@mutation(
    "mcp_tools/methods/tools.py",
    find='                    key.append((entry["name"], admitted))\n',
    replace='                    key.append((entry["name"], True))\n',
)
@pytest.mark.django_db
def test_a_group_permission_admits_and_the_list_is_filtered_per_user(mcp_client: Any) -> None:
    """Red if tools/list stopped asking the user's permissions (the role's surface lists
    every tool its roles admit). Mutation: the completed page shared (``varies_by``'s page
    cache) without the user's has_perm decisions in its key → the member's page, listing the
    gated tool, is served to the other worker → red."""
    member, other = mcp_client("Worker"), mcp_client("Worker")
    group = Group.objects.create(name="auditors")
    group.permissions.add(
        Permission.objects.get(codename="view_group", content_type__app_label="auth")
    )
    member.membership.user.groups.add(group)
    with activated(_catalogue()):
        assert "perm_groups" in _names(member)
        assert "perm_groups" not in _names(other)
        assert "perm_owners" not in _names(member)


@pytest.mark.django_db
def test_roles_from_groups_raise_a_membership_to_the_groups_role(mcp_client: Any) -> None:
    worker = mcp_client("Worker")
    worker.membership.user.groups.add(Group.objects.create(name="Admin"))  # Owner's stored name
    with activated(_catalogue()):
        assert "perm_owners" not in _names(worker)
        with override_settings(TENANCY_ROLES_FROM_GROUPS=True):
            assert "perm_owners" in _names(worker)
            assert worker.call("perm_owners", {})["result"]["isError"] is False


def test_has_perm_needs_app_label_dot_codename() -> None:
    for bad in ((), ("view_group",), ("auth.view.group",), (".x",)):
        with pytest.raises(ImproperlyConfigured):
            has_perm(*bad)
    assert has_perm("auth.view_group").per_user and not OWNERS.per_user
