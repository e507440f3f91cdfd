"""Domain limits, enforced in the services so REST and MCP give the same answer (issue 12,
item 5): birds that die never exceed the birds alive; a production day lies between the
flock's placement and the farm's today, within the farm's late-entry grace; order and payment
dates lie within that grace up to the farm's today.

Every daily-entry case runs through both channels (``POST /api/v1/daily-entries/`` and its
tool) and must give the same code; a refused write leaves no trace (no entry, no lot, no bird
movement, no audit row).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cluck.caller import Caller
from cluck.models import AuditEvent, BirdMovement, DailyEntry, EggLot, Farm, Flock
from cluck.services.daily_entries import daily_entry_record
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from tests.cluck.mcp_helpers import Tools
from tests.factories import (
    CustomerFactory,
    FlockFactory,
    MembershipFactory,
    SaleGradeFactory,
    bearer_for,
    provisioned_farm,
    sellable_lot,
)
from tests.mutations import Edit, mutation

# Tools run in worker threads on their own connections: what they read must be committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def _days(farm: Farm, n: int) -> str:
    """The farm-local day ``n`` days before today (negative: after)."""
    return (farm.today() - dt.timedelta(days=n)).isoformat()


def _traces(farm: Farm) -> tuple[int, int, int, int]:
    return (
        DailyEntry.all_tenants.filter(farm=farm).count(),
        EggLot.all_tenants.filter(farm=farm).count(),
        BirdMovement.all_tenants.filter(farm=farm).count(),
        AuditEvent.all_tenants.filter(farm=farm).count(),
    )


class Channels:
    """The same write through REST and through MCP; each answer as ``(code, field codes)``."""

    def __init__(self, farm: Farm) -> None:
        membership = MembershipFactory.create(tenant=farm, roles=["Admin"], user__password=None)
        bearer = bearer_for(membership)
        self.rest = APIClient()
        self.rest.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
        self.tools = Tools(bearer)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.rest.post(
            path,
            json.dumps(body),
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        )

    def rest_record(self, flock: Flock, **fields: Any) -> tuple[str | None, list[str]]:
        body = {"flockId": flock.pk, **_counts(fields)}
        return _problem(self.post(reverse("daily-entry-record"), body))

    def mcp_record(self, flock: Flock, **fields: Any) -> tuple[str | None, list[str]]:
        arguments = {"flock": flock.pk, "idempotencyKey": str(uuid.uuid4()), **_counts(fields)}
        return _tool_answer(self.tools.result("cluck_record_daily_entry", arguments))

    def rest_submit(self, entry_id: int) -> tuple[str | None, list[str]]:
        return _problem(self.post(reverse("daily-entry-submit", args=[entry_id]), {}))

    def mcp_submit(self, entry_id: int) -> tuple[str | None, list[str]]:
        arguments = {"dailyEntryId": entry_id, "idempotencyKey": str(uuid.uuid4())}
        return _tool_answer(self.tools.result("cluck_submit_daily_entry", arguments))


def _counts(fields: dict[str, Any]) -> dict[str, Any]:
    return {"totalEggs": 0, "crackedEggs": 0, "dirtyEggs": 0, "mortalityCount": 0, **fields}


def _problem(response: Any) -> tuple[str | None, list[str]]:
    if 200 <= response.status_code < 300:
        return None, []
    body = response.json()
    return body["code"], [error["code"] for error in body.get("errors", [])]


def _tool_answer(result: dict[str, Any]) -> tuple[str | None, list[str]]:
    if not result["isError"]:
        return None, []
    error = json.loads(result["content"][0]["text"])["error"]
    return error["code"], [e["code"] for e in (error.get("data") or {}).get("errors", [])]


CHANNELS = ("rest", "mcp")


@pytest.fixture
def farm() -> Farm:
    return provisioned_farm()


def _flock(farm: Farm, *, placed_days_ago: int = 30, birds: int = 4988) -> Flock:
    return FlockFactory.create(
        farm=farm,
        placement_date=farm.today() - dt.timedelta(days=placed_days_ago),
        initial_count=birds,
    )


@mutation(
    "cluck/services/daily_entries.py",
    find="    _check_mortality(caller, flock, mortality_count)\n",
    replace="",
)
@pytest.mark.parametrize("channel", CHANNELS)
def test_mortality_above_the_birds_alive_is_refused_at_record(farm: Farm, channel: str) -> None:
    """The reported case: 100000 dead of 4988. Mutation: drop ``_check_mortality`` from
    ``daily_entry_record`` → the draft is recorded → red."""
    flock = _flock(farm)
    channels = Channels(farm)
    before = _traces(farm)
    record = getattr(channels, f"{channel}_record")
    answer = record(flock, date=_days(farm, 1), mortalityCount=100_000)
    assert answer == ("DailyEntry.MortalityExceedsBirdsAlive", [])
    assert _traces(farm) == before
    assert record(flock, date=_days(farm, 1), mortalityCount=4988) == (None, [])


@mutation(
    "cluck/services/daily_entries.py",
    find="        _check_mortality(caller, flock, entry.mortality_count)\n",
    replace="",
)
@pytest.mark.parametrize("channel", CHANNELS)
def test_mortality_is_checked_again_at_submit_against_what_is_left(
    farm: Farm, channel: str
) -> None:
    """Two drafts each fit the 100 birds; once one is submitted the other no longer does.

    Mutation: drop ``_check_mortality`` from ``daily_entry_submit`` → the second submit
    succeeds and ``birdsAlive`` is −20 → red."""
    flock = _flock(farm, birds=100)
    caller = Caller.system(farm, label="test:limits")
    first, second = (
        daily_entry_record(
            caller=caller,
            flock_id=flock.pk,
            date=farm.today() - dt.timedelta(days=days),
            total_eggs=0,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=60,
        ).entry
        for days in (2, 1)
    )
    channels = Channels(farm)
    submit = getattr(channels, f"{channel}_submit")
    assert submit(first.pk) == (None, [])
    before = _traces(farm)
    assert submit(second.pk) == ("DailyEntry.MortalityExceedsBirdsAlive", [])
    assert _traces(farm) == before
    second.refresh_from_db()
    assert second.status == DailyEntry.Status.DRAFT
    flocks = channels.tools.ok("cluck_list_flocks")["flocks"]
    assert next(f["birdsAlive"] for f in flocks if f["flockId"] == flock.pk) == 40


@mutation(
    "cluck/services/daily_entries.py",
    find="    _check_production_day(flock, date)\n",
    replace="",
)
@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "        elif date < earliest:\n"
        "            fail(\n"
        '                "date",\n'
        '                "DailyEntry.Date.TooOld",'
    ),
    replace=(
        "        elif False:\n"
        "            fail(\n"
        '                "date",\n'
        '                "DailyEntry.Date.TooOld",'
    ),
)
@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize(
    ("when", "code", "field_codes"),
    [
        # The reported case: far before anything; outside the farm's late-entry grace.
        (lambda farm: "0001-01-02", "Validation.Failed", ["DailyEntry.Date.TooOld"]),
        (lambda farm: _days(farm, 20), "DailyEntry.DateBeforePlacement", []),
        (lambda farm: _days(farm, -1), "Validation.Failed", ["DailyEntry.Date.NotFuture"]),
        (lambda farm: _days(farm, 10), None, []),  # placed 10 days ago: the first day counts
        (lambda farm: _days(farm, 0), None, []),
    ],
    ids=["0001-01-02", "before-placement", "tomorrow", "placement-day", "today"],
)
def test_a_production_day_lies_between_placement_and_today(
    farm: Farm,
    channel: str,
    when: Callable[[Farm], str],
    code: str | None,
    field_codes: list[str],
) -> None:
    """Mutation: drop ``_check_production_day`` from ``daily_entry_record`` → a day before the
    flock's placement is recorded → red; drop the ``DailyEntry.Date.TooOld`` branch of the
    validator → 0001-01-02 passes the validator (then fails placement, another code) → red."""
    flock = _flock(farm, placed_days_ago=10)
    channels = Channels(farm)
    before = _traces(farm)
    answer = getattr(channels, f"{channel}_record")(flock, date=when(farm))
    assert answer == (code, field_codes)
    if code is not None:
        assert _traces(farm) == before


@mutation(
    "cluck/services/daily_entries.py",
    find="    _check_production_day(flock, entry.date)\n",
    replace="",
)
@pytest.mark.parametrize("channel", CHANNELS)
def test_a_draft_dated_before_placement_is_never_submitted(farm: Farm, channel: str) -> None:
    """A draft from before the rule (written directly) cannot reach stock. Mutation: drop
    ``_check_production_day`` from ``daily_entry_submit`` → lots appear → red."""
    flock = _flock(farm, placed_days_ago=10)
    entry = DailyEntry.all_tenants.create(
        farm=farm, house=flock.house, flock=flock, date=dt.date(1, 1, 2), total_eggs=0
    )
    before = _traces(farm)
    answer = getattr(Channels(farm), f"{channel}_submit")(entry.pk)
    assert answer == ("DailyEntry.DateBeforePlacement", [])
    assert _traces(farm) == before


def test_the_late_entry_grace_is_the_farms_own(farm: Farm) -> None:
    """The oldest accepted day moves with ``Farm.late_entry_days``."""
    flock = _flock(farm, placed_days_ago=400)
    channels = Channels(farm)
    farm.late_entry_days = 7
    farm.save(update_fields=["late_entry_days"])
    assert channels.rest_record(flock, date=_days(farm, 7)) == (None, [])
    assert channels.mcp_record(flock, date=_days(farm, 8)) == (
        "Validation.Failed",
        ["DailyEntry.Date.TooOld"],
    )


# --- orders and payments (REST: no MCP tool writes them) ----------------------------------------


def _order_world(farm: Farm) -> tuple[Channels, int, int, int]:
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today() - dt.timedelta(days=2))
    customer = CustomerFactory.create(farm=farm)
    caller = Caller.system(farm, label="test:limits")
    order = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=10, unit_price="10.00")],
    )
    sales_order_confirm(caller=caller, order_id=order.pk)
    return Channels(farm), grade.pk, customer.pk, order.pk


@mutation(
    Edit(
        "cluck/services/orders.py",
        find="    errors.not_future(\n        ordered_on,",
        replace="    (lambda *args, **kwargs: None)(\n        ordered_on,",
    ),
    Edit(
        "cluck/services/orders.py",
        find="    errors.not_too_old(\n        ordered_on,",
        replace="    (lambda *args, **kwargs: None)(\n        ordered_on,",
    ),
)
@pytest.mark.parametrize(
    ("when", "field_codes"),
    [
        (lambda farm: "9999-12-31", ["SalesOrder.OrderDate.InFuture"]),
        (lambda farm: "0001-01-01", ["SalesOrder.OrderDate.TooOld"]),
        (lambda farm: _days(farm, -1), ["SalesOrder.OrderDate.InFuture"]),
        (lambda farm: _days(farm, farm.late_entry_days + 1), ["SalesOrder.OrderDate.TooOld"]),
        (lambda farm: _days(farm, farm.late_entry_days), []),
        (lambda farm: _days(farm, 0), []),
    ],
    ids=["9999-12-31", "0001-01-01", "tomorrow", "past-grace", "oldest-accepted", "today"],
)
def test_an_order_date_lies_within_the_farms_window(
    farm: Farm, when: Callable[[Farm], str], field_codes: list[str]
) -> None:
    """Mutation: drop the ``orderDate`` checks from ``sales_order_create`` → 9999-12-31 and
    0001-01-01 are accepted (201) → red."""
    channels, grade_id, customer_id, _ = _order_world(farm)
    before = AuditEvent.all_tenants.filter(farm=farm).count()
    body = {
        "customerId": customer_id,
        "orderDate": when(farm),
        "lines": [{"eggGradeId": grade_id, "quantity": 1}],
    }
    answer = _problem(channels.post(reverse("sales-order-create"), body))
    if field_codes:
        assert answer == ("Validation.Failed", field_codes)
        assert AuditEvent.all_tenants.filter(farm=farm).count() == before
    else:
        assert answer == (None, [])


@mutation(
    "cluck/services/payments.py",
    find="    errors.not_too_old(\n        paid_on,",
    replace="    (lambda *args, **kwargs: None)(\n        paid_on,",
)
@pytest.mark.parametrize(
    ("when", "field_codes"),
    [
        (lambda farm: "0001-01-01", ["Payment.PaymentDate.TooOld"]),
        (lambda farm: "9999-12-31", ["Payment.PaymentDate.InFuture"]),
        (lambda farm: _days(farm, farm.late_entry_days + 1), ["Payment.PaymentDate.TooOld"]),
        (lambda farm: _days(farm, farm.late_entry_days), []),
    ],
    ids=["0001-01-01", "9999-12-31", "past-grace", "oldest-accepted"],
)
def test_a_payment_date_lies_within_the_farms_window(
    farm: Farm, when: Callable[[Farm], str], field_codes: list[str]
) -> None:
    """Mutation: drop ``not_too_old`` from ``payment_record`` → 0001-01-01 is accepted → red."""
    channels, _, _, order_id = _order_world(farm)
    before = AuditEvent.all_tenants.filter(farm=farm).count()
    body = {"amount": "1.00", "method": "Cash", "paymentDate": when(farm)}
    answer = _problem(channels.post(reverse("payment-record", args=[order_id]), body))
    if field_codes:
        assert answer == ("Validation.Failed", field_codes)
        assert AuditEvent.all_tenants.filter(farm=farm).count() == before
    else:
        assert answer == (None, [])
