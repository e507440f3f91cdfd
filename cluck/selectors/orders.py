"""Sales-order reads: newest-first keyset list and one order with its lines.

Money — the total, line prices and totals, settlement (what has been paid, what is
outstanding) — is the money tier's business, decided here by ``Caller.sees_money`` (one rule for
REST and MCP). For anyone else the money fields are ``None`` and the query never touches the
payments table (brief §6.9, settlement scope "Hidden").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import F, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from cluck.caller import Caller
from cluck.errors import FieldError, NotFoundError
from cluck.models import Payment, SalesOrder, SalesOrderLine
from cluck.money import Money
from cluck.selectors.paging import (
    Page,
    check_limit,
    is_db_id,
    keyset_page,
    position_date,
    position_int,
)

ORDER_CURSOR_KEYS = ("orderDate", "id")


class SalesOrderNotFoundError(NotFoundError):
    """Missing and other-farm orders are indistinguishable on purpose."""

    code = "SalesOrder.NotFound"
    default_message = "Sales order not found."


@dataclass(frozen=True)
class Settlement:
    """``outstanding`` is ``None`` unless the order is Confirmed (undefined elsewhere)."""

    paid: Money
    outstanding: Money | None


@dataclass(frozen=True)
class OrderLineView:
    line_id: int
    egg_grade_id: int
    grade_name: str
    quantity: int
    unit_price: Money | None  # None: hidden from the caller (Caller.sees_money)
    line_total: Money | None
    money_visible: bool


@dataclass(frozen=True)
class OrderView:
    """An order as every edge shows it. When the caller may not see money (``money_visible``
    false) ``total``, ``settlement`` and the lines' prices are ``None`` — an edge leaves the
    fields out, it never shows them as null. ``lines`` is ``None`` when not asked for."""

    order_id: int
    reference_number: str
    customer_id: int
    customer_name: str
    status: str
    order_date: dt.date
    total: Money | None
    created_at: dt.datetime
    confirmed_at: dt.datetime | None
    settlement: Settlement | None
    lines: list[OrderLineView] | None
    money_visible: bool


def paid_minor_subquery(caller: Caller) -> Subquery:
    """Σ non-voided payments of the outer order, in SQL (one grouped scalar per order)."""
    return Subquery(
        Payment.objects.for_tenant(caller.tenant)
        .filter(sales_order_id=OuterRef("pk"), voided=False)
        .values("sales_order_id")
        .annotate(paid=Sum("amount_minor"))
        .values("paid")[:1]
    )


def _orders(caller: Caller, *, money: bool, include_lines: bool) -> QuerySet[Any]:
    qs = SalesOrder.objects.for_tenant(caller.tenant).annotate(customer_name=F("customer__name"))
    if money:
        qs = qs.annotate(paid_minor=Coalesce(paid_minor_subquery(caller), Value(0)))
    if include_lines:
        qs = qs.prefetch_related(
            Prefetch(
                "lines",
                queryset=SalesOrderLine.objects.select_related("grade").order_by("id"),
            )
        )
    return qs


def _money(order: SalesOrder, minor: int) -> Money:
    return Money(int(minor), order.currency_code, order.currency_minor_unit)


def _view(order: Any, *, money: bool, include_lines: bool) -> OrderView:
    settlement = None
    if money:
        paid = _money(order, order.paid_minor)
        outstanding = (
            _money(order, order.total_minor - order.paid_minor)
            if order.status == SalesOrder.Status.CONFIRMED
            else None
        )
        settlement = Settlement(paid=paid, outstanding=outstanding)
    lines = None
    if include_lines:
        lines = [
            OrderLineView(
                line_id=line.pk,
                egg_grade_id=line.grade_id,
                grade_name=line.grade.name,
                quantity=line.quantity,
                unit_price=_money(order, line.unit_price_minor) if money else None,
                line_total=_money(order, line.line_total_minor) if money else None,
                money_visible=money,
            )
            for line in order.lines.all()
        ]
    return OrderView(
        order_id=order.pk,
        reference_number=order.reference_number,
        customer_id=order.customer_id,
        customer_name=order.customer_name,
        status=order.status,
        order_date=order.order_date,
        total=_money(order, order.total_minor) if money else None,
        created_at=order.created_at,
        confirmed_at=order.confirmed_at,
        settlement=settlement,
        lines=lines,
        money_visible=money,
    )


def _check_filters(status: str | None, from_date: dt.date | None, to_date: dt.date | None) -> None:
    errors = []
    if status is not None and status not in SalesOrder.Status.values:
        errors.append(
            {
                "field": "status",
                "code": "SalesOrder.Status.Invalid",
                "message": f"status must be one of {', '.join(SalesOrder.Status.values)}.",
            }
        )
    if from_date is not None and to_date is not None and from_date > to_date:
        errors.append(
            {
                "field": "toDate",
                "code": "DateRange.Invalid",
                "message": "toDate is before fromDate.",
            }
        )
    if errors:
        raise FieldError(errors)


def sales_order_list(
    *,
    caller: Caller,
    status: str | None = None,
    customer_id: int | None = None,
    from_date: dt.date | None = None,
    to_date: dt.date | None = None,
    limit: int,
    cursor_position: dict[str, Any] | None = None,
    include_lines: bool = False,
) -> Page[OrderView]:
    """Orders of the caller's farm, newest first (order date, then id, descending).

    One query for the page (``limit + 1`` rows), plus one for the lines when asked.

    Raises:
        FieldError: unknown status, ``to_date`` before ``from_date``, or a bad cursor.
    """
    check_limit(limit)
    _check_filters(status, from_date, to_date)
    money = caller.sees_money
    qs = _orders(caller, money=money, include_lines=include_lines)
    if status is not None:
        qs = qs.filter(status=status)
    if customer_id is not None:
        # An id no row can have matches nothing (and must not overflow BIGINT in SQL).
        qs = qs.filter(customer_id=customer_id) if is_db_id(customer_id) else qs.none()
    if from_date is not None:
        qs = qs.filter(order_date__gte=from_date)
    if to_date is not None:
        qs = qs.filter(order_date__lte=to_date)
    if cursor_position is not None:
        before_date = position_date(cursor_position, "orderDate")
        before_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(order_date__lt=before_date) | Q(order_date=before_date, id__lt=before_id))
    rows = list(qs.order_by("-order_date", "-id")[: limit + 1])
    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda o: {"orderDate": o.order_date.isoformat(), "id": o.pk},
        project=lambda o: _view(o, money=money, include_lines=include_lines),
    )


def sales_order_get(*, caller: Caller, order_id: int) -> OrderView:
    """One order of the caller's farm with its lines.

    Raises:
        SalesOrderNotFoundError: missing, or belonging to another farm.
    """
    if not is_db_id(order_id):
        raise SalesOrderNotFoundError()
    money = caller.sees_money
    order = _orders(caller, money=money, include_lines=True).filter(pk=order_id).first()
    if order is None:
        raise SalesOrderNotFoundError()
    return _view(order, money=money, include_lines=True)
