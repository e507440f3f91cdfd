"""The daily-entry rules of brief §6.4, driven through the services the REST views and the MCP
tools both call: every validator row, every handler check (in order), upsert semantics and
the side effects of submit."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest

from cluck.caller import Caller
from cluck.errors import CluckError, FieldError
from cluck.models import (
    AuditEvent,
    BirdMovement,
    DailyEntry,
    EggGrade,
    EggLot,
    Farm,
    Flock,
    InventoryMovement,
)
from cluck.services.daily_entries import (
    GradeLineInput,
    RecordResult,
    daily_entry_record,
    daily_entry_submit,
)
from cluck.services.flocks import flock_archive, flock_deplete
from tenancy import ActorContext, RowScope, TenantContext
from tests.factories import FlockFactory, grade_named, person_caller, provisioned_farm
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


@dataclass
class Farmyard:
    farm: Farm
    flock: Flock
    owner: Caller
    large: EggGrade
    medium: EggGrade


@pytest.fixture
def yard() -> Farmyard:
    farm = provisioned_farm()
    flock = FlockFactory.create(farm=farm, name="House 1 White")
    return Farmyard(
        farm=farm,
        flock=flock,
        owner=person_caller(farm=farm, roles=["Admin"]),
        large=grade_named(farm, "Large"),
        medium=grade_named(farm, "Medium"),
    )


def record(yard: Farmyard, caller: Caller | None = None, **overrides: Any) -> RecordResult:
    kwargs: dict[str, Any] = {
        "caller": caller or yard.owner,
        "flock_id": yard.flock.pk,
        "date": yard.farm.today() - dt.timedelta(days=1),
        "total_eggs": 100,
        "cracked_eggs": 3,
        "dirty_eggs": 2,
        "discarded_eggs": 1,
        "mortality_count": 2,
        "grades": [
            GradeLineInput(egg_grade_id=yard.large.pk, quantity=60),
            GradeLineInput(egg_grade_id=yard.medium.pk, quantity=34),
        ],
    }
    kwargs.update(overrides)
    return daily_entry_record(**kwargs)


def actions(entity_id: int) -> list[str]:
    return list(
        AuditEvent.all_tenants.filter(entity_type="DailyEntry", entity_id=str(entity_id))
        .order_by("id")
        .values_list("action", flat=True)
    )


def entries_of(flock: Flock) -> list[DailyEntry]:
    return list(DailyEntry.all_tenants.filter(flock=flock))


# --- RecordDailyEntryValidator ----------------------------------------------------------------

TOMORROW = object()  # resolved against the farm's today inside the test


VALIDATOR_ROWS: list[tuple[str, dict[str, Any], str, str]] = [
    ("flock id missing", {"flock_id": None}, "flockId", "DailyEntry.FlockId.Required"),
    ("flock id zero", {"flock_id": 0}, "flockId", "DailyEntry.FlockId.Required"),
    ("house id zero", {"house_id": 0}, "houseId", "DailyEntry.HouseId.Required"),
    ("date missing", {"date": None}, "date", "DailyEntry.Date.Required"),
    ("date in the future", {"date": TOMORROW}, "date", "DailyEntry.Date.NotFuture"),
    ("total negative", {"total_eggs": -1}, "totalEggs", "DailyEntry.TotalEggs.NonNegative"),
    (
        "cracked negative",
        {"cracked_eggs": -1},
        "crackedEggs",
        "DailyEntry.CrackedEggs.NonNegative",
    ),
    ("dirty negative", {"dirty_eggs": -1}, "dirtyEggs", "DailyEntry.DirtyEggs.NonNegative"),
    (
        "discarded negative",
        {"discarded_eggs": -1},
        "discardedEggs",
        "DailyEntry.DiscardedEggs.NonNegative",
    ),
    (
        "mortality negative",
        {"mortality_count": -1},
        "mortalityCount",
        "DailyEntry.MortalityCount.NonNegative",
    ),
    ("total absurd", {"total_eggs": 10**18}, "totalEggs", "DailyEntry.TotalEggs.TooLarge"),
    (
        "set-aside eggs exceed total",
        {"total_eggs": 10, "cracked_eggs": 5, "dirty_eggs": 4, "discarded_eggs": 2, "grades": []},
        "totalEggs",
        "DailyEntry.Eggs.SumWithinTotal",
    ),
    (
        "grade line without grade",
        {"grades": [GradeLineInput(egg_grade_id=None, quantity=5)]},
        "grades[0].eggGradeId",
        "DailyEntry.GradeEggGradeId.Required",
    ),
    (
        "grade line of zero eggs",
        {"grades": "large:0"},
        "grades[0].quantity",
        "DailyEntry.GradeQuantity.Positive",
    ),
    ("grade listed twice", {"grades": "large:10,large:10"}, "grades", "DailyEntry.Grades.Unique"),
    (
        "grades exceed the sellable count",
        {"grades": "large:90,medium:5"},
        "grades",
        "DailyEntry.Grades.WithinAvailable",
    ),
]


def _resolve(yard: Farmyard, overrides: dict[str, Any]) -> dict[str, Any]:
    resolved = dict(overrides)
    if resolved.get("date") is TOMORROW:
        resolved["date"] = yard.farm.today() + dt.timedelta(days=1)
    if isinstance(resolved.get("grades"), str):
        grades = {"large": yard.large, "medium": yard.medium}
        resolved["grades"] = [
            GradeLineInput(egg_grade_id=grades[name].pk, quantity=int(qty))
            for name, qty in (part.split(":") for part in resolved["grades"].split(","))
        ]
    return resolved


@pytest.mark.parametrize(
    ("overrides", "field", "code"),
    [row[1:] for row in VALIDATOR_ROWS],
    ids=[row[0] for row in VALIDATOR_ROWS],
)
def test_each_validator_rule_reports_its_field_and_code_and_writes_nothing(
    yard: Farmyard, overrides: dict[str, Any], field: str, code: str
) -> None:
    with pytest.raises(FieldError) as failure:
        record(yard, **_resolve(yard, overrides))

    assert {"field": field, "code": code} in [
        {"field": e["field"], "code": e["code"]} for e in failure.value.errors
    ]
    assert failure.value.http_status == 400
    assert entries_of(yard.flock) == []


def test_the_validator_lists_every_failing_field_at_once(yard: Farmyard) -> None:
    with pytest.raises(FieldError) as failure:
        record(
            yard,
            flock_id=None,
            date=yard.farm.today() + dt.timedelta(days=3),
            total_eggs=-5,
            mortality_count=-1,
            grades=[GradeLineInput(egg_grade_id=yard.large.pk, quantity=0)],
        )

    assert {e["code"] for e in failure.value.errors} == {
        "DailyEntry.FlockId.Required",
        "DailyEntry.Date.NotFuture",
        "DailyEntry.TotalEggs.NonNegative",
        "DailyEntry.MortalityCount.NonNegative",
        "DailyEntry.GradeQuantity.Positive",
    }


def test_an_unresolved_farm_is_a_farm_id_field_error(yard: Farmyard) -> None:
    actor = ActorContext()
    actor.resolve_system("test")
    scope = RowScope()
    scope.resolve(unrestricted=True)
    nowhere = Caller(tenant=TenantContext(), actor=actor, scope=scope, channel="cli")

    with pytest.raises(FieldError) as failure:
        record(yard, caller=nowhere)

    assert "DailyEntry.FarmId.Required" in {e["code"] for e in failure.value.errors}


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "        today = caller.farm.today()\n"
        "        earliest = caller.farm.earliest_entry_date(today)"
    ),
    replace=(
        "        today = dt.datetime.now(dt.timezone.utc).date()\n"
        "        earliest = caller.farm.earliest_entry_date(today)"
    ),
)
def test_not_future_is_judged_by_the_farm_calendar_not_utc() -> None:
    """Kiritimati (UTC+14) and Pago Pago (UTC−11) are 25 hours apart, so their dates always
    differ: the eastern farm's today is accepted there and is the future for the western farm.

    Mutation: judge by ``timezone.now().date()`` (UTC) in ``validate_record`` → red at any
    time of day (one of the two assertions fails).
    """
    east = provisioned_farm(time_zone="Pacific/Kiritimati")
    west = provisioned_farm(time_zone="Pacific/Pago_Pago")
    east_day = east.today()
    assert east_day > west.today()

    ok = daily_entry_record(
        caller=Caller.system(east, label="test"),
        flock_id=FlockFactory.create(farm=east).pk,
        date=east_day,
        total_eggs=0,
        cracked_eggs=0,
        dirty_eggs=0,
        mortality_count=0,
    )
    assert ok.created
    with pytest.raises(FieldError) as failure:
        daily_entry_record(
            caller=Caller.system(west, label="test"),
            flock_id=FlockFactory.create(farm=west).pk,
            date=east_day,
            total_eggs=0,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=0,
        )
    assert [e["code"] for e in failure.value.errors] == ["DailyEntry.Date.NotFuture"]


# --- RecordDailyEntryHandler ------------------------------------------------------------------


@mutation(
    "cluck/services/daily_entries.py",
    find="    flock_scope_check(caller=caller, flock_id=flock_id)\n",
    replace="",
)
def test_a_restricted_worker_recording_on_an_unassigned_flock_is_not_assigned(
    yard: Farmyard,
) -> None:
    """Mutation: drop ``flock_scope_check`` from ``daily_entry_record`` → red (an entry is
    written for a flock the Worker is not assigned to)."""
    other = FlockFactory.create(farm=yard.farm)
    worker = person_caller(farm=yard.farm, roles=[], assigned_flocks=[other])

    with pytest.raises(CluckError) as failure:
        record(yard, caller=worker)

    assert (failure.value.code, failure.value.http_status) == ("FlockScope.NotAssigned", 422)
    assert entries_of(yard.flock) == []


def test_an_assigned_worker_and_an_unassigned_one_without_rows_may_record(
    yard: Farmyard,
) -> None:
    assigned = person_caller(farm=yard.farm, roles=[], assigned_flocks=[yard.flock])
    grandfathered = person_caller(farm=yard.farm, roles=[])  # no rows → unrestricted

    assert record(yard, caller=assigned).created
    assert not record(yard, caller=grandfathered).created


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "flock = Flock.objects.for_tenant(caller.tenant).select_for_update().filter(pk=flock_id).fi"
        "rst()"
    ),
    replace="flock = Flock.all_tenants.select_for_update().filter(pk=flock_id).first()",
)
def test_a_missing_and_another_farms_flock_are_the_same_not_found(yard: Farmyard) -> None:
    """Mutation: load the flock with ``Flock.all_tenants`` (no tenant predicate) → red (the
    foreign flock is found and an entry written on it from this farm)."""
    foreign = FlockFactory.create(farm=provisioned_farm())
    missing_id = foreign.pk + 10_000

    errors = []
    for flock_id in (missing_id, foreign.pk):
        with pytest.raises(CluckError) as failure:
            record(yard, flock_id=flock_id, grades=None)
        errors.append((failure.value.code, failure.value.http_status, failure.value.message))

    assert errors[0] == errors[1] == ("Flock.NotFound", 404, "Flock not found.")
    assert entries_of(foreign) == []


def test_a_house_other_than_the_flocks_is_refused(yard: Farmyard) -> None:
    other_house = FlockFactory.create(farm=yard.farm).house

    with pytest.raises(CluckError) as failure:
        record(yard, house_id=other_house.pk)

    assert failure.value.code == "DailyEntry.HouseMismatch"
    assert record(yard, house_id=yard.flock.house_id).created


@mutation(
    "cluck/models/flocks.py",
    find="            return self.depleted_on is not None and date <= self.depleted_on",
    replace="            return True",
)
def test_a_depleted_flock_takes_backfill_up_to_its_depletion_date_only(yard: Farmyard) -> None:
    """Mutation: make ``can_record_production_on`` return True for Depleted → red."""
    depleted_on = yard.farm.today() - dt.timedelta(days=5)
    flock_deplete(caller=yard.owner, flock_id=yard.flock.pk, on=depleted_on)

    assert record(yard, date=depleted_on).created
    with pytest.raises(CluckError) as failure:
        record(yard, date=depleted_on + dt.timedelta(days=1))

    assert (failure.value.code, failure.value.http_status) == ("DailyEntry.FlockNotActive", 422)
    assert failure.value.data["flockStatus"] == "Depleted"
    assert failure.value.data["date"] == (depleted_on + dt.timedelta(days=1)).isoformat()
    assert "Depleted" in failure.value.message or "depleted" in failure.value.message


def test_an_archived_flock_takes_no_production_at_all(yard: Farmyard) -> None:
    placed = yard.flock.placement_date
    flock_archive(caller=yard.owner, flock_id=yard.flock.pk, on=yard.farm.today())

    with pytest.raises(CluckError) as failure:
        record(yard, date=placed + dt.timedelta(days=1))

    assert failure.value.code == "DailyEntry.FlockNotActive"
    assert failure.value.data["flockStatus"] == "Archived"
    assert entries_of(yard.flock) == []


def _inactive_large(yard: Farmyard) -> int:
    EggGrade.all_tenants.filter(pk=yard.large.pk).update(is_active=False)
    return yard.large.pk


UNUSABLE_GRADES = {
    "inactive": _inactive_large,
    "not saleable": lambda y: grade_named(y.farm, "Soft Shell").pk,
    "counter-fed Cracked": lambda y: grade_named(y.farm, "Cracked").pk,
    "counter-fed Dirty": lambda y: grade_named(y.farm, "Dirty").pk,
    "another farm's": lambda y: grade_named(provisioned_farm(), "Large").pk,
    "missing": lambda y: y.large.pk + 100_000,
}


@mutation(
    "cluck/services/daily_entries.py",
    find="bad = [gid for gid in grade_ids if gid not in found or not is_recordable(found[gid])]",
    replace="bad = [gid for gid in grade_ids if gid not in found]",
)
@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "found = {g.pk: g for g in "
        "EggGrade.objects.for_tenant(caller.tenant).filter(pk__in=grade_ids)}"
    ),
    replace="found = {g.pk: g for g in EggGrade.all_tenants.filter(pk__in=grade_ids)}",
)
@pytest.mark.parametrize("kind", list(UNUSABLE_GRADES))
def test_grade_lines_must_name_active_saleable_manual_grades_of_this_farm(
    yard: Farmyard, kind: str
) -> None:
    """Mutation: drop the ``is_recordable`` test in ``_check_grades`` (keep existence) → red for
    inactive / not saleable / counter-fed; drop the tenant predicate → red for another farm's."""
    grade_id = UNUSABLE_GRADES[kind](yard)

    with pytest.raises(CluckError) as failure:
        record(yard, grades=[GradeLineInput(egg_grade_id=grade_id, quantity=10)])

    assert (failure.value.code, failure.value.http_status) == ("DailyEntry.UnknownGrade", 422)
    assert failure.value.data["eggGradeIds"] == [grade_id]
    assert entries_of(yard.flock) == []  # a bad grade line leaves no entry row


