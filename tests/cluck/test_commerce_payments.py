"""Payments: only against confirmed orders, never more than is owed, money in the order's
currency (PHP 2 decimals, JPY 0, KWD 3)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.urls import reverse

from cluck.caller import Caller
from cluck.models import AuditEvent, Farm, Payment, SalesOrder
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from cluck.services.payments import (
    PaymentOrderNotConfirmedError,
    PaymentOverpaymentError,
    payment_record,
)
from tests.factories import (
    CustomerFactory,
    FarmFactory,
    SaleGradeFactory,
    sellable_lot,
    token_client,
    write_headers,
)

pytestmark = pytest.mark.django_db


def order_on(farm: Farm, *, quantity: int, unit_price: str, confirm: bool = True) -> SalesOrder:
    caller = Caller.system(farm, label="test:payments")
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(
        grade=grade, quantity=quantity, production_date=farm.today() - dt.timedelta(days=1)
    )
    order = sales_order_create(
        caller=caller,
        customer_id=CustomerFactory.create(farm=farm).pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=quantity, unit_price=unit_price)],
    )
    if confirm:
        sales_order_confirm(caller=caller, order_id=order.pk)
    return order


def pay(client: Any, order: SalesOrder, **body: Any) -> Any:
    return client.post(
        reverse("payment-record", args=[order.pk]), body, format="json", **write_headers()
    )


def test_recording_a_payment_copies_the_order_currency_and_audits() -> None:
    farm = FarmFactory.create()
    order = order_on(farm, quantity=100, unit_price="8.50")
    client = token_client(farm=farm, roles=["Sales"])

    response = pay(
        client, order, amount="300.50", method="MobilePayment", referenceNumber=" GC-1 ", note=""
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["amount"] == {"amount": "300.50", "currency": "PHP"}
    assert body["method"] == "MobilePayment"
    assert body["referenceNumber"] == "GC-1" and body["note"] is None
    assert body["paymentDate"] == farm.today().isoformat()
    payment = Payment.all_tenants.get(pk=body["id"])
    assert (payment.currency_code, payment.currency_minor_unit, payment.amount_minor) == (
        "PHP",
        2,
        30050,
    )
    assert payment.customer_id == order.customer_id
    audit = AuditEvent.all_tenants.get(action="Payment.Record")
    assert audit.entity_id == str(payment.pk) and audit.details["salesOrderId"] == order.pk


def test_overpayment_is_refused_and_exact_settlement_is_allowed() -> None:
    farm = FarmFactory.create()
    order = order_on(farm, quantity=10, unit_price="10.00")  # 100.00
    client = token_client(farm=farm, roles=["Manager"])
    assert pay(client, order, amount="60", method="Cash").status_code == 201

    refused = pay(client, order, amount="40.01", method="Cash")
    assert refused.status_code == 422
    assert refused.json()["code"] == "Payment.Overpayment"
    assert refused.json()["outstanding"] == {"amount": "40.00", "currency": "PHP"}

    assert pay(client, order, amount="40.00", method="Card").status_code == 201
    assert pay(client, order, amount="0.01", method="Cash").json()["code"] == "Payment.Overpayment"
    assert Payment.all_tenants.filter(sales_order=order).count() == 2


def test_voided_payments_do_not_count_towards_the_overpay_limit() -> None:
    farm = FarmFactory.create()
    order = order_on(farm, quantity=10, unit_price="10.00")
    caller = Caller.system(farm, label="test")
    first = payment_record(caller=caller, order_id=order.pk, amount="100.00", method="Cash")
    with pytest.raises(PaymentOverpaymentError):
        payment_record(caller=caller, order_id=order.pk, amount="1.00", method="Cash")
    Payment.all_tenants.filter(pk=first.pk).update(voided=True, void_reason="keyed twice")

    payment_record(caller=caller, order_id=order.pk, amount="100.00", method="Cash")

    listing = token_client(farm=farm, roles=["Sales"]).get(
        reverse("order-payment-list", args=[order.pk])
    )
    body = listing.json()
    assert [item["voided"] for item in body["items"]] == [True, False]
    assert body["paid"] == {"amount": "100.00", "currency": "PHP"}
    assert body["outstanding"] == {"amount": "0.00", "currency": "PHP"}
    assert body["total"] == {"amount": "100.00", "currency": "PHP"}
    assert body["currency"] == "PHP" and body["complete"] is True


def test_payments_need_a_confirmed_order() -> None:
    farm = FarmFactory.create()
    order = order_on(farm, quantity=10, unit_price="1.00", confirm=False)
    with pytest.raises(PaymentOrderNotConfirmedError):
        payment_record(
            caller=Caller.system(farm, label="test"), order_id=order.pk, amount="1", method="Cash"
        )
    response = pay(token_client(farm=farm, roles=["Admin"]), order, amount="1", method="Cash")
    assert (response.status_code, response.json()["code"]) == (422, "Payment.OrderNotConfirmed")
    listing = token_client(farm=farm, roles=["Admin"]).get(
        reverse("order-payment-list", args=[order.pk])
    )
    assert listing.json()["outstanding"] is None  # undefined for a draft
    assert not Payment.all_tenants.exists()


def test_bad_payment_fields_are_listed_together() -> None:
    farm = FarmFactory.create()
    order = order_on(farm, quantity=10, unit_price="1.00")
    tomorrow = (farm.today() + dt.timedelta(days=1)).isoformat()
    caller = Caller.system(farm, label="test")
    from cluck.errors import FieldError

    with pytest.raises(FieldError) as raised:
        payment_record(
            caller=caller,
            order_id=order.pk,
            amount="0.001",
            method="IOU",
            payment_date=dt.date.fromisoformat(tomorrow),
            reference_number="x" * 51,
            note="n" * 501,
        )
    assert [(e["field"], e["code"]) for e in raised.value.errors] == [
        ("amount", "Payment.Amount.TooPrecise"),
        ("method", "Payment.Method.Invalid"),
        ("paymentDate", "Payment.PaymentDate.InFuture"),
        ("referenceNumber", "Payment.ReferenceNumber.TooLong"),
        ("note", "Payment.Note.TooLong"),
    ]
    client = token_client(farm=farm, roles=["Admin"])
    for body in (
        {"amount": "0", "method": "Cash"},
        {"amount": "-5", "method": "Cash"},
        {"amount": "1e2", "method": "Cash"},
        {"amount": 5, "method": "Cash"},
        {"method": "Cash"},
        {"amount": "1.00", "method": "IOU"},
        {"amount": "1.00", "method": "Cash", "note": "nul\x00byte"},
    ):
        response = pay(client, order, **body)
        assert response.status_code == 400, (body, response.content)
    assert not Payment.all_tenants.exists()


@pytest.mark.parametrize(
    ("currency", "minor_unit", "unit_price", "payment", "total", "outstanding"),
    [
        ("PHP", 2, "12.50", "100.25", "125.00", "24.75"),
        ("JPY", 0, "35", "120", "350", "230"),
        ("KWD", 3, "0.125", "0.5", "1.250", "0.750"),
    ],
)
def test_money_renders_with_the_currencys_decimals(
    currency: str,
    minor_unit: int,
    unit_price: str,
    payment: str,
    total: str,
    outstanding: str,
) -> None:
    farm = FarmFactory.create(currency_code=currency, currency_minor_unit=minor_unit)
    order = order_on(farm, quantity=10, unit_price=unit_price)
    client = token_client(farm=farm, roles=["Admin"])

    recorded = pay(client, order, amount=payment, method="Cash").json()
    payments = client.get(reverse("order-payment-list", args=[order.pk])).json()
    detail = client.get(reverse("sales-order-detail", args=[order.pk])).json()
    balances = client.get(reverse("customer-balance-list")).json()["items"]

    paid = f"{float(payment):.{minor_unit}f}"
    assert recorded["amount"] == {"amount": paid, "currency": currency}
    assert payments["total"] == {"amount": total, "currency": currency}
    assert payments["outstanding"] == {"amount": outstanding, "currency": currency}
    assert detail["lines"][0]["unitPrice"] == {
        "amount": f"{float(unit_price):.{minor_unit}f}",
        "currency": currency,
    }
    assert detail["outstanding"] == payments["outstanding"]
    assert balances == [
        {
            "customerId": order.customer_id,
            "customerName": order.customer.name,
            "confirmedTotal": {"amount": total, "currency": currency},
            "paid": {"amount": paid, "currency": currency},
            "outstanding": {"amount": outstanding, "currency": currency},
        }
    ]
