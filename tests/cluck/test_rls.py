"""Row-level security under tool calls (issue 35): a careless tool sees only its farm."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from cluck.models import Customer, SalesOrder
from tests.factories import (
    CustomerFactory,
    FarmFactory,
    FlockFactory,
    MembershipFactory,
    bearer_for,
)
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

pytestmark = [pytest.mark.postgres]


@pytest.fixture
def farms(transactional_db: Any) -> tuple[Any, Any, McpClient]:
    mine, other = FarmFactory(), FarmFactory()
    for farm in (mine, other):
        customer = CustomerFactory(farm=farm)
        CustomerFactory(farm=farm, name="rls-victim")
        FlockFactory(farm=farm)
        SalesOrder.all_tenants.create(
            farm=farm,
            customer=customer,
            reference_number="SO-1",
            order_date=dt.date(2026, 1, 5),
            currency_code="PHP",
            currency_minor_unit=2,
        )
    client = McpClient(bearer_for(MembershipFactory(tenant=mine, roles=["Admin"])))  # type: ignore[arg-type]
    return mine, other, client


@pytest.mark.parametrize("era", ["handshake", "modern"])
@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
@mutation(
    "tenancy/rls/install.py",
    find="AS PERMISSIVE FOR ALL TO {quote(role)} ",
    replace="AS PERMISSIVE FOR ALL TO CURRENT_USER ",
)
def test_careless_read_sees_only_its_farm(farms: Any, era: str) -> None:
    """Mutation: the set_config left out of a read, or the tenant policy bound to the wrong
    role → the careless queries reach the other farm's rows (or none) → red."""
    mine, other, client = farms
    params = {"name": "rls_careless_read", "arguments": {}}
    if era == "handshake":
        reply = client.call("rls_careless_read", {})
    else:
        reply = json.loads(client.modern("tools/call", params).content)
    seen = reply["result"]["structuredContent"]
    assert seen == {
        "all": [mine.pk],
        "related": [mine.pk],
        "select_related": [mine.pk],
        "raw": [mine.pk],
        "values": [mine.pk],
        "aggregate": 2,
    }
    # The project's own code (no role) still sees every farm.
    assert Customer.all_tenants.count() == 4


@mutation(
    "mcp_tools/execution/results.py",
    find="with _write_scope(ctx):",
    replace="with nullcontext():",
)
def test_careless_writes_stay_in_their_farm(farms: Any) -> None:
    """Mutation: the role left out of a write → update/delete reach the other farm and the
    planted row is stored → red."""
    mine, other, client = farms
    updated = client.call("rls_careless_write", {"mode": "update", "idempotencyKey": "k-1"})
    assert updated["result"]["structuredContent"]["rows"] == 2
    deleted = client.call("rls_careless_write", {"mode": "delete", "idempotencyKey": "k-2"})
    assert deleted["result"]["structuredContent"]["rows"] == 1
    planted = client.call(
        "rls_careless_write",
        {"mode": "bulk_create", "farmId": other.pk, "idempotencyKey": "k-3"},
    )
    assert planted["result"]["isError"] is True
    assert not Customer.all_tenants.filter(farm=other, note="careless").exists()
    assert Customer.all_tenants.filter(farm=other, name="rls-victim").exists()
    assert not Customer.all_tenants.filter(name="rls-planted").exists()