def test_the_handler_checks_run_in_the_briefs_order(yard: Farmyard) -> None:
    """Scope before existence before lifecycle before grades: a restricted Worker learns
    nothing about a flock beyond "not assigned"."""
    other = FlockFactory.create(farm=yard.farm)
    worker = person_caller(farm=yard.farm, roles=[], assigned_flocks=[other])
    flock_archive(caller=yard.owner, flock_id=yard.flock.pk, on=yard.farm.today())
    bad_grade = [GradeLineInput(egg_grade_id=grade_named(yard.farm, "Cracked").pk, quantity=1)]

    with pytest.raises(CluckError) as as_worker:
        record(yard, caller=worker, grades=bad_grade)
    with pytest.raises(CluckError) as as_owner:
        record(yard, grades=bad_grade)

    assert as_worker.value.code == "FlockScope.NotAssigned"
    assert as_owner.value.code == "DailyEntry.FlockNotActive"


# --- upsert ------------------------------------------------------------------------------------


def test_recording_the_same_day_again_updates_the_draft_and_audits_an_update(
    yard: Farmyard,
) -> None:
    first = record(yard)
    second = record(yard, total_eggs=110, grades=None)

    assert first.created and not second.created
    assert second.entry.pk == first.entry.pk
    entry = DailyEntry.all_tenants.get(pk=first.entry.pk)
    assert (entry.total_eggs, entry.version, entry.status) == (110, 2, "Draft")
    assert actions(entry.pk) == ["DailyEntry.Create", "DailyEntry.Update"]


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "    if not created:\n"
        "        # After every failure check: a rejected re-record leaves no trace."
    ),
    replace=(
        "    if True:\n        # After every failure check: a rejected re-record leaves no trace."
    ),
)
def test_a_new_entry_is_audited_as_create_only(yard: Farmyard) -> None:
    """Mutation: audit ``DailyEntry.Update`` unconditionally → red."""
    result = record(yard)

    assert actions(result.entry.pk) == ["DailyEntry.Create"]
    event = AuditEvent.all_tenants.get(entity_id=str(result.entry.pk))
    assert (event.channel, event.actor_user_id) == ("http", yard.owner.actor.user_id)


