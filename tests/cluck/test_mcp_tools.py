"""The farm's MCP tools (issue 5) in-process against the seeded demo farms.

Guards from brief §2 rows 19–32 carry the mutation that was applied and seen red.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from cluck.models import AuditEvent, Customer, DailyEntry, Flock, Payment, SalesOrder
from mcp_tools.authoring.factories import default_factories
from mcp_tools.authoring.registry import default_registry
from tests.cluck.mcp_helpers import Tools, demo_bearer, sunrise
from tests.mutations import mutation
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


DEMO_USERS = (
    "owner@sunrise.example",
    "manager@sunrise.example",
    "sales@sunrise.example",
    "worker@sunrise.example",
    "readonly@sunrise.example",
    "owner@hillside.example",
)
BULK_CUSTOMERS = 300


@pytest.fixture(scope="module")
def demo(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, str]]:
    """The demo farms plus 300 owing customers, seeded and *committed* once for this module,
    and one bearer per demo user. Tools run in worker threads on their own DB connections, so
    what they read must be committed; what they write is committed too, hence the flush."""
    with django_db_blocker.unblock():
        call_command("seed_demo", verbosity=0)
        _customers_with_balances(BULK_CUSTOMERS)
        bearers = {email: demo_bearer(email) for email in DEMO_USERS}
    yield bearers
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def tools_for(demo: dict[str, str], email: str) -> Tools:
    return Tools(demo[email])


@pytest.fixture
def owner(demo: dict[str, str]) -> Tools:
    return tools_for(demo, "owner@sunrise.example")


def _flock(name: str, status: str = "Active") -> Flock:
    return Flock.objects.for_tenant(sunrise()).get(name=name, status=status)


def _record_args(flock: Any, key: str, **overrides: Any) -> dict[str, Any]:
    args = {
        "idempotencyKey": key,
        "flock": flock,
        "date": sunrise().today().isoformat(),
        "totalEggs": 900,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 1,
    }
    args.update(overrides)
    return args


def _past(days: int) -> str:
    """A farm-local day after the demo flocks' placement, before the seeded (submitted) days
    and within the farm's late-entry grace."""
    return (sunrise().today() - dt.timedelta(days=days)).isoformat()


def _actions(entry_id: int) -> list[str]:
    return list(
        AuditEvent.objects.for_tenant(sunrise())
        .filter(entity_type="DailyEntry", entity_id=str(entry_id))
        .order_by("id")
        .values_list("action", flat=True)
    )


# --- reads -----------------------------------------------------------------------------------


def test_owner_lists_every_flock_with_the_documented_fields(owner: Tools) -> None:
    page = owner.ok("cluck_list_flocks")
    names = [flock["name"] for flock in page["flocks"]]
    assert names.count("House 2 Brown") == 2 and "House 1 White" in names
    assert set(page["flocks"][0]) >= {
        "flockId",
        "name",
        "status",
        "birdsAlive",
        "acceptsProductionToday",
        "house",
    }
    assert page["complete"] is True and page["nextCursor"] is None and page["scopeNote"] is None
    active = owner.ok("cluck_list_flocks", {"status": "Active"})["flocks"]
    assert {flock["status"] for flock in active} == {"Active"}


def test_a_restricted_worker_sees_only_their_flock_and_is_told_so(demo: dict[str, str]) -> None:
    worker = tools_for(demo, "worker@sunrise.example")
    page = worker.ok("cluck_list_flocks")
    assert [flock["name"] for flock in page["flocks"]] == ["House 1 White"]
    total = Flock.objects.for_tenant(sunrise()).count()
    assert page["scopeNote"] == f"You are assigned to 1 of this farm's {total} flocks."
    entries = worker.ok("cluck_list_daily_entries")["entries"]
    assert entries and {entry["flockName"] for entry in entries} == {"House 1 White"}


def test_stock_and_grades_read_the_farm(owner: Tools) -> None:
    grades = owner.ok("cluck_list_egg_grades")["grades"]
    assert {"Small", "Medium", "Large", "Jumbo", "Cracked", "Dirty"} <= {g["name"] for g in grades}
    assert all(set(g["unitPrice"]) == {"amount", "currency"} for g in grades)
    stock = owner.ok("cluck_read_stock")
    assert stock["unit"] == "eggs" and stock["asOfDate"] == sunrise().today().isoformat()
    assert sum(line["available"] for line in stock["grades"]) > 0


