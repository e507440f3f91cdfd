"""Demo production data: the ``sunrise`` and ``hillside`` farms, their houses, flocks, members
and two weeks of submitted daily entries (so there is stock to sell).

Idempotent and resumable. Farms are keyed by code, houses by name, flocks by (house, name,
status) — names repeat on purpose ("House 2 Brown" is both the active flock and the depleted
one it replaced) — users by email, entries by their natural key. Only a day without a
submitted entry is (re)recorded and submitted, so a run interrupted half-way finishes the job
next time and a second run on the same day writes nothing.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from cluck.caller import Caller
from cluck.models import DailyEntry, EggGrade, Farm, Flock, House, WorkerAssignment
from cluck.services.daily_entries import GradeLineInput, daily_entry_record, daily_entry_submit
from cluck.services.farms import egg_grades_provision, farm_create, house_create
from cluck.services.flocks import flock_archive, flock_create, flock_deplete
from tenancy.models import AbstractMembership, Membership
from tenancy.services import membership_create

DEMO_PASSWORD = "cluck-demo-password"
SEED_LABEL = "cli:seed_demo"
ENTRY_DAYS = 14
# How the sellable eggs of a day split over the hand-graded grades (the rest are Seconds).
GRADE_SHARES = (("Small", 0.10), ("Medium", 0.30), ("Large", 0.38), ("Jumbo", 0.12))


@dataclass(frozen=True)
class FlockPlan:
    name: str
    house: str
    breed: str
    placed_days_ago: int
    initial_count: int
    lay_rate: float = 0.0  # > 0: two weeks of daily entries are seeded
    depleted_days_ago: int | None = None
    archived_days_ago: int | None = None

    @property
    def status(self) -> str:
        if self.archived_days_ago is not None:
            return Flock.Status.ARCHIVED
        if self.depleted_days_ago is not None:
            return Flock.Status.DEPLETED
        return Flock.Status.ACTIVE


@dataclass(frozen=True)
class UserPlan:
    email: str
    roles: tuple[str, ...]
    # Worker assignments by flock name (the farm's Active flock of that name).
    assigned_flocks: tuple[str, ...] = ()


@dataclass(frozen=True)
class FarmPlan:
    code: str
    name: str
    currency_code: str
    currency_minor_unit: int
    time_zone: str
    houses: tuple[str, ...]
    flocks: tuple[FlockPlan, ...]
    users: tuple[UserPlan, ...] = field(default=())


FARMS: tuple[FarmPlan, ...] = (
    FarmPlan(
        code="sunrise",
        name="Sunrise Layers",
        currency_code="PHP",
        currency_minor_unit=2,
        time_zone="Asia/Manila",
        houses=("House 1", "House 2", "House 3"),
        flocks=(
            FlockPlan("House 1 White", "House 1", "Hy-Line W-36", 210, 5000, lay_rate=0.91),
            FlockPlan("House 2 Brown", "House 2", "ISA Brown", 35, 4500, lay_rate=0.84),
            # The flock the current "House 2 Brown" replaced: same name, depleted six weeks ago.
            FlockPlan("House 2 Brown", "House 2", "ISA Brown", 560, 4400, depleted_days_ago=42),
            FlockPlan(
                "House 3 Lohmann Trial",
                "House 3",
                "Lohmann LSL",
                720,
                3000,
                depleted_days_ago=200,
                archived_days_ago=170,
            ),
        ),
        users=(
            UserPlan("owner@sunrise.example", ("Admin",)),
            UserPlan("manager@sunrise.example", ("Manager",)),
            UserPlan("sales@sunrise.example", ("Sales",)),
            UserPlan("worker@sunrise.example", (), assigned_flocks=("House 1 White",)),
            UserPlan("readonly@sunrise.example", ("ReadOnly",)),
        ),
    ),
    FarmPlan(
        code="hillside",
        name="Hillside Poultry",
        currency_code="JPY",
        currency_minor_unit=0,
        time_zone="Asia/Tokyo",
        houses=("Hill House",),
        flocks=(FlockPlan("Hill A", "Hill House", "Boris Brown", 150, 2000, lay_rate=0.88),),
        users=(UserPlan("owner@hillside.example", ("Admin",)),),
    ),
)


def seed_farm(plan: FarmPlan) -> Caller:
    """Seed one farm's production data; returns the system caller on it (for later seeders)."""
    farm = Farm.objects.filter(code=plan.code).first()
    if farm is None:
        farm = farm_create(
            code=plan.code,
            name=plan.name,
            currency_code=plan.currency_code,
            currency_minor_unit=plan.currency_minor_unit,
            time_zone=plan.time_zone,
            label=SEED_LABEL,
        )
    caller = Caller.system(farm, label=SEED_LABEL)
    egg_grades_provision(caller=caller)
    houses = _seed_houses(caller, plan)
    flocks = [_seed_flock(caller, flock_plan, houses) for flock_plan in plan.flocks]
    _seed_users(caller, plan)
    for flock_plan, flock in zip(plan.flocks, flocks, strict=True):
        if flock_plan.lay_rate > 0:
            _seed_entries(caller, flock_plan, flock)
    return caller