def _lines(entry_id: int) -> dict[str, int]:
    entry = DailyEntry.all_tenants.get(pk=entry_id)
    return {line.grade.name: line.quantity for line in entry.lines.select_related("grade")}


def test_grade_list_semantics_none_keeps_empty_clears_a_list_replaces(yard: Farmyard) -> None:
    entry_id = record(yard).entry.pk
    assert _lines(entry_id) == {"Large": 60, "Medium": 34}

    record(yard, grades=None)
    assert _lines(entry_id) == {"Large": 60, "Medium": 34}

    record(yard, grades=[GradeLineInput(egg_grade_id=yard.large.pk, quantity=50)])
    assert _lines(entry_id) == {"Large": 50}

    record(yard, grades=[])
    assert _lines(entry_id) == {}


@mutation(
    "cluck/services/daily_entries.py",
    find="    if graded > entry.sellable_eggs:\n        raise DailyEntryGradesExceedTotalError",
    replace="    if False:\n        raise DailyEntryGradesExceedTotalError",
)
def test_keeping_lines_that_no_longer_fit_the_new_counts_is_grades_exceed_total(
    yard: Farmyard,
) -> None:
    """Mutation: skip the aggregate's graded ≤ sellable check in ``daily_entry_record`` → red
    (the draft would hold 94 graded eggs of 44 sellable)."""
    entry_id = record(yard).entry.pk

    with pytest.raises(CluckError) as failure:
        record(yard, total_eggs=50, grades=None)

    assert (failure.value.code, failure.value.http_status) == (
        "DailyEntry.GradesExceedTotal",
        422,
    )
    entry = DailyEntry.all_tenants.get(pk=entry_id)
    assert (entry.total_eggs, entry.version) == (100, 1)
    assert actions(entry_id) == ["DailyEntry.Create"]  # a rejected re-record leaves no trace


