"""Values no column can hold, sent where one would be stored or compared (issue 34, item 6).

A NUL, a lone surrogate or ``1e999`` (read as ``Infinity``) in a handshake-era answer to the
mailbox, in the capabilities of a handshake-era ``initialize``, in a filter of the audit's
REST view or of its admin list: each reached PostgreSQL and came back as a 500 with a
traceback. Each is now a 400 (or JSON-RPC -32602) with a stable code, and nothing is logged
with a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_tools.models import ClientDeclaration, TaskRecord
from mcp_tools.tasks.engine import task_engine
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, McpClient
from tests.mutations import mutation

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("CLUCK_FUZZ_EXAMPLES", "25"))
DERANDOMIZE = os.environ.get("CLUCK_FUZZ_RANDOM") != "1"
# Raw JSON text: ``1e999`` cannot be written by json.dumps (it would write ``Infinity``).
POISONS = ['"nul\\u0000"', '"lone \\ud800"', "1e999"]


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logged = [record for record in caplog.records if record.exc_info]
    assert logged == [], [record.getMessage() for record in logged]


def _refused(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    error: dict[str, Any] = json.loads(response.content)["error"]
    assert error["code"] == -32602
    assert error["data"]["reason"] == "unstorable"
    return error


@mutation(
    "mcp_tools/eras/handshake.py",
    find="    if refused is not None:\n        return refused\n    delivery",
    replace="    delivery",
)
@pytest.mark.parametrize("poison", POISONS)
def test_a_handshake_answer_holding_what_no_column_holds_is_a_400(mcp_client, caplog, poison):
    """Guard: any member's answer to the mailbox (no pending request needed) whose ``result``
    holds a NUL, a lone surrogate or ``1e999`` is refused 400, -32602 ``unstorable``.
    Mutation: file it anyway → the UPDATE's jsonb parameter fails in PostgreSQL → a 500 → red."""
    client: McpClient = mcp_client("Worker")
    body = f'{{"jsonrpc": "2.0", "id": "mcp-ask-x", "result": {{"value": {poison}}}}}'
    with caplog.at_level(logging.INFO):
        response = client.post_raw(body, **{"MCP-Protocol-Version": HANDSHAKE})
    error = _refused(response, 400)
    assert error["data"]["errors"][0]["field"] == "result.value"
    _no_traceback(caplog)


@mutation(
    "mcp_tools/eras/handshake.py",
    find="            if refused is not None:\n                return refused\n",
    replace="",
)
@pytest.mark.parametrize("poison", POISONS)
def test_an_initialize_whose_capabilities_no_column_holds_is_refused(mcp_client, caplog, poison):
    """Guard: a handshake-era ``initialize`` whose ``capabilities`` hold a NUL, a lone surrogate
    or ``1e999`` is -32602 ``unstorable`` and remembers nothing. Mutation: serve it → the
    declaration's jsonb write fails after the reply was made → a 500 → red."""
    client: McpClient = mcp_client("Worker")
    params = (
        '{"protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"}, '
        f'"capabilities": {{"experimental": {{"x": {poison}}}}}}}'
    )
    body = f'{{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {params}}}'
    with caplog.at_level(logging.INFO):
        response = client.post_raw(body, **{"MCP-Protocol-Version": HANDSHAKE})
    _refused(response, 200)
    assert not ClientDeclaration.objects.exists()
    _no_traceback(caplog)


MODERN_CALL = {
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "slow_compute",
}