def test_sales_reads_receivables_as_money_strings(demo: dict[str, str]) -> None:
    sales = tools_for(demo, "sales@sunrise.example")
    page = sales.ok("cluck_read_receivables", {"owingOnly": True})
    assert page["customers"], "the demo seeds part-paid orders"
    for row in page["customers"]:
        for field in ("confirmedTotal", "paid", "outstanding"):
            money = row[field]
            assert money["currency"] == "PHP"
            assert isinstance(money["amount"], str) and len(money["amount"].split(".")[1]) == 2
        assert float(row["outstanding"]["amount"]) > 0


def test_hillside_money_has_no_decimals(demo: dict[str, str]) -> None:
    hillside = tools_for(demo, "owner@hillside.example")
    for grade in hillside.ok("cluck_list_egg_grades")["grades"]:
        assert grade["unitPrice"]["currency"] == "JPY" and "." not in grade["unitPrice"]["amount"]


def test_order_money_appears_only_for_the_money_tier(demo: dict[str, str]) -> None:
    owner = tools_for(demo, "owner@sunrise.example")
    worker = tools_for(demo, "worker@sunrise.example")
    confirmed = owner.ok("cluck_list_orders", {"status": "Confirmed"})["orders"]
    assert confirmed and all({"total", "paid", "outstanding"} <= set(o) for o in confirmed)
    one = owner.ok("cluck_list_orders", {"orderId": confirmed[0]["orderId"]})["orders"][0]
    assert one["lines"] and "unitPrice" in one["lines"][0]
    hidden = worker.ok("cluck_list_orders", {"orderId": confirmed[0]["orderId"]})["orders"][0]
    assert not {"total", "paid", "outstanding"} & set(hidden)
    assert hidden["lines"] and "unitPrice" not in hidden["lines"][0]


def test_readonly_sees_no_write_tools_and_worker_no_sales_tools(demo: dict[str, str]) -> None:
    readonly = tools_for(demo, "readonly@sunrise.example").names()
    worker = tools_for(demo, "worker@sunrise.example").names()
    farm_tools = {name for name in readonly | worker if name.startswith("cluck_")}
    assert "cluck_record_daily_entry" not in readonly
    assert "cluck_submit_daily_entry" not in readonly
    assert {"cluck_read_receivables"} & worker == set()
    assert "cluck_record_daily_entry" in worker and farm_tools


# --- guard 32: names resolve to exactly one accessible match ----------------------------------


@mutation(
    "cluck/selectors/flocks.py",
    find="    if len(matches) == 1:\n        return _view(matches[0], caller.farm.today())",
    replace="    if matches:\n        return _view(matches[0], caller.farm.today())",
)
def test_an_ambiguous_flock_name_is_refused_with_the_candidates(owner: Tools) -> None:
    """Mutation: make ``flock_resolve`` return ``matches[0]`` when several match → red (the
    record succeeds against an arbitrary flock)."""
    error = owner.error("cluck_record_daily_entry", _record_args("House 2 Brown", "amb-1"))
    assert error["code"] == "Flock.Ambiguous"
    candidates = error["data"]["candidates"]
    assert len(candidates) == 2
    assert {c["status"] for c in candidates} == {"Active", "Depleted"}
    assert all(set(c) >= {"flockId", "status", "house", "placementDate"} for c in candidates)
    assert (
        not DailyEntry.objects.for_tenant(sunrise())
        .filter(flock__name="House 2 Brown", date=sunrise().today())
        .exists()
    )


def test_a_missing_flock_name_is_not_found_listing_the_valid_names(owner: Tools) -> None:
    error = owner.error("cluck_record_daily_entry", _record_args("House 9 Purple", "nf-1"))
    assert error["code"] == "Flock.NotFound"
    assert "House 1 White" in error["message"] and "House 1 White" in error["data"]["validNames"]


def test_an_unknown_grade_name_is_not_found(owner: Tools) -> None:
    error = owner.error(
        "cluck_record_daily_entry",
        _record_args("House 1 White", "g-1", grades=[{"grade": "Humongous", "quantity": 1}]),
    )
    assert error["code"] == "EggGrade.NotFound" and "Large" in error["message"]


# --- writes ----------------------------------------------------------------------------------


