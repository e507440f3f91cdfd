"""The stock read: sellable and restricted eggs per grade as of a farm-calendar date."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q, Sum, Value
from django.db.models.functions import Coalesce

from cluck.caller import Caller
from cluck.models import EggGrade, EggLot
from cluck.selectors.flocks import flock_scope_filter

# A farm has a handful of grades; the cap keeps the read bounded whatever an owner configures.
STOCK_GRADES_MAX = 200


@dataclass(frozen=True)
class StockLine:
    egg_grade_id: int
    grade_name: str
    available: int
    restricted: int


@dataclass(frozen=True)
class StockSummary:
    as_of: dt.date
    lines: list[StockLine]
    complete: bool


def _restricted_on(day: dt.date) -> Q:
    # ``restricted_until`` is the last restricted day (medication withdrawal), as for sales.
    return Q(restricted_until__isnull=False, restricted_until__gte=day)


def stock_summary(*, caller: Caller, as_of: dt.date | None = None) -> StockSummary:
    """Per grade: eggs available to sell and eggs held back by a restriction, counting only
    lots produced on or before ``as_of`` (default: the farm's today) and only lots of flocks
    the caller's scope reaches.

    Listed: every active grade, plus any inactive grade that still holds stock, in display
    order. Two queries: one grouped sum over lots, one over grades (at most
    ``STOCK_GRADES_MAX + 1`` rows).
    """
    day = as_of or caller.farm.today()
    lots = EggLot.objects.for_tenant(caller.tenant).filter(
        flock_scope_filter(caller, field="flock_id"),
        production_date__lte=day,
        quantity_available__gt=0,
    )
    sums = {
        row["grade_id"]: row
        for row in lots.order_by()
        .values("grade_id")
        .annotate(
            available=Coalesce(Sum("quantity_available", filter=~_restricted_on(day)), Value(0)),
            restricted=Coalesce(Sum("quantity_available", filter=_restricted_on(day)), Value(0)),
        )
    }
    grades = list(
        EggGrade.objects.for_tenant(caller.tenant)
        .filter(Q(is_active=True) | Q(pk__in=list(sums)))
        .order_by("sort_order", "id")[: STOCK_GRADES_MAX + 1]
    )
    lines = [
        StockLine(
            egg_grade_id=grade.pk,
            grade_name=grade.name,
            available=int(sums.get(grade.pk, {}).get("available", 0)),
            restricted=int(sums.get(grade.pk, {}).get("restricted", 0)),
        )
        for grade in grades[:STOCK_GRADES_MAX]
    ]
    return StockSummary(as_of=day, lines=lines, complete=len(grades) <= STOCK_GRADES_MAX)
