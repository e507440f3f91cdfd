"""Daily-entry writes: record (upsert a Draft) and submit (Draft → Submitted, eggs into stock).

Both the REST views and the MCP tools call exactly these functions; every rule of brief §6.4
lives here — the request-shape validator (400 with every failing field) and the handler's
business checks, in the brief's order — so no adapter carries a rule of its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.utils import timezone

from cluck.caller import Caller
from cluck.errors import CluckError, ConflictError, FieldError
from cluck.models import (
    BirdMovement,
    DailyEntry,
    DailyEntryGrade,
    EggGrade,
    EggLot,
    Flock,
    InventoryMovement,
)
from cluck.resource_changes import daily_entry_changed
from cluck.selectors.daily_entries import DailyEntryNotFoundError
from cluck.selectors.flocks import FlockNotFoundError
from cluck.selectors.grades import is_recordable
from cluck.selectors.paging import is_db_id
from cluck.services.audit import audit_record
from cluck.services.flocks import flock_scope_check

# Per-day ceilings, far above any real flock and far below BIGINT, so that no sum of a day's
# counters can overflow (brief: sums use 64-bit arithmetic) and nonsense is a 400, not a 500.
MAX_EGGS_PER_DAY = 10_000_000
MAX_MORTALITY_PER_DAY = 10_000_000
MAX_GRADE_LINES = 50

_COUNTERS = (
    ("total_eggs", "totalEggs", "TotalEggs", MAX_EGGS_PER_DAY),
    ("cracked_eggs", "crackedEggs", "CrackedEggs", MAX_EGGS_PER_DAY),
    ("dirty_eggs", "dirtyEggs", "DirtyEggs", MAX_EGGS_PER_DAY),
    ("discarded_eggs", "discardedEggs", "DiscardedEggs", MAX_EGGS_PER_DAY),
    ("mortality_count", "mortalityCount", "MortalityCount", MAX_MORTALITY_PER_DAY),
)


# --- errors ------------------------------------------------------------------------------------


class DailyEntryFlockFarmMismatchError(CluckError):
    code = "DailyEntry.FlockFarmMismatch"
    http_status = 422
    default_message = "The flock does not belong to this farm."


class DailyEntryHouseMismatchError(CluckError):
    code = "DailyEntry.HouseMismatch"
    http_status = 422
    default_message = "The flock does not live in that house; omit houseId to use its own."


class DailyEntryFlockNotActiveError(CluckError):
    code = "DailyEntry.FlockNotActive"
    http_status = 422
    default_message = "The flock does not accept production on that date."


class DailyEntryDateBeforePlacementError(CluckError):
    """``data["placementDate"]``: the flock's placement date, the earliest recordable day."""

    code = "DailyEntry.DateBeforePlacement"
    http_status = 422
    default_message = "The flock had not been placed yet on that date."


class DailyEntryMortalityExceedsBirdsError(CluckError):
    """``data["birdsAlive"]``, ``data["mortalityCount"]``: a flock cannot lose more birds than
    it has."""

    code = "DailyEntry.MortalityExceedsBirdsAlive"
    http_status = 422
    default_message = "Mortality exceeds the birds alive in the flock."


class DailyEntryUnknownGradeError(CluckError):
    """``data["eggGradeIds"]``: the offending ids; ``data["validGrades"]``: what may be used."""

    code = "DailyEntry.UnknownGrade"
    http_status = 422
    default_message = "Grade lines must name active, saleable, hand-graded grades of this farm."


class DailyEntryImmutableError(ConflictError):
    code = "DailyEntry.Immutable"
    default_message = "Only draft entries can be edited."


class DailyEntryGradesExceedTotalError(CluckError):
    code = "DailyEntry.GradesExceedTotal"
    http_status = 422
    default_message = "Graded eggs exceed total − cracked − dirty − discarded."


class DailyEntryNotDraftError(ConflictError):
    code = "DailyEntry.NotDraft"
    default_message = "Only a draft entry can be submitted."