def test_a_submitted_entry_is_immutable(yard: Farmyard) -> None:
    entry_id = record(yard).entry.pk
    daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    with pytest.raises(CluckError) as failure:
        record(yard, total_eggs=100)

    assert (failure.value.code, failure.value.http_status) == ("DailyEntry.Immutable", 409)
    assert "DailyEntry.Update" not in actions(entry_id)


# --- submit ------------------------------------------------------------------------------------


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "    if entry.cracked_eggs and cracked_grade is not None:\n"
        "        produced.append((cracked_grade.pk, entry.cracked_eggs))\n"
        "    if entry.dirty_eggs and dirty_grade is not None:\n"
        "        produced.append((dirty_grade.pk, entry.dirty_eggs))\n"
    ),
    replace="",
)
def test_submit_puts_each_line_and_each_counter_in_stock_and_records_mortality(
    yard: Farmyard,
) -> None:
    """Mutation: skip the cracked/dirty lots (append only grade lines) → red."""
    entry_id = record(yard).entry.pk

    entry = daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    assert (entry.status, entry.version) == ("Submitted", 2)
    assert entry.cracked_grade_id == grade_named(yard.farm, "Cracked").pk
    assert entry.dirty_grade_id == grade_named(yard.farm, "Dirty").pk
    lots = {
        lot.grade.name: (lot.quantity_produced, lot.quantity_available, lot.production_date)
        for lot in EggLot.all_tenants.filter(daily_entry_id=entry_id).select_related("grade")
    }
    day = yard.farm.today() - dt.timedelta(days=1)
    assert lots == {
        "Large": (60, 60, day),
        "Medium": (34, 34, day),
        "Cracked": (3, 3, day),
        "Dirty": (2, 2, day),
    }
    movements = InventoryMovement.all_tenants.filter(lot__daily_entry_id=entry_id)
    assert sorted(movements.values_list("kind", "quantity")) == sorted(
        ("Production", q) for q in (60, 34, 3, 2)
    )
    birds = BirdMovement.all_tenants.get(daily_entry_id=entry_id)
    assert (birds.kind, birds.quantity, birds.flock_id) == ("Mortality", 2, yard.flock.pk)
    assert actions(entry_id) == ["DailyEntry.Create", "DailyEntry.Submit"]


