"""Seed 001's two escape hatches: identity-factory tools and raw tools.

A factory's definition is built for each request from the caller's own data and is never
retained; the finite role surfaces stay prepared once. A raw tool has no ``CallContext`` at all:
only the explicitly named decorator registers one, nothing serves it unless a setting says so,
a system check warns while it is served and ``manage.py mcp_tools`` lists it apart.
"""

from __future__ import annotations

import gc
import json
from io import StringIO
from typing import Any

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from mcp_tools import CallContext
from mcp_tools.authoring.factories import FactoryRegistry
from mcp_tools.authoring.raw import RawRegistry
from mcp_tools.authoring.registry import default_registry
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from tests.mutations import mutation
from tests.testapps.mcp_surface import controls
from tests.testapps.mcp_surface import mcp as surface_mcp

pytestmark = pytest.mark.django_db(transaction=True)
FACTORY = "mcptest_factory_echo"


def _listed(client: Any, name: str) -> dict[str, Any]:
    tools = client.list_tools()["result"]["tools"]
    (definition,) = [t for t in tools if t["name"] == name]
    return definition


def test_a_factory_tool_is_defined_by_the_callers_own_data(mcp_client):
    first, second = mcp_client(), mcp_client()
    for client in (first, second):
        enum = _listed(client, FACTORY)["inputSchema"]["properties"]["value"]["enum"]
        tenant = client.membership.tenant.pk
        assert enum == [f"tenant-{tenant}-a", f"tenant-{tenant}-b"]
    mine = f"tenant-{first.membership.tenant.pk}-a"
    assert first.call(FACTORY, {"value": mine})["result"]["structuredContent"]["value"] == mine
    theirs = second.call(FACTORY, {"value": mine})["result"]
    assert theirs["isError"] is True
    assert json.loads(theirs["content"][0]["text"])["error"]["code"] == "Tool.InvalidArguments"


@mutation(
    "mcp_tools/authoring/factories.py",
    find="        made = self.factory(ctx)\n",
    replace=(
        '        made = globals().setdefault("_BUILT", {}).setdefault(\n'
        "            (self.name, ctx.tenant_id), self.factory(ctx)\n"
        "        )\n"
    ),
)
def test_factory_definitions_are_not_retained_after_the_request(mcp_client):
    """Mutation: memoize ``ToolFactorySpec.build`` (e.g. ``functools.lru_cache`` on a helper
    keyed by the tenant, or a module dict of built specs) → red: what a factory built for one
    caller outlives the request (an unbounded per-identity retention surface)."""
    client = mcp_client()
    controls.forget()
    client.list_tools()
    client.call(FACTORY, {"value": f"tenant-{client.membership.tenant.pk}-b"})
    gc.collect()
    assert len(controls.built_models) >= 2  # built for the list and again for the call
    assert controls.alive() == []


def test_factory_registration_rules():
    registry = FactoryRegistry()
    with pytest.raises(ImproperlyConfigured, match="exactly `ctx: CallContext`"):
        registry.tool_factory(name="f", result=_Result, description="d")(lambda: None)  # type: ignore[arg-type]


class _Result:  # not a pydantic model: refused above before it matters
    pass


@mutation(
    "mcp_tools/authoring/raw.py",
    find='    if not conf.get("ALLOW_RAW_TOOLS"):\n        return []\n',
    replace="",
)
def test_raw_tools_are_off_unless_enabled(mcp_client):
    """Mutation: in ``raw.served_raw_tools`` ignore ``MCP_TOOLS_ALLOW_RAW_TOOLS`` → red."""
    client = mcp_client()
    assert "mcptest_raw_echo" not in {t["name"] for t in client.list_tools()["result"]["tools"]}
    assert client.call("mcptest_raw_echo", {"text": "hi"})["error"]["code"] == -32602
    assert not [m for m in checks.run_checks() if m.id == "mcp_tools.W001"]


