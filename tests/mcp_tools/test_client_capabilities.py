"""A tool that needs a client capability is refused, before it runs, to a client without it."""

from __future__ import annotations

import json

import pytest

from tests.mcp_tools.conftest import modern_meta
from tests.mutations import mutation
from tests.tool_errors import tool_error

pytestmark = pytest.mark.django_db


def _modern_call(client, name: str, capabilities: dict) -> tuple[int, dict]:
    meta = {**modern_meta(), "io.modelcontextprotocol/clientCapabilities": capabilities}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": meta},
    }
    response = client.post_raw(
        json.dumps(body),
        **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name},
    )
    return response.status_code, json.loads(response.content)


@mutation(
    "mcp_tools/methods/tools.py",
    find="c for c in spec.required_client_capabilities if c not in",
    replace="c for c in () if c not in",
)
def test_an_undeclared_capability_is_minus_32021_with_http_400_and_the_tool_never_runs(
    mcp_client,
):
    """Mutation: make ``methods.tools.call_tool`` find no capability missing (``missing`` always
    empty) → red (the tool runs and answers 200)."""
    client = mcp_client()
    status, reply = _modern_call(client, "test_missing_capability", {"elicitation": {}})
    assert status == 400
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}

    status, reply = _modern_call(client, "test_missing_capability", {"sampling": {}})
    assert status == 200 and reply["result"]["isError"] is False


def test_a_handshake_era_client_gets_a_tool_error_naming_the_capability(mcp_client):
    """A stateless server never sees the handshake era's ``initialize`` capabilities."""
    result = mcp_client().call("test_missing_capability")["result"]
    error = tool_error(result)
    assert error["code"] == "Client.CapabilityRequired"
    assert error["data"] == {"requiredCapabilities": ["sampling"]}