def _modern_meta(experimental: Any) -> dict[str, Any]:
    """2026-07-28 ``_meta`` asking for a task, with ``experimental`` among the capabilities."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "experimental": {"e": experimental},
        },
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    }


@mutation(
    "mcp_tools/eras/modern.py",
    find="        if unstorable:\n",
    replace="        if False:\n",
)
@mutation(
    "mcp_tools/eras/modern.py",
    find='("capabilities",)) if capabilities else []',
    replace='("capabilities",)) if not capabilities else []',
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("poison", POISONS)
def test_a_task_whose_client_capabilities_no_column_holds_is_refused(mcp_client, caplog, poison):
    """Guard: a 2026-07-28 ``tools/call`` run as a task keeps the client's declared capabilities
    in the task's row; capabilities holding a NUL, a lone surrogate or ``1e999`` are 400 -32602
    ``unstorable`` before any work. Mutation: serve it → the task row's jsonb write fails → a
    500 → red. Mutation: the shortcut that skips the walk for an empty declaration (the common
    case, spared per call) taken for a non-empty one → the poison is stored → red."""
    client: McpClient = mcp_client("Owner")
    client.client = Client(raise_request_exception=False)
    params = {"name": "slow_compute", "arguments": {"seconds": 0.05}}
    params["_meta"] = _modern_meta({"v": "POISON"})
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    with caplog.at_level(logging.INFO):
        response = client.post_raw(body.replace('"POISON"', poison), **MODERN_CALL)
    _refused(response, 400)
    assert not TaskRecord.objects.exists()
    _no_traceback(caplog)


def _audit_api(client: McpClient) -> Client:
    return Client(headers={"Authorization": f"Bearer {client.bearer}"})


@mutation(
    "mcp_tools/operator/api.py",
    find="            value = _text_param(request, param)",
    replace="            value = request.query_params.get(param)",
)
@pytest.mark.parametrize("query", ["tool=%00", "actor=%00x", "outcome=ok%00", "protocol=%00"])
def test_an_audit_filter_holding_nul_is_a_400(mcp_client, caplog, query):
    """Guard: ``GET /api/v1/mcp/audit/?tool=%00`` (and the other text filters) is a 400
    ``Validation.Failed`` naming ``string_contains_nul``. Mutation: filter with the raw value →
    PostgreSQL refuses the NUL → a 500 → red."""
    api = _audit_api(mcp_client("Owner"))
    with caplog.at_level(logging.INFO):
        response = api.get(f"/api/v1/mcp/audit/?{query}")
    assert response.status_code == 400, response.content
    problem = response.json()
    assert problem["code"] == "Validation.Failed"
    assert problem["errors"][0]["code"] == "string_contains_nul"
    _no_traceback(caplog)


@mutation(
    "mcp_tools/operator/api.py",
    find="    if not (raw.isascii() and raw.isdigit()) or",
    replace="    if not raw.isdigit() or",
)
@pytest.mark.parametrize("query", ["limit=%EF%BC%95", "limit=%C2%B2", "cursor=%D9%A3"])
def test_audit_paging_reads_ascii_digits_only(mcp_client, query):
    """Guard: ``limit=５`` (full-width), ``²`` or an Arabic-Indic digit is a 400 naming the
    parameter, never read as a number. Mutation: ``str.isdigit()`` alone → ``limit=５`` is a
    200 with 5 rows (``²`` a 500: int() refuses it) → red."""
    api = _audit_api(mcp_client("Owner"))
    response = api.get(f"/api/v1/mcp/audit/?{query}")
    assert response.status_code == 400, response.content
    problem = response.json()
    assert problem["code"] == "Validation.Failed"
    assert problem["errors"][0]["field"] == query.split("=")[0]


@mutation(
    "mcp_tools/operator/admin.py",
    find="            if unstorable_strings([name, *values]):",
    replace="            if False:",
)
@pytest.mark.parametrize("query", ["tool=%00", "actor_id=%00x", "q=%00", "tenant_key=a%00"])
def test_the_admin_audit_list_refuses_a_nul_filter_with_a_400(caplog, query):
    """Guard: the admin's audit list with ``?tool=%00`` (a filter, the search) is a 400, not a
    500. Mutation: no check → the filter reaches PostgreSQL with its NUL → a 500 → red."""
    staff = get_user_model().objects.create_superuser(
        username="auditor", email="auditor@example.com", password="pw"
    )
    admin = Client(raise_request_exception=False)
    admin.force_login(staff)
    with caplog.at_level(logging.INFO):
        response = admin.get(f"/admin/mcp_tools/callaudit/?{query}")
    assert response.status_code == 400, response.content[:300]
    _no_traceback(caplog)


# --- fuzzed: every JSON value a client sends that ends up in a jsonb or text column ----------

INFINITY = "__1e999__"  # written as the raw number 1e999 (json.dumps would write Infinity)
poison = st.sampled_from(["a\x00b", "\x00", "x\ud800", "\udfff", INFINITY])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=6)
    | poison,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=4) | poison, children, max_size=3)
    ),
    max_leaves=8,
)


def _raw(message: dict[str, Any]) -> str:
    return json.dumps(message).replace(f'"{INFINITY}"', "1e999")


def _texts(value: Any) -> list[str]:
    """Every string in ``value``, keys included: what a query parameter would carry."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, child in value.items() for text in [key, *_texts(child)]]
    if isinstance(value, list):
        return [text for child in value for text in _texts(child)]
    return [str(value)]