class DailyEntryGradesNotReconciledError(CluckError):
    code = "DailyEntry.GradesNotReconciled"
    http_status = 422
    default_message = "Graded eggs must equal total − cracked − dirty − discarded to submit."


class DailyEntryVersionConflictError(ConflictError):
    code = "DailyEntry.VersionConflict"
    default_message = "The entry changed while this request ran; reload it and retry."


# --- inputs and results ------------------------------------------------------------------------


@dataclass(frozen=True)
class GradeLineInput:
    """One graded line: ``egg_grade_id`` may be ``None`` (reported as a field error)."""

    egg_grade_id: int | None
    quantity: int


@dataclass(frozen=True)
class RecordResult:
    entry: DailyEntry
    created: bool


# --- record ------------------------------------------------------------------------------------


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_record(
    *,
    caller: Caller,
    flock_id: Any,
    house_id: Any,
    date: Any,
    counters: dict[str, Any],
    grades: Sequence[GradeLineInput] | None,
) -> None:
    """RecordDailyEntryValidator: request-shape rules, every failing field reported at once.

    Raises:
        FieldError: ``errors`` lists ``{field, code, message}`` for each failing rule.
    """
    errors: list[dict[str, str]] = []

    def fail(field: str, code: str, message: str) -> None:
        errors.append({"field": field, "code": code, "message": message})

    if not caller.tenant.is_resolved:
        fail("farmId", "DailyEntry.FarmId.Required", "The farm is required.")
    if house_id is not None and not is_db_id(house_id):
        fail("houseId", "DailyEntry.HouseId.Required", "houseId must be a house id, or omitted.")
    if not is_db_id(flock_id):
        fail("flockId", "DailyEntry.FlockId.Required", "A flock id is required.")
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        fail("date", "DailyEntry.Date.Required", "A calendar date is required.")
    elif caller.tenant.is_resolved:
        today = caller.farm.today()
        earliest = caller.farm.earliest_entry_date(today)
        if date > today:
            fail("date", "DailyEntry.Date.NotFuture", "Entry date cannot be in the future.")
        elif date < earliest:
            fail(
                "date",
                "DailyEntry.Date.TooOld",
                f"Entry date cannot be before {earliest} (the farm accepts entries up to "
                f"{caller.farm.late_entry_days} days late).",
            )

    counts_ok = True
    for attr, field, name, ceiling in _COUNTERS:
        value = counters[attr]
        if not _is_count(value) or value < 0:
            counts_ok = False
            fail(field, f"DailyEntry.{name}.NonNegative", f"{field} must be zero or more.")
        elif value > ceiling:
            counts_ok = False
            fail(field, f"DailyEntry.{name}.TooLarge", f"{field} must be at most {ceiling}.")
    sellable = 0
    if counts_ok:
        total = counters["total_eggs"]
        set_aside = counters["cracked_eggs"] + counters["dirty_eggs"] + counters["discarded_eggs"]
        sellable = total - set_aside
        if sellable < 0:
            fail(
                "totalEggs",
                "DailyEntry.Eggs.SumWithinTotal",
                "crackedEggs + dirtyEggs + discardedEggs cannot exceed totalEggs.",
            )

    if grades is not None:
        if len(grades) > MAX_GRADE_LINES:
            fail("grades", "DailyEntry.Grades.TooMany", f"At most {MAX_GRADE_LINES} lines.")
        else:
            seen: set[int] = set()
            duplicate = False
            graded = 0
            lines_ok = True
            for index, line in enumerate(grades):
                if not is_db_id(line.egg_grade_id):
                    lines_ok = False
                    fail(
                        f"grades[{index}].eggGradeId",
                        "DailyEntry.GradeEggGradeId.Required",
                        "Each grade line needs an egg grade id.",
                    )
                elif line.egg_grade_id in seen:
                    duplicate = True
                else:
                    seen.add(line.egg_grade_id)  # type: ignore[arg-type]
                if not _is_count(line.quantity) or line.quantity <= 0:
                    lines_ok = False
                    fail(
                        f"grades[{index}].quantity",
                        "DailyEntry.GradeQuantity.Positive",
                        "Each grade line's quantity must be positive.",
                    )
                else:
                    graded += line.quantity
            if duplicate:
                fail("grades", "DailyEntry.Grades.Unique", "Each grade may appear only once.")
            if lines_ok and counts_ok and sellable >= 0 and graded > sellable:
                fail(
                    "grades",
                    "DailyEntry.Grades.WithinAvailable",
                    f"Graded eggs ({graded}) exceed total − cracked − dirty − discarded "
                    f"({sellable}).",
                )
    if errors:
        raise FieldError(errors)


