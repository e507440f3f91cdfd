"""Money reads: one order's payments and the per-customer balance book, paged in SQL.

Balance = Σ totals of Confirmed orders − Σ non-voided payments, per customer. The page is one
query: per-customer grouped sums as correlated subqueries, filtered, ordered by (name, id) and
``LIMIT``-ed by the database with a keyset cursor. The book is never materialized in Python —
an MCP caller may ask for 50 rows of a farm with 50,000 customers (brief §7.6, guard 31b).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import BigIntegerField, F, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from cluck.caller import Caller
from cluck.models import Customer, Payment, SalesOrder
from cluck.money import Money
from cluck.selectors.orders import SalesOrderNotFoundError, paid_minor_subquery
from cluck.selectors.paging import (
    Page,
    check_limit,
    is_db_id,
    keyset_page,
    position_int,
    position_str,
)

BALANCE_CURSOR_KEYS = ("name", "id")
# One order's payments are listed whole up to this many rows; totals are summed in SQL anyway.
ORDER_PAYMENTS_MAX = 500


@dataclass(frozen=True)
class PaymentView:
    payment_id: int
    payment_date: dt.date
    amount: Money
    method: str
    reference_number: str | None
    note: str | None
    voided: bool
    void_reason: str | None
    created_at: dt.datetime


@dataclass(frozen=True)
class OrderPayments:
    """``outstanding`` is ``None`` unless the order is Confirmed. ``complete`` is false when the
    order has more than ``ORDER_PAYMENTS_MAX`` payments (``paid`` still counts them all)."""

    order_id: int
    reference_number: str
    status: str
    currency: str
    total: Money
    paid: Money
    outstanding: Money | None
    items: list[PaymentView]
    complete: bool


@dataclass(frozen=True)
class CustomerBalance:
    customer_id: int
    customer_name: str
    confirmed_total: Money
    paid: Money
    outstanding: Money


def payment_view(payment: Payment) -> PaymentView:
    """Project one payment row (money in the currency copied onto it)."""
    return PaymentView(
        payment_id=payment.pk,
        payment_date=payment.payment_date,
        amount=Money(payment.amount_minor, payment.currency_code, payment.currency_minor_unit),
        method=payment.method,
        reference_number=payment.reference_number,
        note=payment.note,
        voided=payment.voided,
        void_reason=payment.void_reason,
        created_at=payment.created_at,
    )


def order_payments(*, caller: Caller, order_id: int) -> OrderPayments:
    """An order's payments (oldest first, voided ones included and flagged) and its settlement.

    Raises:
        SalesOrderNotFoundError: missing, or belonging to another farm.
    """
    if not is_db_id(order_id):
        raise SalesOrderNotFoundError()
    order = (
        SalesOrder.objects.for_tenant(caller.tenant)
        .annotate(paid_minor=Coalesce(paid_minor_subquery(caller), Value(0)))
        .filter(pk=order_id)
        .first()
    )
    if order is None:
        raise SalesOrderNotFoundError()
    rows = list(
        Payment.objects.for_tenant(caller.tenant)
        .filter(sales_order_id=order.pk)
        .order_by("payment_date", "id")[: ORDER_PAYMENTS_MAX + 1]
    )

    def money(minor: int) -> Money:
        return Money(int(minor), order.currency_code, order.currency_minor_unit)

    items = [payment_view(p) for p in rows[:ORDER_PAYMENTS_MAX]]
    confirmed = order.status == SalesOrder.Status.CONFIRMED
    return OrderPayments(
        order_id=order.pk,
        reference_number=order.reference_number,
        status=order.status,
        currency=order.currency_code,
        total=money(order.total_minor),
        paid=money(order.paid_minor),
        outstanding=money(order.total_minor - order.paid_minor) if confirmed else None,
        items=items,
        complete=len(rows) <= ORDER_PAYMENTS_MAX,
    )


def customer_balance_page(
    *,
    caller: Caller,
    owing_only: bool,
    limit: int,
    cursor_position: dict[str, Any] | None = None,
) -> Page[CustomerBalance]:
    """One page of customer balances, by customer name then id, in the farm's currency.

    Exactly one SQL query returning at most ``limit + 1`` rows, however many customers, orders
    and payments the farm has. ``owing_only`` keeps customers whose outstanding is above zero
    (filtered in SQL, before the ``LIMIT``).

    Raises:
        FieldError: a bad cursor or limit.
    """
    check_limit(limit)
    farm = caller.farm
    confirmed_total = Subquery(
        SalesOrder.objects.for_tenant(caller.tenant)
        .filter(customer_id=OuterRef("pk"), status=SalesOrder.Status.CONFIRMED)
        .values("customer_id")
        .annotate(total=Sum("total_minor"))
        .values("total")[:1],
        output_field=BigIntegerField(),
    )
    paid = Subquery(
        Payment.objects.for_tenant(caller.tenant)
        .filter(customer_id=OuterRef("pk"), voided=False)
        .values("customer_id")
        .annotate(paid=Sum("amount_minor"))
        .values("paid")[:1],
        output_field=BigIntegerField(),
    )
    qs = (
        Customer.objects.for_tenant(caller.tenant)
        .annotate(
            confirmed_minor=Coalesce(confirmed_total, Value(0), output_field=BigIntegerField()),
            paid_minor=Coalesce(paid, Value(0), output_field=BigIntegerField()),
        )
        .annotate(outstanding_minor=F("confirmed_minor") - F("paid_minor"))
    )
    if owing_only:
        qs = qs.filter(outstanding_minor__gt=0)
    if cursor_position is not None:
        name = position_str(cursor_position, "name")
        after_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(name__gt=name) | Q(name=name, id__gt=after_id))
    rows = list(
        qs.order_by("name", "id").values(
            "id", "name", "confirmed_minor", "paid_minor", "outstanding_minor"
        )[: limit + 1]
    )

    def money(minor: int) -> Money:
        return Money.of(minor, farm)

    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda r: {"name": r["name"], "id": r["id"]},
        project=lambda r: CustomerBalance(
            customer_id=r["id"],
            customer_name=r["name"],
            confirmed_total=money(r["confirmed_minor"]),
            paid=money(r["paid_minor"]),
            outstanding=money(r["outstanding_minor"]),
        ),
    )
