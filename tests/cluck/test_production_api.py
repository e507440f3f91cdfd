"""The production routes over HTTP: who may call each one (role matrix), that another farm's
ids read exactly like missing ones (cross-farm), flock scope for a restricted Worker, and that
bad input is a precise 4xx that writes nothing.

The role matrix's expected outcome comes from the brief's policy table (§5.6), written out
here — not from the views' permission classes, which are what is under test.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from cluck.caller import Caller
from cluck.models import DailyEntry, EggGrade, EggLot, Farm, Flock
from cluck.services.daily_entries import GradeLineInput, daily_entry_record, daily_entry_submit
from tests.factories import (
    FlockFactory,
    MembershipFactory,
    grade_named,
    provisioned_farm,
    token_client,
    token_client_for,
    write_headers,
)
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db

STORED_ROLES = {
    "Owner": ["Admin"],
    "Manager": ["Manager"],
    "Sales": ["Sales"],
    "Worker": [],
    "ReadOnly": ["ReadOnly"],
}
POLICY_ADMITS = {
    "Authenticated": {"Owner", "Manager", "Sales", "Worker", "ReadOnly"},
    "ProductionWrite": {"Owner", "Manager", "Worker"},
}


@dataclass
class World:
    farm: Farm
    flock: Flock
    large: EggGrade
    draft_id: int
    submitted_id: int


def build_world(farm: Farm | None = None) -> World:
    farm = farm or provisioned_farm()
    flock = FlockFactory.create(farm=farm, name="House 1 White")
    large = grade_named(farm, "Large")
    system = Caller.system(farm, label="test:world")

    def day(days_ago: int) -> int:
        return daily_entry_record(
            caller=system,
            flock_id=flock.pk,
            date=farm.today() - dt.timedelta(days=days_ago),
            total_eggs=50,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=0,
            grades=[GradeLineInput(egg_grade_id=large.pk, quantity=50)],
        ).entry.pk

    submitted_id = day(2)
    daily_entry_submit(caller=system, entry_id=submitted_id)
    return World(farm, flock, large, draft_id=day(1), submitted_id=submitted_id)


def record_body(world: World, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "flockId": world.flock.pk,
        "date": world.farm.today().isoformat(),
        "totalEggs": 120,
        "crackedEggs": 2,
        "dirtyEggs": 3,
        "mortalityCount": 1,
        "grades": [{"eggGradeId": world.large.pk, "quantity": 115}],
    }
    body.update(overrides)
    return body


def post(client: APIClient, url: str, body: Any = None) -> Any:
    headers: dict[str, Any] = write_headers()
    return client.post(url, body if body is not None else {}, format="json", **headers)


Call = Callable[[APIClient, World], Any]

ROUTES: dict[str, tuple[str, int, Call]] = {
    "flock-list": ("Authenticated", 200, lambda c, w: c.get(reverse("flock-list"))),
    "flock-detail": (
        "Authenticated",
        200,
        lambda c, w: c.get(reverse("flock-detail", args=[w.flock.pk])),
    ),
    "egg-grade-list": ("Authenticated", 200, lambda c, w: c.get(reverse("egg-grade-list"))),
    "stock-summary": ("Authenticated", 200, lambda c, w: c.get(reverse("stock-summary"))),
    "daily-entry-list": ("Authenticated", 200, lambda c, w: c.get(reverse("daily-entry-list"))),
    "daily-entry-detail": (
        "Authenticated",
        200,
        lambda c, w: c.get(reverse("daily-entry-detail", args=[w.submitted_id])),
    ),
    "daily-entry-record": (
        "ProductionWrite",
        201,
        lambda c, w: post(c, reverse("daily-entry-record"), record_body(w)),
    ),
    "daily-entry-submit": (
        "ProductionWrite",
        200,
        lambda c, w: post(c, reverse("daily-entry-submit", args=[w.draft_id])),
    ),
}


@mutation(
    "cluck/api/production.py",
    find=(
        "class DailyEntryRecordApi(APIView):\n"
        "    permission_classes: list[type[BasePermission]] = [ProductionWrite]"
    ),
    replace=(
        "class DailyEntryRecordApi(APIView):\n"
        "    permission_classes: list[type[BasePermission]] = [IsTenantMember]"
    ),
)
@pytest.mark.parametrize("role", list(STORED_ROLES))
@pytest.mark.parametrize("route", list(ROUTES))
def test_each_role_is_admitted_exactly_as_the_route_policy_says(route: str, role: str) -> None:
    """Mutation: give ``DailyEntryRecordApi`` ``IsTenantMember`` instead of ``ProductionWrite``
    → red for Sales and ReadOnly."""
    policy, success, call = ROUTES[route]
    world = build_world()
    client = token_client(farm=world.farm, roles=STORED_ROLES[role])

    response = call(client, world)

    if role in POLICY_ADMITS[policy]:
        assert response.status_code == success, response.content
    else:
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "Auth.Forbidden"
        assert not DailyEntry.all_tenants.filter(farm=world.farm, date=world.farm.today()).exists()


def test_every_production_route_is_in_the_matrix() -> None:
    from cluck.api import urls

    names = {getattr(p, "name", None) for p in urls.urlpatterns} - {None}
    assert names == set(ROUTES)


def test_an_anonymous_caller_gets_401_on_every_route() -> None:
    world = build_world()
    for name, (_, _, call) in ROUTES.items():
        response = call(APIClient(), world)
        assert response.status_code == 401, name


# --- cross-farm ---------------------------------------------------------------------------------


@pytest.fixture
def two_farms() -> tuple[World, World, APIClient]:
    sunrise = build_world(provisioned_farm(code="sunrise"))
    hillside = build_world(
        provisioned_farm(
            code="hillside", currency_code="JPY", currency_minor_unit=0, time_zone="Asia/Tokyo"
        )
    )
    return sunrise, hillside, token_client(farm=hillside.farm, roles=["Admin"])


MISSING = 10**12


def _same_as_missing(client: APIClient, request: Callable[[APIClient, int], Any], foreign: int):
    foreign_response = request(client, foreign)
    missing_response = request(client, MISSING)
    assert foreign_response.status_code == missing_response.status_code == 404
    assert foreign_response.json() == missing_response.json()
    return foreign_response.json()


ID_ROUTES: dict[str, tuple[Callable[[APIClient, int], Any], Callable[[World], int], str]] = {
    "flock-detail": (
        lambda c, i: c.get(reverse("flock-detail", args=[i])),
        lambda w: w.flock.pk,
        "Flock.NotFound",
    ),
    "daily-entry-detail": (
        lambda c, i: c.get(reverse("daily-entry-detail", args=[i])),
        lambda w: w.submitted_id,
        "DailyEntry.NotFound",
    ),
    "daily-entry-submit": (
        lambda c, i: post(c, reverse("daily-entry-submit", args=[i])),
        lambda w: w.draft_id,
        "DailyEntry.NotFound",
    ),
    "daily-entry-record": (
        lambda c, i: post(
            c,
            reverse("daily-entry-record"),
            {
                "flockId": i,
                "date": (dt.date.today() - dt.timedelta(days=2)).isoformat(),
                "totalEggs": 0,
                "crackedEggs": 0,
                "dirtyEggs": 0,
                "mortalityCount": 0,
            },
        ),
        lambda w: w.flock.pk,
        "Flock.NotFound",
    ),
}


@mutation(
    "cluck/selectors/flocks.py",
    find="flock = _with_birds_alive(accessible_flocks(caller).filter(pk=flock_id), caller).first()",
    replace="flock = _with_birds_alive(Flock.all_tenants.filter(pk=flock_id), caller).first()",
)
@pytest.mark.parametrize("route", list(ID_ROUTES))
def test_another_farms_id_reads_exactly_like_a_missing_one(
    two_farms: tuple[World, World, APIClient], route: str
) -> None:
    """Mutation: read with ``Model.all_tenants`` instead of ``objects.for_tenant`` in the
    selector/service behind the route → red (the foreign row is found)."""
    sunrise, _, hillside_client = two_farms
    request, sunrise_id, code = ID_ROUTES[route]

    body = _same_as_missing(hillside_client, request, sunrise_id(sunrise))

    assert body["code"] == code
    assert DailyEntry.all_tenants.get(pk=sunrise.draft_id).status == "Draft"


@mutation(
    "cluck/selectors/flocks.py",
    find="    check_limit(limit)\n    qs = accessible_flocks(caller)\n",
    replace=(
        "    check_limit(limit)\n"
        '    qs = Flock.objects.unscoped("x").filter(flock_scope_filter(caller))\n'
    ),
)
@mutation(
    "cluck/selectors/daily_entries.py",
    find="return DailyEntry.objects.for_tenant(caller.tenant).filter(\n        flock_scope_filter(",
    replace='return DailyEntry.objects.unscoped("x").filter(\n        flock_scope_filter(',
)
@mutation(
    "cluck/selectors/grades.py",
    find="    qs = EggGrade.objects.for_tenant(caller.tenant)\n    if cursor_position is not None:",
    replace='    qs = EggGrade.objects.unscoped("x")\n    if cursor_position is not None:',
)
@mutation(
    "cluck/selectors/stock.py",
    find="lots = EggLot.objects.for_tenant(caller.tenant).filter(",
    replace='lots = EggLot.objects.unscoped("x").filter(',
)
def test_lists_of_another_farm_show_nothing_of_it(
    two_farms: tuple[World, World, APIClient],
) -> None:
    """Mutation: drop ``for_tenant`` in ``flock_list`` / ``daily_entry_list`` /
    ``egg_grade_list`` / ``stock_summary`` → red."""
    sunrise, hillside, client = two_farms

    flocks = client.get(reverse("flock-list")).json()["items"]
    assert [f["id"] for f in flocks] == [hillside.flock.pk]

    entries = client.get(reverse("daily-entry-list")).json()["items"]
    assert {e["id"] for e in entries} == {hillside.draft_id, hillside.submitted_id}
    filtered = client.get(reverse("daily-entry-list"), {"flock": sunrise.flock.pk}).json()
    assert (filtered["items"], filtered["complete"]) == ([], True)

    grades = client.get(reverse("egg-grade-list")).json()["items"]
    assert {g["id"] for g in grades} == set(
        EggGrade.all_tenants.filter(farm=hillside.farm).values_list("id", flat=True)
    )
    assert {g["unitPrice"]["currency"] for g in grades} == {"JPY"}

    # A sunrise lot that names hillside's grade (nothing ties a lot's grade to its farm): the
    # lots' own tenant predicate keeps it out, not the grade.
    EggLot.all_tenants.create(
        farm=sunrise.farm,
        flock=sunrise.flock,
        daily_entry_id=sunrise.submitted_id,
        grade=hillside.large,
        production_date=dt.date(2020, 1, 1),
        quantity_produced=7,
        quantity_available=7,
    )
    stock = client.get(reverse("stock-summary")).json()["items"]
    large = next(line for line in stock if line["gradeName"] == "Large")
    assert large["eggGradeId"] == hillside.large.pk
    assert large["available"] == 50  # hillside's own lot only, not sunrise's


# --- flock scope over HTTP ----------------------------------------------------------------------


@pytest.fixture
def restricted() -> tuple[World, Flock, APIClient]:
    """A Worker assigned to another flock only; ``world.flock`` is not theirs."""
    from cluck.models import WorkerAssignment

    world = build_world()
    theirs = FlockFactory.create(farm=world.farm, name="House 2 Brown")
    membership = MembershipFactory.create(tenant=world.farm, roles=[], user__password=None)
    WorkerAssignment.all_tenants.create(farm=world.farm, membership=membership, flock=theirs)
    return world, theirs, token_client_for(membership)


@mutation(
    "cluck/selectors/flocks.py",
    find="return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))",
    replace="return Flock.objects.for_tenant(caller.tenant)",
)
def test_an_unassigned_flock_is_absent_from_a_restricted_workers_reads(
    restricted: tuple[World, Flock, APIClient],
) -> None:
    """Mutation: drop ``flock_scope_filter`` from ``accessible_flocks`` → red."""
    world, theirs, client = restricted

    assert [f["id"] for f in client.get(reverse("flock-list")).json()["items"]] == [theirs.pk]
    _same_as_missing(client, ID_ROUTES["flock-detail"][0], world.flock.pk)
    _same_as_missing(client, ID_ROUTES["daily-entry-detail"][0], world.submitted_id)
    assert client.get(reverse("daily-entry-list")).json()["items"] == []
    stock = client.get(reverse("stock-summary")).json()["items"]
    assert all(line["available"] == 0 for line in stock)


def test_a_restricted_worker_writing_to_an_unassigned_flock_is_not_assigned(
    restricted: tuple[World, Flock, APIClient],
) -> None:
    world, theirs, client = restricted

    refused = post(client, reverse("daily-entry-record"), record_body(world))
    not_submitted = post(client, reverse("daily-entry-submit", args=[world.draft_id]))
    allowed = post(
        client, reverse("daily-entry-record"), record_body(world, flockId=theirs.pk, grades=[])
    )

    assert (refused.status_code, refused.json()["code"]) == (422, "FlockScope.NotAssigned")
    assert (not_submitted.status_code, not_submitted.json()["code"]) == (
        422,
        "FlockScope.NotAssigned",
    )
    assert allowed.status_code == 201, allowed.content  # draft grading is lenient
    assert not DailyEntry.all_tenants.filter(flock=world.flock, date=world.farm.today()).exists()


# --- the record and submit routes ---------------------------------------------------------------


def test_record_creates_with_location_then_updates_with_200() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])

    created = post(client, reverse("daily-entry-record"), record_body(world))
    updated = post(client, reverse("daily-entry-record"), record_body(world, mortalityCount=4))

    assert created.status_code == 201
    entry_id = created.json()["id"]
    assert created.json() == {"id": entry_id, "created": True}
    assert created["Location"] == reverse("daily-entry-detail", args=[entry_id])
    assert (updated.status_code, updated.json()) == (200, {"id": entry_id, "created": False})
    detail = client.get(created["Location"]).json()
    assert (detail["mortalityCount"], detail["status"], detail["version"]) == (4, "Draft", 2)
    assert detail["grades"] == [
        {"eggGradeId": world.large.pk, "gradeName": "Large", "quantity": 115}
    ]


@mutation(
    "cluck/services/daily_entries.py",
    find="        entry.flock = flock\n",
    replace="",
)
def test_re_recording_a_draft_answers_its_flock_without_another_query() -> None:
    """The MCP tool's reply names the flock (``flockName``); the REST answer does not. Issue
    37: that name cost the tool one more query than the REST endpoint for the same write.
    Mutation: leave the re-recorded draft's flock to be fetched on first use → a query → red."""
    world = build_world()
    result = daily_entry_record(
        caller=Caller.system(world.farm, label="test:re-record"),
        flock_id=world.flock.pk,
        date=world.farm.today() - dt.timedelta(days=1),
        total_eggs=60,
        cracked_eggs=0,
        dirty_eggs=0,
        mortality_count=0,
    )
    assert (result.created, result.entry.pk) == (False, world.draft_id)
    with CaptureQueriesContext(connection) as queries:
        assert result.entry.flock.name == "House 1 White"
    assert queries.captured_queries == []