@transaction.atomic
def daily_entry_record(
    *,
    caller: Caller,
    flock_id: int,
    house_id: int | None = None,
    date: dt.date,
    total_eggs: int,
    cracked_eggs: int,
    dirty_eggs: int,
    discarded_eggs: int = 0,
    mortality_count: int,
    grades: Sequence[GradeLineInput] | None = None,
) -> RecordResult:
    """Record a flock's day: create its Draft, or update the existing Draft (upsert on farm,
    house, flock, date).

    ``house_id`` defaults to the flock's house. ``grades``: ``None`` keeps the draft's lines,
    ``[]`` clears them, a list replaces them. Audits ``DailyEntry.Create`` for a new entry and
    ``DailyEntry.Update`` when an existing draft was re-recorded. One transaction: any failure
    leaves no row and no audit event.

    Raises:
        FieldError: the validator's rules (400), every failing field listed.
        ScopeUnresolvedError: unresolved caller.
        FlockScopeNotAssignedError: a restricted Worker, flock outside their assignments (422).
        FlockNotFoundError: missing or another farm's flock (404).
        DailyEntryHouseMismatchError, DailyEntryFlockNotActiveError,
        DailyEntryDateBeforePlacementError, DailyEntryMortalityExceedsBirdsError,
        DailyEntryUnknownGradeError, DailyEntryGradesExceedTotalError: 422.
        DailyEntryImmutableError: the day's entry is no longer a draft (409).
    """
    counters = {
        "total_eggs": total_eggs,
        "cracked_eggs": cracked_eggs,
        "dirty_eggs": dirty_eggs,
        "discarded_eggs": discarded_eggs,
        "mortality_count": mortality_count,
    }
    validate_record(
        caller=caller,
        flock_id=flock_id,
        house_id=house_id,
        date=date,
        counters=counters,
        grades=grades,
    )
    flock_scope_check(caller=caller, flock_id=flock_id)
    # The tenant predicate only (no flock-scope filter): the guard above already decided, and a
    # foreign id must read as missing. The row lock serializes concurrent records of one flock,
    # so two first records of the same day meet as create + update, never as a 500.
    flock = Flock.objects.for_tenant(caller.tenant).select_for_update().filter(pk=flock_id).first()
    if flock is None:
        raise FlockNotFoundError()
    if flock.farm_id != caller.farm.pk:
        raise DailyEntryFlockFarmMismatchError()
    if house_id is not None and house_id != flock.house_id:
        raise DailyEntryHouseMismatchError(houseId=house_id, flockHouseId=flock.house_id)
    if not flock.can_record_production_on(date):
        raise _not_active(flock, date)
    _check_production_day(flock, date)
    _check_mortality(caller, flock, mortality_count)
    grade_ids = [line.egg_grade_id for line in grades] if grades is not None else []
    _check_grades(caller, grade_ids)  # type: ignore[arg-type]

    entry, created = _upsert(caller, flock, date)
    if entry.status != DailyEntry.Status.DRAFT:
        raise DailyEntryImmutableError(entryStatus=entry.status)

    for attr, value in counters.items():
        setattr(entry, attr, value)
    if grades is not None:
        _replace_lines(entry, {line.egg_grade_id: line.quantity for line in grades})  # type: ignore[misc]
    graded = sum(entry.lines.values_list("quantity", flat=True))
    if graded > entry.sellable_eggs:
        raise DailyEntryGradesExceedTotalError(graded=graded, sellable=entry.sellable_eggs)
    now = timezone.now()
    entry.updated_at = now
    if not created:
        entry.version += 1
    entry.save()
    daily_entry_changed(farm=caller.farm, flock_id=flock.pk, date=date)
    if not created:
        # After every failure check: a rejected re-record leaves no trace.
        audit_record(
            caller=caller,
            action="DailyEntry.Update",
            entity_type="DailyEntry",
            entity_id=entry.pk,
            details=_audit_details(entry, grades),
        )
    return RecordResult(entry=entry, created=created)


