"""The per-member rate count rides in the token check's own statement (PostgreSQL).

A request's count against its budget costs no round trip of its own on tenancy's counter
table; the count stays exact, shared (one table), django-ratelimit's own, and refuses at the
exact boundary.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django_ratelimit.core import get_usage

from mcp_tools.serving.views import RATE_BUDGET
from tenancy.rates.throttling import API_BUDGET, membership_rate_key
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
MCP_HEADERS = {"Accept": "application/json"}


def _member() -> Any:
    return MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])


def _client(bearer: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {bearer}"})


def _mcp(client: Client) -> int:
    response = client.post("/mcp", PING, content_type="application/json", headers=MCP_HEADERS)
    return int(response.status_code)


def _counter_statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "tenancy_rate_counter" in q["sql"]]


@mutation(
    "tenancy/tokens/lookup.py",
    find="if count is not None and membership_id is not None and plan.counted_sql is not None:",
    replace="if False:",
)
@override_settings(TENANCY_API_RATE="100/h")
def test_a_known_token_is_checked_and_counted_in_one_statement() -> None:
    """Mutation: make ``fetch_token`` ignore ``count`` (always the plain read) → red (the
    count is a second statement, one more round trip per request)."""
    client = _client(bearer_for(_member()))
    assert client.get("/api/v1/me/").status_code == 200  # first sight: counted separately
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/me/").status_code == 200
    # The counter cache's housekeeping (a DELETE on one call in a hundred) is not a count.
    counting = [sql for sql in _counter_statements(queries) if not sql.startswith("DELETE")]
    assert len(counting) == 1, counting
    assert "WITH counted AS" in counting[0] and "tenancy_accesstoken" in counting[0]


@mutation("tenancy/tokens/lookup.py", find="ELSE c.{value} + 1 END", replace="ELSE c.{value} END")
@override_settings(TENANCY_API_RATE="4/h")
def test_rest_refuses_at_the_exact_boundary() -> None:
    """Per hour, so the burst never straddles two windows.

    Mutation: count ``c.value`` instead of ``c.value + 1`` in the counting upsert
    (``tenancy.tokens.lookup._counting_cte``) → red (the fifth request passes).
    """
    client = _client(bearer_for(_member()))
    statuses = [client.get("/api/v1/me/").status_code for _ in range(6)]
    assert statuses == [200] * 4 + [429] * 2


@mutation(
    "tenancy/rates/throttling.py",
    find="should_limit=self.value > limit,",
    replace="should_limit=self.value >= limit,",
)
@override_settings(MCP_TOOLS_RATE="4/h")
def test_mcp_refuses_at_the_exact_boundary_with_a_jsonrpc_429() -> None:
    """Mutation: ``should_limit=self.value >= limit`` in ``PendingCount.usage`` → red (the
    fourth call is refused)."""
    client = _client(bearer_for(_member()))
    statuses = [_mcp(client) for _ in range(5)]
    assert statuses == [200] * 4 + [429]
    refused = client.post("/mcp", PING, content_type="application/json", headers=MCP_HEADERS)
    assert json.loads(refused.content)["error"]["code"] == -32012
    assert int(refused["Retry-After"]) >= 1


@mutation(
    "tenancy/rates/throttling.py",
    find="budget.group, window, rate, value, budget.ratelimit_methods",
    replace="budget.group, window, rate, value, ALL",
)
@override_settings(MCP_TOOLS_RATE="100/h")
def test_the_count_is_django_ratelimits_own() -> None:
    """What the token check counted is what django-ratelimit reads on the same cache (one
    counter, whichever path counted).

    Mutation: key the counter (``tenancy.rates.throttling._counter_key``, which
    ``PendingCount.prepare`` uses) with every method (``ALL``) instead of the budget's → red
    (django-ratelimit sees a different, empty counter).
    """
    membership = _member()
    client = _client(bearer_for(membership))
    assert [_mcp(client) for _ in range(3)] == [200] * 3
    request = client.post(
        "/mcp", PING, content_type="application/json", headers=MCP_HEADERS
    ).wsgi_request
    usage = get_usage(
        request,
        group=RATE_BUDGET.group,
        key=membership_rate_key,
        rate="100/h",
        method=list(RATE_BUDGET.methods or ()),
        increment=False,
    )
    assert usage is not None and usage["count"] == 4


@mutation(
    "tenancy/tokens/lookup.py",
    find="        f\"AND ct.{token['revoked_at']} IS NULL \"\n",
    replace="",
)
@override_settings(TENANCY_API_RATE="3/h")
def test_a_dead_token_does_not_spend_the_members_budget() -> None:
    """A revoked token (seen before by this process, so checked in the counting statement) is
    refused and counts nothing; the member's live token keeps its budget.

    Mutation: drop ``revoked_at IS NULL`` from the counting upsert → red.
    """
    membership = _member()
    dead, live = bearer_for(membership, "dead"), bearer_for(membership, "live")
    assert _client(dead).get("/api/v1/me/").status_code == 200  # count 1
    membership.tokens.filter(name="dead").update(revoked_at="2000-01-01T00:00:00Z")
    assert [_client(dead).get("/api/v1/me/").status_code for _ in range(3)] == [401] * 3
    assert [_client(live).get("/api/v1/me/").status_code for _ in range(3)] == [200, 200, 429]


def test_the_api_budget_reads_the_setting_per_request() -> None:
    with override_settings(TENANCY_API_RATE="7/m"):
        assert API_BUDGET.rate_for(None) == "7/m"
    with override_settings(TENANCY_API_RATE=None):
        assert API_BUDGET.rate_for(None) is None