def test_submit_returns_the_submitted_entry_and_stock_shows_it() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Manager"])
    before = client.get(reverse("stock-summary")).json()

    response = post(client, reverse("daily-entry-submit", args=[world.draft_id]))
    again = post(client, reverse("daily-entry-submit", args=[world.draft_id]))

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["version"]) == ("Submitted", 2)
    assert (again.status_code, again.json()["code"]) == (409, "DailyEntry.NotDraft")
    after = client.get(reverse("stock-summary")).json()

    def large(body: dict[str, Any]) -> int:
        return next(i["available"] for i in body["items"] if i["gradeName"] == "Large")

    assert large(after) - large(before) == 50
    assert after["asOfDate"] == world.farm.today().isoformat()


def test_domain_failures_are_problem_json_with_the_code_as_title() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])

    response = post(
        client,
        reverse("daily-entry-record"),
        record_body(world, grades=[{"eggGradeId": world.large.pk, "quantity": 10}]),
    )
    not_reconciled = post(client, reverse("daily-entry-submit", args=[response.json()["id"]]))

    assert response.status_code == 201
    assert not_reconciled.status_code == 422
    assert not_reconciled["Content-Type"] == "application/problem+json"
    body = not_reconciled.json()
    assert body["code"] == "DailyEntry.GradesNotReconciled"
    assert {"type", "title", "status", "detail"} <= set(body)


