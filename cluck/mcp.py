"""The farm's MCP tools: the questions a farmer asks, and one safe way to record a day.

Each tool is thin: it resolves names to ids, calls the same selectors and services the REST API
uses, and re-projects the result. No validation rule, authorization decision or tenant/flock
predicate lives here; money is rendered at this boundary as ``{"amount", "currency"}``, and only
when the selector handed it over (``Caller.sees_money``, the rule REST follows too).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from cluck.api.base import decode_cursor, encode_cursor
from cluck.caller import Caller
from cluck.money import Money
from cluck.roles import PRODUCTION_WRITE, SALES_ACCESS, SALES_FLOW
from cluck.selectors import customers as customer_selectors
from cluck.selectors import daily_entries as entry_selectors
from cluck.selectors import flocks as flock_selectors
from cluck.selectors import grades as grade_selectors
from cluck.selectors import orders as order_selectors
from cluck.selectors import receivables as receivable_selectors
from cluck.selectors import stock as stock_selectors
from cluck.services import daily_entries as entry_services
from mcp_tools import CallContext, tool

# MCP reads are smaller than REST pages: a model reads every row it is given.
PAGE_DEFAULT = 50
PAGE_MAX = 200

Limit = Annotated[
    int, Field(ge=1, le=PAGE_MAX, description=f"Page size, 1..{PAGE_MAX} (default {PAGE_DEFAULT}).")
]
Cursor = Annotated[
    str | None,
    Field(max_length=512, description="nextCursor from the previous page, to continue."),
]


# The tools' own stable error codes (the tool reference lists them under each tool, with the
# framework's Tool.* and Idempotency.* codes). A fuzz guard checks no tool answers anything else.
_BAD_CURSOR = {
    "Validation.Failed": "`cursor` is not one this tool handed out (data.errors: `cursor`)."
}
_FLOCK_NAME = {
    "Flock.NotFound": "No flock you can access has that name or id.",
    "Flock.Ambiguous": "Several flocks have that name: data.candidates lists them; pass the "
    "flockId.",
}
_ENTRY_CHECKS = {
    "FlockScope.NotAssigned": "You are restricted to assigned flocks and this is not one.",
    "DailyEntry.DateBeforePlacement": "The day precedes the flock's placement "
    "(data.placementDate).",
    "DailyEntry.MortalityExceedsBirdsAlive": "More birds died than the flock has alive "
    "(data.birdsAlive).",
}


def _caller(ctx: CallContext) -> Caller:
    return Caller(tenant=ctx.tenant, actor=ctx.actor, scope=ctx.row_scope, channel="mcp")


def _next_cursor(position: dict[str, Any] | None) -> str | None:
    return None if position is None else encode_cursor(position)


class Reply(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class MoneyOut(Reply):
    amount: str = Field(
        description='Decimal string in the currency\'s minor unit, e.g. "28250.00".'
    )
    currency: str = Field(description="ISO 4217 code, e.g. PHP.")

    @classmethod
    def of(cls, money: Money) -> MoneyOut:
        return cls(**money.as_json())


def _money_out(money: Money | None) -> MoneyOut | None:
    return None if money is None else MoneyOut.of(money)


def _hidden_money(description: str) -> Any:
    # Money is absent (not null) for roles outside the money tier (Caller.sees_money).
    return Field(default=None, exclude_if=lambda value: value is None, description=description)


# --- flocks ----------------------------------------------------------------------------------


class FlockItem(Reply):
    flock_id: int
    name: str
    status: str
    birds_alive: int
    accepts_production_today: bool
    house: str
    breed: str
    placement_date: dt.date


class FlockPage(Reply):
    flocks: list[FlockItem]
    complete: bool
    next_cursor: str | None
    scope_note: str | None = Field(
        default=None, description="Set when you see only the flocks you are assigned to."
    )


@tool(
    name="cluck_list_flocks",
    errors=_BAD_CURSOR,
    read_only=True,
    mirrors=("flock-list", "flock-detail"),
    title="List flocks",
    description=(
        "The farm's flocks you can access, by name: id, status (Active/Depleted/Archived), "
        "birds alive now, the house, and whether it accepts production records today. Flock "
        "names can repeat (a depleted flock may share its name with the active one): use "
        "flockId to be exact. Pass nextCursor back as cursor to continue."
    ),
)
def list_flocks(
    ctx: CallContext,
    *,
    status: Literal["Active", "Depleted", "Archived"] | None = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> FlockPage:
    caller = _caller(ctx)
    page = flock_selectors.flock_list(
        caller=caller,
        status=status,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=flock_selectors.FLOCK_CURSOR_KEYS),
    )
    return FlockPage(
        flocks=[
            FlockItem(
                flock_id=f.flock_id,
                name=f.name,
                status=f.status,
                birds_alive=f.birds_alive,
                accepts_production_today=f.accepts_production_today,
                house=f.house_name,
                breed=f.breed,
                placement_date=f.placement_date,
            )
            for f in page.items
        ],
        complete=page.complete,
        next_cursor=_next_cursor(page.next_position),
        scope_note=flock_selectors.flock_scope_note(caller=caller),
    )


# --- grades and stock ------------------------------------------------------------------------


class GradeItem(Reply):
    egg_grade_id: int
    name: str
    grade_type: str
    kind: str = Field(description="Manual: recorded as grade lines. Cracked/Dirty: counters.")
    saleable: bool
    active: bool
    recordable: bool = Field(description="May be named in a daily entry's grades list.")
    unit_price: MoneyOut | None = _hidden_money(
        "Default list price per egg; only for sales-access roles."
    )


class GradeList(Reply):
    grades: list[GradeItem]
    complete: bool


@tool(
    name="cluck_list_egg_grades",
    read_only=True,
    mirrors="egg-grade-list",
    title="List egg grades",
    description=(
        "The farm's egg grades (e.g. Small, Medium, Large) with kind, whether saleable, and "
        "whether a daily entry's grades list may name them (recordable). Use these names in "
        "cluck_record_daily_entry. The list price (unitPrice) appears only for owners, "
        "managers and sales staff."
    ),
)
def list_egg_grades(ctx: CallContext) -> GradeList:
    page = grade_selectors.egg_grade_list(caller=_caller(ctx), limit=PAGE_MAX)
    return GradeList(
        grades=[
            GradeItem(
                egg_grade_id=g.egg_grade_id,
                name=g.name,
                grade_type=g.grade_type,
                kind=g.kind,
                saleable=g.is_saleable,
                active=g.is_active,
                recordable=g.is_recordable,
                unit_price=_money_out(g.unit_price),
            )
            for g in page.items
        ],
        complete=page.complete,
    )


class StockItem(Reply):
    egg_grade_id: int
    grade_name: str
    available: int = Field(description="Eggs available to sell (excludes restricted lots).")
    restricted: int = Field(description="Eggs held back (e.g. medication withdrawal).")


class StockReply(Reply):
    as_of_date: dt.date
    unit: Literal["eggs"] = "eggs"
    grades: list[StockItem]
    complete: bool


@tool(
    name="cluck_read_stock",
    read_only=True,
    mirrors="stock-summary",
    title="Read egg stock",
    description=(
        "Eggs in stock per grade, counted in eggs, as of a farm-local date (default: the "
        "farm's today). Only submitted daily entries are stock; a Draft is not."
    ),
)
def read_stock(ctx: CallContext, *, as_of_date: dt.date | None = None) -> StockReply:
    summary = stock_selectors.stock_summary(caller=_caller(ctx), as_of=as_of_date)
    return StockReply(
        as_of_date=summary.as_of,
        grades=[
            StockItem(
                egg_grade_id=line.egg_grade_id,
                grade_name=line.grade_name,
                available=line.available,
                restricted=line.restricted,
            )
            for line in summary.lines
        ],
        complete=summary.complete,
    )


# --- daily entries ---------------------------------------------------------------------------


class GradeLineOut(Reply):
    grade: str
    egg_grade_id: int
    quantity: int


class EntryItem(Reply):
    daily_entry_id: int
    flock_id: int
    flock_name: str
    house: str
    date: dt.date
    status: str
    total_eggs: int
    cracked_eggs: int
    dirty_eggs: int
    discarded_eggs: int
    mortality_count: int
    grades: list[GradeLineOut]


class EntryPage(Reply):
    entries: list[EntryItem]
    complete: bool
    next_cursor: str | None
    scope_note: str | None = None


def _entry_item(entry: entry_selectors.DailyEntryView) -> EntryItem:
    return EntryItem(
        daily_entry_id=entry.entry_id,
        flock_id=entry.flock_id,
        flock_name=entry.flock_name,
        house=entry.house_name,
        date=entry.date,
        status=entry.status,
        total_eggs=entry.total_eggs,
        cracked_eggs=entry.cracked_eggs,
        dirty_eggs=entry.dirty_eggs,
        discarded_eggs=entry.discarded_eggs,
        mortality_count=entry.mortality_count,
        grades=[
            GradeLineOut(
                grade=line.grade_name, egg_grade_id=line.egg_grade_id, quantity=line.quantity
            )
            for line in entry.grades
        ],
    )


@tool(
    name="cluck_list_daily_entries",
    errors={
        **_FLOCK_NAME,
        "Validation.Failed": "A bad `cursor`, or `toDate` before `fromDate` "
        "(DailyEntry.DateRange.Inverted); data.errors lists each.",
    },
    read_only=True,
    mirrors=("daily-entry-list", "daily-entry-detail"),
    title="List daily entries",
    description=(
        "Daily production records (eggs collected, cracked, dirty, discarded, mortality, "
        "graded lines), newest first, optionally for one flock (name or id) and a date range "
        "(inclusive, farm-local dates). Status Draft means not yet in stock."
    ),
)
def list_daily_entries(
    ctx: CallContext,
    *,
    flock: Annotated[str | None, Field(max_length=200, description="Flock name or id.")] = None,
    from_date: dt.date | None = None,
    to_date: dt.date | None = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> EntryPage:
    caller = _caller(ctx)
    flock_id = None
    if flock is not None:
        flock_id = flock_selectors.flock_resolve(caller=caller, name_or_id=flock).flock_id
    page = entry_selectors.daily_entry_list(
        caller=caller,
        flock_id=flock_id,
        from_date=from_date,
        to_date=to_date,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=entry_selectors.ENTRY_CURSOR_KEYS),
    )
    return EntryPage(
        entries=[_entry_item(entry) for entry in page.items],
        complete=page.complete,
        next_cursor=_next_cursor(page.next_position),
        scope_note=flock_selectors.flock_scope_note(caller=caller),
    )


class GradeQuantity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grade: str | int = Field(description="Egg grade name (see cluck_list_egg_grades) or id.")
    quantity: int = Field(description="Eggs of this grade.")


class RecordReply(Reply):
    daily_entry_id: int
    flock_name: str
    date: dt.date
    status: str
    created: bool = Field(
        description="True if a new entry was created; false if a draft was updated."
    )


def _flock_id_for_write(caller: Caller, flock: str | int) -> int:
    """An id goes to the handler as it is — its flock-scope guard answers an unassigned flock
    with ``FlockScope.NotAssigned``, as over REST. A name resolves to exactly one accessible
    flock first."""
    if isinstance(flock, int):
        return flock
    text = flock.strip()
    if text.isdigit() and len(text) < 19:
        return int(text)
    return flock_selectors.flock_resolve(caller=caller, name_or_id=text).flock_id


@tool(
    name="cluck_record_daily_entry",
    errors={
        "Validation.Failed": "A field breaks a rule; data.errors lists each with its code: "
        "DailyEntry.Date.NotFuture (after the farm's today), DailyEntry.Date.TooOld (before "
        "the farm's late-entry grace), DailyEntry.<Counter>.NonNegative / .TooLarge, "
        "DailyEntry.Eggs.SumWithinTotal, DailyEntry.FlockId.Required, "
        "DailyEntry.GradeQuantity.Positive, DailyEntry.Grades.Unique, "
        "DailyEntry.Grades.WithinAvailable, DailyEntry.Grades.TooMany.",
        **_FLOCK_NAME,
        "EggGrade.NotFound": "No grade has that name or id (data.validNames).",
        "EggGrade.Ambiguous": "Grade names differ only in case: pass the id (data.candidates).",
        "DailyEntry.FlockNotActive": "The flock does not accept production on that date "
        "(archived, or depleted before it).",
        **_ENTRY_CHECKS,
        "DailyEntry.UnknownGrade": "A grade line names a grade that is not recordable "
        "(data.validGrades).",
        "DailyEntry.GradesExceedTotal": "Graded eggs exceed total − cracked − dirty − discarded.",
        "DailyEntry.Immutable": "The day's entry is no longer a Draft.",
    },
    policy=PRODUCTION_WRITE,
    mirrors="daily-entry-record",
    title="Record a day's production",
    description=(
        "Record one flock's day: eggs collected (totalEggs, counted in eggs), of which cracked, "
        "dirty and discarded, birds that died (mortalityCount), and optionally graded lines "
        "[{grade, quantity}] (omit grades to keep existing lines; [] clears them). Recording "
        "the same flock and date again updates the Draft. The farm and house come from the "
        "flock. This leaves a Draft: call cluck_submit_daily_entry with the returned "
        "dailyEntryId to put the eggs in stock. If a flock name is ambiguous you get the "
        "candidates; retry with the flockId. Reuse the same idempotencyKey only to retry the "
        "same call."
    ),
)
def record_daily_entry(
    ctx: CallContext,
    *,
    flock: Annotated[str | int, Field(description="Flock name or id (see cluck_list_flocks).")],
    date: Annotated[
        dt.date, Field(description="Farm-local date of the collection, not in the future.")
    ],
    total_eggs: int,
    cracked_eggs: int,
    dirty_eggs: int,
    discarded_eggs: int = 0,
    mortality_count: int,
    grades: Annotated[list[GradeQuantity] | None, Field(max_length=50)] = None,
) -> RecordReply:
    caller = _caller(ctx)
    lines = None
    if grades is not None:
        lines = [
            entry_services.GradeLineInput(
                egg_grade_id=grade_selectors.egg_grade_resolve(
                    caller=caller, name_or_id=line.grade
                ).egg_grade_id,
                quantity=line.quantity,
            )
            for line in grades
        ]
    result = entry_services.daily_entry_record(
        caller=caller,
        flock_id=_flock_id_for_write(caller, flock),
        date=date,
        total_eggs=total_eggs,
        cracked_eggs=cracked_eggs,
        dirty_eggs=dirty_eggs,
        discarded_eggs=discarded_eggs,
        mortality_count=mortality_count,
        grades=lines,
    )
    return RecordReply(
        daily_entry_id=result.entry.pk,
        flock_name=result.entry.flock.name,
        date=result.entry.date,
        status=result.entry.status,
        created=result.created,
    )


class SubmitReply(Reply):
    daily_entry_id: int
    flock_name: str
    date: dt.date
    status: str


@tool(
    name="cluck_submit_daily_entry",
    errors={
        "DailyEntry.NotFound": "No daily entry you can access has that id.",
        "DailyEntry.NotDraft": "The entry was already submitted.",
        **_ENTRY_CHECKS,
        "DailyEntry.GradesNotReconciled": "Graded eggs must equal total − cracked − dirty − "
        "discarded (data.graded, data.sellable).",
        "DailyEntry.VersionConflict": "Another writer changed the entry meanwhile; reload "
        "and retry.",
    },
    policy=PRODUCTION_WRITE,
    mirrors="daily-entry-submit",
    title="Submit a daily entry",
    description=(
        "Submit a Draft daily entry (from cluck_record_daily_entry): its graded eggs must add "
        "up exactly to total minus cracked, dirty and discarded. Submitting puts the eggs in "
        "stock (one lot per grade) and records mortality; the entry can then no longer be "
        "edited here."
    ),
)
def submit_daily_entry(ctx: CallContext, *, daily_entry_id: int) -> SubmitReply:
    caller = _caller(ctx)
    entry = entry_services.daily_entry_submit(caller=caller, entry_id=daily_entry_id)
    view = entry_selectors.daily_entry_get(caller=caller, entry_id=entry.pk)
    return SubmitReply(
        daily_entry_id=view.entry_id, flock_name=view.flock_name, date=view.date, status=view.status
    )


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
    errors=_BAD_CURSOR,
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
        caller=_caller(ctx),
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
        next_cursor=_next_cursor(page.next_position),
    )


class OrderLineOut(Reply):
    grade: str
    quantity: int = Field(description="Eggs.")
    unit_price: MoneyOut | None = _hidden_money("Per egg; only for sales-access roles.")
    line_total: MoneyOut | None = _hidden_money("Only for sales-access roles.")


class OrderItem(Reply):
    order_id: int
    reference_number: str
    customer_id: int
    customer_name: str
    status: str
    order_date: dt.date
    total: MoneyOut | None = _hidden_money("Only for sales-access roles.")
    paid: MoneyOut | None = _hidden_money("Only for sales-access roles.")
    outstanding: MoneyOut | None = _hidden_money(
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
        total=_money_out(order.total),
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
                    unit_price=_money_out(line.unit_price),
                    line_total=_money_out(line.line_total),
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
        **_BAD_CURSOR,
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
    caller = _caller(ctx)
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
        next_cursor=_next_cursor(page.next_position),
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
    errors=_BAD_CURSOR,
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
        caller=_caller(ctx),
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
        next_cursor=_next_cursor(page.next_position),
    )