def test_record_then_submit_puts_the_eggs_in_stock(owner: Tools) -> None:
    flock = _flock("House 1 White")
    before = {g["gradeName"]: g["available"] for g in owner.ok("cluck_read_stock")["grades"]}
    recorded = owner.ok(
        "cluck_record_daily_entry",
        _record_args(
            flock.pk,
            "flow-1",
            date=(sunrise().today() + dt.timedelta(days=-30)).isoformat(),
            grades=[{"grade": "Large", "quantity": 800}, {"grade": "Medium", "quantity": 85}],
        ),
    )
    assert recorded["status"] == "Draft" and recorded["flockName"] == "House 1 White"
    assert recorded["created"] is True and recorded["replayed"] is False
    submitted = owner.ok(
        "cluck_submit_daily_entry",
        {"idempotencyKey": "flow-2", "dailyEntryId": recorded["dailyEntryId"]},
    )
    assert submitted["status"] == "Submitted" and submitted["replayed"] is False
    after = {g["gradeName"]: g["available"] for g in owner.ok("cluck_read_stock")["grades"]}
    assert after["Large"] - before.get("Large", 0) == 800
    assert after["Medium"] - before.get("Medium", 0) == 85


@mutation(
    "mcp_tools/execution/writes.py",
    find="caller_key=port.sha256_hex(key),",
    replace='caller_key=port.sha256_hex(key + __import__("uuid").uuid4().hex),',
)
def test_replay_writes_no_second_audit_row(owner: Tools) -> None:
    """Guard 23. Mutation: make the MCP caller key include ``uuid4()`` in
    ``mcp_tools.execution.writes.scope_for`` (every call a fresh claim) → red: the second call
    re-runs the handler and writes a ``DailyEntry.Update`` row. (An entry count cannot catch this:
    the handler upserts.)"""
    args = _record_args(_flock("House 1 White").pk, "replay-1", date=_past(40))
    first = owner.ok("cluck_record_daily_entry", args)
    second = owner.ok("cluck_record_daily_entry", args)
    assert first["replayed"] is False and second["replayed"] is True
    assert {k: v for k, v in second.items() if k != "replayed"} == {
        k: v for k, v in first.items() if k != "replayed"
    }
    assert _actions(first["dailyEntryId"]) == ["DailyEntry.Create"]


@mutation(
    "idempotency/unit.py",
    find='if row["fingerprint"] and row["fingerprint"] != scope.fingerprint:',
    replace="if False:",
)
def test_same_key_with_other_arguments_is_refused(owner: Tools) -> None:
    """Guard 22. Mutation: drop the fingerprint comparison in ``IdempotentUnit`` → red."""
    args = _record_args(_flock("House 1 White").pk, "reuse-1", date=_past(41))
    entry_id = owner.ok("cluck_record_daily_entry", args)["dailyEntryId"]
    error = owner.error("cluck_record_daily_entry", {**args, "totalEggs": 901})
    assert error["code"] == "Idempotency.KeyReused"
    assert DailyEntry.objects.for_tenant(sunrise()).get(pk=entry_id).total_eggs == 900


@mutation(
    "mcp_tools/authoring/spec.py",
    find='return f"mcp:tool:{self.name}"',
    replace='return "mcp:tool"',
)
def test_the_two_write_tools_never_collide_on_the_same_key(owner: Tools) -> None:
    """Guard 20 (two real tools). Mutation: make ``ToolSpec.operation_key`` return the constant
    ``"mcp:tool"`` → red (submit is refused as a reused key)."""
    recorded = owner.ok(
        "cluck_record_daily_entry",
        _record_args(
            _flock("House 1 White").pk,
            "shared-key",
            date=_past(42),
            crackedEggs=0,
            dirtyEggs=0,
            totalEggs=0,
        ),
    )
    submitted = owner.ok(
        "cluck_submit_daily_entry",
        {"idempotencyKey": "shared-key", "dailyEntryId": recorded["dailyEntryId"]},
    )
    assert submitted["status"] == "Submitted" and submitted["replayed"] is False


def _committed_http_post(bearer: str, path: str, body: dict[str, Any], key: str) -> Any:
    """A REST write in its own thread (own connection), so it commits like a real client's."""
    from django.db import connection

    outcome: dict[str, Any] = {}

    def post() -> None:
        try:
            http = APIClient()
            http.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
            outcome["response"] = http.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)
        finally:
            connection.close()

    thread = threading.Thread(target=post)
    thread.start()
    thread.join(60)
    return outcome["response"]


