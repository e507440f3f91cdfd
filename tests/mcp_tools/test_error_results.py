"""Tool errors must survive a conforming client: the TypeScript SDK's ``callTool`` rule.

The TypeScript SDK (Claude Code, Claude Desktop through ``mcp-remote``, the Inspector) checks
every ``tools/call`` result of a tool that declares an ``outputSchema``: without ``isError`` it
requires ``structuredContent``; whenever ``structuredContent`` is present it validates it
against the schema and throws on a mismatch — even when ``isError`` is true.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_tools import ToolFailure
from mcp_tools.catalogue.surfaces import active_catalogue
from mcp_tools.execution import error_result, failure_result, internal_error_result
from tests.mcp_tools.conftest import ROLE_NAMES
from tests.mutations import mutation
from tests.tool_errors import tool_error


def client_rejection(definition: dict[str, Any], result: dict[str, Any]) -> str | None:
    """Why a conforming (TypeScript SDK 1.x) client would throw on ``result``, or ``None``."""
    schema = definition.get("outputSchema")
    if schema is None:
        return None
    structured = result.get("structuredContent")
    if structured is None:
        return None if result.get("isError") else "no structuredContent for an outputSchema"
    errors = sorted(Draft202012Validator(schema).iter_errors(structured), key=str)
    return errors[0].message if errors else None


def _every_tool() -> list[Any]:
    return list(active_catalogue().specs)


@mutation(
    "mcp_tools/execution/results.py",
    find='        "isError": True,\n    }\n\n\ndef failure_result',
    replace=(
        '        "isError": True,\n'
        '        "structuredContent": {"error": error},\n'
        "    }\n"
        "\n"
        "\n"
        "def failure_result"
    ),
)
def test_every_framework_error_result_is_accepted_by_a_conforming_client():
    """Mutation: put ``structuredContent: {"error": …}`` back into
    ``execution.results.error_result`` → red for every tool that declares an ``outputSchema``."""
    specs = _every_tool()
    assert any(spec.output_schema is not None for spec in specs)
    for spec in specs:
        definition = spec.wire_definition()
        for result in (
            error_result("Idempotency.KeyReused", "reused"),
            failure_result(ToolFailure("Flock.Ambiguous", "two", {"candidates": [1, 2]})),
            internal_error_result(spec, "req-1"),
        ):
            assert client_rejection(definition, result) is None, (spec.name, result)
            assert tool_error(result)["code"]


@mutation(
    "mcp_tools/execution/results.py",
    find='        "isError": True,\n    }\n\n\ndef failure_result',
    replace=(
        '        "isError": True,\n'
        '        "structuredContent": {"error": error},\n'
        "    }\n"
        "\n"
        "\n"
        "def failure_result"
    ),
)
@pytest.mark.django_db
def test_every_visible_tool_answers_bad_arguments_with_an_error_a_client_accepts(mcp_client):
    """Walk every registered tool through the real endpoint with arguments no schema admits.

    Mutation: put ``structuredContent`` back on errors → red (``Tool.InvalidArguments`` results
    of tools with an ``outputSchema`` fail validation).
    """
    seen: set[str] = set()
    for role_name in ROLE_NAMES:
        client = mcp_client(role_name)
        definitions = {tool["name"]: tool for tool in _listed(client)}
        for name, definition in definitions.items():
            if name in seen:
                continue
            result = client.call(name, {"noSuchArgument": 1})["result"]
            assert client_rejection(definition, result) is None, (name, result)
            assert tool_error(result)["code"] == "Tool.InvalidArguments", (name, result)
            seen.add(name)
    factories = {name for s in active_catalogue().surfaces.values() for name in s.factories}
    assert seen == ({spec.name for spec in _every_tool()} - _unlisted_for_every_role()) | factories


def _listed(client: Any) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = client.list_tools(cursor)["result"]
        tools += page["tools"]
        cursor = page.get("nextCursor")
        if not cursor:
            return tools


def _unlisted_for_every_role() -> set[str]:
    catalogue = active_catalogue()
    visible = set().union(*(set(surface.tools) for surface in catalogue.surfaces.values()))
    return {spec.name for spec in catalogue.specs} - visible