# --- bad input ----------------------------------------------------------------------------------

BAD_RECORD_BODIES: dict[str, tuple[Callable[[World], Any], int, str]] = {
    "totalEggs not an integer": (
        lambda w: record_body(w, totalEggs="many"),
        400,
        "Validation.Failed",
    ),
    "a null grade line": (lambda w: record_body(w, grades=[None]), 400, "Validation.Failed"),
    "grades not a list": (lambda w: record_body(w, grades="Large"), 400, "Validation.Failed"),
    "impossible date": (lambda w: record_body(w, date="2026-13-45"), 400, "Validation.Failed"),
    "body is a list": (lambda w: [record_body(w)], 400, "Validation.Failed"),
    "flock id beyond BIGINT": (lambda w: record_body(w, flockId=2**70), 400, "Validation.Failed"),
    "grade id beyond BIGINT": (
        lambda w: record_body(w, grades=[{"eggGradeId": 2**70, "quantity": 5}]),
        400,
        "Validation.Failed",
    ),
    "counts beyond BIGINT": (lambda w: record_body(w, totalEggs=2**80), 400, "Validation.Failed"),
    "future date": (
        lambda w: record_body(w, date=(w.farm.today() + dt.timedelta(days=1)).isoformat()),
        400,
        "Validation.Failed",
    ),
    "a counter-fed grade line": (
        lambda w: record_body(
            w,
            grades=[
                {"eggGradeId": w.large.pk, "quantity": 100},
                {"eggGradeId": grade_named(w.farm, "Cracked").pk, "quantity": 15},
            ],
        ),
        422,
        "DailyEntry.UnknownGrade",
    ),
    "grade lines over the sellable count": (
        lambda w: record_body(w, grades=[{"eggGradeId": w.large.pk, "quantity": 116}]),
        400,
        "Validation.Failed",
    ),
}