@mutation(
    "mcp_tools/execution/writes.py",
    find="operation_key=port.sha256_hex(spec.operation_key),",
    replace='operation_key=port.sha256_hex("POST:/api/v1/daily-entries/"),',
)
def test_http_and_mcp_keys_never_alias(owner: Tools) -> None:
    """Guard 19. Mutation: in ``mcp_tools.execution.writes.scope_for`` replace the operation key
    with the HTTP adapter's computed digest ``sha256("POST:/api/v1/daily-entries/")`` → red (the MCP
    call is refused as a reused key). Writing the route *text* could not go red."""
    flock = _flock("House 1 White")
    body = {
        "flockId": flock.pk,
        "date": _past(43),
        "totalEggs": 10,
        "crackedEggs": 0,
        "dirtyEggs": 0,
        "mortalityCount": 0,
    }
    response = _committed_http_post(owner.bearer, "/api/v1/daily-entries/", body, "same-everywhere")
    assert response.status_code in (200, 201), response.content
    reply = owner.ok(
        "cluck_record_daily_entry",
        {
            **_record_args(flock.pk, "same-everywhere"),
            **{k: v for k, v in body.items() if k != "flockId"},
            "totalEggs": 20,
        },
    )
    assert reply["replayed"] is False and reply["created"] is False
    assert _actions(reply["dailyEntryId"]) == ["DailyEntry.Create", "DailyEntry.Update"]


@mutation(
    "idempotency/unit.py",
    find=(
        "                if isinstance(outcome, Failure):\n"
        "                    raise _Rollback(outcome)\n"
    ),
    replace=(
        "                if isinstance(outcome, Failure):\n"
        "                    self._publish(scope, owner, canonical_json(None))\n"
        "                    return Executed(outcome)\n"
    ),
)
def test_a_domain_failure_releases_the_claim(owner: Tools) -> None:
    """Mutation: store the ``Failure`` in ``IdempotentUnit`` (publish on failure) → red: the
    corrected retry with the same key is refused or replays the failure."""
    depleted = _flock("House 2 Brown", status="Depleted")
    assert depleted.depleted_on is not None
    late = (depleted.depleted_on + dt.timedelta(days=1)).isoformat()
    error = owner.error("cluck_record_daily_entry", _record_args(depleted.pk, "fail-1", date=late))
    assert error["code"] == "DailyEntry.FlockNotActive"
    backfill = depleted.depleted_on.isoformat()
    reply = owner.ok("cluck_record_daily_entry", _record_args(depleted.pk, "fail-1", date=backfill))
    assert reply["replayed"] is False and reply["status"] == "Draft"


@mutation(
    "cluck/mcp/production.py",
    find="    total_eggs: int,\n    cracked_eggs: int,",
    replace="    total_eggs: Annotated[int, Field(ge=0)],\n    cracked_eggs: int,",
)
def test_the_write_tool_runs_the_shared_validator(owner: Tools) -> None:
    """Guard 25: these codes come only from the service's RecordDailyEntryValidator.
    Mutation: add ``Field(ge=0)`` to the tool's ``total_eggs`` parameter (a rule of its own)
    → red (the error becomes ``Tool.InvalidArguments``)."""
    flock = _flock("House 1 White").pk
    error = owner.error(
        "cluck_record_daily_entry",
        _record_args(flock, "v-1", totalEggs=-1, crackedEggs=0, dirtyEggs=0),
    )
    assert error["code"] == "Validation.Failed"
    assert "DailyEntry.TotalEggs.NonNegative" in {e["code"] for e in error["data"]["errors"]}
    future = (sunrise().today() + dt.timedelta(days=1)).isoformat()
    error = owner.error("cluck_record_daily_entry", _record_args(flock, "v-2", date=future))
    assert "DailyEntry.Date.NotFuture" in {e["code"] for e in error["data"]["errors"]}


@mutation(
    "cluck/mcp/_shared.py",
    find='Caller(tenant=ctx.tenant, actor=ctx.actor, scope=ctx.row_scope, channel="mcp")',
    replace=(
        "Caller(tenant=ctx.tenant, actor=ctx.actor, "
        "scope=(lambda s: (s.resolve(unrestricted=True), s)[1])(type(ctx.row_scope)()), "
        'channel="mcp")'
    ),
)
def test_an_unassigned_worker_cannot_record(demo: dict[str, str]) -> None:
    """Guard 27. Mutation: make the tool call the handler with the flock scope of an owner
    (``cluck.mcp._shared.caller_of`` building ``Caller(..., scope=<unrestricted RowScope>)``)
    → red."""
    worker = tools_for(demo, "worker@sunrise.example")
    other = _flock("House 2 Brown")
    error = worker.error("cluck_record_daily_entry", _record_args(other.pk, "w-1"))
    assert error["code"] == "FlockScope.NotAssigned"
    assert (
        not DailyEntry.objects.for_tenant(sunrise())
        .filter(flock=other, date=sunrise().today())
        .exists()
    )