def _check_production_day(flock: Flock, date: dt.date) -> None:
    """A production day lies on or after the flock's placement (the upper bound, the farm's
    today, is the validator's)."""
    if date < flock.placement_date:
        raise DailyEntryDateBeforePlacementError(
            f"Flock {flock.name!r} (#{flock.pk}) was placed on {flock.placement_date}; "
            f"production cannot be recorded for {date.isoformat()}.",
            placementDate=flock.placement_date.isoformat(),
            date=date.isoformat(),
        )


def birds_alive(caller: Caller, flock: Flock) -> int:
    """Initial count − Σ bird movements (mortality, culls, adjustments) of ``flock``."""
    moved = (
        BirdMovement.objects.for_tenant(caller.tenant)
        .filter(flock_id=flock.pk)
        .aggregate(total=Sum("quantity"))["total"]
    )
    return int(flock.initial_count - (moved or 0))


def _check_mortality(caller: Caller, flock: Flock, mortality: int) -> None:
    """Birds leaving a flock (mortality now; culls and adjustments too, when they are
    recorded) never exceed the birds alive. Call it holding the flock's row lock."""
    alive = birds_alive(caller, flock)
    if mortality > alive:
        raise DailyEntryMortalityExceedsBirdsError(
            f"Flock {flock.name!r} (#{flock.pk}) has {alive} birds alive; mortality "
            f"{mortality} exceeds it.",
            birdsAlive=alive,
            mortalityCount=mortality,
        )


def _not_active(flock: Flock, date: dt.date) -> DailyEntryFlockNotActiveError:
    if flock.status == Flock.Status.DEPLETED:
        why = f"was depleted on {flock.depleted_on.isoformat() if flock.depleted_on else '?'}"
    else:
        why = f"is {flock.status}"
    return DailyEntryFlockNotActiveError(
        f"Flock {flock.name!r} (#{flock.pk}) {why}; production cannot be recorded for "
        f"{date.isoformat()}.",
        flockStatus=flock.status,
        date=date.isoformat(),
        depletedOn=flock.depleted_on.isoformat() if flock.depleted_on else None,
    )


def _check_grades(caller: Caller, grade_ids: list[int]) -> None:
    if not grade_ids:
        return
    found = {g.pk: g for g in EggGrade.objects.for_tenant(caller.tenant).filter(pk__in=grade_ids)}
    bad = [gid for gid in grade_ids if gid not in found or not is_recordable(found[gid])]
    if not bad:
        return
    valid = list(
        EggGrade.objects.for_tenant(caller.tenant)
        .filter(is_active=True, is_saleable=True, kind=EggGrade.Kind.MANUAL)
        .order_by("sort_order", "id")
        .values("id", "name")[:MAX_GRADE_LINES]
    )
    counters = [found[gid].name for gid in bad if gid in found and found[gid].kind != "Manual"]
    hint = (
        f" {', '.join(counters)} {'is' if len(counters) == 1 else 'are'} fed by the "
        "crackedEggs/dirtyEggs counters, not by grade lines."
        if counters
        else ""
    )
    raise DailyEntryUnknownGradeError(
        f"Grade ids {bad} cannot be used on a grade line.{hint} Valid grades: "
        f"{', '.join(v['name'] for v in valid) or 'none'}.",
        eggGradeIds=bad,
        validGrades=[{"eggGradeId": v["id"], "name": v["name"]} for v in valid],
    )