@mutation(
    "cluck/services/daily_entries.py",
    find="                if not is_db_id(line.egg_grade_id):",
    replace="                if line.egg_grade_id is None:",
)
@pytest.mark.parametrize("case", list(BAD_RECORD_BODIES))
def test_bad_record_input_is_a_precise_4xx_and_leaves_no_entry(case: str) -> None:
    """Mutation: let a grade id beyond BIGINT through the validator (``is None`` instead of
    ``is_db_id`` in ``validate_record``) → red (a 422 UnknownGrade instead of the 400 field
    error naming ``grades[0].eggGradeId``)."""
    make, status, code = BAD_RECORD_BODIES[case]
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])

    response = post(client, reverse("daily-entry-record"), make(world))

    assert response.status_code == status, response.content
    assert response.json()["code"] == code
    assert not DailyEntry.all_tenants.filter(farm=world.farm, date=world.farm.today()).exists()


def test_validation_errors_list_every_failing_field_with_its_domain_code() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])

    response = post(
        client,
        reverse("daily-entry-record"),
        record_body(
            world,
            flockId=None,
            totalEggs=-1,
            grades=[{"quantity": 5}, {"eggGradeId": world.large.pk, "quantity": 0}],
        ),
    )

    assert response.status_code == 400
    assert {(e["field"], e["code"]) for e in response.json()["errors"]} == {
        ("flockId", "DailyEntry.FlockId.Required"),
        ("totalEggs", "DailyEntry.TotalEggs.NonNegative"),
        ("grades[0].eggGradeId", "DailyEntry.GradeEggGradeId.Required"),
        ("grades[1].quantity", "DailyEntry.GradeQuantity.Positive"),
    }


