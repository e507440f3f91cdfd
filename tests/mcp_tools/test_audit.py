"""The stored call audit: one ``CallAudit`` row per tool or skill call, its admin, its REST
view for a tenant's admins, its retention purge, and its writer off the request's path.

``transactional_db``: tools run in worker threads and rows are written by the audit's own
thread, each with its own connection.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from pydantic import BaseModel

from mcp_tools.authoring.registry import Registry
from mcp_tools.call.context import CallContext
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from mcp_tools.models import CallAudit
from mcp_tools.observability import audit
from tenancy import AUTHENTICATED
from tests.a2a_tools.conftest import A2AClient
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, McpClient
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cret-argument-value-4711"


def rows(**filters: Any) -> list[CallAudit]:
    """Every audit row written so far (the writer flushed first), oldest first."""
    audit.flush()
    return list(CallAudit.objects.filter(**filters).order_by("id"))


def request_ids(client: McpClient) -> list[str]:
    return [row.request_id for row in rows(actor_id=str(client.membership.user_id))]


@mutation(
    "mcp_tools/observability/records.py",
    find="            audit.record(self)  # the stored call audit",
    replace="            pass  # the stored call audit",
)
def test_each_tool_call_writes_one_audit_row_with_who_what_how_and_how_long(mcp_client):
    """Guard: one row per call, naming tenant, actor, credential, tool, protocol and era,
    outcome, duration. Mutation: drop ``audit.record(self)`` from ``ToolCall.finish`` → no row
    → red."""
    client = mcp_client("Owner")
    client.call("mcptest_whoami")
    membership = client.membership
    (row,) = rows(actor_id=str(membership.user_id))
    assert row.tenant_key == str(membership.tenant_id)
    assert (row.role, row.tool, row.protocol) == ("Owner", "mcptest_whoami", "mcp")
    assert (row.era, row.protocol_version) == ("handshake", HANDSHAKE)
    assert (row.outcome, row.error_code, row.replayed) == ("ok", "", False)
    assert row.credential == audit.TOKEN and row.token_id is not None
    assert len(row.request_id) == 32 and row.duration_ms is not None and row.duration_ms > 0
    assert row.arguments is None and row.idempotency_key == ""


def test_the_2026_era_and_a_tool_error_are_audited_as_such(mcp_client):
    client = mcp_client("Owner")
    assert client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}}).status_code
    client.call("mcptest_refuse", {"text": "no", "idempotencyKey": "k1"})
    modern, refused = rows(actor_id=str(client.membership.user_id))
    assert (modern.era, modern.protocol_version, modern.outcome) == (MODERN, MODERN, "ok")
    assert (refused.outcome, refused.error_code) == ("tool_error", "Test.Refused")


@mutation(
    "mcp_tools/observability/audit.py",
    find="    if spec is None or not enabled():",
    replace="    if not enabled():",
)
def test_a_hidden_tool_call_writes_no_audit_row(mcp_client):
    """Guard: a name that is no tool of the caller's surface (here: an owner-only tool called
    by a worker) is refused -32602 and never audited; the worker's next, visible call is.
    Mutation: audit calls whose ``spec`` is ``None`` → a row for the hidden tool → red."""
    client = mcp_client("Worker")
    hidden = client.call("mcptest_owner_report")
    assert hidden["error"]["code"] == -32602
    client.call("mcptest_whoami")
    mine = rows(actor_id=str(client.membership.user_id))
    assert [row.tool for row in mine if row.tool == "mcptest_owner_report"] == []
    assert "mcptest_whoami" in {row.tool for row in mine}


def test_a_disabled_audit_writes_nothing(mcp_client):
    client = mcp_client("Owner")
    with override_settings(MCP_TOOLS_AUDIT=False):
        client.call("mcptest_whoami")
    client.call("mcptest_crash")
    tools = [row.tool for row in rows(actor_id=str(client.membership.user_id))]
    assert "mcptest_whoami" not in tools
    assert "mcptest_crash" in tools


@mutation(
    "mcp_tools/observability/audit.py",
    find="        key = sha256_hex(idempotency_key)",
    replace="        key = ''",
)
def test_a_write_row_names_the_idempotency_record_it_used_and_its_replay(mcp_client):
    """Mutation: leave ``idempotency_key`` empty → the row names no record → red."""
    client = mcp_client("Owner")
    args = {"text": SECRET, "idempotencyKey": "audit-key-1"}
    client.call("mcptest_record_note", args)
    client.call("mcptest_record_note", args)
    first, replay = rows(actor_id=str(client.membership.user_id))
    assert (first.replayed, replay.replayed) == (False, True)
    record = first.idempotency_record()
    assert record is not None and record.tenant_id == first.tenant_key
    assert replay.idempotency_record() == record
    # The default redaction policy keeps no argument value at all.
    assert first.arguments is None
    assert SECRET not in json.dumps([row.arguments for row in rows()])


class Echo(BaseModel):
    text: str


class Weighed(BaseModel):
    topic: str
    weight: float


def _policy_catalogue() -> Any:
    registry = Registry()

    @registry.tool(
        name="audit_kept",
        read_only=True,
        policy=AUTHENTICATED,
        description="Keeps one argument's value in the audit.",
        audit_arguments=["topic"],
    )
    def kept(ctx: CallContext, *, topic: str, secret_note: str = "") -> Echo:
        return Echo(text=topic)

    @registry.tool(
        name="audit_redacted",
        read_only=True,
        policy=AUTHENTICATED,
        description="Redacts its arguments with a callable policy.",
        audit_arguments=lambda arguments: {"length": len(str(arguments.get("text", "")))},
    )
    def redacted(ctx: CallContext, *, text: str) -> Echo:
        return Echo(text=text)

    @registry.tool(
        name="audit_weighed",
        read_only=True,
        policy=AUTHENTICATED,
        description="Keeps both its arguments' values in the audit.",
        audit_arguments=["topic", "weight"],
    )
    def weighed(ctx: CallContext, *, topic: str, weight: float = 0.0) -> Weighed:
        return Weighed(topic=topic, weight=0.0)  # the audit keeps the argument, not this

    return build_catalogue(registry, page_size=50, server_name="t", server_version="1")


@mutation(
    "mcp_tools/observability/audit.py",
    find="    return {name: _bounded(arguments[name]) for name in policy if name in arguments}",
    replace="    return {name: _bounded(value) for name, value in arguments.items()}",
)
def test_argument_values_are_kept_only_as_the_tools_policy_says(mcp_client):
    """Mutation: keep every argument of a tool that names some → the secret is stored → red."""
    client = mcp_client("Owner")
    with activated(_policy_catalogue()):
        client.call("audit_kept", {"topic": "eggs", "secretNote": SECRET})
        client.call("audit_redacted", {"text": SECRET})
    kept, redacted = rows(actor_id=str(client.membership.user_id))
    assert kept.arguments == {"topic": "eggs"}
    assert redacted.arguments == {"length": len(SECRET)}


def test_an_a2a_skill_call_writes_an_audit_row(a2a_member):
    client = a2a_member
    client.task("mcptest_whoami", {})
    (row,) = rows(actor_id=str(client.membership.user_id))
    assert (row.protocol, row.tool, row.outcome, row.era) == ("a2a", "mcptest_whoami", "ok", "1.0")
    assert row.tenant_key == str(client.membership.tenant_id)
    assert row.protocol_version == "a2a/1.0"


@pytest.fixture
def a2a_member(db: Any, settings: Any) -> A2AClient:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    return A2AClient(bearer_for(membership), membership)  # type: ignore[arg-type]


# --- the REST view for a tenant's admins ----------------------------------------------------


def _api(bearer: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {bearer}"})


def _read(client: Client, **params: str) -> Any:
    response = client.get("/api/v1/mcp/audit/", params)
    assert response.status_code == 200, response.content
    return response.json()


@mutation(
    "mcp_tools/operator/api.py",
    find="        rows = CallAudit.objects.filter(tenant_key=_tenant_key(request))",
    replace="        rows = CallAudit.objects.all()",
)
def test_a_tenant_admin_reads_only_its_own_tenants_audit(mcp_client):
    """Guard: farm B's owner reads B's rows and never one of A's, whatever the filters.
    Mutation: drop the tenant filter in ``CallAuditListApi.get`` → A's rows appear → red."""
    alice, bob = mcp_client("Owner"), mcp_client("Owner")
    alice.call("mcptest_whoami")
    alice.call("mcptest_crash")
    bob.call("mcptest_whoami")
    audit.flush()
    api = _api(bob.bearer)
    seen = _read(api)["items"] + _read(api, actor=str(alice.membership.user_id))["items"]
    assert {row["actor_id"] for row in seen} == {str(bob.membership.user_id)}
    assert request_ids(alice) and not set(request_ids(alice)) & {r["request_id"] for r in seen}


