"""Demo commerce data: customers, confirmed orders that consume seeded stock, part payments.

Called by ``manage.py seed_demo`` once per farm, after production data, with
``Caller.system(farm, label="cli:seed_demo")``. Everything goes through the real services (so
stock is allocated FIFO and every change is audited) and is idempotent: customers are keyed on
their name, orders on their reference number, and each order with its payments is created in
one transaction, so a re-run — or a run after an interrupted one — adds nothing twice.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Sum

from cluck.caller import Caller
from cluck.models import Customer, EggGrade, EggLot, SalesOrder
from cluck.money import Money
from cluck.services.customers import customer_create
from cluck.services.orders import (
    OrderLineInput,
    sales_order_confirm,
    sales_order_create,
    sellable_lots_q,
)
from cluck.services.payments import payment_record


@dataclass(frozen=True)
class _Line:
    grades: tuple[str, ...]  # preferred grade names, first available wins
    quantity: int
    unit_price: str  # in the farm's currency


@dataclass(frozen=True)
class _Order:
    reference: str
    customer: str
    days_ago: int
    lines: tuple[_Line, ...]
    confirm: bool = True
    paid_fraction: tuple[int, int] = (0, 1)  # numerator, denominator of the total
    method: str = "Cash"


@dataclass(frozen=True)
class _Plan:
    customers: tuple[tuple[str, str, str | None], ...]  # name, phone, address
    orders: tuple[_Order, ...] = field(default=())


_LARGE = ("Large", "Jumbo", "Medium")
_MEDIUM = ("Medium", "Large", "Small")
_SMALL = ("Small", "Medium", "Seconds")

PLANS: dict[str, _Plan] = {
    "sunrise": _Plan(
        customers=(
            ("Aling Nena's Sari-Sari Store", "+63 917 555 0101", "Purok 3, Brgy. San Isidro"),
            ("Mabuhay Bakery", "+63 917 555 0102", "12 Rizal St., Lipa City"),
            ("Lola Carmen's Carinderia", "+63 917 555 0103", None),
            ("Santos Family Grocery", "+63 917 555 0104", "Public Market Stall 21"),
            ("Dela Cruz Catering", "+63 917 555 0105", None),
        ),
        orders=(
            _Order(
                "DEMO-SR-0001",
                "Aling Nena's Sari-Sari Store",
                9,
                (_Line(_LARGE, 300, "9.50"),),
                paid_fraction=(1, 1),
            ),
            _Order(
                "DEMO-SR-0002",
                "Mabuhay Bakery",
                7,
                (_Line(_MEDIUM, 600, "8.25"),),
                paid_fraction=(1, 2),
                method="BankTransfer",
            ),
            _Order(
                "DEMO-SR-0003",
                "Lola Carmen's Carinderia",
                5,
                (_Line(_LARGE, 180, "9.50"), _Line(_SMALL, 120, "7.00")),
            ),
            _Order(
                "DEMO-SR-0004",
                "Santos Family Grocery",
                4,
                (_Line(_LARGE, 90, "10.75"),),
                paid_fraction=(1, 1),
                method="MobilePayment",
            ),
            _Order(
                "DEMO-SR-0005",
                "Aling Nena's Sari-Sari Store",
                2,
                (_Line(_SMALL, 150, "7.00"),),
                paid_fraction=(1, 3),
            ),
            _Order(
                "DEMO-SR-0006",
                "Dela Cruz Catering",
                1,
                (_Line(_MEDIUM, 240, "8.25"),),
                confirm=False,
            ),
        ),
    ),
    "hillside": _Plan(
        customers=(("Yamada Shoten", "+81 3-5555-0101", "2-1 Kanda, Chiyoda-ku"),),
        orders=(
            _Order(
                "DEMO-HS-0001",
                "Yamada Shoten",
                3,
                (_Line(_LARGE, 200, "35"),),
                paid_fraction=(2, 5),
            ),
        ),
    ),
}


def seed_commerce(*, caller: Caller) -> None:
    """Seed the demo customers, orders and payments of ``caller.farm`` (no-op for other farms).

    Lines are sized to the sellable stock actually there (never more than half of what is left
    of a grade), so a farm with little stock gets smaller orders instead of a failed seed.
    """
    plan = PLANS.get(caller.farm.code)
    if plan is None:
        return
    customers = _seed_customers(caller, plan)
    for order in plan.orders:
        _seed_order(caller, order, customers)


def _seed_customers(caller: Caller, plan: _Plan) -> dict[str, Customer]:
    existing = {
        c.name: c
        for c in Customer.objects.for_tenant(caller.tenant).filter(
            name__in=[name for name, _, _ in plan.customers]
        )
    }
    for name, phone, address in plan.customers:
        if name not in existing:
            existing[name] = customer_create(caller=caller, name=name, phone=phone, address=address)
    return existing


def _sellable(caller: Caller) -> dict[str, tuple[EggGrade, int]]:
    """Saleable, active grades by name with their sellable stock today."""
    today = caller.farm.today()
    stock = dict(
        EggLot.objects.for_tenant(caller.tenant)
        .filter(sellable_lots_q(today))
        .values("grade_id")
        .annotate(total=Sum("quantity_available"))
        .values_list("grade_id", "total")
    )
    return {
        grade.name: (grade, int(stock.get(grade.pk, 0)))
        for grade in EggGrade.objects.for_tenant(caller.tenant).filter(
            is_active=True, is_saleable=True
        )
    }


@transaction.atomic
def _seed_order(caller: Caller, plan: _Order, customers: dict[str, Customer]) -> None:
    if (
        SalesOrder.objects.for_tenant(caller.tenant)
        .filter(reference_number=plan.reference)
        .exists()
    ):
        return
    grades = _sellable(caller)
    lines: list[OrderLineInput] = []
    for line in plan.lines:
        choice = next(
            (grades[name] for name in line.grades if grades.get(name, (None, 0))[1]), None
        )
        if choice is None:
            continue
        grade, available = choice
        quantity = min(line.quantity, available // 2)
        if quantity <= 0:
            continue
        grades[grade.name] = (grade, available - quantity)
        lines.append(
            OrderLineInput(egg_grade_id=grade.pk, quantity=quantity, unit_price=line.unit_price)
        )
    if not lines:
        return
    farm = caller.farm
    order = sales_order_create(
        caller=caller,
        customer_id=customers[plan.customer].pk,
        lines=lines,
        order_date=farm.today() - dt.timedelta(days=plan.days_ago),
        reference_number=plan.reference,
    )
    if not plan.confirm:
        return
    sales_order_confirm(caller=caller, order_id=order.pk)
    numerator, denominator = plan.paid_fraction
    paid_minor = order.total_minor * numerator // denominator
    if paid_minor > 0:
        payment_record(
            caller=caller,
            order_id=order.pk,
            amount=Money.of(paid_minor, farm).as_json()["amount"],
            method=plan.method,
            reference_number=f"{plan.reference}-P1",
        )