BAD_QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    "limit zero": ("flock-list", {"limit": 0}),
    "limit over 500": ("daily-entry-list", {"limit": 501}),
    "limit not a number": ("egg-grade-list", {"limit": "ten"}),
    "forged cursor": ("flock-list", {"cursor": "eyJuYW1lIjoxfQ"}),
    "garbage cursor": ("daily-entry-list", {"cursor": "%%%"}),
    "cursor of another list": ("daily-entry-list", {"cursor": "eyJpZCI6MSwibmFtZSI6IngifQ"}),
    "unknown status": ("flock-list", {"status": "Sleeping"}),
    "bad asOfDate": ("stock-summary", {"asOfDate": "yesterday"}),
    "inverted date range": ("daily-entry-list", {"fromDate": "2026-02-02", "toDate": "2026-02-01"}),
    "flock filter beyond BIGINT": ("daily-entry-list", {"flock": 2**70}),
}


@pytest.mark.parametrize("case", list(BAD_QUERIES))
def test_bad_list_queries_are_400_problem_json(case: str) -> None:
    route, params = BAD_QUERIES[case]
    world = build_world()
    client = token_client(farm=world.farm, roles=["ReadOnly"])

    response = client.get(reverse(route), params)

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"]


def test_ids_beyond_bigint_in_the_path_are_404_not_500() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])
    huge = 2**70

    assert client.get(reverse("flock-detail", args=[huge])).status_code == 404
    assert client.get(reverse("daily-entry-detail", args=[huge])).status_code == 404
    assert post(client, reverse("daily-entry-submit", args=[huge])).status_code == 404


def test_a_form_encoded_record_is_415() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Admin"])

    headers: dict[str, Any] = write_headers()
    response = client.post(reverse("daily-entry-record"), {"flockId": world.flock.pk}, **headers)

    assert response.status_code == 415