# --- guard 26: a hillside token reads nothing of sunrise -------------------------------------


@mutation(
    "cluck/selectors/flocks.py",
    find="return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))",
    replace='return Flock.objects.unscoped("x").filter(flock_scope_filter(caller))',
)
@pytest.mark.usefixtures("rls_off")
def test_a_hillside_token_reads_nothing_of_sunrise_through_any_tool(demo: dict[str, str]) -> None:
    """Mutation: in ``cluck.selectors.flocks.accessible_flocks`` replace
    ``Flock.objects.for_tenant(caller.tenant)`` with ``Flock.objects.unscoped("x")`` → red.
    Row-level security is off here (``rls_off``): this guards the tools' own scoping."""
    hillside = tools_for(demo, "owner@hillside.example")
    farm = sunrise()
    flock_ids = list(Flock.objects.for_tenant(farm).values_list("pk", flat=True))
    order = SalesOrder.objects.for_tenant(farm).first()
    entry = DailyEntry.objects.for_tenant(farm).first()
    customer = Customer.objects.for_tenant(farm).first()
    assert order and entry and customer
    sunrise_words = set(Flock.objects.for_tenant(farm).values_list("name", flat=True)) | set(
        Customer.objects.for_tenant(farm).values_list("name", flat=True)
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("cluck_list_flocks", {}),
        ("cluck_list_egg_grades", {}),
        ("cluck_read_stock", {}),
        ("cluck_stock_summary", {}),
        ("cluck_list_daily_entries", {}),
        ("cluck_list_customers", {}),
        ("cluck_list_orders", {}),
        ("cluck_read_receivables", {}),
        ("cluck_list_daily_entries", {"flock": str(flock_ids[0])}),
        ("cluck_list_daily_entries", {"flock": "House 1 White"}),
        ("cluck_list_orders", {"orderId": order.pk}),
        ("cluck_list_orders", {"customer": customer.name}),
        ("cluck_record_daily_entry", _record_args(flock_ids[0], "x-1", date=_past(44))),
        ("cluck_submit_daily_entry", {"idempotencyKey": "x-2", "dailyEntryId": entry.pk}),
        ("cluck_production_report", {"fromDate": "2025-01-01", "toDate": "2026-12-31"}),
        (
            "cluck_production_report",
            {"fromDate": "2026-01-01", "toDate": "2026-01-31", "flock": str(flock_ids[0])},
        ),
        ("cluck_query", {"model": "flocks", "select": ["name"]}),
        ("cluck_query", {"model": "customers"}),
    ]
    seen_tools = {name for name, _ in calls}
    assert seen_tools == {
        spec.name for spec in default_registry.specs() if spec.name.startswith("cluck_")
    } | {spec.name for spec in default_factories.specs() if spec.name.startswith("cluck_")}
    for name, arguments in calls:
        result = hillside.result(name, arguments)
        text = json.dumps(result)
        echoed = json.dumps(arguments)
        leaked = {word for word in sunrise_words if word in text and word not in echoed}
        assert not leaked, (name, leaked)
        if "flock" in arguments or "orderId" in arguments or "dailyEntryId" in arguments:
            assert result["isError"] is True, (name, result)
            assert tool_error(result)["code"].endswith("NotFound"), result
    assert not DailyEntry.objects.unscoped("test").filter(date=_past(44)).exists()


# --- guards 28, 31, 31b: money shape and bounds ----------------------------------------------


MONEY_NAME = re.compile(r"amount|price|paid|outstanding|balance|minor|money|cost|total(?!eggs)")


def _integer_money_fields(
    schema: dict[str, Any], defs: dict[str, Any], path: str = ""
) -> list[str]:
    found: list[str] = []
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).removeprefix("#/$defs/"))
        return _integer_money_fields(target, defs, path) if isinstance(target, dict) else []
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key, []):
            found += _integer_money_fields(option, defs, path)
    if schema.get("type") == "array" and "items" in schema:
        found += _integer_money_fields(schema["items"], defs, path + "[]")
    for name, prop in schema.get("properties", {}).items():
        here = f"{path}.{name}"
        types = {prop.get("type")} | {o.get("type") for o in prop.get("anyOf", [])}
        if MONEY_NAME.search(name.lower()) and types & {"integer", "number"}:
            found.append(here)
        found += _integer_money_fields(prop, defs, here)
    return found


