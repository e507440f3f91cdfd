"""Prometheus metrics in one process, and the guarded /metrics endpoint.

Counters live in the process's default registry and only grow: each test reads differences.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core import checks
from django.test import Client, override_settings
from prometheus_client import REGISTRY

from idempotency import IdempotentUnit, Success
from mcp_tools import execution
from mcp_tools.observability import metrics
from tests.idempotency.conftest import foreign_claim, make_scope
from tests.mutations import mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "scrape-token-0123456789abcdef"
TOOLKIT_SHAPED_TOKEN = "ck_pat_" + "s" * 43


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def delta(name: str, **labels: str) -> Callable[[], float]:
    """How much the sample ``name{labels}`` has grown since this call."""
    before = sample(name, **labels)
    return lambda: sample(name, **labels) - before


def _wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@mutation(
    "mcp_tools/observability/records.py",
    find="            metrics.observe_call(self)\n",
    replace="",
)
def test_tool_calls_are_counted_by_tool_and_outcome_with_their_duration(mcp_client):
    """Mutation: drop ``metrics.observe_call`` from ``ToolCall.finish`` → red."""
    ok = delta(
        "mcp_tools_calls_total", protocol="mcp", tool="mcptest_whoami", outcome="ok", code=""
    )
    refused = delta(
        "mcp_tools_calls_total",
        protocol="mcp",
        tool="mcptest_refuse",
        outcome="tool_error",
        code="Test.Refused",
    )
    timed = delta(
        "mcp_tools_call_duration_seconds_count",
        protocol="mcp",
        tool="mcptest_whoami",
        outcome="ok",
    )
    client = mcp_client()
    client.call("mcptest_whoami")
    client.call("mcptest_whoami")
    client.call("mcptest_refuse", {"text": "no", "idempotencyKey": "k"})
    assert (ok(), refused(), timed()) == (2.0, 1.0, 2.0)


@mutation(
    "mcp_tools/observability/records.py",
    find="            known=spec is not None,\n",
    replace='            known=spec is not None and params.get("name") in req.surface.tools,\n',
)
def test_a_factory_tool_call_is_counted_under_its_own_name(mcp_client):
    """Issue 24: the record re-looked the tool up in ``surface.tools`` only, so every
    ``@tool_factory`` call was counted under ``_unknown``. Mutation: that lookup again → red."""
    factory = "mcptest_factory_echo"
    named = delta("mcp_tools_calls_total", protocol="mcp", tool=factory, outcome="ok", code="")
    unknown = delta("mcp_tools_calls_total", protocol="mcp", tool="_unknown", outcome="ok", code="")
    client = mcp_client()
    value = f"tenant-{client.membership.tenant.pk}-a"
    assert client.call(factory, {"value": value})["result"]["structuredContent"]["value"] == value
    assert (named(), unknown()) == (1.0, 0.0)


@mutation(
    "mcp_tools/observability/metrics.py",
    find="call.protocol, call.tool_label,",
    replace="call.protocol, call.tool,",
)
def test_a_name_that_is_no_tool_of_the_caller_is_never_a_label(mcp_client):
    """Client-chosen names would make unbounded series. Mutation: label with ``call.tool``
    instead of ``call.tool_label`` → red."""
    unknown = delta(
        "mcp_tools_calls_total",
        protocol="mcp",
        tool="_unknown",
        outcome="protocol_error",
        code="-32602",
    )
    client = mcp_client("ReadOnly")
    client.call("made-up-name-123")
    client.call("mcptest_owner_report")  # exists, but hidden from this role
    assert unknown() == 2.0
    assert sample("mcp_tools_calls_total", tool="made-up-name-123") == 0.0
    assert (
        sample(
            "mcp_tools_calls_total",
            protocol="mcp",
            tool="made-up-name-123",
            outcome="protocol_error",
            code="-32602",
        )
        == 0.0
    )


@mutation(
    "mcp_tools/observability/metrics.py",
    find="    unit_finished.connect(_on_unit_finished,",
    replace="    # unit_finished.connect(_on_unit_finished,",
)
def test_idempotency_outcomes_are_counted(mcp_client):
    """Through the MCP adapter: executed, replayed, key reused. Mutation: disconnect
    ``_on_unit_finished`` in ``metrics.connect`` → red."""
    executed = delta("idempotency_outcomes_total", outcome="executed")
    replayed = delta("idempotency_outcomes_total", outcome="replayed")
    reused = delta("idempotency_outcomes_total", outcome="key_reused")
    failed = delta("idempotency_outcomes_total", outcome="failed")
    client = mcp_client()
    client.call("mcptest_record_note", {"text": "a", "idempotencyKey": "k1"})
    client.call("mcptest_record_note", {"text": "a", "idempotencyKey": "k1"})
    client.call("mcptest_record_note", {"text": "b", "idempotencyKey": "k1"})
    client.call("mcptest_refuse", {"text": "no", "idempotencyKey": "k2"})
    assert (executed(), replayed(), reused(), failed()) == (1.0, 1.0, 1.0, 1.0)


@mutation(
    "mcp_tools/observability/metrics.py",
    find="    lease_stolen.connect(_on_lease_stolen,",
    replace="    # lease_stolen.connect(_on_lease_stolen,",
)
def test_stolen_leases_and_in_progress_are_counted():
    """Mutation: disconnect ``_on_lease_stolen`` in ``metrics.connect`` → red."""
    stolen = delta("idempotency_leases_stolen_total")
    waiting = delta("idempotency_outcomes_total", outcome="in_progress")
    abandoned, busy = make_scope(), make_scope()
    foreign_claim(abandoned, lease_delta=timedelta(minutes=-5))
    foreign_claim(busy, lease_delta=timedelta(minutes=5))
    IdempotentUnit(max_wait_seconds=0.2).run(abandoned, lambda: Success({}))
    IdempotentUnit(max_wait_seconds=0).run(busy, lambda: Success({}))
    assert (stolen(), waiting()) == (1.0, 1.0)


@mutation(
    "mcp_tools/observability/metrics.py",
    find="    bearer_refused.connect(_on_bearer_refused,",
    replace="    # bearer_refused.connect(_on_bearer_refused,",
)
def test_refused_bearers_are_counted_by_reason(anonymous):
    """Mutation: disconnect ``_on_bearer_refused`` in ``metrics.connect`` → red."""
    invalid = delta("tenancy_bearer_refusals_total", reason="Auth.InvalidToken")
    anonymous.bearer = "ck_pat_" + "y" * 43
    assert anonymous.message("tools/list").status_code == 401
    assert invalid() == 1.0


@mutation(
    "mcp_tools/observability/metrics.py",
    find="    rate_limited.connect(_on_rate_limited,",
    replace="    # rate_limited.connect(_on_rate_limited,",
)
@override_settings(MCP_TOOLS_RATE="1/m")
def test_rate_limit_refusals_are_counted_by_group(mcp_client):
    """Mutation: disconnect ``_on_rate_limited`` in ``metrics.connect`` → red."""
    limited = delta("tenancy_rate_limit_refusals_total", group="mcp_tools.mcp")
    calls_limited = delta(
        "mcp_tools_calls_total",
        protocol="mcp",
        tool="_unknown",
        outcome="rate_limited",
        code="-32012",
    )
    client = mcp_client()
    client.call("mcptest_whoami")
    assert client.message("tools/call", {"name": "mcptest_whoami"}).status_code == 429
    assert (limited(), calls_limited()) == (1.0, 1.0)


@pytest.fixture
def _released():
    controls.release.clear()
    yield
    controls.release.set()
    _wait_for(lambda: execution.slots.in_use == 0)


@mutation(
    "mcp_tools/execution/bounds.py",
    find='    observability.bound_refused("deadline")  # observability\n',
    replace="",
)
@mutation(
    "mcp_tools/execution/bounds.py",
    find='        observability.bound_refused("concurrency")  # observability\n',
    replace="",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_CALL_TIMEOUT_SECONDS=0.3)
def test_deadline_and_overload_refusals_are_counted_and_recorded(mcp_client, _released, caplog):
    """Mutations, each red: drop either ``observability.bound_refused`` from
    ``execution.bounds`` (``_take_slot``, ``_timed_out``)."""
    deadline = delta("mcp_tools_bound_refusals_total", bound="deadline")
    concurrency = delta("mcp_tools_bound_refusals_total", bound="concurrency")
    client = mcp_client()
    assert client.call("mcptest_block", {"maxSeconds": 10})["error"]["code"] == execution.TIMED_OUT
    assert client.call("mcptest_whoami")["error"]["code"] == execution.OVERLOADED
    assert (deadline(), concurrency()) == (1.0, 1.0)
    outcomes = [
        (r.tool, r.outcome, r.error_code)
        for r in caplog.records
        if r.name == "mcp_tools.calls" and hasattr(r, "outcome")
    ]
    assert outcomes == [
        ("mcptest_block", "timed_out", "-32011"),
        ("mcptest_whoami", "overloaded", "-32010"),
    ]


# --- /metrics ------------------------------------------------------------------------------------


def _scrape(*, bearer: str | None = None, remote: str = "127.0.0.1", client: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return (client or Client(REMOTE_ADDR=remote)).get("/metrics", headers=headers)


@mutation(
    "mcp_tools/observability/metrics.py",
    find="return False  # never open by default",
    replace="return True  # never open by default",
)
def test_metrics_is_not_served_without_a_guard():
    """Never open by default. Mutation: make ``admitted`` answer True when no guard is set
    → red."""
    assert _scrape().status_code == 404
    assert _scrape(bearer=TOKEN).status_code == 404


@mutation(
    "mcp_tools/observability/metrics.py",
    find=(
        "if presented is None or not hmac.compare_digest(presented.encode(), str(token).encode()):"
    ),
    replace="if False:",
)
@override_settings(MCP_TOOLS_METRICS_TOKEN=TOKEN)
def test_metrics_with_a_token_guard_needs_that_token(mcp_client):
    """Mutation: skip the token comparison in ``admitted`` → red."""
    mcp_client().call("mcptest_whoami")
    assert _scrape().status_code == 404
    assert _scrape(bearer="wrong").status_code == 404
    assert _scrape(bearer=TOKEN + "x").status_code == 404
    response = _scrape(bearer=TOKEN)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert b'mcp_tools_calls_total{code="",outcome="ok",protocol="mcp",tool="mcptest_whoami"}' in (
        response.content
    )
    assert b"mcp_tools_call_duration_seconds_bucket" in response.content
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]


@mutation(
    "mcp_tools/observability/metrics.py",
    find=(
        "        if not any(address in network for network in allowed_networks()):\n"
        "            return False\n"
    ),
    replace="",
)
@override_settings(MCP_TOOLS_METRICS_ALLOWED_IPS=["10.1.0.0/16", "::1"])
def test_metrics_with_an_address_guard_serves_only_those_addresses():
    """Mutation: skip the address check in ``admitted`` → red."""
    assert _scrape(remote="10.1.2.3").status_code == 200
    assert _scrape(remote="::1").status_code == 200
    assert _scrape(remote="10.2.0.1").status_code == 404
    assert _scrape(remote="127.0.0.1").status_code == 404


@mutation(
    "mcp_tools/observability/metrics.py",
    find="            return False\n    if ips:\n",
    replace="            return False\n        return True\n    if ips:\n",
)
@override_settings(MCP_TOOLS_METRICS_TOKEN=TOKEN, MCP_TOOLS_METRICS_ALLOWED_IPS=["10.1.0.0/16"])
def test_metrics_with_both_guards_needs_both():
    """Mutation: in ``admitted``, return True once the token matches (the address unchecked)
    → red."""
    assert _scrape(bearer=TOKEN, remote="10.1.0.9").status_code == 200
    assert _scrape(bearer=TOKEN, remote="10.9.0.9").status_code == 404
    assert _scrape(remote="10.1.0.9").status_code == 404


@mutation(
    "mcp_tools/observability/metrics.py",
    find="@require_safe\n@ignores_ambient_credentials\n",
    replace="@require_safe\n",
)
@override_settings(MCP_TOOLS_METRICS_TOKEN=TOOLKIT_SHAPED_TOKEN)
def test_the_scrapers_bearer_is_never_read_as_a_member_token():
    """A tenancy token lookup of the scraper's bearer would answer 401. The scraper's token
    is shaped like a member's here (``ck_pat_…``): tenancy leaves other bearers to the
    project's own authentication anyway, so only such a token tells whether ``/metrics``
    keeps every bearer away from the member lookup. Mutation: drop
    ``@ignores_ambient_credentials`` from ``metrics_view`` → red."""
    refusals = delta("tenancy_bearer_refusals_total", reason="Auth.InvalidToken")
    assert _scrape(bearer=TOOLKIT_SHAPED_TOKEN).status_code == 200
    assert refusals() == 0.0


@mutation(
    "mcp_tools/observability/metrics.py",
    find="@never_cache\n@require_safe\n",
    replace="@never_cache\n",
)
def test_metrics_answers_only_get_and_head():
    """Mutation: drop ``@require_safe`` from ``metrics_view`` → red."""
    with override_settings(MCP_TOOLS_METRICS_TOKEN=TOKEN):
        response = Client().post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 405


def _check_ids() -> set[str]:
    return {message.id for message in checks.run_checks() if message.id}


@mutation("mcp_tools/observability/checks.py", find="    if unknown:\n", replace="    if False:\n")
def test_a_bad_address_or_an_unknown_log_field_fails_the_system_checks():
    """Mutation: drop the ``mcp_tools.E012`` check from ``check_observability`` → red."""
    with override_settings(MCP_TOOLS_METRICS_ALLOWED_IPS=["10.0.0.0/8", "not-an-address"]):
        assert "mcp_tools.E010" in _check_ids()
    with override_settings(MCP_TOOLS_CALL_LOG_EXTRA_FIELDS=["arguments"]):
        assert "mcp_tools.E012" in _check_ids()
    assert not {"mcp_tools.E010", "mcp_tools.E012", "mcp_tools.E011"} & _check_ids()


@mutation(
    "mcp_tools/observability/metrics.py",
    find='["protocol", "tool", "outcome", "code"],',
    replace='["protocol", "tool", "outcome", "code", "tenant"],',
)
def test_series_are_labelled_only_by_what_the_server_decides():
    """Series are labelled by what the server decides (tool names of the catalogue, outcomes,
    codes), never by request data. Mutation: add a ``tenant`` label to ``mcp_tools_calls``
    → red."""
    instruments = metrics.instruments()
    labels = {
        "calls": ("protocol", "tool", "outcome", "code"),
        "duration": ("protocol", "tool", "outcome"),
        "bound_refusals": ("bound",),
        "idempotency_outcomes": ("outcome",),
        "leases_stolen": (),
        "bearer_refusals": ("reason",),
        "rate_limit_refusals": ("group",),
    }
    for attribute, names in labels.items():
        assert getattr(instruments, attribute)._labelnames == names
