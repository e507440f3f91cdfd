"""One structured log record per tool call (``mcp_tools.calls``), and its JSON form.

``transactional_db``: tools run in worker threads with their own DB connections.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from types import SimpleNamespace

import pytest
from django.test import override_settings

from mcp_tools.observability import JsonFormatter, tool_call
from mcp_tools.observability.records import EXTRA_FIELDS
from tests.mcp_tools.conftest import HANDSHAKE, MODERN
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cret-argument-value-4711"
CORE_FIELDS = {
    "request_id",
    "protocol",
    "era",
    "protocol_version",
    "method",
    "rpc_id",
    "tenant_id",
    "actor_id",
    "role",
    "tool",
    "outcome",
    "error_code",
    "replayed",
    "duration_ms",
    "trace_id",
    "span_id",
}


@pytest.fixture
def records(caplog):
    """The call records written so far (``mcp_tools.calls`` records that carry an outcome)."""
    caplog.set_level(logging.INFO, logger="mcp_tools.calls")

    def read() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.name == "mcp_tools.calls" and hasattr(r, "outcome")]

    return read


@mutation(
    "mcp_tools/methods/tools.py",
    find="@observability.observed_tool_call  # one log record, metric sample and span per call\n",
    replace="",
)
def test_each_tool_call_writes_one_record_with_who_what_how_and_how_long(mcp_client, records):
    """Mutation: drop ``@observability.observed_tool_call`` from ``methods.tools.call_tool`` → no
    record → red."""
    client = mcp_client("Owner")
    client.call("mcptest_whoami")
    (record,) = records()
    membership = client.membership
    assert record.levelno == logging.INFO
    assert len(record.request_id) == 32
    assert record.tenant_id == membership.tenant_id
    assert record.actor_id == membership.user_id
    assert record.role == "Owner"
    assert record.tool == "mcptest_whoami"
    assert record.method == "tools/call"
    assert (record.protocol, record.era, record.protocol_version) == ("mcp", "handshake", HANDSHAKE)
    assert (record.outcome, record.error_code, record.replayed) == ("ok", None, False)
    assert record.rpc_id == 1
    assert record.duration_ms > 0
    assert "mcptest_whoami -> ok" in record.getMessage()


@mutation(
    "mcp_tools/observability/records.py",
    find="era=req.era.label,",
    replace='era="handshake",',
)
def test_the_2026_era_is_recorded_as_such(mcp_client, records):
    """Mutation: pass ``era="handshake"`` whatever the era in ``observed_tool_call`` → red."""
    response = mcp_client().modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    assert response.status_code == 200
    (record,) = records()
    assert (record.era, record.protocol_version, record.outcome) == (MODERN, MODERN, "ok")


@mutation(
    "mcp_tools/observability/records.py",
    find='elif result.get("isError") is True:',
    replace="elif False:",
)
def test_a_tool_error_is_recorded_with_its_code(mcp_client, records):
    """Mutation: classify every result as ok (ignore ``isError``) → red."""
    client = mcp_client()
    client.call("mcptest_refuse", {"text": "no", "idempotencyKey": "k1"})
    client.call("mcptest_whoami", {"asOfDate": "not a date"})
    refused, invalid = records()
    assert (refused.outcome, refused.error_code) == ("tool_error", "Test.Refused")
    assert (invalid.outcome, invalid.error_code) == ("tool_error", "Tool.InvalidArguments")


@mutation(
    "mcp_tools/observability/records.py",
    find='_WARNING_CODES: Final = frozenset({"Tool.InternalError", "-32603"})',
    replace='_WARNING_CODES: Final = frozenset({"-32603"})',
)
def test_a_crashing_tool_is_recorded_at_warning(mcp_client, records):
    """Mutation: drop ``"Tool.InternalError"`` from ``records._WARNING_CODES`` → red (INFO)."""
    mcp_client().call("mcptest_crash")
    (record,) = records()
    assert (record.outcome, record.error_code) == ("tool_error", "Tool.InternalError")
    assert record.levelno == logging.WARNING


@mutation(
    "mcp_tools/observability/records.py",
    find="isinstance(structured, Mapping) and structured.get(REPLAYED_FIELD) is True",
    replace="False",
)
def test_a_replayed_write_is_recorded_as_replayed(mcp_client, records):
    """Mutation: leave ``replayed`` False whatever ``structuredContent.replayed`` says → red."""
    client = mcp_client()
    args = {"text": "hello", "idempotencyKey": "key-1"}
    client.call("mcptest_record_note", args)
    client.call("mcptest_record_note", args)
    first, second = records()
    assert (first.outcome, first.replayed) == ("ok", False)
    assert (second.outcome, second.replayed) == ("ok", True)


@mutation("mcp_tools/observability/records.py", find="            call.reply(reply)\n", replace="")
def test_an_unknown_tool_is_a_protocol_error(mcp_client, records):
    """The error is read back from the reply. Mutation: drop ``call.reply(reply)`` from
    ``observed_tool_call`` → red (recorded as an internal error, -32603)."""
    mcp_client().call("no_such_tool")
    (record,) = records()
    assert (record.outcome, record.error_code, record.tool) == (
        "protocol_error",
        "-32602",
        "no_such_tool",
    )


@mutation(
    "mcp_tools/serving/views.py",
    find="        observability.rate_limited(request, group=RATE_GROUP)  # observability\n",
    replace="",
)
@override_settings(MCP_TOOLS_RATE="1/m")
def test_a_rate_limited_request_is_recorded_without_a_tool(mcp_client, records):
    """Mutation: drop ``observability.rate_limited`` from the view's 429 branch → red."""
    client = mcp_client()
    client.call("mcptest_whoami")
    refused = client.message("tools/call", {"name": "mcptest_whoami"})
    assert refused.status_code == 429
    allowed, limited = records()
    assert allowed.outcome == "ok"
    assert (limited.outcome, limited.error_code, limited.tool) == ("rate_limited", "-32012", None)
    assert limited.tenant_id == client.membership.tenant_id
    assert limited.actor_id == client.membership.user_id
    assert limited.levelno == logging.WARNING


