"""The second layer of role filtering: a call asks the tool's live policy again, whatever the
caller's prepared surface lists (``methods.tools.lookup``)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from cluck.roles import FARM_ROLES
from mcp_tools.catalogue.surfaces import activated, active_catalogue
from tests.mutations import mutation

OWNER_ONLY_TOOL = "mcptest_owner_report"


@pytest.mark.django_db
@mutation(
    "mcp_tools/methods/tools.py",
    find="return spec if evaluate(spec.policy, req.ctx.actor) else None",
    replace="return spec",
)
def test_a_tool_on_a_stale_surface_is_refused_at_call_time_by_its_policy(mcp_client):
    """Surfaces are built once per role. Here the Worker is handed the Owner's surface (as a
    catalogue prepared before a policy changed, or a role mapped to the wrong surface, would
    do): the owner-only tool is listed, but calling it is an unknown tool (-32602, as for a
    hidden one) and it never runs.

    Mutation: drop the policy re-check from ``methods.tools.lookup`` → the Worker gets the
    owner-only report → red.
    """
    catalogue = active_catalogue()
    surfaces = dict(catalogue.surfaces)
    surfaces[FARM_ROLES["Worker"]] = catalogue.surface_for(FARM_ROLES["Owner"])
    with activated(dataclasses.replace(catalogue, surfaces=surfaces)):
        worker = mcp_client("Worker")
        listed = {tool["name"] for tool in worker.list_tools()["result"]["tools"]}
        called = worker.call(OWNER_ONLY_TOOL)
        owner_called = mcp_client("Owner").call(OWNER_ONLY_TOOL)
    assert OWNER_ONLY_TOOL in listed  # the stale surface offers it
    assert called["error"]["code"] == -32602
    assert "owners only" not in json.dumps(called)
    assert "owners only" in json.dumps(owner_called["result"])