def test_counters_without_an_active_saleable_grade_are_a_loss(yard: Farmyard) -> None:
    EggGrade.all_tenants.filter(farm=yard.farm, name="Cracked").update(is_active=False)
    EggGrade.all_tenants.filter(farm=yard.farm, name="Dirty").update(is_saleable=False)
    entry_id = record(yard, mortality_count=0).entry.pk

    entry = daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    assert (entry.cracked_grade_id, entry.dirty_grade_id) == (None, None)
    names = set(
        EggLot.all_tenants.filter(daily_entry_id=entry_id).values_list("grade__name", flat=True)
    )
    assert names == {"Large", "Medium"}
    assert not BirdMovement.all_tenants.filter(daily_entry_id=entry_id).exists()


@mutation(
    "cluck/services/daily_entries.py",
    find="    if graded != entry.sellable_eggs:",
    replace="    if graded > entry.sellable_eggs:",
)
def test_submit_needs_grades_to_reconcile_exactly(yard: Farmyard) -> None:
    """Mutation: compare ``graded > sellable`` instead of ``!=`` in submit → red."""
    entry_id = record(
        yard, grades=[GradeLineInput(egg_grade_id=yard.large.pk, quantity=90)]
    ).entry.pk

    with pytest.raises(CluckError) as failure:
        daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    assert (failure.value.code, failure.value.http_status) == (
        "DailyEntry.GradesNotReconciled",
        422,
    )
    assert failure.value.data == {"graded": 90, "sellable": 94}
    assert not EggLot.all_tenants.filter(daily_entry_id=entry_id).exists()
    assert DailyEntry.all_tenants.get(pk=entry_id).status == "Draft"


