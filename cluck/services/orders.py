"""Sales-order writes: create a draft, confirm it (FIFO lot allocation).

Confirm is the only place stock leaves a lot for a sale. It runs in one transaction: the order
row is locked first (so two confirms of one order serialize and the loser sees ``NotDraft``),
then each needed grade's sellable lots are locked in FIFO order — production date, then id —
and only once every grade is covered is anything written. A shortage therefore writes nothing.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from cluck.caller import Caller
from cluck.errors import CluckError, ConflictError
from cluck.models import (
    EggGrade,
    EggLot,
    InventoryMovement,
    LotAllocation,
    SalesOrder,
    SalesOrderLine,
)
from cluck.money import Money
from cluck.selectors.customers import customer_get
from cluck.selectors.orders import SalesOrderNotFoundError
from cluck.selectors.paging import is_db_id
from cluck.services._fields import MONEY_MINOR_MAX, FieldErrors
from cluck.services.audit import audit_record

MAX_ORDER_LINES = 100
MAX_LINE_QUANTITY = 10_000_000
REFERENCE_MAX = 32
# Lots are locked and read in batches so a grade with a long tail of small lots stays bounded
# per query while FIFO order is kept across batches.
LOT_BATCH = 100


class SalesOrderNotDraftError(ConflictError):
    code = "SalesOrder.NotDraft"
    default_message = "Only a draft order can be confirmed."


class SalesOrderNoItemsError(CluckError):
    code = "SalesOrder.NoItems"
    http_status = 422
    default_message = "The order has no lines."


class SalesOrderInsufficientStockError(CluckError):
    """``data["shortages"]``: ``[{eggGradeId, gradeName, requested, available}]``."""

    code = "SalesOrder.InsufficientStock"
    http_status = 422
    default_message = "Not enough sellable stock to confirm the order."


class SalesOrderReferenceTakenError(ConflictError):
    code = "SalesOrder.ReferenceTaken"
    default_message = "Another order already has that reference number."


@dataclass(frozen=True)
class OrderLineInput:
    """One requested line. ``unit_price`` is a decimal string; ``None`` takes the grade's list
    price."""

    egg_grade_id: int
    quantity: int
    unit_price: str | None = None


def sellable_lots_q(today: dt.date) -> Q:
    """Lots that may be sold on ``today``: produced by then, not under a withdrawal
    restriction (``restricted_until`` is the last restricted day), with eggs left."""
    return Q(production_date__lte=today, quantity_available__gt=0) & (
        Q(restricted_until__isnull=True) | Q(restricted_until__lt=today)
    )


@transaction.atomic
def sales_order_create(
    *,
    caller: Caller,
    customer_id: int,
    lines: Sequence[OrderLineInput],
    order_date: dt.date | None = None,
    reference_number: str | None = None,
) -> SalesOrder:
    """Create a Draft order with its lines and audit ``SalesOrder.Create``.

    Prices are snapshot in the farm's currency (code and minor unit) onto the order. A draft
    may have no lines (confirming it then fails with ``SalesOrder.NoItems``).
    ``reference_number`` is for seeders and imports; by default it is ``SO-<id>``.

    Raises:
        FieldError: every failing line field (``lines[2].quantity``, ``lines[0].unitPrice``, …)
            and the order date, which lies within the farm's late-entry grace up to its today
            (``SalesOrder.OrderDate.InFuture``, ``SalesOrder.OrderDate.TooOld``).
        CustomerNotFoundError: the customer is missing or on another farm.
        SalesOrderReferenceTakenError: the given reference number is in use on this farm.
    """
    farm = caller.farm
    errors = FieldErrors()
    if len(lines) > MAX_ORDER_LINES:
        errors.add(
            "lines", "SalesOrder.Lines.TooMany", f"An order has at most {MAX_ORDER_LINES} lines."
        )
        errors.raise_if_any()
    reference = None
    if reference_number is not None:
        reference = errors.text(
            reference_number,
            field="referenceNumber",
            code_prefix="SalesOrder.ReferenceNumber",
            max_length=REFERENCE_MAX,
            required=True,
            label="Reference number",
        )
    today = farm.today()
    ordered_on = order_date or today
    errors.not_future(
        ordered_on,
        today=today,
        field="orderDate",
        code="SalesOrder.OrderDate.InFuture",
        label="Order date",
    )
    errors.not_too_old(
        ordered_on,
        farm=farm,
        today=today,
        field="orderDate",
        code="SalesOrder.OrderDate.TooOld",
        label="Order date",
    )
    grade_ids = {line.egg_grade_id for line in lines if is_db_id(line.egg_grade_id)}
    grades = {g.pk: g for g in EggGrade.objects.for_tenant(caller.tenant).filter(pk__in=grade_ids)}
    planned: list[tuple[EggGrade, int, int, int]] = []
    total = 0
    for index, line in enumerate(lines):
        at = f"lines[{index}]"
        grade = grades.get(line.egg_grade_id) if is_db_id(line.egg_grade_id) else None
        if grade is None:
            errors.add(f"{at}.eggGradeId", "EggGrade.NotFound", "Egg grade not found.")
        elif not (grade.is_active and grade.is_saleable):
            errors.add(
                f"{at}.eggGradeId",
                "SalesOrder.Line.GradeNotSaleable",
                f"Grade {grade.name!r} is not an active, saleable grade.",
            )
        quantity_ok = (
            isinstance(line.quantity, int)
            and not isinstance(line.quantity, bool)
            and 1 <= line.quantity <= MAX_LINE_QUANTITY
        )
        if not quantity_ok:
            errors.add(
                f"{at}.quantity",
                "SalesOrder.Line.Quantity.Invalid",
                f"Quantity must be a whole number of eggs from 1 to {MAX_LINE_QUANTITY}.",
            )
        price: int | None
        if line.unit_price is None:
            price = grade.unit_price_minor if grade is not None else None
        else:
            price = errors.amount(
                line.unit_price,
                field=f"{at}.unitPrice",
                code_prefix="SalesOrder.Line.UnitPrice",
                minor_unit=farm.currency_minor_unit,
                allow_zero=True,
                label="Unit price",
            )
        if grade is None or price is None or not quantity_ok:
            continue
        line_total = line.quantity * price
        if line_total > MONEY_MINOR_MAX:
            errors.add(f"{at}.quantity", "SalesOrder.Line.Total.TooLarge", "Line total too large.")
            continue
        total += line_total
        planned.append((grade, line.quantity, price, line_total))
    if total > MONEY_MINOR_MAX:
        errors.add("lines", "SalesOrder.Total.TooLarge", "The order total is too large.")
    errors.raise_if_any()

    customer = customer_get(caller=caller, customer_id=customer_id)
    order_kwargs = {
        "farm": farm,
        "customer": customer,
        "reference_number": reference or f"tmp-{uuid.uuid4().hex[:24]}",
        "order_date": ordered_on,
        "total_minor": total,
        "currency_code": farm.currency_code,
        "currency_minor_unit": farm.currency_minor_unit,
    }
    try:
        with transaction.atomic():
            order = SalesOrder.objects.for_tenant(caller.tenant).create(**order_kwargs)
    except IntegrityError as exc:
        raise SalesOrderReferenceTakenError() from exc
    if reference is None:
        # Ids are unique across farms, so an id-derived reference is unique on the farm too.
        order.reference_number = f"SO-{order.pk:06d}"
        order.save(update_fields=["reference_number"])
    SalesOrderLine.objects.bulk_create(
        SalesOrderLine(
            order=order,
            grade=grade,
            quantity=quantity,
            unit_price_minor=price,
            line_total_minor=line_total,
        )
        for grade, quantity, price, line_total in planned
    )
    audit_record(
        caller=caller,
        action="SalesOrder.Create",
        entity_type="SalesOrder",
        entity_id=order.pk,
        details={
            "referenceNumber": order.reference_number,
            "customerId": customer.pk,
            "lines": len(planned),
            "total": Money(total, order.currency_code, order.currency_minor_unit).as_json(),
        },
    )
    return order


def _lock_fifo_lots(
    caller: Caller, *, grade_id: int, needed: int, today: dt.date
) -> tuple[list[tuple[EggLot, int]], int]:
    """Lock sellable lots of one grade oldest first until ``needed`` eggs are covered.

    Returns the planned takes and how many eggs were found (``< needed`` on a shortage).
    """
    takes: list[tuple[EggLot, int]] = []
    found = 0
    after: tuple[dt.date, int] | None = None
    while found < needed:
        qs = EggLot.objects.for_tenant(caller.tenant).filter(
            sellable_lots_q(today), grade_id=grade_id
        )
        if after is not None:
            qs = qs.filter(
                Q(production_date__gt=after[0]) | Q(production_date=after[0], id__gt=after[1])
            )
        batch = list(qs.select_for_update().order_by("production_date", "id")[:LOT_BATCH])
        for lot in batch:
            take = min(needed - found, lot.quantity_available)
            takes.append((lot, take))
            found += take
            if found == needed:
                break
        if len(batch) < LOT_BATCH:
            break
        after = (batch[-1].production_date, batch[-1].pk)
    return takes, found


@transaction.atomic
def sales_order_confirm(*, caller: Caller, order_id: int) -> SalesOrder:
    """Confirm a Draft order: allocate stock FIFO, write allocations and ``Sale`` movements,
    audit ``SalesOrder.Confirm`` — all or nothing.

    Raises:
        SalesOrderNotFoundError: missing, or on another farm.
        SalesOrderNotDraftError: the order is not a Draft (409).
        SalesOrderNoItemsError: the order has no lines (422).
        SalesOrderInsufficientStockError: some grade lacks sellable stock (422); nothing written.
    """
    if not is_db_id(order_id):
        raise SalesOrderNotFoundError()
    order = (
        SalesOrder.objects.for_tenant(caller.tenant).select_for_update().filter(pk=order_id).first()
    )
    if order is None:
        raise SalesOrderNotFoundError()
    if order.status != SalesOrder.Status.DRAFT:
        raise SalesOrderNotDraftError(orderStatus=order.status)
    lines = list(order.lines.select_related("grade").order_by("id"))
    if not lines:
        raise SalesOrderNoItemsError()

    today = caller.farm.today()
    needed: dict[int, int] = {}
    for line in lines:
        needed[line.grade_id] = needed.get(line.grade_id, 0) + line.quantity
    names = {line.grade_id: line.grade.name for line in lines}
    plan: dict[int, list[tuple[EggLot, int]]] = {}
    shortages = []
    # Grades in id order: two concurrent confirms lock lots in the same global order.
    for grade_id in sorted(needed):
        takes, found = _lock_fifo_lots(
            caller, grade_id=grade_id, needed=needed[grade_id], today=today
        )
        if found < needed[grade_id]:
            shortages.append(
                {
                    "eggGradeId": grade_id,
                    "gradeName": names[grade_id],
                    "requested": needed[grade_id],
                    "available": found,
                }
            )
        plan[grade_id] = takes
    if shortages:
        names_text = ", ".join(s["gradeName"] for s in shortages)
        raise SalesOrderInsufficientStockError(
            f"Not enough sellable stock of {names_text} to confirm the order.",
            shortages=shortages,
        )

    allocations: list[LotAllocation] = []
    movements: list[InventoryMovement] = []
    taken_per_lot: dict[int, tuple[EggLot, int]] = {}
    for line in lines:
        remaining = line.quantity
        queue = plan[line.grade_id]
        while remaining:
            lot, available = queue[0]
            take = min(remaining, available)
            allocations.append(LotAllocation(line=line, lot=lot, quantity=take))
            movements.append(
                InventoryMovement(
                    farm=order.farm,
                    lot=lot,
                    kind=InventoryMovement.Kind.SALE,
                    quantity=-take,
                    sales_order=order,
                )
            )
            previous = taken_per_lot.get(lot.pk, (lot, 0))[1]
            taken_per_lot[lot.pk] = (lot, previous + take)
            remaining -= take
            if take == available:
                queue.pop(0)
            else:
                queue[0] = (lot, available - take)
    for lot, taken in taken_per_lot.values():
        lot.quantity_available -= taken
        lot.version += 1
        lot.save(update_fields=["quantity_available", "version"])
    LotAllocation.objects.bulk_create(allocations)
    InventoryMovement.objects.for_tenant(caller.tenant).bulk_create(movements)
    order.status = SalesOrder.Status.CONFIRMED
    order.confirmed_at = timezone.now()
    order.version += 1
    order.save(update_fields=["status", "confirmed_at", "version"])
    audit_record(
        caller=caller,
        action="SalesOrder.Confirm",
        entity_type="SalesOrder",
        entity_id=order.pk,
        details={
            "referenceNumber": order.reference_number,
            "allocations": [
                {"lotId": lot.pk, "quantity": taken} for lot, taken in taken_per_lot.values()
            ],
        },
    )
    return order
