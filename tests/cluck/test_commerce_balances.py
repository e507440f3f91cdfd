"""Receivables: per-customer balances, correct, keyset-paged, and bounded in the database."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse

from cluck.caller import Caller
from cluck.models import Customer, Farm, Payment
from cluck.selectors.receivables import customer_balance_page
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from cluck.services.payments import payment_record
from tests.factories import (
    CustomerFactory,
    FarmFactory,
    SaleGradeFactory,
    sellable_lot,
    token_client,
)
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


class RowsFetched:
    """``connection.execute_wrapper`` that counts the rows each statement returned to Python.

    psycopg's client-side cursors transfer the whole result on execute, so ``rowcount`` after a
    SELECT is exactly how many rows came over the wire — what a LIMIT in SQL saves and a slice
    in Python does not.
    """

    def __init__(self) -> None:
        self.rows = 0
        self.statements = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        cursor = context["cursor"]
        if cursor.description is not None:
            self.statements += 1
            self.rows += max(cursor.rowcount, 0)
        return result


def sell(caller: Caller, customer: Customer, grade: Any, quantity: int, price: str) -> int:
    order = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=quantity, unit_price=price)],
    )
    sales_order_confirm(caller=caller, order_id=order.pk)
    return order.pk


@pytest.fixture
def book() -> tuple[Farm, dict[str, Customer]]:
    """Ana owes 70.00 over two orders; Ben paid in full; Cy has only a draft; Dee has a voided
    payment and owes everything; Eve has bought nothing."""
    farm = FarmFactory.create()
    caller = Caller.system(farm, label="test:balances")
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today() - dt.timedelta(days=1))
    people = {
        name: CustomerFactory.create(farm=farm, name=name)
        for name in ("Ana", "Ben", "Cy", "Dee", "Eve")
    }
    first = sell(caller, people["Ana"], grade, 10, "5.00")  # 50.00
    sell(caller, people["Ana"], grade, 4, "10.00")  # 40.00
    payment_record(caller=caller, order_id=first, amount="20.00", method="Cash")
    ben = sell(caller, people["Ben"], grade, 3, "1.00")
    payment_record(caller=caller, order_id=ben, amount="3.00", method="Card")
    sales_order_create(
        caller=caller,
        customer_id=people["Cy"].pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=1, unit_price="99.00")],
    )
    dee = sell(caller, people["Dee"], grade, 2, "7.50")
    voided = payment_record(caller=caller, order_id=dee, amount="15.00", method="Cash")
    Payment.all_tenants.filter(pk=voided.pk).update(voided=True, void_reason="bounced")
    # Another farm's identical-looking book must not leak in.
    other = FarmFactory.create()
    other_caller = Caller.system(other, label="test")
    other_grade = SaleGradeFactory.create(farm=other)
    sellable_lot(grade=other_grade, quantity=10, production_date=other.today())
    sell(other_caller, CustomerFactory.create(farm=other, name="Ana"), other_grade, 10, "1000.00")
    return farm, people


def amounts(items: list[dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    return {
        i["customerName"]: (
            i["confirmedTotal"]["amount"],
            i["paid"]["amount"],
            i["outstanding"]["amount"],
        )
        for i in items
    }


def test_balances_are_confirmed_totals_minus_live_payments(
    book: tuple[Farm, dict[str, Customer]],
) -> None:
    farm, _ = book
    client = token_client(farm=farm, roles=["Sales"])

    everyone = client.get(reverse("customer-balance-list")).json()
    owing = client.get(reverse("customer-balance-list"), {"owingOnly": "true"}).json()

    assert amounts(everyone["items"]) == {
        "Ana": ("90.00", "20.00", "70.00"),
        "Ben": ("3.00", "3.00", "0.00"),
        "Cy": ("0.00", "0.00", "0.00"),
        "Dee": ("15.00", "0.00", "15.00"),
        "Eve": ("0.00", "0.00", "0.00"),
    }
    assert [i["customerName"] for i in everyone["items"]] == ["Ana", "Ben", "Cy", "Dee", "Eve"]
    assert everyone["complete"] is True and everyone["nextCursor"] is None
    assert amounts(owing["items"]) == {
        "Ana": ("90.00", "20.00", "70.00"),
        "Dee": ("15.00", "0.00", "15.00"),
    }
    assert all(i["outstanding"]["currency"] == "PHP" for i in everyone["items"])


@pytest.mark.parametrize("owing_only", [False, True])
def test_cursor_walk_reaches_every_customer_exactly_once(owing_only: bool) -> None:
    farm = FarmFactory.create()
    caller = Caller.system(farm, label="test")
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today())
    # Duplicate names on purpose: the (name, id) key must still order and split them.
    names = ["Mara", "Mara", "Lito", "Zeny", "Mara", "Abe", "Lito", "Obet", "Ching", "Rey", "Sol"]
    customers = [CustomerFactory.create(farm=farm, name=name) for name in names]
    for index, customer in enumerate(customers):
        if index % 3:
            sell(caller, customer, grade, 1, "2.00")
    expected = [
        c.pk
        for c in sorted(customers, key=lambda c: (c.name, c.pk))
        if not owing_only or customers.index(c) % 3
    ]
    client = token_client(farm=farm, roles=["Manager"])

    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2, "owingOnly": str(owing_only).lower()}
    pages = 0
    while True:
        body = client.get(reverse("customer-balance-list"), params).json()
        pages += 1
        assert len(body["items"]) <= 2
        seen += [i["customerId"] for i in body["items"]]
        if body["nextCursor"] is None:
            assert body["complete"] is True
            break
        assert body["complete"] is False
        params["cursor"] = body["nextCursor"]
    assert seen == expected
    assert pages == -(-len(expected) // 2)


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
def test_a_balance_page_fetches_at_most_limit_plus_one_rows_from_the_database() -> None:
    """The balance book is never materialized: one statement, ``limit + 1`` rows over the wire.

    Mutation: in ``customer_balance_page`` drop the ``[: limit + 1]`` from the query and slice
    the fetched list in Python (``rows = list(qs...values(...))[: limit + 1]``) → red
    (60 rows fetched for two pages of 5).
    """
    farm = FarmFactory.create()
    caller = Caller.system(farm, label="test")
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today())
    customers = [CustomerFactory.create(farm=farm) for _ in range(40)]
    for customer in customers[::2]:
        sell(caller, customer, grade, 2, "3.00")
    counter = RowsFetched()

    with connection.execute_wrapper(counter):
        page = customer_balance_page(caller=caller, owing_only=False, limit=5)
        owing = customer_balance_page(caller=caller, owing_only=True, limit=5)

    assert len(page.items) == 5 and page.next_position is not None
    assert len(owing.items) == 5
    assert counter.statements == 2
    assert counter.rows <= 2 * (5 + 1)


def test_bad_balance_parameters_are_400(book: tuple[Farm, dict[str, Customer]]) -> None:
    farm, _ = book
    client = token_client(farm=farm, roles=["Admin"])
    for params in ({"limit": "0"}, {"limit": "x"}, {"cursor": "e30"}, {"owingOnly": "maybe"}):
        response = client.get(reverse("customer-balance-list"), params)
        assert response.status_code == 400, (params, response.content)
