"""Sales orders: drafts, FIFO confirmation, settlement visibility, the newest-first list."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cluck.caller import Caller
from cluck.errors import FieldError
from cluck.models import AuditEvent, EggLot, InventoryMovement, LotAllocation, SalesOrder
from cluck.selectors.orders import sales_order_list
from cluck.services.orders import (
    OrderLineInput,
    SalesOrderInsufficientStockError,
    SalesOrderNoItemsError,
    SalesOrderNotDraftError,
    sales_order_confirm,
    sales_order_create,
)
from cluck.services.payments import payment_record
from tests.factories import (
    CustomerFactory,
    FarmFactory,
    SaleGradeFactory,
    person_caller,
    sellable_lot,
    token_client,
    write_headers,
)
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db


def days_ago(farm: Any, n: int) -> dt.date:
    return farm.today() - dt.timedelta(days=n)


@pytest.fixture
def farm() -> Any:
    return FarmFactory.create()


@pytest.fixture
def caller(farm: Any) -> Caller:
    return Caller.system(farm, label="test:orders")


def draft(caller: Caller, customer: Any, *lines: tuple[Any, int]) -> SalesOrder:
    return sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=g.pk, quantity=q) for g, q in lines],
    )


def lot_state(*lots: EggLot) -> list[tuple[int, int]]:
    return [(lot.pk, EggLot.all_tenants.get(pk=lot.pk).quantity_available) for lot in lots]


# --- create ----------------------------------------------------------------------------------


def test_create_snapshots_prices_and_currency_and_audits(farm: Any) -> None:
    grade = SaleGradeFactory.create(farm=farm, unit_price_minor=850)
    other = SaleGradeFactory.create(farm=farm)
    customer = CustomerFactory.create(farm=farm)
    client = token_client(farm=farm, roles=["Sales"])
    taken_on = days_ago(farm, 30).isoformat()

    response = client.post(
        reverse("sales-order-create"),
        {
            "customerId": customer.pk,
            "orderDate": taken_on,
            "lines": [
                {"eggGradeId": grade.pk, "quantity": 30},
                {"eggGradeId": other.pk, "quantity": 12, "unitPrice": "12.50"},
            ],
        },
        format="json",
        **write_headers(),
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "Draft"
    assert body["orderDate"] == taken_on
    assert body["referenceNumber"] == f"SO-{body['id']:06d}"
    assert body["customerName"] == customer.name
    assert body["total"] == {"amount": "405.00", "currency": "PHP"}  # 30×8.50 + 12×12.50
    assert [(line["quantity"], line["unitPrice"]["amount"]) for line in body["lines"]] == [
        (30, "8.50"),
        (12, "12.50"),
    ]
    assert body["paid"] == {"amount": "0.00", "currency": "PHP"}
    assert body["outstanding"] is None  # undefined before confirmation
    audit = AuditEvent.all_tenants.get(action="SalesOrder.Create", entity_id=str(body["id"]))
    assert audit.farm_id == farm.pk and audit.channel == "http"


def test_create_lists_every_bad_line_field(farm: Any) -> None:
    grade = SaleGradeFactory.create(farm=farm)
    closed = SaleGradeFactory.create(farm=farm, is_saleable=False)
    jpy_caller = Caller.system(
        FarmFactory.create(currency_code="JPY", currency_minor_unit=0), label="test"
    )
    with pytest.raises(FieldError) as raised:
        sales_order_create(
            caller=Caller.system(farm, label="test"),
            customer_id=CustomerFactory.create(farm=farm).pk,
            lines=[
                OrderLineInput(egg_grade_id=grade.pk, quantity=0),
                OrderLineInput(egg_grade_id=closed.pk, quantity=1),
                OrderLineInput(egg_grade_id=10**12, quantity=1),
                OrderLineInput(egg_grade_id=grade.pk, quantity=1, unit_price="1.005"),
                OrderLineInput(egg_grade_id=grade.pk, quantity=1, unit_price="-1"),
            ],
        )
    assert [(e["field"], e["code"]) for e in raised.value.errors] == [
        ("lines[0].quantity", "SalesOrder.Line.Quantity.Invalid"),
        ("lines[1].eggGradeId", "SalesOrder.Line.GradeNotSaleable"),
        ("lines[2].eggGradeId", "EggGrade.NotFound"),
        ("lines[3].unitPrice", "SalesOrder.Line.UnitPrice.TooPrecise"),
        ("lines[4].unitPrice", "SalesOrder.Line.UnitPrice.Invalid"),
    ]
    assert not SalesOrder.all_tenants.filter(farm=farm).exists()
    # Yen have no decimals: "35.5" is too precise there, "35" is fine.
    jpy_grade = SaleGradeFactory.create(farm=jpy_caller.farm)
    jpy_customer = CustomerFactory.create(farm=jpy_caller.farm)
    with pytest.raises(FieldError) as raised:
        sales_order_create(
            caller=jpy_caller,
            customer_id=jpy_customer.pk,
            lines=[OrderLineInput(egg_grade_id=jpy_grade.pk, quantity=1, unit_price="35.5")],
        )
    assert raised.value.errors[0]["code"] == "SalesOrder.Line.UnitPrice.TooPrecise"


def test_create_rejects_malformed_bodies_with_400_not_500(farm: Any) -> None:
    client = token_client(farm=farm, roles=["Admin"])
    customer = CustomerFactory.create(farm=farm)
    bodies: list[Any] = [
        {},
        {"customerId": "x", "lines": []},
        {
            "customerId": customer.pk,
            "lines": [{"eggGradeId": 1, "quantity": 1, "unitPrice": "1e3"}],
        },
        {"customerId": customer.pk, "lines": "nope"},
        {"customerId": 2**64, "lines": []},
        [],
    ]
    for body in bodies:
        response = client.post(
            reverse("sales-order-create"), body, format="json", **write_headers()
        )
        assert response.status_code == 400, (body, response.content)
        assert response["Content-Type"] == "application/problem+json"


# --- confirm ---------------------------------------------------------------------------------


def test_confirm_allocates_oldest_lots_first_and_writes_sale_movements(
    farm: Any, caller: Caller
) -> None:
    grade = SaleGradeFactory.create(farm=farm)
    newest = sellable_lot(grade=grade, quantity=100, production_date=days_ago(farm, 1))
    oldest = sellable_lot(grade=grade, quantity=30, production_date=days_ago(farm, 3))
    middle_a = sellable_lot(grade=grade, quantity=20, production_date=days_ago(farm, 2))
    middle_b = sellable_lot(grade=grade, quantity=20, production_date=days_ago(farm, 2))
    order = draft(caller, CustomerFactory.create(farm=farm), (grade, 45), (grade, 20))

    sales_order_confirm(caller=caller, order_id=order.pk)

    # 65 eggs: all 30 of the oldest, then the same-day lots by id, none of the newest.
    assert lot_state(oldest, middle_a, middle_b, newest) == [
        (oldest.pk, 0),
        (middle_a.pk, 0),
        (middle_b.pk, 5),
        (newest.pk, 100),
    ]
    order.refresh_from_db()
    assert order.status == SalesOrder.Status.CONFIRMED and order.confirmed_at is not None
    first, second = order.lines.order_by("id")
    assert list(first.allocations.order_by("id").values_list("lot_id", "quantity")) == [
        (oldest.pk, 30),
        (middle_a.pk, 15),
    ]
    assert list(second.allocations.order_by("id").values_list("lot_id", "quantity")) == [
        (middle_a.pk, 5),
        (middle_b.pk, 15),
    ]
    for lot in (oldest, middle_a, middle_b, newest):
        movements = InventoryMovement.all_tenants.filter(lot=lot)
        assert (
            sum(m.quantity for m in movements)
            == EggLot.all_tenants.get(pk=lot.pk).quantity_available
        )
    assert AuditEvent.all_tenants.filter(
        action="SalesOrder.Confirm", entity_id=str(order.pk)
    ).exists()


def test_confirm_skips_restricted_and_future_lots(farm: Any, caller: Caller) -> None:
    grade = SaleGradeFactory.create(farm=farm)
    today = farm.today()
    restricted = sellable_lot(
        grade=grade, quantity=50, production_date=days_ago(farm, 5), restricted_until=today
    )
    future = sellable_lot(grade=grade, quantity=50, production_date=today + dt.timedelta(days=1))
    released = sellable_lot(
        grade=grade,
        quantity=10,
        production_date=days_ago(farm, 4),
        restricted_until=today - dt.timedelta(days=1),
    )
    customer = CustomerFactory.create(farm=farm)

    with pytest.raises(SalesOrderInsufficientStockError) as raised:
        sales_order_confirm(caller=caller, order_id=draft(caller, customer, (grade, 11)).pk)
    assert raised.value.data["shortages"] == [
        {"eggGradeId": grade.pk, "gradeName": grade.name, "requested": 11, "available": 10}
    ]

    sales_order_confirm(caller=caller, order_id=draft(caller, customer, (grade, 10)).pk)
    assert lot_state(restricted, future, released) == [
        (restricted.pk, 50),
        (future.pk, 50),
        (released.pk, 0),
    ]


@mutation(
    Edit(
        "cluck/services/orders.py",
        find="@transaction.atomic\ndef sales_order_confirm(",
        replace="def sales_order_confirm(",
    ),
    Edit(
        "cluck/services/orders.py",
        find="        plan[grade_id] = takes\n",
        replace=(
            "        plan[grade_id] = takes\n"
            "        for lot, take in takes:\n"
            "            lot.quantity_available -= take\n"
            '            lot.save(update_fields=["quantity_available"])\n'
        ),
    ),
)
def test_insufficient_stock_writes_nothing_and_names_the_short_grade(
    farm: Any, caller: Caller
) -> None:
    """Grade A (lower id, planned first) is coverable, grade B is not: nothing may move.

    Mutation: in ``sales_order_confirm`` apply each grade's takes to its lots as soon as they
    are planned and drop ``@transaction.atomic`` → red (grade A's lot is left at 40).
    """
    plenty = SaleGradeFactory.create(farm=farm)
    scarce = SaleGradeFactory.create(farm=farm)
    plenty_lot = sellable_lot(grade=plenty, quantity=100, production_date=days_ago(farm, 2))
    scarce_lot = sellable_lot(grade=scarce, quantity=5, production_date=days_ago(farm, 2))
    order = draft(caller, CustomerFactory.create(farm=farm), (plenty, 60), (scarce, 6))
    client = token_client(farm=farm, roles=["Manager"])

    # The service itself, as an MCP tool would call it (no HTTP-side transaction around it).
    with pytest.raises(SalesOrderInsufficientStockError):
        sales_order_confirm(caller=caller, order_id=order.pk)
    assert lot_state(plenty_lot, scarce_lot) == [(plenty_lot.pk, 100), (scarce_lot.pk, 5)]
    response = client.post(
        reverse("sales-order-confirm", args=[order.pk]), format="json", **write_headers()
    )

    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "SalesOrder.InsufficientStock"
    assert scarce.name in body["title"]
    assert body["shortages"] == [
        {"eggGradeId": scarce.pk, "gradeName": scarce.name, "requested": 6, "available": 5}
    ]
    assert lot_state(plenty_lot, scarce_lot) == [(plenty_lot.pk, 100), (scarce_lot.pk, 5)]
    assert not LotAllocation.objects.filter(line__order=order).exists()
    assert not InventoryMovement.all_tenants.filter(sales_order=order).exists()
    assert not AuditEvent.all_tenants.filter(action="SalesOrder.Confirm").exists()
    order.refresh_from_db()
    assert order.status == SalesOrder.Status.DRAFT and order.version == 1


def test_confirm_twice_is_not_draft_and_an_empty_draft_has_no_items(
    farm: Any, caller: Caller
) -> None:
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=10, production_date=days_ago(farm, 1))
    customer = CustomerFactory.create(farm=farm)
    order = draft(caller, customer, (grade, 4))
    sales_order_confirm(caller=caller, order_id=order.pk)

    with pytest.raises(SalesOrderNotDraftError):
        sales_order_confirm(caller=caller, order_id=order.pk)
    with pytest.raises(SalesOrderNoItemsError):
        sales_order_confirm(caller=caller, order_id=draft(caller, customer).pk)

    client = token_client(farm=farm, roles=["Sales"])
    again = client.post(
        reverse("sales-order-confirm", args=[order.pk]), format="json", **write_headers()
    )
    assert (again.status_code, again.json()["code"]) == (409, "SalesOrder.NotDraft")
    assert LotAllocation.objects.filter(line__order=order).count() == 1


# --- settlement visibility -------------------------------------------------------------------


def test_worker_sells_but_never_sees_money(farm: Any, caller: Caller) -> None:
    """Money is the money tier's on every route (``Caller.sees_money``): a Worker's order
    answers carry no total, settlement or line prices — absent, not null."""
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=100, production_date=days_ago(farm, 1))
    customer = CustomerFactory.create(farm=farm)
    worker = token_client(farm=farm, roles=[])
    created = worker.post(
        reverse("sales-order-create"),
        {"customerId": customer.pk, "lines": [{"eggGradeId": grade.pk, "quantity": 10}]},
        format="json",
        **write_headers(),
    )
    assert created.status_code == 201
    order_id = created.json()["id"]
    confirmed = worker.post(
        reverse("sales-order-confirm", args=[order_id]), format="json", **write_headers()
    )
    assert confirmed.status_code == 200
    payment_record(caller=caller, order_id=order_id, amount="20.00", method="Cash")

    views = [
        created.json(),
        confirmed.json(),
        worker.get(reverse("sales-order-detail", args=[order_id])).json(),
        *worker.get(reverse("sales-order-list")).json()["items"],
    ]
    for view in views:
        assert not {"total", "paid", "outstanding"} & set(view)
        for line in view.get("lines", []):
            assert not {"unitPrice", "lineTotal"} & set(line)

    sales = token_client(farm=farm, roles=["Sales"])
    detail = sales.get(reverse("sales-order-detail", args=[order_id])).json()
    assert detail["total"] == {"amount": "85.00", "currency": "PHP"}
    assert detail["lines"][0]["unitPrice"] == {"amount": "8.50", "currency": "PHP"}
    assert detail["paid"] == {"amount": "20.00", "currency": "PHP"}
    assert detail["outstanding"] == {"amount": "65.00", "currency": "PHP"}


@mutation(
    "cluck/selectors/orders.py",
    find="    if money:\n        qs = qs.annotate(paid_minor=",
    replace="    if True:\n        qs = qs.annotate(paid_minor=",
)
def test_hidden_settlement_queries_never_touch_payments(farm: Any, caller: Caller) -> None:
    """Mutation: always annotate ``paid_minor`` in ``_orders`` (ignore ``money``) → red."""
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=100, production_date=days_ago(farm, 1))
    order = draft(caller, CustomerFactory.create(farm=farm), (grade, 10))
    sales_order_confirm(caller=caller, order_id=order.pk)
    payment_table = "cluck_payment"

    worker = person_caller(farm=farm, roles=[])
    sales = person_caller(farm=farm, roles=["Sales"])
    with CaptureQueriesContext(connection) as hidden:
        sales_order_list(caller=worker, limit=10, include_lines=True)
    with CaptureQueriesContext(connection) as shown:
        sales_order_list(caller=sales, limit=10)

    assert not any(payment_table in q["sql"] for q in hidden.captured_queries)
    assert any(payment_table in q["sql"] for q in shown.captured_queries)


# --- list ------------------------------------------------------------------------------------


def test_list_is_newest_first_filters_and_walks_every_order_once(farm: Any, caller: Caller) -> None:
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=days_ago(farm, 10))
    alice, bob = CustomerFactory.create(farm=farm), CustomerFactory.create(farm=farm)
    ids: dict[int, tuple[str, dt.date, int]] = {}
    for n in range(7):
        customer = alice if n % 2 else bob
        order = sales_order_create(
            caller=caller,
            customer_id=customer.pk,
            order_date=days_ago(farm, n % 3),
            lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=1)],
        )
        if n < 4:
            sales_order_confirm(caller=caller, order_id=order.pk)
        ids[order.pk] = ("Confirmed" if n < 4 else "Draft", order.order_date, customer.pk)
    client = token_client(farm=farm, roles=["Sales"])

    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = client.get(reverse("sales-order-list"), params).json()
        seen += [item["id"] for item in page["items"]]
        assert len(page["items"]) <= 3
        cursor = page["nextCursor"]
        assert page["complete"] is (cursor is None)
        if cursor is None:
            break
    assert seen == sorted(ids, key=lambda i: (ids[i][1], i), reverse=True)

    def listed(**params: Any) -> set[int]:
        response = client.get(reverse("sales-order-list"), params)
        assert response.status_code == 200, response.content
        return {item["id"] for item in response.json()["items"]}

    assert listed(status="Draft") == {i for i, v in ids.items() if v[0] == "Draft"}
    assert listed(customer=alice.pk) == {i for i, v in ids.items() if v[2] == alice.pk}
    day = days_ago(farm, 1)
    assert listed(fromDate=day.isoformat(), toDate=day.isoformat()) == {
        i for i, v in ids.items() if v[1] == day
    }
    assert listed(customer=2**62) == set()


@pytest.mark.parametrize(
    "params",
    [
        {"status": "Lost"},
        {"fromDate": "2026-02-02", "toDate": "2026-02-01"},
        {"cursor": "not-a-cursor"},
        {"cursor": "eyJpZCI6ImEiLCJvcmRlckRhdGUiOiJ4In0"},  # {"id":"a","orderDate":"x"}
        {"limit": 0},
        {"limit": 501},
    ],
)
def test_bad_list_parameters_are_400(farm: Any, params: dict[str, Any]) -> None:
    client = token_client(farm=farm, roles=["Admin"])
    response = client.get(reverse("sales-order-list"), params)
    assert response.status_code == 400, response.content
    assert response.json()["errors"]