def _where(value: Any) -> list[dict[str, Any]]:
    """A message for every place ``value`` would be stored: a handshake answer's ``result`` and
    ``error``, ``initialize``'s capabilities, a task's client capabilities (2026-07-28)."""
    return [
        {"jsonrpc": "2.0", "id": "mcp-ask-fuzz", "result": {"value": value}},
        {
            "jsonrpc": "2.0",
            "id": "mcp-ask-fuzz",
            "error": {"code": 1, "message": "m", "data": value},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "clientInfo": {"name": "fuzz", "version": "1"},
                "capabilities": {"experimental": value},
            },
        },
    ]


@pytest.fixture
def owner(mcp_client: Any) -> Iterator[McpClient]:
    client: McpClient = mcp_client("Owner")
    yield client
    # The tasks the fuzz started end before the test database is flushed.
    deadline = time.monotonic() + 15
    while task_engine.in_use and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def staff() -> Client:
    user = get_user_model().objects.create_superuser(
        username="fuzz-auditor", email="fuzz-auditor@example.com", password="pw"
    )
    admin = Client(raise_request_exception=False)
    admin.force_login(user)
    return admin


@mutation(
    "mcp_tools/operator/api.py",
    find="    problems = _jsonrpc.unstorable_strings(raw)",
    replace="    problems = []",
)
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(value=json_values)
def test_no_stored_json_value_is_ever_a_server_error(owner, staff, value):
    """Every JSON value sent where ``mcp_tools`` stores it (mailbox answers, declared
    capabilities, a task's client capabilities and input responses) or compares it with a
    column (the audit's REST filters, the admin's filters and search): whatever it holds,
    never a 5xx. Mutation:
    the audit's REST filters take text with a NUL → PostgreSQL refuses it → a 500 → red."""
    for message in _where(value):
        response = owner.post_raw(_raw(message), **{"MCP-Protocol-Version": HANDSHAKE})
        assert response.status_code < 500, (message, response.content[:300])
    for params in (
        {"_meta": _modern_meta({"v": value}), "inputResponses": {"k": {"v": value}}},
        {"_meta": _modern_meta({"v": value})},
    ):
        task = {"name": "slow_compute", "arguments": {"seconds": 0.05}, **params}
        message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": task}
        response = owner.post_raw(_raw(message), **MODERN_CALL)
        assert response.status_code < 500, (message, response.content[:300])
    text = "".join(_texts(value))[:40].replace(INFINITY, "1e999")
    wire = quote(text, safe="", encoding="utf-8", errors="surrogatepass")
    api = _audit_api(owner)
    for param in ("tool", "actor", "outcome", "protocol", "since", "until", "limit", "cursor"):
        response = api.get(f"/api/v1/mcp/audit/?{param}={wire}")
        assert response.status_code < 500, (param, text, response.content[:300])
    for param in ("tool", "actor_id", "tenant_key", "outcome", "q"):
        response = staff.get(f"/admin/mcp_tools/callaudit/?{param}={wire}")
        assert response.status_code < 500, (param, text)
