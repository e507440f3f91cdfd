"""The production selectors the MCP tools build on: name resolution (exactly one *accessible*
match), the scope note, birds alive in SQL, and the stock read's rules."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cluck.caller import Caller
from cluck.errors import CluckError
from cluck.models import BirdMovement, EggGrade, Farm, Flock
from cluck.selectors.daily_entries import daily_entry_list
from cluck.selectors.flocks import flock_get, flock_list, flock_resolve, flock_scope_note
from cluck.selectors.grades import egg_grade_list, egg_grade_resolve
from cluck.selectors.stock import stock_summary
from cluck.services.flocks import flock_archive, flock_deplete
from tests.factories import (
    FlockFactory,
    grade_named,
    person_caller,
    provisioned_farm,
    sellable_lot,
)
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


@pytest.fixture
def farm() -> Farm:
    return provisioned_farm()


def _flock(farm: Farm, name: str, **fields: object) -> Flock:
    flock: Flock = FlockFactory.create(farm=farm, name=name, **fields)
    return flock


def test_a_unique_name_resolves_case_and_space_insensitively(farm: Farm) -> None:
    white = _flock(farm, "House 1 White")
    owner = person_caller(farm=farm, roles=["Admin"])

    assert flock_resolve(caller=owner, name_or_id="  house 1 WHITE ").flock_id == white.pk
    assert flock_resolve(caller=owner, name_or_id=white.pk).flock_id == white.pk
    assert flock_resolve(caller=owner, name_or_id=str(white.pk)).flock_id == white.pk


@mutation(
    "cluck/selectors/flocks.py",
    find="_with_birds_alive(flocks.filter(name__iexact=text), caller)",
    replace=(
        "_with_birds_alive(flocks.filter(name__iexact=text, status=Flock.Status.ACTIVE), caller)"
    ),
)
def test_a_shared_name_is_ambiguous_across_statuses_with_candidates_by_id(farm: Farm) -> None:
    """Mutation: resolve among Active flocks only → red (the depleted namesake is hidden and
    the name "resolves" silently)."""
    old = _flock(farm, "House 2 Brown", placement_date=dt.date(2024, 6, 1))
    new = _flock(farm, "House 2 Brown", placement_date=dt.date(2026, 1, 5))
    owner = person_caller(farm=farm, roles=["Admin"])
    flock_deplete(caller=owner, flock_id=old.pk, on=dt.date(2025, 12, 1))

    with pytest.raises(CluckError) as failure:
        flock_resolve(caller=owner, name_or_id="House 2 Brown")

    assert (failure.value.code, failure.value.http_status) == ("Flock.Ambiguous", 422)
    assert failure.value.data["candidates"] == [
        {
            "flockId": old.pk,
            "name": "House 2 Brown",
            "status": "Depleted",
            "house": old.house.name,
            "placementDate": "2024-06-01",
        },
        {
            "flockId": new.pk,
            "name": "House 2 Brown",
            "status": "Active",
            "house": new.house.name,
            "placementDate": "2026-01-05",
        },
    ]
    assert "id" in failure.value.message
    assert flock_resolve(caller=owner, name_or_id=new.pk).status == "Active"


def test_an_unknown_name_is_not_found_listing_the_accessible_names(farm: Farm) -> None:
    _flock(farm, "House 1 White")
    secret = _flock(farm, "Quarantine")
    mine = _flock(farm, "House 2 Brown")
    worker = person_caller(farm=farm, roles=[], assigned_flocks=[mine])

    with pytest.raises(CluckError) as failure:
        flock_resolve(caller=worker, name_or_id="House 9")

    assert (failure.value.code, failure.value.http_status) == ("Flock.NotFound", 404)
    assert failure.value.data["validNames"] == ["House 2 Brown"]
    assert "House 2 Brown" in failure.value.message
    assert secret.name not in failure.value.message


@mutation(
    "cluck/selectors/flocks.py",
    find="    flocks = accessible_flocks(caller)\n    if text.isdigit()",
    replace="    flocks = Flock.objects.for_tenant(caller.tenant)\n    if text.isdigit()",
)
def test_resolution_counts_only_accessible_flocks(farm: Farm) -> None:
    """A Worker assigned to one of two namesakes gets that one, never an ambiguity that would
    reveal the other; by id, the unassigned one is simply not found.

    Mutation: resolve over ``Flock.objects.for_tenant`` without the scope filter → red.
    """
    theirs = _flock(farm, "House 2 Brown")
    other = _flock(farm, "House 2 Brown")
    worker = person_caller(farm=farm, roles=[], assigned_flocks=[theirs])

    assert flock_resolve(caller=worker, name_or_id="House 2 Brown").flock_id == theirs.pk
    with pytest.raises(CluckError) as failure:
        flock_resolve(caller=worker, name_or_id=other.pk)
    assert failure.value.code == "Flock.NotFound"


def test_another_farms_flock_never_resolves(farm: Farm) -> None:
    foreign = _flock(provisioned_farm(), "House 1 White")
    owner = person_caller(farm=farm, roles=["Admin"])

    for name_or_id in (foreign.pk, str(foreign.pk), "House 1 White"):
        with pytest.raises(CluckError) as failure:
            flock_resolve(caller=owner, name_or_id=name_or_id)
        assert failure.value.code == "Flock.NotFound"


def test_the_scope_note_appears_only_for_a_restricted_caller(farm: Farm) -> None:
    flocks = [_flock(farm, f"F{n}") for n in range(4)]
    restricted = person_caller(farm=farm, roles=[], assigned_flocks=[flocks[0]])

    assert flock_scope_note(caller=restricted) == "You are assigned to 1 of this farm's 4 flocks."
    assert flock_scope_note(caller=person_caller(farm=farm, roles=["Manager"])) is None
    assert flock_scope_note(caller=person_caller(farm=farm, roles=[])) is None  # no rows


@mutation(
    "cluck/selectors/flocks.py",
    find='rows = list(_with_birds_alive(qs, caller).order_by("name", "id")[: limit + 1])',
    replace=(
        'rows = list(qs.select_related("house").order_by("name", "id")[: limit + 1])\n'
        "    for row in rows:\n"
        "        moved = BirdMovement.objects.for_tenant(caller.tenant).filter(flock_id=row.pk)\n"
        '        total = moved.aggregate(total=Sum("quantity"))["total"] or 0\n'
        "        row.birds_alive = row.initial_count - total"
    ),
)
def test_birds_alive_is_initial_minus_movements_computed_in_one_query(farm: Farm) -> None:
    """Mutation: compute birds alive per row in Python (``flock.movements.aggregate``) → red
    (one extra query per flock)."""
    flocks = [_flock(farm, f"F{n}", initial_count=1000) for n in range(3)]
    for flock, lost in zip(flocks, (0, 7, 40), strict=True):
        if lost:
            for part in (lost - 2, 2):
                BirdMovement.all_tenants.create(
                    farm=farm,
                    flock=flock,
                    date=dt.date(2026, 2, 1),
                    kind="Mortality",
                    quantity=part,
                )
    owner = Caller.system(farm, label="test")

    with CaptureQueriesContext(connection) as queries:
        page = flock_list(caller=owner, limit=10)

    assert [f.birds_alive for f in page.items] == [1000, 993, 960]
    assert len(queries) == 1
    assert flock_get(caller=owner, flock_id=flocks[2].pk).birds_alive == 960


def test_accepts_production_today_follows_the_lifecycle(farm: Farm) -> None:
    active, depleted, archived = (_flock(farm, n) for n in ("A", "B", "C"))
    owner = Caller.system(farm, label="test")
    today = farm.today()
    flock_deplete(caller=owner, flock_id=depleted.pk, on=today - dt.timedelta(days=1))
    flock_archive(caller=owner, flock_id=archived.pk, on=today)

    accepts = {f.name: f.accepts_production_today for f in flock_list(caller=owner, limit=5).items}
    by_status = {f.status for f in flock_list(caller=owner, status="Depleted", limit=5).items}

    assert accepts == {"A": True, "B": False, "C": False}
    assert by_status == {"Depleted"}


def test_egg_grades_are_listed_in_display_order_with_prices_as_money(farm: Farm) -> None:
    page = egg_grade_list(caller=Caller.system(farm, label="test"), limit=500)

    assert [g.name for g in page.items] == [
        "Small",
        "Medium",
        "Large",
        "Jumbo",
        "Seconds",
        "Cracked",
        "Dirty",
        "Soft Shell",
        "Discarded",
        "Internal Use",
    ]
    large = page.items[2]
    assert large.unit_price is not None
    assert large.unit_price.as_json() == {"amount": "9.50", "currency": "PHP"}
    assert [g.name for g in page.items if g.is_recordable] == [
        "Small",
        "Medium",
        "Large",
        "Jumbo",
        "Seconds",
    ]
    assert {g.name: g.kind for g in page.items}["Cracked"] == "Cracked"
    assert not {g.name: g.is_saleable for g in page.items}["Soft Shell"]


def test_a_grade_resolves_by_name_or_id_and_a_miss_names_the_recordable_grades(
    farm: Farm,
) -> None:
    owner = Caller.system(farm, label="test")
    large = grade_named(farm, "Large")

    assert egg_grade_resolve(caller=owner, name_or_id="large").egg_grade_id == large.pk
    assert egg_grade_resolve(caller=owner, name_or_id=large.pk).name == "Large"
    with pytest.raises(CluckError) as failure:
        egg_grade_resolve(caller=owner, name_or_id="Peewee")
    assert failure.value.code == "EggGrade.NotFound"
    assert failure.value.data["validNames"] == ["Small", "Medium", "Large", "Jumbo", "Seconds"]
    with pytest.raises(CluckError) as foreign:
        egg_grade_resolve(caller=owner, name_or_id=grade_named(provisioned_farm(), "Large").pk)
    assert foreign.value.code == "EggGrade.NotFound"


@mutation("cluck/selectors/stock.py", find="        production_date__lte=day,\n", replace="")
@mutation(
    "cluck/selectors/stock.py",
    find='        flock_scope_filter(caller, field="flock_id"),\n',
    replace="",
)
def test_stock_excludes_restricted_and_later_lots_and_unreachable_flocks(farm: Farm) -> None:
    """Mutation: drop the ``production_date__lte`` filter in ``stock_summary`` → red; drop the
    scope filter → red for the Worker."""
    large = grade_named(farm, "Large")
    today = farm.today()
    mine, other = _flock(farm, "Mine"), _flock(farm, "Other")
    sellable_lot(
        grade=large, quantity=100, production_date=today - dt.timedelta(days=3), flock=mine
    )
    sellable_lot(
        grade=large,
        quantity=30,
        production_date=today - dt.timedelta(days=2),
        restricted_until=today + dt.timedelta(days=5),
        flock=mine,
    )
    sellable_lot(
        grade=large,
        quantity=7,
        production_date=today - dt.timedelta(days=4),
        restricted_until=today - dt.timedelta(days=1),  # restriction over: sellable again
        flock=mine,
    )
    sellable_lot(grade=large, quantity=50, production_date=today, flock=other)
    owner = Caller.system(farm, label="test")
    worker = person_caller(farm=farm, roles=[], assigned_flocks=[mine])

    def large_line(caller: Caller, as_of: dt.date | None = None) -> tuple[int, int]:
        summary = stock_summary(caller=caller, as_of=as_of)
        line = next(item for item in summary.lines if item.grade_name == "Large")
        return line.available, line.restricted

    assert large_line(owner) == (157, 30)
    # Three days ago the 7-egg lot was still under its restriction.
    assert large_line(owner, today - dt.timedelta(days=3)) == (100, 7)
    assert large_line(worker) == (107, 30)
    summary = stock_summary(caller=owner)
    assert summary.as_of == today and summary.complete


def test_stock_lists_active_grades_and_inactive_ones_still_holding_eggs(farm: Farm) -> None:
    jumbo = grade_named(farm, "Jumbo")
    sellable_lot(grade=jumbo, quantity=12, production_date=farm.today() - dt.timedelta(days=1))
    EggGrade.all_tenants.filter(farm=farm, name__in=["Jumbo", "Internal Use"]).update(
        is_active=False
    )

    names = [line.grade_name for line in stock_summary(caller=Caller.system(farm, label="t")).lines]

    assert "Jumbo" in names and "Internal Use" not in names


def test_daily_entry_pages_are_keyset_by_date_then_id(farm: Farm) -> None:
    from cluck.services.daily_entries import daily_entry_record

    flocks = [_flock(farm, "A"), _flock(farm, "B")]
    owner = Caller.system(farm, label="test")
    for days_ago in (1, 2, 3):
        for flock in flocks:
            daily_entry_record(
                caller=owner,
                flock_id=flock.pk,
                date=farm.today() - dt.timedelta(days=days_ago),
                total_eggs=0,
                cracked_eggs=0,
                dirty_eggs=0,
                mortality_count=0,
            )
    seen: list[tuple[dt.date, int]] = []
    position = None
    while True:
        page = daily_entry_list(caller=owner, limit=4, cursor_position=position)
        seen.extend((e.date, e.entry_id) for e in page.items)
        if page.complete:
            break
        position = page.next_position

    assert seen == sorted(seen, reverse=True)
    assert len(seen) == len(set(seen)) == 6
    only_a = daily_entry_list(caller=owner, flock_id=flocks[0].pk, limit=10)
    assert {e.flock_name for e in only_a.items} == {"A"}
