"""Malformed params of every method beyond tools: a precise JSON-RPC error, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp_tools.conftest import HANDSHAKE
from tests.mutations import mutation

pytestmark = pytest.mark.django_db

JUNK: list[Any] = [None, 1, "x", [], {}, {"a": 1}, True, "\u0000", "x" * 5000]

SHAPES: dict[str, list[str]] = {
    "resources/read": ["uri"],
    "resources/list": ["cursor"],
    "resources/templates/list": ["cursor"],
    "prompts/list": ["cursor"],
    "prompts/get": ["name", "arguments"],
    "completion/complete": ["ref", "argument", "context"],
    "tasks/get": ["taskId"],
    "tasks/update": ["taskId", "inputResponses"],
    "tasks/cancel": ["taskId"],
    "logging/setLevel": ["level"],
    "tools/call": ["requestState", "inputResponses", "task", "_meta"],
}
VALID: dict[str, dict[str, Any]] = {
    "resources/read": {"uri": "test://static-text"},
    "prompts/get": {"name": "mcptest_owner_prompt"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "mcptest_owner_prompt"},
        "argument": {"name": "x", "value": ""},
    },
    "tools/call": {"name": "mcptest_whoami", "arguments": {}},
    "logging/setLevel": {"level": "info"},
}


def _cases() -> list[tuple[str, str, Any]]:
    return [(method, key, junk) for method, keys in SHAPES.items() for key in keys for junk in JUNK]


@mutation(
    "mcp_tools/tasks/store.py",
    find="if not isinstance(task_id, str) or not TASK_ID_RE.fullmatch(task_id):",
    replace="if not isinstance(task_id, str) or len(task_id) > 64:",
)
@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_junk_in_any_param_is_a_json_rpc_answer_never_a_server_error(mcp_client, era):
    """Mutation: let ``TaskStore._owned`` take any string of up to 64 characters as a task id
    (not only the shape it hands out) → red (a NUL in ``taskId`` reaches PostgreSQL)."""
    client = mcp_client()
    failures = []
    for method, key, junk in _cases():
        params = {**VALID.get(method, {}), key: junk}
        if era == "handshake":
            response = client.message(method, params, **{"MCP-Protocol-Version": HANDSHAKE})
        else:
            response = client.modern(
                method, params, capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}}
            )
        body = json.loads(response.content) if response.content else None
        ok = (
            response.status_code < 500
            and isinstance(body, dict)
            and ("result" in body or body.get("error", {}).get("code", 0) not in (-32603, 0))
        )
        if not ok:
            failures.append((method, key, repr(junk)[:20], response.status_code, body))
    assert failures == []


NUL_CASES: list[tuple[str, dict[str, Any]]] = [
    ("prompts/get", {"name": "cluck_summarise_day", "arguments": {"flock": "a\u0000"}}),
    ("prompts/get", {"name": "cluck_summarise_day", "arguments": {"date": "2026-01-01\u0000"}}),
    ("resources/read", {"uri": "farm://flocks/1\u0000"}),
    ("resources/read", {"uri": "farm://days/2026-01-01\u0000"}),
    ("resources/read", {"uri": "test://template/a\u0000/data"}),  # a str variable
    ("resources/read", {"uri": "test://template/a%00/data"}),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "cluck_summarise_day"},
            "argument": {"name": "flock", "value": "a\u0000"},
            "context": {"arguments": {"date": "\u0000"}},
        },
    ),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "farm://flocks/{flock_id}"},
            "argument": {"name": "flock_id", "value": "\u0000"},
        },
    ),
]


@mutation(
    "mcp_tools/authoring/prompts.py",
    find="        if unstorable:\n            return [",
    replace="        if False:\n            return [",
)
@mutation(
    "mcp_tools/methods/features.py",
    find="    if unstorable:\n        problems = ",
    replace="    if False:\n        problems = ",
)
@mutation(
    "mcp_tools/authoring/resources.py",
    find="if values is None or _jsonrpc.unstorable_strings(values):",
    replace="if values is None:",
)
@pytest.mark.parametrize(("method", "params"), NUL_CASES)
def test_a_nul_in_a_prompt_resource_or_completion_never_reaches_application_code(
    mcp_client, method, params
):
    """Mutation: drop the ``unstorable_strings`` check from
    ``mcp_tools.authoring.prompts.PromptSpec.validate`` → red (the flock name reaches PostgreSQL,
    which
    refuses a NUL: an internal error); from ``handlers._complete`` → red (the value reaches
    the completer); from ``ResourceTemplateSpec.bind`` → red (the variable reaches the
    resource)."""
    response = mcp_client().message(method, params, **{"MCP-Protocol-Version": HANDSHAKE})
    body = json.loads(response.content)
    assert response.status_code == 200, body
    assert body["error"]["code"] == -32602, body
