"""Commerce tools: customers, sales orders (money only for the money tier), receivables.

Thin like the production tools; money is rendered at this boundary as ``{"amount",
"currency"}``, and only when the selector handed it over (``Caller.sees_money``, the rule REST
follows too).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from cluck.api.base import decode_cursor
from cluck.mcp._shared import (
    BAD_CURSOR,
    PAGE_DEFAULT,
    Cursor,
    Limit,
    MoneyOut,
    Reply,
    caller_of,
    hidden_money,
    money_out,
    next_cursor,
)
from cluck.roles import SALES_ACCESS, SALES_FLOW
from cluck.selectors import customers as customer_selectors
from cluck.selectors import orders as order_selectors
from cluck.selectors import receivables as receivable_selectors
from mcp_tools import CallContext, tool

# --- customers, orders, receivables ----------------------------------------------------------


class CustomerItem(Reply):
    customer_id: int
    name: str
    phone: str
    email: str | None
    address: str | None


class CustomerPage(Reply):
    customers: list[CustomerItem]
    complete: bool
    next_cursor: str | None


@tool(
    name="cluck_list_customers",
    errors=BAD_CURSOR,
    read_only=True,
    policy=SALES_FLOW,
    mirrors=("customer-list", "customer-detail"),
    title="List customers",
    description=(
        "The farm's customers by name (optionally those whose name contains `search`), with "
        "contact details. Use a customerId or exact name with cluck_list_orders."
    ),
)
def list_customers(
    ctx: CallContext,
    *,
    search: Annotated[str | None, Field(max_length=200)] = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> CustomerPage:
    page = customer_selectors.customer_list(
        caller=caller_of(ctx),
        search=search,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=customer_selectors.CUSTOMER_CURSOR_KEYS),
    )
    return CustomerPage(
        customers=[
            CustomerItem(
                customer_id=c.pk, name=c.name, phone=c.phone, email=c.email, address=c.address
            )
            for c in page.items
        ],
        complete=page.complete,
        next_cursor=next_cursor(page.next_position),
    )


class OrderLineOut(Reply):
    grade: str
    quantity: int = Field(description="Eggs.")
    unit_price: MoneyOut | None = hidden_money("Per egg; only for sales-access roles.")
    line_total: MoneyOut | None = hidden_money("Only for sales-access roles.")


class OrderItem(Reply):
    order_id: int
    reference_number: str
    customer_id: int
    customer_name: str
    status: str
    order_date: dt.date
    total: MoneyOut | None = hidden_money("Only for sales-access roles.")
    paid: MoneyOut | None = hidden_money("Only for sales-access roles.")
    outstanding: MoneyOut | None = hidden_money(
        "Only for sales-access roles, and only for Confirmed orders."
    )
    lines: list[OrderLineOut] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The order's lines; only when orderId is given.",
    )


class OrderPage(Reply):
    orders: list[OrderItem]
    complete: bool
    next_cursor: str | None


def _order_item(order: order_selectors.OrderView) -> OrderItem:
    settlement = order.settlement
    return OrderItem(
        order_id=order.order_id,
        reference_number=order.reference_number,
        customer_id=order.customer_id,
        customer_name=order.customer_name,
        status=order.status,
        order_date=order.order_date,
        total=money_out(order.total),
        paid=MoneyOut.of(settlement.paid) if settlement is not None else None,
        outstanding=(
            MoneyOut.of(settlement.outstanding)
            if settlement is not None and settlement.outstanding is not None
            else None
        ),
        lines=(
            [
                OrderLineOut(
                    grade=line.grade_name,
                    quantity=line.quantity,
                    unit_price=money_out(line.unit_price),
                    line_total=money_out(line.line_total),
                )
                for line in order.lines
            ]
            if order.lines is not None
            else None
        ),
    )


@tool(
    name="cluck_list_orders",
    errors={
        **BAD_CURSOR,
        "SalesOrder.NotFound": "No order of this farm has that orderId.",
        "Customer.NotFound": "No customer has that name or id.",
        "Customer.Ambiguous": "Several customers have that name: pass the id (data.candidates).",
    },
    read_only=True,
    policy=SALES_FLOW,
    mirrors=("sales-order-list", "sales-order-detail"),
    title="List sales orders",
    description=(
        "Sales orders, newest first, optionally for one customer (name or id) and status; pass "
        "orderId to get one order with its lines. Money fields (total, paid, outstanding, "
        "and the lines' unitPrice and lineTotal) appear only for owners, managers and sales "
        'staff, as {"amount", "currency"}.'
    ),
)
def list_orders(
    ctx: CallContext,
    *,
    order_id: int | None = None,
    customer: Annotated[str | int | None, Field(description="Customer name or id.")] = None,
    status: Literal["Draft", "Confirmed", "Shipped", "Invoiced", "Cancelled", "Voided"]
    | None = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> OrderPage:
    caller = caller_of(ctx)
    # Money fields come only for the money tier: the selector decides (Caller.sees_money),
    # exactly as for the REST routes.
    if order_id is not None:
        order = order_selectors.sales_order_get(caller=caller, order_id=order_id)
        return OrderPage(orders=[_order_item(order)], complete=True, next_cursor=None)
    customer_id = None
    if customer is not None:
        customer_id = customer_selectors.customer_resolve(caller=caller, name_or_id=customer).pk
    page = order_selectors.sales_order_list(
        caller=caller,
        status=status,
        customer_id=customer_id,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=order_selectors.ORDER_CURSOR_KEYS),
    )
    return OrderPage(
        orders=[_order_item(order) for order in page.items],
        complete=page.complete,
        next_cursor=next_cursor(page.next_position),
    )


class ReceivableItem(Reply):
    customer_id: int
    customer_name: str
    confirmed_total: MoneyOut = Field(description="Sum of the customer's Confirmed orders.")
    paid: MoneyOut
    outstanding: MoneyOut = Field(description="What the customer still owes.")


class ReceivablesPage(Reply):
    customers: list[ReceivableItem]
    complete: bool
    next_cursor: str | None


@tool(
    name="cluck_read_receivables",
    errors=BAD_CURSOR,
    read_only=True,
    policy=SALES_ACCESS,
    mirrors="customer-balance-list",
    title="Read receivables",
    description=(
        "What customers owe: per customer, the total of Confirmed orders, what was paid and "
        'the outstanding balance, as {"amount", "currency"} money strings. owingOnly=true '
        "lists only customers with a balance above zero."
    ),
)
def read_receivables(
    ctx: CallContext,
    *,
    owing_only: bool = False,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> ReceivablesPage:
    page = receivable_selectors.customer_balance_page(
        caller=caller_of(ctx),
        owing_only=owing_only,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=receivable_selectors.BALANCE_CURSOR_KEYS),
    )
    return ReceivablesPage(
        customers=[
            ReceivableItem(
                customer_id=b.customer_id,
                customer_name=b.customer_name,
                confirmed_total=MoneyOut.of(b.confirmed_total),
                paid=MoneyOut.of(b.paid),
                outstanding=MoneyOut.of(b.outstanding),
            )
            for b in page.items
        ],
        complete=page.complete,
        next_cursor=next_cursor(page.next_position),
    )