def test_the_audit_view_filters_and_pages(mcp_client):
    client = mcp_client("Owner")
    for _ in range(3):
        client.call("mcptest_whoami")
    client.call("mcptest_crash")
    audit.flush()
    api = _api(client.bearer)
    crashed = _read(api, outcome="tool_error")["items"]
    assert [(r["tool"], r["error_code"]) for r in crashed] == [
        ("mcptest_crash", "Tool.InternalError")
    ]
    assert len(_read(api, tool="mcptest_whoami")["items"]) == 3
    first = _read(api, limit="2")
    second = _read(api, limit="2", cursor=first["next"])
    assert second["next"] is None
    ids = [r["id"] for r in first["items"] + second["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 4
    since = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
    assert _read(api, since=since)["items"] == []


@pytest.mark.parametrize(
    "params", [{"limit": "0"}, {"limit": "x"}, {"cursor": "-1"}, {"since": "yesterday"}]
)
def test_bad_audit_queries_are_400_not_500(mcp_client, params):
    client = mcp_client("Owner")
    response = _api(client.bearer).get("/api/v1/mcp/audit/", params)
    assert response.status_code == 400


@pytest.mark.parametrize("role", ["Sales", "Worker", "ReadOnly"])
def test_members_who_are_not_admins_cannot_read_the_audit(mcp_client, role):
    client = mcp_client(role)
    response = _api(client.bearer).get("/api/v1/mcp/audit/")
    assert response.status_code == 403


def test_the_audit_view_needs_authentication():
    assert Client().get("/api/v1/mcp/audit/").status_code == 401


# --- admin, retention, writer --------------------------------------------------------------


def test_the_admin_lists_and_filters_rows_but_never_changes_them(mcp_client):
    client = mcp_client("Owner")
    client.call("mcptest_whoami")
    (row,) = rows(actor_id=str(client.membership.user_id))
    staff = get_user_model().objects.create_superuser(
        username="auditor", email="auditor@example.com", password="pw"
    )
    admin = Client()
    admin.force_login(staff)
    listing = admin.get("/admin/mcp_tools/callaudit/", {"tool": "mcptest_whoami"})
    assert listing.status_code == 200 and b"mcptest_whoami" in listing.content
    assert admin.get("/admin/mcp_tools/callaudit/add/").status_code == 403
    change = admin.post(f"/admin/mcp_tools/callaudit/{row.id}/change/", {"tool": "x"})
    assert change.status_code == 403
    delete = admin.post(f"/admin/mcp_tools/callaudit/{row.id}/delete/", {"post": "yes"})
    assert delete.status_code == 403
    assert CallAudit.objects.filter(id=row.id, tool="mcptest_whoami").exists()


def test_purge_deletes_rows_past_the_retention_only(mcp_client):
    client = mcp_client("Owner")
    client.call("mcptest_whoami")
    client.call("mcptest_crash")
    old, recent = rows(actor_id=str(client.membership.user_id))
    CallAudit.objects.filter(id=old.id).update(at=dt.datetime.now(dt.UTC) - dt.timedelta(days=91))
    call_command("purge_mcp_audit", "--older-than", "90d")
    remaining = {row.id for row in rows(actor_id=str(client.membership.user_id))}
    assert old.id not in remaining and recent.id in remaining
    with pytest.raises(CommandError):
        call_command("purge_mcp_audit", "--older-than", "ninety days")


def test_the_writer_batches_and_drops_rather_than_blocks_when_full():
    written: list[list[dict[str, Any]]] = []
    entered, release = threading.Event(), threading.Event()

    def write(batch: list[dict[str, Any]]) -> None:
        entered.set()
        assert release.wait(10)
        written.append(batch)

    writer = audit.AuditWriter(max_queue=3, batch_size=10, linger_seconds=0, write=write)
    writer.put({"n": 0})
    assert entered.wait(10)  # the writer thread holds row 0, blocked in ``write``
    for n in range(1, 6):
        writer.put({"n": n})  # three fit, two are dropped at once: the caller never waits
    assert writer.dropped == 2
    release.set()
    writer.flush()
    assert [[row["n"] for row in batch] for batch in written] == [[0], [1, 2, 3]]


# --- one row never costs another its place (issue 34, item 1) -------------------------------


# Raw JSON: ``1e999`` is a float Python reads as ``inf`` (stored as ``Infinity`` once).
POISONED_ARGUMENTS = (
    '{"topic": "nul\\u0000here"}',
    '{"topic": "lone \\ud800 surrogate"}',
    '{"topic": 1e999}',
)


def _raw_call(client: McpClient, arguments: str) -> dict[str, Any]:
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        f'"params": {{"name": "audit_weighed", "arguments": {arguments}}}}}'
    )
    response = client.post_raw(body, **{"MCP-Protocol-Version": HANDSHAKE})
    assert response.status_code == 200, response.content
    return json.loads(response.content)


@pytest.fixture
def one_batch(settings: Any) -> Iterator[None]:
    """A writer that waits 3 s before each batch: every row queued meanwhile is one ``COPY``."""
    settings.MCP_TOOLS_AUDIT_BATCH_SIZE = 500
    settings.MCP_TOOLS_AUDIT_LINGER_SECONDS = 3
    audit.AUDIT_WRITER.reset()
    yield
    audit.AUDIT_WRITER.reset()  # written, then dropped: the next test's writer has its settings


@mutation(
    "mcp_tools/observability/audit.py",
    find='        noted = {**noted, "arguments": None}',
    replace="        pass",
)
@mutation(
    Edit(
        "mcp_tools/observability/audit.py",
        find='        noted = {**noted, "arguments": None}',
        replace="        pass",
    ),
    Edit(
        "mcp_tools/observability/audit.py",
        find="    if not storable(value):\n        return _UNSTORABLE\n",
        replace="",
    ),
    Edit("mcp_tools/observability/audit.py", find="        _write_alone(rows)", replace=""),
)
def test_a_poisoned_call_in_the_batch_window_costs_no_other_row(mcp_client, one_batch):
    """Guard, issue 34's reproduction: calls whose argument holds a NUL, a lone surrogate or
    ``1e999`` are refused (``Tool.InvalidArguments``) among calls of two tenants inside one
    batch; every other row is written, by content, and the refused calls keep no argument
    value. Mutations: keep a refused call's (sanitized) arguments → its row holds them → red;
    the issue's code (raw values kept, no row-by-row retry) → the ``COPY`` fails and the whole
    batch is lost → red."""
    alice, bob = mcp_client("Owner"), mcp_client("Owner")
    with activated(_policy_catalogue()):
        expected = []
        for n, poisoned in enumerate(POISONED_ARGUMENTS):
            for client in (alice, bob):
                topic = f"{client.membership.tenant_id}-{n}"
                assert "error" not in client.call("audit_weighed", {"topic": topic})
                expected.append((client.membership.tenant_id, topic))
            refused = _raw_call(alice, poisoned)
            assert refused["result"]["isError"] is True
            error = json.loads(refused["result"]["content"][0]["text"])["error"]
            assert error["code"] == "Tool.InvalidArguments"
    written = rows(tool="audit_weighed")
    assert sorted(
        (int(row.tenant_key), (row.arguments or {})["topic"])
        for row in written
        if row.outcome == "ok"
    ) == sorted(expected)
    refused_rows = [row for row in written if row.error_code == "Tool.InvalidArguments"]
    assert [(row.tenant_key, row.arguments) for row in refused_rows] == [
        (str(alice.membership.tenant_id), None)
    ] * len(POISONED_ARGUMENTS)


@mutation(
    "mcp_tools/observability/audit.py",
    find="    if not storable(value):\n        return _UNSTORABLE\n",
    replace="",
)
def test_an_accepted_value_that_cannot_be_stored_is_kept_as_a_marker(mcp_client, one_batch):
    """Guard: ``weight: 1e999`` passes the tool's validation (a float may be infinite) but is
    no JSON PostgreSQL takes: the row keeps the other argument and marks that one. Mutation:
    keep every value the policy names as it is → the row is refused and written as a marker
    row, its arguments lost → red."""
    client = mcp_client("Owner")
    with activated(_policy_catalogue()):
        _raw_call(client, '{"topic": "eggs", "weight": 1e999}')
        assert "error" not in client.call("audit_weighed", {"topic": "hens", "weight": 2.5})
    stored = [row.arguments for row in rows(tool="audit_weighed")]
    assert stored == [
        {"topic": "eggs", "weight": "…(unstorable)"},
        {"topic": "hens", "weight": 2.5},
    ]


def _row(tenant: str, **changes: Any) -> dict[str, Any]:
    return {
        "at": dt.datetime.now(dt.UTC),
        "tenant_key": tenant,
        "actor_id": "7",
        "tool": "audit_direct",
        "protocol": "mcp",
        "outcome": "ok",
        "request_id": f"r-{tenant}",
        **changes,
    }


def _dropped(reason: str) -> float:
    from prometheus_client import REGISTRY

    value = REGISTRY.get_sample_value("mcp_tools_audit_rows_dropped_total", {"reason": reason})
    return value or 0.0


@mutation("mcp_tools/observability/audit.py", find="        _write_alone(rows)", replace="")
@mutation(
    "mcp_tools/observability/audit.py",
    find="            _insert([_marker(row)])",
    replace="            raise ValueError('no marker')",
)
@mutation(
    "mcp_tools/observability/audit.py",
    find="            metrics.audit_rows_dropped(DROPPED_UNSTORABLE)",
    replace="            pass",
)
def test_a_batch_refused_for_one_row_writes_every_other_row_and_counts_the_loss():
    """Guard: the writer's ``COPY`` gets rows whose values the database refuses (reached past
    ``note``: a NUL, a lone surrogate, ``Infinity`` in ``arguments``; a tenant key too long
    for its column). Every other row is written by content, each refused row that a marker
    can stand for is written as one, and the row that not even a marker saves is counted in
    ``mcp_tools_audit_rows_dropped_total{reason="unstorable"}``. Mutations: no row-by-row
    retry → the batch is lost → red; no marker row → the poisoned rows are missing → red; the
    loss not counted → red."""
    before = _dropped(audit.DROPPED_UNSTORABLE)
    batch = [
        _row("t1"),
        _row("t2", arguments={"x": "nul\x00"}),
        _row("t3"),
        _row("t4", arguments={"x": "lone \ud800"}),
        _row("t5", arguments={"x": float("inf")}),
        _row("x" * 65),
        _row("t6", arguments={"kept": "yes"}),
    ]
    audit.write_rows(batch)
    # By this batch's keys: the writer thread may still be storing an earlier test's calls.
    keys = [row["tenant_key"] for row in batch]
    written = {
        row.tenant_key: row.arguments for row in CallAudit.objects.filter(tenant_key__in=keys)
    }
    assert written == {
        "t1": None,
        "t2": audit.UNSTORABLE_ROW,
        "t3": None,
        "t4": audit.UNSTORABLE_ROW,
        "t5": audit.UNSTORABLE_ROW,
        "t6": {"kept": "yes"},
    }
    assert _dropped(audit.DROPPED_UNSTORABLE) == before + 1