def _upsert(caller: Caller, flock: Flock, date: dt.date) -> tuple[DailyEntry, bool]:
    live = (
        DailyEntry.objects.for_tenant(caller.tenant)
        .select_for_update()
        .filter(house_id=flock.house_id, flock_id=flock.pk, date=date)
        .exclude(status=DailyEntry.Status.VOIDED)
    )
    entry = live.first()
    if entry is not None:
        # Its flock is the row locked above: callers that name it (the MCP reply's flock name)
        # read it without a second query.
        entry.flock = flock
        return entry, False
    try:
        with transaction.atomic():
            entry = DailyEntry.objects.create(
                farm=caller.farm, house_id=flock.house_id, flock=flock, date=date
            )
    except IntegrityError:
        # Only reachable if a writer skipped the flock lock; the committed row wins and this
        # call continues as an update of it.
        entry = live.first()
        if entry is None:
            raise
        return entry, False
    audit_record(
        caller=caller,
        action="DailyEntry.Create",
        entity_type="DailyEntry",
        entity_id=entry.pk,
        details={"flockId": flock.pk, "date": date.isoformat()},
    )
    return entry, True


def _replace_lines(entry: DailyEntry, wanted: dict[int, int]) -> None:
    """Reconcile the draft's lines to ``wanted`` in place (line ids of kept grades survive)."""
    existing = {line.grade_id: line for line in entry.lines.all()}
    stale = [line.pk for gid, line in existing.items() if gid not in wanted]
    if stale:
        DailyEntryGrade.objects.filter(pk__in=stale).delete()
    for grade_id, quantity in wanted.items():
        line = existing.get(grade_id)
        if line is None:
            DailyEntryGrade.objects.create(entry=entry, grade_id=grade_id, quantity=quantity)
        elif line.quantity != quantity:
            DailyEntryGrade.objects.filter(pk=line.pk).update(quantity=quantity)


def _audit_details(entry: DailyEntry, grades: Sequence[GradeLineInput] | None) -> dict[str, Any]:
    details: dict[str, Any] = {
        "totalEggs": entry.total_eggs,
        "crackedEggs": entry.cracked_eggs,
        "dirtyEggs": entry.dirty_eggs,
        "discardedEggs": entry.discarded_eggs,
        "mortalityCount": entry.mortality_count,
        "version": entry.version,
    }
    if grades is not None:
        details["grades"] = [
            {"eggGradeId": line.egg_grade_id, "quantity": line.quantity} for line in grades
        ]
    return details


# --- submit ------------------------------------------------------------------------------------


def _counter_grade(caller: Caller, kind: str) -> EggGrade | None:
    """The farm's active, saleable grade fed by a counter, or ``None`` (those eggs are a loss)."""
    return (
        EggGrade.objects.for_tenant(caller.tenant)
        .filter(kind=kind, is_active=True, is_saleable=True)
        .first()
    )