@mutation(
    "cluck/mcp/commerce.py",
    find="class OrderItem(Reply):\n    order_id: int\n",
    replace="class OrderItem(Reply):\n    total_minor: int = 0\n    order_id: int\n",
)
def test_no_reply_schema_carries_integer_money() -> None:
    """Guard 28 (walks every registered tool). Mutation: add ``total_minor: int = 0`` to
    ``cluck.mcp.commerce.OrderItem`` → red."""
    offenders = {}
    for spec in default_registry.specs():
        if spec.output_schema is None:
            continue
        bad = _integer_money_fields(spec.output_schema, spec.output_schema.get("$defs", {}))
        if bad:
            offenders[spec.name] = bad
    assert offenders == {}


def _customers_with_balances(count: int) -> None:
    farm = sunrise()
    template = SalesOrder.objects.for_tenant(farm).filter(status="Confirmed").first()
    assert template is not None
    customers = Customer.all_tenants.bulk_create(
        [Customer(farm=farm, name=f"Bulk {i:04d}", phone="0") for i in range(count)]
    )
    SalesOrder.all_tenants.bulk_create(
        [
            SalesOrder(
                farm=farm,
                customer=c,
                reference_number=f"BULK-{c.pk}",
                status="Confirmed",
                order_date=template.order_date,
                total_minor=12345,
                currency_code=template.currency_code,
                currency_minor_unit=template.currency_minor_unit,
            )
            for c in customers
        ]
    )


@mutation(
    "cluck/mcp/commerce.py",
    find="        caller=caller_of(ctx),\n        search=search,\n        limit=limit,",
    replace="        caller=caller_of(ctx),\n        search=search,\n        limit=500,",
)
def test_read_tools_return_bounded_pages_that_say_so(owner: Tools) -> None:
    """Guard 31 (the reply). Mutation: make ``cluck.mcp.commerce.list_customers`` ask the
    selector for its hard ceiling (``limit=500``) instead of the page cap → red (a 300-row
    reply).
    (Dropping only the query's slice stays green here — the page is still cut — which is why
    guard 31b counts rows fetched from the database.)"""
    seen: list[int] = []
    page = owner.ok("cluck_list_customers", {"search": "Bulk"})
    assert len(page["customers"]) == 50 and page["complete"] is False and page["nextCursor"]
    seen += [c["customerId"] for c in page["customers"]]
    while not page["complete"]:
        page = owner.ok("cluck_list_customers", {"search": "Bulk", "cursor": page["nextCursor"]})
        seen += [c["customerId"] for c in page["customers"]]
    assert len(seen) == len(set(seen)) == BULK_CUSTOMERS
    too_big = owner.error("cluck_list_customers", {"limit": 201})
    assert too_big["code"] == "Tool.InvalidArguments"
    forged = owner.error("cluck_list_customers", {"cursor": "not-a-cursor"})
    assert forged["code"] == "Validation.Failed"


class _RowCounter:
    """Counts rows the database hands back to psycopg cursors, whatever query produced them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = 0
        for method in ("fetchone", "fetchmany", "fetchall"):
            original = getattr(psycopg.Cursor, method)
            monkeypatch.setattr(psycopg.Cursor, method, self._wrap(original))

    def _wrap(self, original: Any) -> Any:
        counter = self

        def fetch(cursor: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(cursor, *args, **kwargs)
            if isinstance(result, list):
                counter.rows += len(result)
            elif result is not None:
                counter.rows += 1
            return result

        return fetch


@mutation(
    "cluck/selectors/receivables.py",
    find=(
        '            "id", "name", "confirmed_minor", "paid_minor", "outstanding_minor"\n'
        "        )[: limit + 1]\n    )"
    ),
    replace=(
        '            "id", "name", "confirmed_minor", "paid_minor", "outstanding_minor"\n'
        "        )\n    )[: limit + 1]"
    ),
)
def test_receivables_are_bounded_in_the_database(
    owner: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guard 31b: count rows actually fetched across the whole tool call, not the SQL text.
    Mutation: in ``customer_balance_page`` fetch the grouped rows unsliced and cut the page in
    Python (``list(qs)[: limit + 1]``) → red (300+ rows fetched for a 10-row page)."""
    counter = _RowCounter(monkeypatch)
    page = owner.ok("cluck_read_receivables", {"limit": 10})
    assert len(page["customers"]) == 10 and page["complete"] is False
    assert counter.rows <= 10 + 1 + 20, counter.rows
    assert Payment.objects.for_tenant(sunrise()).exists()