def _seed_houses(caller: Caller, plan: FarmPlan) -> dict[str, House]:
    houses = {h.name: h for h in House.objects.for_tenant(caller.tenant)}
    for name in plan.houses:
        if name not in houses:
            houses[name] = house_create(caller=caller, name=name)
    return houses


@transaction.atomic
def _seed_flock(caller: Caller, plan: FlockPlan, houses: dict[str, House]) -> Flock:
    house = houses[plan.house]
    existing = (
        Flock.objects.for_tenant(caller.tenant)
        .filter(house=house, name=plan.name, status=plan.status)
        .order_by("id")
        .first()
    )
    if existing is not None:
        return existing
    today = caller.farm.today()
    flock = flock_create(
        caller=caller,
        house_id=house.pk,
        name=plan.name,
        breed=plan.breed,
        placement_date=today - dt.timedelta(days=plan.placed_days_ago),
        initial_count=plan.initial_count,
    )
    if plan.depleted_days_ago is not None:
        flock = flock_deplete(
            caller=caller,
            flock_id=flock.pk,
            on=today - dt.timedelta(days=plan.depleted_days_ago),
        )
    if plan.archived_days_ago is not None:
        flock = flock_archive(
            caller=caller,
            flock_id=flock.pk,
            on=today - dt.timedelta(days=plan.archived_days_ago),
        )
    return flock


@transaction.atomic
def _seed_users(caller: Caller, plan: FarmPlan) -> None:
    user_model = get_user_model()
    active_flocks = {
        f.name: f
        for f in Flock.objects.for_tenant(caller.tenant)
        .filter(status=Flock.Status.ACTIVE)
        .order_by("-id")
    }
    for user_plan in plan.users:
        user = user_model.objects.filter(username=user_plan.email).first()
        if user is None:
            user = user_model(username=user_plan.email, email=user_plan.email)
            user.set_password(DEMO_PASSWORD)
            user.save()
        membership: AbstractMembership | None = Membership.objects.filter(
            user=user, tenant=caller.farm
        ).first()
        if membership is None:
            membership = membership_create(user=user, tenant=caller.farm, roles=user_plan.roles)
        assignments = WorkerAssignment.objects.for_tenant(caller.tenant).filter(
            membership=membership
        )
        for flock_name in user_plan.assigned_flocks:
            flock = active_flocks[flock_name]
            if not assignments.filter(flock=flock).exists():
                WorkerAssignment.objects.create(
                    farm=caller.farm, membership=membership, flock=flock
                )


def _seed_entries(caller: Caller, plan: FlockPlan, flock: Flock) -> None:
    today = caller.farm.today()
    days = [today - dt.timedelta(days=n) for n in range(ENTRY_DAYS, 0, -1)]
    days = [day for day in days if day >= flock.placement_date]
    submitted = set(
        DailyEntry.objects.for_tenant(caller.tenant)
        .filter(flock=flock, date__in=days, status=DailyEntry.Status.SUBMITTED)
        .values_list("date", flat=True)
    )
    grades = {
        g.name: g.pk
        for g in EggGrade.objects.for_tenant(caller.tenant).filter(
            is_active=True, is_saleable=True, kind=EggGrade.Kind.MANUAL
        )
    }
    for day in days:
        if day not in submitted:
            _seed_day(caller, plan, flock, day, grades)


@transaction.atomic
def _seed_day(
    caller: Caller, plan: FlockPlan, flock: Flock, day: dt.date, grades: dict[str, int]
) -> None:
    # Deterministic per flock and day, so a resumed run records what the first one would have.
    rng = random.Random(f"{caller.farm.code}:{flock.name}:{flock.placement_date}:{day}")
    total = int(plan.initial_count * plan.lay_rate * rng.uniform(0.96, 1.03))
    cracked = int(total * rng.uniform(0.005, 0.015))
    dirty = int(total * rng.uniform(0.008, 0.02))
    discarded = int(total * rng.uniform(0.0, 0.004))
    sellable = total - cracked - dirty - discarded
    lines: list[GradeLineInput] = []
    graded = 0
    for name, share in GRADE_SHARES:
        quantity = int(sellable * share * rng.uniform(0.9, 1.1))
        if name in grades and quantity > 0:
            lines.append(GradeLineInput(egg_grade_id=grades[name], quantity=quantity))
            graded += quantity
    rest = sellable - graded
    if rest > 0:
        # Whatever is left is Seconds (or, if the farm lacks it, added to the first line).
        if "Seconds" in grades:
            lines.append(GradeLineInput(egg_grade_id=grades["Seconds"], quantity=rest))
        elif lines:
            lines[0] = GradeLineInput(lines[0].egg_grade_id, lines[0].quantity + rest)
    result = daily_entry_record(
        caller=caller,
        flock_id=flock.pk,
        date=day,
        total_eggs=total,
        cracked_eggs=cracked,
        dirty_eggs=dirty,
        discarded_eggs=discarded,
        mortality_count=rng.choice((0, 0, 1, 1, 2, 3)),
        grades=lines,
    )
    daily_entry_submit(caller=caller, entry_id=result.entry.pk)
