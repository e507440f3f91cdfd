"""Daily-entry reads: list (newest first, keyset-paged) and get — tenant- and
flock-scope-filtered. An entry of a flock outside the caller's scope is absent (404)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from cluck.caller import Caller
from cluck.errors import FieldError, NotFoundError
from cluck.models import DailyEntry, DailyEntryGrade
from cluck.selectors.flocks import flock_scope_filter
from cluck.selectors.paging import (
    Page,
    check_limit,
    is_db_id,
    keyset_page,
    position_date,
    position_int,
)

ENTRY_CURSOR_KEYS = ("date", "id")


class DailyEntryNotFoundError(NotFoundError):
    code = "DailyEntry.NotFound"
    default_message = "Daily entry not found."


@dataclass(frozen=True)
class GradeLineView:
    egg_grade_id: int
    grade_name: str
    quantity: int


@dataclass(frozen=True)
class DailyEntryView:
    entry_id: int
    flock_id: int
    flock_name: str
    house_id: int
    house_name: str
    date: dt.date
    status: str
    total_eggs: int
    cracked_eggs: int
    dirty_eggs: int
    discarded_eggs: int
    sellable_eggs: int
    graded_eggs: int
    mortality_count: int
    grades: list[GradeLineView]
    version: int
    created_at: dt.datetime
    updated_at: dt.datetime
    submitted_at: dt.datetime | None


def accessible_entries(caller: Caller) -> QuerySet[DailyEntry]:
    """The farm's entries whose flock the caller's scope reaches."""
    return DailyEntry.objects.for_tenant(caller.tenant).filter(
        flock_scope_filter(caller, field="flock_id")
    )


def _with_lines(qs: QuerySet[DailyEntry]) -> QuerySet[DailyEntry]:
    # Lines arrive in one extra query for the whole page (bounded by the page's entries).
    lines = DailyEntryGrade.objects.select_related("grade").order_by("grade__sort_order", "id")
    return qs.select_related("flock", "house").prefetch_related(Prefetch("lines", queryset=lines))


def daily_entry_view(entry: DailyEntry) -> DailyEntryView:
    """Project an entry loaded through ``_with_lines`` (or any entry; lines are then read)."""
    lines = [
        GradeLineView(
            egg_grade_id=line.grade_id, grade_name=line.grade.name, quantity=line.quantity
        )
        for line in entry.lines.all()
    ]
    return DailyEntryView(
        entry_id=entry.pk,
        flock_id=entry.flock_id,
        flock_name=entry.flock.name,
        house_id=entry.house_id,
        house_name=entry.house.name,
        date=entry.date,
        status=entry.status,
        total_eggs=entry.total_eggs,
        cracked_eggs=entry.cracked_eggs,
        dirty_eggs=entry.dirty_eggs,
        discarded_eggs=entry.discarded_eggs,
        sellable_eggs=entry.sellable_eggs,
        graded_eggs=sum(line.quantity for line in lines),
        mortality_count=entry.mortality_count,
        grades=lines,
        version=entry.version,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
        submitted_at=entry.submitted_at,
    )


def daily_entry_list(
    *,
    caller: Caller,
    flock_id: int | None = None,
    from_date: dt.date | None = None,
    to_date: dt.date | None = None,
    limit: int,
    cursor_position: dict[str, Any] | None = None,
) -> Page[DailyEntryView]:
    """Accessible entries, newest first (date, then id, descending), optionally of one flock
    and within ``[from_date, to_date]``. Two queries (entries, their lines), ``limit + 1``
    entries at most.

    A ``flock_id`` the caller cannot reach yields an empty page, like a missing one.

    Raises:
        FieldError: ``from_date`` is after ``to_date``, ``limit`` is out of range, or the
            cursor position is malformed.
    """
    check_limit(limit)
    if from_date is not None and to_date is not None and from_date > to_date:
        raise FieldError(
            [
                {
                    "field": "fromDate",
                    "code": "DailyEntry.DateRange.Inverted",
                    "message": "fromDate must not be after toDate.",
                }
            ]
        )
    qs = accessible_entries(caller)
    if flock_id is not None:
        qs = qs.filter(flock_id=flock_id) if is_db_id(flock_id) else qs.none()
    if from_date is not None:
        qs = qs.filter(date__gte=from_date)
    if to_date is not None:
        qs = qs.filter(date__lte=to_date)
    if cursor_position is not None:
        date = position_date(cursor_position, "date")
        before_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(date__lt=date) | Q(date=date, id__lt=before_id))
    rows = list(_with_lines(qs).order_by("-date", "-id")[: limit + 1])
    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda e: {"date": e.date.isoformat(), "id": e.pk},
        project=daily_entry_view,
    )


def daily_entry_get(*, caller: Caller, entry_id: int) -> DailyEntryView:
    """One accessible entry with its grade lines.

    Raises:
        DailyEntryNotFoundError: missing, another farm's, or of a flock outside the scope.
    """
    if not is_db_id(entry_id):
        raise DailyEntryNotFoundError()
    entry = _with_lines(accessible_entries(caller).filter(pk=entry_id)).first()
    if entry is None:
        raise DailyEntryNotFoundError()
    return daily_entry_view(entry)
