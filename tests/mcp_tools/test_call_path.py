"""The route of one ``tools/call`` (issue 24): each module on it entered once, in few stops.

``python bench/call_path.py`` runs this file and prints the routes; ``bench.call_path`` says
how a stop is counted.
"""

from __future__ import annotations

import json
import os

import pytest

from bench.call_path import Route, tracing
from tests.mcp_tools.conftest import HANDSHAKE

pytestmark = pytest.mark.django_db(transaction=True)

MAX_STOPS = 12


def _show(label: str, route: Route) -> None:
    if os.environ.get("CALL_PATH_PRINT"):
        print(f"\n{label}: {len(route.stops)} stops, re-entered: {route.reentered or 'none'}")
        print(f"  {route}")


def test_a_modern_read_call_enters_each_module_once_in_at_most_twelve_stops(mcp_client):
    client = mcp_client("Owner")
    client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})  # warm
    with tracing() as route:
        response = client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    assert json.loads(response.content)["result"]["isError"] is False
    _show("2026-07-28 read tools/call", route)
    assert route.stops[0] == "serving.views"
    assert route.reentered == []
    assert len(route.stops) <= MAX_STOPS


def test_a_handshake_read_call_enters_each_module_once_in_at_most_twelve_stops(mcp_client):
    client = mcp_client("Owner")
    client.call("mcptest_whoami")
    with tracing() as route:
        reply = client.rpc(
            "tools/call", {"name": "mcptest_whoami"}, **{"MCP-Protocol-Version": HANDSHAKE}
        )
    assert reply["result"]["isError"] is False
    _show("2025-11-25 read tools/call", route)
    assert route.stops[0] == "serving.views"
    assert route.reentered == []
    assert len(route.stops) <= MAX_STOPS


def test_the_worker_threads_stops_are_on_the_route(mcp_client):
    """The tool runs in a pool thread that predates the block: its stops count too."""
    client = mcp_client("Owner")
    client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    with tracing() as route:
        client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    worker = route.stops.index("execution.runner")
    assert route.stops[worker - 1 : worker + 2] == [
        "execution.bounds",
        "execution.runner",
        "execution.results",
    ]


def test_a_modern_write_call_reenters_only_the_result_shapes(mcp_client):
    """Printed beside the reads; a write adds its idempotent unit (``execution.writes``), which
    calls the tool's body inside the unit and shapes its outcome after it, both with
    ``execution.results``: that module, and only that one, is entered again."""
    client = mcp_client("Owner")
    note = {"name": "mcptest_record_note"}
    client.modern("tools/call", {**note, "arguments": {"text": "a", "idempotencyKey": "w-1"}})
    with tracing() as route:
        response = client.modern(
            "tools/call", {**note, "arguments": {"text": "b", "idempotencyKey": "w-2"}}
        )
    assert json.loads(response.content)["result"]["isError"] is False
    _show("2026-07-28 write tools/call", route)
    assert route.reentered == ["execution.results"]
