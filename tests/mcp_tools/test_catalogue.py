"""Prepared surfaces: built once at start-up, looked up per request, cursors bound to them."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings

from cluck.roles import FARM_ROLES
from mcp_tools import CallContext
from mcp_tools.authoring.factories import FactoryRegistry
from mcp_tools.authoring.raw import RawRegistry
from mcp_tools.authoring.registry import Registry, default_registry
from mcp_tools.catalogue.surfaces import activated, active_catalogue, build_catalogue
from mcp_tools.exceptions import UnknownSurfaceError
from mcp_tools.execution import FORBIDDEN
from tenancy import Role
from tests.mutations import mutation

ROOT = Path(__file__).resolve().parents[2]


def _small(registry=default_registry, page_size=2):
    return build_catalogue(registry, page_size=page_size, server_name="t", server_version="1")


def test_the_catalogue_is_prepared_at_start_up_without_any_request():
    catalogue = active_catalogue()
    assert catalogue.specs == tuple(default_registry.specs())
    owner = catalogue.surface_for(FARM_ROLES["Owner"])
    assert all(isinstance(page, bytes) for pages in owner.pages.values() for page in pages)
    assert catalogue.digest == _small(page_size=catalogue.page_size).digest  # deterministic


def test_unknown_surface_keys_are_refused():
    catalogue = active_catalogue()
    for key in ("Owner", 4, None, "DENIED"):
        with pytest.raises(UnknownSurfaceError):
            catalogue.surface_for(key)


@mutation(
    "mcp_tools/operator/switches.py",
    find="    if surface is None:\n        raise UnknownSurfaceError",
    replace=(
        "    if surface is None and catalogue.surfaces:\n"
        "        surface = max(catalogue.surfaces.items(), key=lambda item: item[0].rank)[1]\n"
        "    if surface is None:\n        raise UnknownSurfaceError"
    ),
)
@pytest.mark.django_db
def test_a_caller_without_a_surface_is_refused_before_dispatch(mcp_client):
    """Mutation: fall back to the Owner surface when the role's is missing → red."""
    catalogue = active_catalogue()
    surfaces: dict[Role, Any] = {
        k: v for k, v in catalogue.surfaces.items() if k != FARM_ROLES["Worker"]
    }
    with activated(dataclasses.replace(catalogue, surfaces=surfaces)):
        response = mcp_client("Worker").message("tools/list", {})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == FORBIDDEN


@pytest.mark.django_db
def test_pages_hold_at_most_the_page_size_and_chain_by_cursor(mcp_client):
    client = mcp_client("Owner")
    with activated(_small()):
        names, cursor, pages = [], None, 0
        while True:
            result = client.list_tools(cursor)["result"]
            assert len(result["tools"]) <= 2
            names += [tool["name"] for tool in result["tools"]]
            pages += 1
            cursor = result.get("nextCursor")
            if cursor is None:
                break
    assert pages > 1
    owner = active_catalogue().surface_for(FARM_ROLES["Owner"])
    assert names == sorted(names) == sorted([*owner.tools, *owner.factories])


@mutation(
    "mcp_tools/catalogue/surfaces.py",
    find="return 0 if cursor is None else self.cursors.get(cursor)",
    replace="return 0 if cursor is None else (int(cursor) if cursor.isdigit() else None)",
)
@pytest.mark.django_db
def test_forged_foreign_and_stale_cursors_are_invalid_params(mcp_client):
    """Mutation: decode the cursor as a bare page number instead of looking it up in the
    surface's table → red (forged and foreign cursors would be served)."""
    owner, worker = mcp_client("Owner"), mcp_client("Worker")
    with activated(_small()):
        owner_cursor = owner.list_tools()["result"]["nextCursor"]
        assert worker.list_tools(owner_cursor)["error"]["code"] == -32602  # foreign
        for forged in ("mcpc1.AAAAAAAAAAAAAAAAAAAAAAAA", "1", owner_cursor + "x"):
            assert owner.list_tools(forged)["error"]["code"] == -32602
    registry = Registry()
    for spec in default_registry.specs():
        registry.add(spec)

    registry.tool(name="zz_new_tool", read_only=True, mirrors_no_route="t", description="d")(
        _new_tool
    )

    with activated(_small(registry)):
        assert owner.list_tools(owner_cursor)["error"]["code"] == -32602  # stale