@mutation(
    "mcp_tools/observability/records.py",
    find="        extras=_extras(\n",
    replace='        extras={"arguments": arguments} | _extras(\n',
)
@mutation(
    "mcp_tools/observability/records.py",
    find='sorted(name if name in declared else "?" for name in sent)',
    replace="sorted(sent)",
)
@mutation(
    Edit(
        "mcp_tools/observability/records.py",
        find="self.outcome, self.error_code = TOOL_ERROR, _tool_error_code(result)",
        replace=(
            "self.outcome, self.error_code = TOOL_ERROR, _tool_error_code(result)\n"
            '            self.error_message = json.dumps(result.get("content"))'
        ),
    ),
    Edit(
        "mcp_tools/observability/records.py",
        find='            "error_code": self.error_code,\n',
        replace=(
            '            "error_code": self.error_code,\n'
            '            "error_message": self.error_message,\n'
        ),
    ),
)
@override_settings(MCP_TOOLS_CALL_LOG_EXTRA_FIELDS=sorted(EXTRA_FIELDS))
def test_argument_values_never_appear_in_the_record(mcp_client, records):
    """Every optional field on, a write, a refusal quoting its argument and a bad argument:
    the secret is in none of the records, raw or as JSON. Mutations, each red: add the
    arguments to the record's fields; write an undeclared argument name as sent (not "?");
    record the tool error's message (its content) as a field."""
    client = mcp_client()
    client.call("mcptest_record_note", {"text": SECRET, "idempotencyKey": SECRET})
    refused = client.call("mcptest_refuse", {"text": SECRET, "idempotencyKey": "k2"})
    assert SECRET in json.dumps(refused)  # the tool's own answer quotes it; the record must not
    client.call("mcptest_record_note", {"text": "x", "idempotencyKey": "k3", SECRET: SECRET})
    written = records()
    assert len(written) == 3
    formatter = JsonFormatter()
    for record in written:
        assert SECRET not in formatter.format(record)
        assert SECRET not in repr(vars(record))
    assert written[0].argument_names == ["idempotencyKey", "text"]
    assert written[2].argument_names == ["?", "idempotencyKey", "text"]