# --- paging ---------------------------------------------------------------------------------------


@mutation(
    Edit(
        "cluck/selectors/flocks.py",
        find='rows = list(_with_birds_alive(qs, caller).order_by("name", "id")[: limit + 1])',
        replace='rows = list(_with_birds_alive(qs, caller).order_by("name")[: limit + 1])',
    ),
    Edit(
        "cluck/selectors/flocks.py",
        find="qs = qs.filter(Q(name__gt=name) | Q(name=name, id__gt=after_id))",
        replace="qs = qs.filter(name__gt=name)",
    ),
)
def test_flock_pages_walk_every_flock_once_in_name_then_id_order_with_bounded_queries() -> None:
    """Duplicate names page correctly because the cursor carries the id tie-break.

    Mutation: order by ``name`` only (drop the ``id`` tie-break and its cursor term) → red.
    """
    world = build_world()
    for name in ("Alpha", "Alpha", "Beta", "Alpha"):
        FlockFactory.create(farm=world.farm, name=name)
    client = token_client(farm=world.farm, roles=["ReadOnly"])
    expected = list(
        Flock.all_tenants.filter(farm=world.farm)
        .order_by("name", "id")
        .values_list("id", flat=True)
    )

    seen: list[int] = []
    cursor = None
    with CaptureQueriesContext(connection) as queries:
        while True:
            params: dict[str, Any] = {"limit": 2}
            if cursor:
                params["cursor"] = cursor
            body = client.get(reverse("flock-list"), params).json()
            seen.extend(item["id"] for item in body["items"])
            if body["complete"]:
                assert body["nextCursor"] is None
                break
            cursor = body["nextCursor"]

    assert seen == expected
    flock_selects = [q["sql"] for q in queries if 'FROM "cluck_flock"' in q["sql"]]
    assert flock_selects and all("LIMIT 3" in sql for sql in flock_selects)


def test_daily_entry_filters_and_newest_first_order() -> None:
    world = build_world()
    other = FlockFactory.create(farm=world.farm)
    client = token_client(farm=world.farm, roles=[])
    yesterday = (world.farm.today() - dt.timedelta(days=1)).isoformat()

    everything = client.get(reverse("daily-entry-list")).json()["items"]
    one_day = client.get(
        reverse("daily-entry-list"), {"fromDate": yesterday, "toDate": yesterday}
    ).json()["items"]
    of_other = client.get(reverse("daily-entry-list"), {"flock": other.pk}).json()["items"]

    assert [e["id"] for e in everything] == [world.draft_id, world.submitted_id]
    assert [e["id"] for e in one_day] == [world.draft_id]
    assert of_other == []


def test_stock_as_of_a_date_ignores_lots_produced_after_it() -> None:
    world = build_world()
    client = token_client(farm=world.farm, roles=["Sales"])
    three_days_ago = (world.farm.today() - dt.timedelta(days=3)).isoformat()

    body = client.get(reverse("stock-summary"), {"asOfDate": three_days_ago}).json()

    assert body["asOfDate"] == three_days_ago
    assert all(line["available"] == 0 for line in body["items"])
    assert EggLot.all_tenants.filter(farm=world.farm).exists()


# --- schema -------------------------------------------------------------------------------------


def test_the_schema_documents_every_production_route_with_its_problem_responses() -> None:
    client = token_client(farm=provisioned_farm(), roles=["Admin"])
    schema = client.get("/api/schema/", {"format": "json"}).json()
    operations = {
        op["operationId"]: op
        for path in schema["paths"].values()
        for method, op in path.items()
        if isinstance(op, dict) and "operationId" in op
    }
    expected = {
        "flock-list": {"200", "400", "401", "403"},
        "flock-detail": {"200", "401", "403", "404"},
        "egg-grade-list": {"200", "400", "401", "403"},
        "stock-summary": {"200", "400", "401", "403"},
        "daily-entry-list": {"200", "400", "401", "403"},
        "daily-entry-record": {"200", "201", "400", "401", "403", "404", "409", "422"},
        "daily-entry-detail": {"200", "401", "403", "404"},
        "daily-entry-submit": {"200", "401", "403", "404", "409", "422"},
    }
    for operation_id, codes in expected.items():
        responses = operations[operation_id]["responses"]
        assert codes <= set(responses), operation_id
        for code in codes - {"200", "201"}:
            assert "application/problem+json" in responses[code]["content"], (operation_id, code)