def test_enabled_raw_tools_are_served_warned_about_and_listed_apart(mcp_client, settings):
    settings.MCP_TOOLS_ALLOW_RAW_TOOLS = True
    catalogue = build_catalogue(default_registry, page_size=50, server_name="t", server_version="1")
    with activated(catalogue):
        for role in ("Owner", "ReadOnly"):
            client = mcp_client(role)
            assert client.call("mcptest_raw_echo", {"text": "hi"})["result"]["content"] == [
                {"type": "text", "text": "hi"}
            ]
        output = StringIO()
        call_command("mcp_tools", stdout=output)
    warnings = [m for m in checks.run_checks() if m.id == "mcp_tools.W001"]
    assert [w.obj for w in warnings] == ["tests.testapps.mcp_surface.mcp.raw_echo"]
    listing = output.getvalue()
    assert "RAW TOOLS (1; no CallContext, no tenant; SERVED" in listing
    assert listing.index("RAW TOOLS") < listing.index("mcptest_raw_echo")


@mutation(
    "mcp_tools/authoring/raw.py",
    find="if len(params) != 1 or any(h is CallContext for h in hints.values()):",
    replace="if len(params) != 1:",
)
def test_a_raw_tool_never_takes_a_call_context():
    """Mutation: in ``RawRegistry.raw_tool`` drop the ``CallContext`` annotation check → red."""
    registry = RawRegistry()
    with pytest.raises(ImproperlyConfigured, match="never a CallContext"):

        @registry.raw_tool(name="r", description="d", input_schema={"type": "object"})
        def wants_identity(ctx: CallContext) -> dict[str, Any]:
            return {}

    with pytest.raises(TypeError):
        registry.raw_tool(lambda arguments: {})  # type: ignore[call-arg]


@mutation(
    "mcp_tools/authoring/factories.py",
    find='cache_key=role_key if varies_by == "role" else varies_by,',
    replace='cache_key=role_key if varies_by in ("role", None) else varies_by,',
)
@mutation(
    "mcp_tools/methods/tools.py",
    find="                elif factory.cache_key is None:\n                    key = None\n",
    replace="                elif factory.cache_key is None:\n                    pass\n",
)
def test_a_factory_that_declares_nothing_is_built_for_every_list(mcp_client):
    """A factory without ``varies_by`` may depend on anything (here the tenant's own values):
    every ``tools/list`` builds its definition again. Mutations: an undeclared factory cached
    as if it varied by role, or its page shared as if it declared a key → the second list is
    served the first's definition → red."""
    client = mcp_client()
    controls.forget()
    client.list_tools()
    client.list_tools()
    assert len(controls.built_models) == 2


@mutation(
    "mcp_tools/methods/tools.py",
    find="                    key.append((entry, True, factory.cache_key(ctx)))\n",
    replace="                    key.append((entry, True, None))\n",
)
def test_a_listed_page_is_shared_only_by_callers_of_the_same_declared_key(mcp_client):
    """A factory declaring ``varies_by`` (here the tenant) has its page completed once per key
    and reused; a caller of another key is never served it. Mutation: the factory's key left
    out of the page's → the second tenant is served the first tenant's values → red."""
    registry = FactoryRegistry()
    registry.tool_factory(
        name="mcptest_factory_keyed",
        read_only=True,
        result=surface_mcp._Echo,
        mirrors_no_route=surface_mcp.TEST_TOOL,
        description="The echo factory, declared to vary by tenant.",
        varies_by=lambda ctx: ctx.tenant_id,
    )(surface_mcp.factory_echo)
    catalogue = build_catalogue(
        default_registry, page_size=500, server_name="t", server_version="1", factories=registry
    )
    with activated(catalogue):
        first, second = mcp_client(), mcp_client()
        controls.forget()
        for client in (first, first, second):
            enum = _listed(client, "mcptest_factory_keyed")["inputSchema"]["properties"]
            tenant = client.membership.tenant.pk
            assert enum["value"]["enum"] == [f"tenant-{tenant}-a", f"tenant-{tenant}-b"]
        assert len(controls.built_models) == 2  # the first tenant's page was reused
