"""Row-level security under tool calls (issue 35): a careless tool sees only its farm."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.backends.signals import connection_created

from cluck.models import Customer, SalesOrder
from tenancy.rls.install import install
from tests.careless import seen_only
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


def two_farms() -> tuple[Any, Any, McpClient]:
    """Two farms, each with customers (one named ``rls-victim``), a flock and an order; a
    client of an Admin of the first (its ``membership`` too)."""
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
    member = MembershipFactory(tenant=mine, roles=["Admin"])
    client = McpClient(bearer_for(member), membership=member)  # type: ignore[arg-type]
    return mine, other, client


@pytest.fixture
def farms(rls_on: None) -> tuple[Any, Any, McpClient]:
    return two_farms()


@pytest.fixture
def farms_rls_off(transactional_db: Any, settings: Any) -> tuple[Any, Any, McpClient]:
    settings.TENANCY_RLS = False  # off whatever CLUCK_RLS says
    return two_farms()


class Statements:
    """Every SQL statement any thread's connection runs while ``recording``: a sync tool runs on
    a worker thread with a connection of its own, which ``CaptureQueriesContext`` would miss."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.recording = False
        self.wrapped: list[Any] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # The shared rate counter is counted per window, not per call: not the call's own.
        if self.recording and "tenancy_rate_counter" not in sql:
            self.seen.append(sql)
        return execute(sql, params, many, context)

    def attach(self, sender: Any, connection: Any, **kwargs: Any) -> None:
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)
            self.wrapped.append(connection)

    def of(self, call: Callable[[], Any]) -> list[str]:
        self.seen, self.recording = [], True
        try:
            call()
        finally:
            self.recording = False
        return self.seen


@pytest.fixture
def statements() -> Iterator[Statements]:
    recorder = Statements()
    recorder.attach(None, connection)
    connection_created.connect(recorder.attach, weak=False)
    yield recorder
    connection_created.disconnect(recorder.attach)
    for wrapped in recorder.wrapped:
        wrapped.execute_wrappers.remove(recorder)


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
    seen_only(reply["result"]["structuredContent"], mine.pk)
    # The project's own code (no role) still sees every farm.
    assert Customer.all_tenants.count() == 4


@mutation(
    "mcp_tools/execution/writes.py",
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


@mutation(
    "tenancy/rls/scope.py",
    find="    if not enabled(using):\n        yield",
    replace="    if False:\n        yield",
)
@mutation(
    "mcp_tools/execution/writes.py",
    find="len(connection.atomic_blocks) == 1 and rls.enabled()",
    replace="len(connection.atomic_blocks) == 1",
)
def test_rls_off_adds_no_statement(
    farms_rls_off: Any, statements: Statements, settings: Any
) -> None:
    """Off (``CLUCK_RLS=0``, the opt-out), a read and a write run exactly the statements they
    ran before row-level security existed; on, exactly one more (the role and tenant).

    Mutation: the hooks ignore the switch (the read's scope, or the write's one statement) →
    the call still runs set_config with RLS off → red."""
    mine, other, client = farms_rls_off
    keys = iter(range(10))

    def read() -> None:
        reply = client.call("rls_careless_read", {})
        assert reply["result"]["isError"] is False, reply

    def write() -> None:
        reply = client.call(
            "rls_careless_write", {"mode": "update", "idempotencyKey": f"k-{next(keys)}"}
        )
        assert reply["result"]["isError"] is False, reply

    read()  # caches warm: the calls below differ by the switch alone
    write()
    off = {"read": statements.of(read), "write": statements.of(write)}
    settings.TENANCY_RLS = True
    install()
    on = {"read": statements.of(read), "write": statements.of(write)}
    for kind in ("read", "write"):
        assert not [sql for sql in off[kind] if "set_config" in sql], kind
        taken = [sql for sql in on[kind] if "set_config('role'" in sql]
        assert len(taken) == 1, (kind, on[kind])
        assert len(on[kind]) == len(off[kind]) + 1, (kind, off[kind], on[kind])