@transaction.atomic
def daily_entry_submit(*, caller: Caller, entry_id: int) -> DailyEntry:
    """Submit a Draft: its eggs become stock and its mortality leaves the flock.

    Grades must reconcile exactly to total − cracked − dirty − discarded (no lines ⇔ nothing
    sellable). Snapshots the farm's Cracked/Dirty grades onto the entry; writes one egg lot per
    grade line plus one per non-zero Cracked/Dirty counter whose grade resolved, each with a
    ``Production`` inventory movement; a ``Mortality`` bird movement when mortality > 0; audit
    ``DailyEntry.Submit``. The status change is an optimistic update on ``version``: of two
    racing submits exactly one wins, the other gets 409 and writes nothing.

    Raises:
        DailyEntryNotFoundError: missing or another farm's entry (404).
        FlockScopeNotAssignedError: a restricted Worker, entry of an unassigned flock (422).
        DailyEntryNotDraftError: already submitted (409).
        DailyEntryDateBeforePlacementError: the day precedes the flock's placement (422).
        DailyEntryMortalityExceedsBirdsError: more deaths than birds alive (422).
        DailyEntryGradesNotReconciledError: graded ≠ sellable (422).
        DailyEntryVersionConflictError: lost a race with another writer (409).
    """
    if not is_db_id(entry_id):
        raise DailyEntryNotFoundError()
    entries = DailyEntry.objects.for_tenant(caller.tenant)
    entry = entries.filter(pk=entry_id).first()
    if entry is None:
        raise DailyEntryNotFoundError()
    flock_scope_check(caller=caller, flock_id=entry.flock_id)
    if entry.status != DailyEntry.Status.DRAFT:
        raise DailyEntryNotDraftError(entryStatus=entry.status)
    flock = Flock.objects.for_tenant(caller.tenant).get(pk=entry.flock_id)
    _check_production_day(flock, entry.date)
    if entry.mortality_count > 0:
        # Birds leave the flock: its row lock (taken before the entry's, as record does)
        # serializes every writer of its bird movements, so two submits of one flock's days
        # cannot both fit under the birds alive.
        flock = Flock.objects.for_tenant(caller.tenant).select_for_update().get(pk=flock.pk)
        _check_mortality(caller, flock, entry.mortality_count)
    lines = list(entry.lines.order_by("id"))
    graded = sum(line.quantity for line in lines)
    if graded != entry.sellable_eggs:
        raise DailyEntryGradesNotReconciledError(
            f"Graded eggs ({graded}) must equal total − cracked − dirty − discarded "
            f"({entry.sellable_eggs}) to submit.",
            graded=graded,
            sellable=entry.sellable_eggs,
        )
    cracked_grade = _counter_grade(caller, EggGrade.Kind.CRACKED)
    dirty_grade = _counter_grade(caller, EggGrade.Kind.DIRTY)
    now = timezone.now()
    won = entries.filter(pk=entry.pk, version=entry.version, status=DailyEntry.Status.DRAFT).update(
        status=DailyEntry.Status.SUBMITTED,
        version=F("version") + 1,
        cracked_grade=cracked_grade,
        dirty_grade=dirty_grade,
        submitted_at=now,
        updated_at=now,
    )
    if not won:
        raise DailyEntryVersionConflictError()
    entry.refresh_from_db()
    daily_entry_changed(farm=caller.farm, flock_id=entry.flock_id, date=entry.date)

    produced: list[tuple[int, int]] = [(line.grade_id, line.quantity) for line in lines]
    if entry.cracked_eggs and cracked_grade is not None:
        produced.append((cracked_grade.pk, entry.cracked_eggs))
    if entry.dirty_eggs and dirty_grade is not None:
        produced.append((dirty_grade.pk, entry.dirty_eggs))
    lots = EggLot.objects.bulk_create(
        [
            EggLot(
                farm=caller.farm,
                flock_id=entry.flock_id,
                daily_entry=entry,
                grade_id=grade_id,
                production_date=entry.date,
                quantity_produced=quantity,
                quantity_available=quantity,
            )
            for grade_id, quantity in produced
        ]
    )
    InventoryMovement.objects.bulk_create(
        [
            InventoryMovement(
                farm=caller.farm,
                lot=lot,
                kind=InventoryMovement.Kind.PRODUCTION,
                quantity=lot.quantity_produced,
            )
            for lot in lots
        ]
    )
    if entry.mortality_count > 0:
        BirdMovement.objects.create(
            farm=caller.farm,
            flock_id=entry.flock_id,
            date=entry.date,
            kind=BirdMovement.Kind.MORTALITY,
            quantity=entry.mortality_count,
            daily_entry=entry,
        )
    audit_record(
        caller=caller,
        action="DailyEntry.Submit",
        entity_type="DailyEntry",
        entity_id=entry.pk,
        details={
            "lots": [{"eggGradeId": gid, "quantity": qty} for gid, qty in produced],
            "mortalityCount": entry.mortality_count,
            "version": entry.version,
        },
    )
    return entry