def _new_tool(ctx: CallContext) -> str:
    return ""


def test_manage_py_mcp_tools_lists_the_catalogue_per_role():
    out = StringIO()
    call_command("mcp_tools", stdout=out)
    text = out.getvalue()
    assert "Owner (" in text and "Worker (" in text
    assert "mcptest_whoami" in text and "mirrors me" in text
    assert "no route: test tool" in text


@mutation(
    "mcp_tools/authoring/registry.py",
    find=(
        "        if existing is not None and existing.qualname != spec.qualname:\n            raise"
    ),
    replace=(
        "        if existing is not None and existing.qualname != spec.qualname:\n"
        "            return\n"
        "            raise"
    ),
)
def test_a_broken_catalogue_fails_manage_py_check():
    """Duplicate names are a start-up error, not a warning (any command refuses to start).

    Mutation: make ``Registry.add`` keep the first registration silently → red.
    """
    env = {**os.environ, "DATABASE_URL": "sqlite:///:memory:"}
    env["CLUCK_EXTRA_APPS"] = env.get("CLUCK_EXTRA_APPS", "") + ",tests.mcp_tools.broken_catalogue"
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "registered twice" in result.stderr


@override_settings(MCP_TOOLS_PAGE_SIZE=0)
def test_page_size_must_be_positive():
    from django.core.exceptions import ImproperlyConfigured

    from mcp_tools.catalogue.surfaces import prepare

    with pytest.raises(ImproperlyConfigured):
        prepare(Registry())


@mutation(
    "mcp_tools/operator/switches.py",
    find="    if surface is None:\n        raise UnknownSurfaceError",
    replace="    if surface is None or not surface.tools:\n        raise UnknownSurfaceError",
)
@pytest.mark.django_db
def test_a_role_no_tool_admits_lists_no_tools_and_calls_none(mcp_client):
    """A declared role with no tools is a valid caller with an empty catalogue: 200 and
    ``tools: []`` (as the MCP spec allows), and any call is -32602 like an unknown tool.
    A 403 would tell clients their credentials are wrong (the spec's step-up authorization
    signal), which they are not.

    Mutation: make ``Catalogue.surface_for`` raise ``UnknownSurfaceError`` for a surface
    with no tools → red (403 -32013).
    """
    empty = build_catalogue(
        Registry(),
        page_size=2,
        server_name="t",
        server_version="1",
        factories=FactoryRegistry(),
        raw=RawRegistry(),
    )
    with activated(empty):
        client = mcp_client("Worker")
        listed = client.list_tools()
        called = client.call("mcptest_whoami")
    assert listed["result"]["tools"] == []
    assert called["error"]["code"] == -32602


@mutation(
    "mcp_tools/operator/switches.py",
    find="    if surface is None:\n        raise UnknownSurfaceError",
    replace=(
        '    if surface is None and getattr(role, "name", None) == "Denied":\n'
        "        default = __import__('tenancy').active_roles().effective([])\n"
        "        surface = catalogue.surfaces.get(default)\n"
        "    if surface is None:\n        raise UnknownSurfaceError"
    ),
)
@pytest.mark.django_db
def test_a_membership_with_only_unknown_roles_is_forbidden_as_on_rest(db):
    """Stored roles the project does not declare resolve to ``DENIED``: 403 -32013 on /mcp,
    as every REST route answers 403.

    Mutation: give ``DENIED`` the default role's surface in ``Catalogue.surface_for`` → red.
    """
    from tests.factories import FarmFactory, MembershipFactory, bearer_for
    from tests.mcp_tools.conftest import McpClient

    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["NoSuchRole"])
    client = McpClient(bearer_for(membership), membership)
    response = client.message("tools/list", {})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == FORBIDDEN
    assert client.client.get("/api/v1/me/", headers=client.headers()).status_code == 403