@mutation(
    "mcp_tools/observability/records.py",
    find="    return frozenset(names) & EXTRA_FIELDS",
    replace="    return frozenset(EXTRA_FIELDS)",
)
def test_optional_fields_appear_only_when_asked(mcp_client, records):
    """Mutation: ignore ``MCP_TOOLS_CALL_LOG_EXTRA_FIELDS`` in ``records._extras`` (every
    optional field always on) → red."""
    client = mcp_client()
    client.call("mcptest_whoami")
    with override_settings(MCP_TOOLS_CALL_LOG_EXTRA_FIELDS=["client", "email"]):
        client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}})
    plain, extra = records()
    assert not EXTRA_FIELDS & set(vars(plain))
    assert extra.client == "pytest/0"
    assert extra.email == client.membership.user.email
    assert not hasattr(extra, "argument_names")


@mutation(
    "mcp_tools/observability/jsonlog.py",
    find=(
        "        for key, value in vars(record).items():\n"
        '            if key not in _STANDARD and not key.startswith("_"):\n'
        "                payload[key] = value\n"
    ),
    replace="",
)
def test_the_json_formatter_writes_one_object_with_the_call_fields(mcp_client, records):
    """Mutation: skip the record's ``extra`` attributes in ``JsonFormatter.format`` → red."""
    mcp_client().call("mcptest_whoami")
    (record,) = records()
    line = JsonFormatter(fields=["process"], static={"service": "acme"}).format(record)
    assert "\n" not in line
    payload = json.loads(line)
    assert CORE_FIELDS <= set(payload)
    assert payload["logger"] == "mcp_tools.calls"
    assert payload["level"] == "INFO"
    assert payload["service"] == "acme"
    assert payload["process"] == record.process
    assert payload["outcome"] == "ok" and payload["tool"] == "mcptest_whoami"
    assert payload["time"].endswith("+00:00")


@mutation("mcp_tools/observability/jsonlog.py", find="default=str, ", replace="")
def test_the_json_formatter_keeps_tracebacks_and_unserialisable_values():
    """Mutation: drop ``default=str`` from ``JsonFormatter.format``'s ``json.dumps`` → red."""
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed %s", ("here",), sys.exc_info()
        )
    record.thing = object()
    payload = json.loads(JsonFormatter().format(record))
    assert payload["message"] == "failed here"
    assert "RuntimeError: boom" in payload["exception"]
    assert payload["thing"].startswith("<object object")


@mutation(
    "mcp_tools/observability/records.py",
    find="        protocol=protocol,\n        method=method,\n",
    replace='        protocol="mcp",\n        method=method,\n',
)
def test_an_a2a_invocation_writes_the_same_record(records):
    """The record is protocol-neutral: an adapter opens ``tool_call`` with its own protocol and
    notes the tool's result from the thread that ran it. Mutation: build the ``ToolCall`` with
    ``protocol="mcp"`` in ``tool_call`` → red."""
    ctx = SimpleNamespace(
        protocol_version="a2a/1.0",
        request_id="r" * 32,
        tenant_id=7,
        user_id=11,
        role=SimpleNamespace(label="Sales"),
        email="sales@example.com",
    )
    with tool_call(
        ctx, tool="acme_list", known=True, protocol="a2a", method="SendMessage", era="1.0"
    ) as call:
        done = threading.Thread(
            target=call.result, args=({"content": [], "isError": False},), name="elsewhere"
        )
        done.start()
        done.join()
    (record,) = records()
    assert (record.protocol, record.method, record.era, record.tool) == (
        "a2a",
        "SendMessage",
        "1.0",
        "acme_list",
    )
    assert (record.tenant_id, record.actor_id, record.role, record.outcome) == (
        7,
        11,
        "Sales",
        "ok",
    )
