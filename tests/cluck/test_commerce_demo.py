"""The demo commerce seed: confirmed orders that consume real stock, part payments, one draft,
a yen farm — and nothing twice when run again."""

from __future__ import annotations

import datetime as dt

import pytest

from cluck.caller import Caller
from cluck.demo.commerce import seed_commerce
from cluck.models import AuditEvent, Customer, EggLot, Farm, Payment, SalesOrder
from cluck.selectors.receivables import customer_balance_page
from tests.factories import FarmFactory, SaleGradeFactory, sellable_lot

pytestmark = pytest.mark.django_db


def stocked_farm(code: str, currency: str, minor_unit: int, grades: dict[str, int]) -> Farm:
    farm = FarmFactory.create(code=code, currency_code=currency, currency_minor_unit=minor_unit)
    for name, per_day in grades.items():
        grade = SaleGradeFactory.create(farm=farm, name=name)
        for day in range(1, 8):
            sellable_lot(
                grade=grade,
                quantity=per_day,
                production_date=farm.today() - dt.timedelta(days=day),
            )
    return farm


def test_sunrise_gets_customers_owing_money_and_a_draft_idempotently() -> None:
    farm = stocked_farm("sunrise", "PHP", 2, {"Small": 200, "Medium": 300, "Large": 400})
    stock_before = sum(
        EggLot.all_tenants.filter(farm=farm).values_list("quantity_available", flat=True)
    )
    caller = Caller.system(farm, label="cli:seed_demo")

    seed_commerce(caller=caller)
    snapshot = (
        Customer.all_tenants.filter(farm=farm).count(),
        list(SalesOrder.all_tenants.filter(farm=farm).values_list("reference_number", "status")),
        Payment.all_tenants.filter(farm=farm).count(),
        AuditEvent.all_tenants.filter(farm=farm).count(),
    )
    seed_commerce(caller=Caller.system(farm, label="cli:seed_demo"))

    assert snapshot == (
        Customer.all_tenants.filter(farm=farm).count(),
        list(SalesOrder.all_tenants.filter(farm=farm).values_list("reference_number", "status")),
        Payment.all_tenants.filter(farm=farm).count(),
        AuditEvent.all_tenants.filter(farm=farm).count(),
    )
    customers, orders, payments, _ = snapshot
    statuses = [status for _, status in orders]
    assert customers == 5
    assert statuses.count("Confirmed") == 5 and statuses.count("Draft") == 1
    assert payments >= 3
    stock_after = sum(
        EggLot.all_tenants.filter(farm=farm).values_list("quantity_available", flat=True)
    )
    assert stock_after < stock_before  # confirmed orders consumed seeded stock
    owing = customer_balance_page(caller=caller, owing_only=True, limit=50).items
    assert len(owing) >= 2
    everyone = customer_balance_page(caller=caller, owing_only=False, limit=50).items
    assert any(b.paid.minor and b.outstanding.minor for b in everyone)  # part-paid
    assert any(b.confirmed_total.minor and not b.outstanding.minor for b in everyone)  # settled
    assert set(AuditEvent.all_tenants.filter(farm=farm).values_list("channel", flat=True)) == {
        "cli"
    }


def test_hillside_gets_one_part_paid_yen_order() -> None:
    farm = stocked_farm("hillside", "JPY", 0, {"Large": 100})
    caller = Caller.system(farm, label="cli:seed_demo")

    seed_commerce(caller=caller)

    order = SalesOrder.all_tenants.get(farm=farm)
    assert (order.status, order.currency_code, order.currency_minor_unit) == ("Confirmed", "JPY", 0)
    balance = customer_balance_page(caller=caller, owing_only=True, limit=5).items[0]
    assert balance.customer_name == "Yamada Shoten"
    assert 0 < balance.paid.minor < balance.confirmed_total.minor
    assert balance.outstanding.as_json()["amount"].isdigit()


def test_a_farm_without_stock_gets_customers_but_no_orders_and_other_farms_nothing() -> None:
    bare = FarmFactory.create(code="hillside")
    seed_commerce(caller=Caller.system(bare, label="cli:seed_demo"))
    assert Customer.all_tenants.filter(farm=bare).count() == 1
    assert not SalesOrder.all_tenants.filter(farm=bare).exists()

    unknown = FarmFactory.create(code="elsewhere")
    seed_commerce(caller=Caller.system(unknown, label="cli:seed_demo"))
    assert not Customer.all_tenants.filter(farm=unknown).exists()