def test_a_day_with_nothing_sellable_submits_without_grade_lines(yard: Farmyard) -> None:
    entry_id = record(
        yard, total_eggs=5, cracked_eggs=5, dirty_eggs=0, discarded_eggs=0, grades=[]
    ).entry.pk

    daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    lots = EggLot.all_tenants.filter(daily_entry_id=entry_id)
    assert list(lots.values_list("grade__name", "quantity_produced")) == [("Cracked", 5)]


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "    if entry.status != DailyEntry.Status.DRAFT:\n"
        "        raise DailyEntryNotDraftError(entryStatus=entry.status)\n"
    ),
    replace="",
)
def test_submitting_twice_is_not_draft_and_adds_no_stock(yard: Farmyard) -> None:
    """Mutation: drop the Draft-only check in ``daily_entry_submit`` → red (the second submit
    loses only on the version predicate, but with that too removed it doubles the lots)."""
    entry_id = record(yard).entry.pk
    daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    with pytest.raises(CluckError) as failure:
        daily_entry_submit(caller=yard.owner, entry_id=entry_id)

    assert (failure.value.code, failure.value.http_status) == ("DailyEntry.NotDraft", 409)
    assert actions(entry_id).count("DailyEntry.Submit") == 1


def test_submit_checks_the_flock_scope_and_the_tenant(yard: Farmyard) -> None:
    entry_id = record(yard).entry.pk
    other = FlockFactory.create(farm=yard.farm)
    worker = person_caller(farm=yard.farm, roles=[], assigned_flocks=[other])
    stranger = person_caller(farm=provisioned_farm(), roles=["Admin"])

    with pytest.raises(CluckError) as not_assigned:
        daily_entry_submit(caller=worker, entry_id=entry_id)
    with pytest.raises(CluckError) as foreign:
        daily_entry_submit(caller=stranger, entry_id=entry_id)
    with pytest.raises(CluckError) as missing:
        daily_entry_submit(caller=stranger, entry_id=entry_id + 10_000)

    assert not_assigned.value.code == "FlockScope.NotAssigned"
    assert (foreign.value.code, foreign.value.message) == (
        missing.value.code,
        missing.value.message,
    )
    assert foreign.value.code == "DailyEntry.NotFound"
    assert DailyEntry.all_tenants.get(pk=entry_id).status == "Draft"


@mutation(
    "cluck/services/flocks.py",
    find=(
        "    if not caller.actor.is_resolved or not caller.scope.is_resolved:\n"
        "        raise ScopeUnresolvedError()\n"
    ),
    replace="",
)
def test_an_unresolved_caller_is_refused_by_the_write_guard(yard: Farmyard) -> None:
    """The unresolved RowScope *defaults* to unrestricted; the guard must not trust it.

    Mutation: make ``flock_scope_check`` test only ``caller.scope.allows`` → red.
    """
    tenant = TenantContext()
    tenant.resolve(yard.farm)
    half_built = Caller(tenant=tenant, actor=ActorContext(), scope=RowScope(), channel="mcp")

    with pytest.raises(CluckError) as failure:
        record(yard, caller=half_built)

    assert failure.value.code == "Auth.Unauthorized"
    assert entries_of(yard.flock) == []
