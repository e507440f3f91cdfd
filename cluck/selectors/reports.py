"""Production reports: month-by-month totals of submitted daily entries over a date range.

Tenant- and flock-scope-filtered like every read (``accessible_entries``); each month is three
bounded aggregate queries, so a long range is many small statements, never one huge read. The
range is capped at ``REPORT_MONTHS_MAX`` months.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, QuerySet, Sum, Value
from django.db.models.functions import Coalesce

from cluck.caller import Caller
from cluck.errors import FieldError
from cluck.models import DailyEntry, DailyEntryGrade
from cluck.selectors.daily_entries import accessible_entries

REPORT_MONTHS_MAX = 36
# Submitted, Locked and ManagerAdjusted entries are production; a Draft is not yet, a Voided
# one never was.
COUNTED = (
    DailyEntry.Status.SUBMITTED,
    DailyEntry.Status.LOCKED,
    DailyEntry.Status.MANAGER_ADJUSTED,
)


@dataclass(frozen=True)
class GradeTotal:
    grade_name: str
    quantity: int


@dataclass(frozen=True)
class MonthProduction:
    month: str  # "YYYY-MM"
    first_day: dt.date
    last_day: dt.date
    entries: int
    total_eggs: int
    cracked_eggs: int
    dirty_eggs: int
    discarded_eggs: int
    mortality_count: int
    graded: list[GradeTotal]
    drafts_not_counted: int


def report_months(*, from_date: dt.date, to_date: dt.date) -> list[tuple[dt.date, dt.date]]:
    """The months of ``[from_date, to_date]``, each clipped to the range.

    Raises:
        FieldError: ``from_date`` is after ``to_date``, or the range spans more than
            ``REPORT_MONTHS_MAX`` months.
    """
    if from_date > to_date:
        raise FieldError(
            [{"field": "fromDate", "code": "after_to_date", "message": "is after toDate"}]
        )
    months: list[tuple[dt.date, dt.date]] = []
    year, month = from_date.year, from_date.month
    while (year, month) <= (to_date.year, to_date.month):
        first = max(dt.date(year, month, 1), from_date)
        last = min(dt.date(year, month, calendar.monthrange(year, month)[1]), to_date)
        months.append((first, last))
        if len(months) > REPORT_MONTHS_MAX:
            raise FieldError(
                [
                    {
                        "field": "toDate",
                        "code": "range_too_long",
                        "message": f"the range spans more than {REPORT_MONTHS_MAX} months",
                    }
                ]
            )
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def _in_range(
    caller: Caller, first: dt.date, last: dt.date, flock_id: int | None
) -> QuerySet[DailyEntry]:
    entries = accessible_entries(caller).filter(date__range=(first, last))
    return entries if flock_id is None else entries.filter(flock_id=flock_id)


def production_month(
    *, caller: Caller, first_day: dt.date, last_day: dt.date, flock_id: int | None = None
) -> MonthProduction:
    """Totals of the counted entries dated ``first_day``..``last_day`` (one month at most),
    optionally of one flock; plus how many Drafts were left out. Three queries."""
    counted = _in_range(caller, first_day, last_day, flock_id).filter(status__in=COUNTED)
    zero = Value(0)
    totals = counted.aggregate(
        entries=Count("id"),
        total=Coalesce(Sum("total_eggs"), zero),
        cracked=Coalesce(Sum("cracked_eggs"), zero),
        dirty=Coalesce(Sum("dirty_eggs"), zero),
        discarded=Coalesce(Sum("discarded_eggs"), zero),
        mortality=Coalesce(Sum("mortality_count"), zero),
    )
    graded = (
        DailyEntryGrade.objects.filter(entry__in=counted)
        .values("grade__name", "grade__sort_order")
        .annotate(quantity=Sum("quantity"))
        .order_by("grade__sort_order", "grade__name")
    )
    drafts = (
        _in_range(caller, first_day, last_day, flock_id)
        .filter(status=DailyEntry.Status.DRAFT)
        .count()
    )
    return MonthProduction(
        month=f"{first_day:%Y-%m}",
        first_day=first_day,
        last_day=last_day,
        entries=totals["entries"],
        total_eggs=totals["total"],
        cracked_eggs=totals["cracked"],
        dirty_eggs=totals["dirty"],
        discarded_eggs=totals["discarded"],
        mortality_count=totals["mortality"],
        graded=[GradeTotal(row["grade__name"], row["quantity"]) for row in graded],
        drafts_not_counted=drafts,
    )
