"""Concurrent writers of one daily entry, on real PostgreSQL with one connection per thread.

Each test makes the race happen for certain: one writer holds its transaction open until the
other is seen *waiting on a lock* in ``pg_stat_activity`` — no sleeps, no timing luck.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections, transaction

from cluck.caller import Caller
from cluck.errors import CluckError
from cluck.models import AuditEvent, DailyEntry, EggLot
from cluck.services.daily_entries import (
    GradeLineInput,
    RecordResult,
    daily_entry_record,
    daily_entry_submit,
)
from tests.factories import FlockFactory, grade_named, provisioned_farm
from tests.mutations import Edit, mutation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

BLOCK_DEADLINE_SECONDS = 20.0


def wait_until_a_backend_waits_on_a_lock() -> None:
    """Poll until another session of this database is blocked on a lock (or fail)."""
    deadline = time.monotonic() + BLOCK_DEADLINE_SECONDS
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.005)  # polling the server, not waiting for time to pass
    raise AssertionError("the competing writer never blocked")


def in_thread(work: Callable[[], Any], outcome: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        try:
            outcome["result"] = work()
        except CluckError as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _setup() -> tuple[Caller, int, list[GradeLineInput]]:
    farm = provisioned_farm()
    flock = FlockFactory.create(farm=farm)
    lines = [GradeLineInput(egg_grade_id=grade_named(farm, "Large").pk, quantity=40)]
    return Caller.system(farm, label="test:race"), flock.pk, lines


@mutation(
    Edit(
        "cluck/services/daily_entries.py",
        find=(
            "flock = Flock.objects.for_tenant(caller.tenant).select_for_update().filter(pk=flock_id"
            ").first()"
        ),
        replace="flock = Flock.objects.for_tenant(caller.tenant).filter(pk=flock_id).first()",
    ),
    Edit(
        "cluck/services/daily_entries.py",
        find=(
            "    except IntegrityError:\n"
            "        # Only reachable if a writer skipped the flock lock"
        ),
        replace=(
            "    except ZeroDivisionError:\n"
            "        # Only reachable if a writer skipped the flock lock"
        ),
    ),
)
def test_two_first_records_of_the_same_day_meet_as_create_and_update_not_a_500() -> None:
    """Mutation: remove the flock row lock (``select_for_update``) *and* the IntegrityError
    fallback in ``_upsert`` → red (the second writer hits the natural-key constraint: 500).
    Either one alone keeps it green — they are belt and braces."""
    caller, flock_id, lines = _setup()
    day = caller.farm.today() - dt.timedelta(days=1)

    def record(total: int) -> RecordResult:
        return daily_entry_record(
            caller=caller,
            flock_id=flock_id,
            date=day,
            total_eggs=total,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=0,
            grades=lines,
        )

    holding = threading.Event()
    release = threading.Event()

    def first() -> RecordResult:
        with transaction.atomic():
            result = record(40)
            holding.set()
            release.wait(BLOCK_DEADLINE_SECONDS)
        return result

    first_outcome: dict[str, Any] = {}
    second_outcome: dict[str, Any] = {}
    first_thread = in_thread(first, first_outcome)
    assert holding.wait(BLOCK_DEADLINE_SECONDS)
    second_thread = in_thread(lambda: record(45), second_outcome)
    wait_until_a_backend_waits_on_a_lock()
    release.set()
    first_thread.join()
    second_thread.join()

    assert "error" not in first_outcome and "error" not in second_outcome, second_outcome
    a, b = first_outcome["result"], second_outcome["result"]
    assert (a.created, b.created) == (True, False)
    assert a.entry.pk == b.entry.pk
    entry = DailyEntry.all_tenants.get(flock_id=flock_id, date=day)
    assert (entry.total_eggs, entry.version) == (45, 2)
    assert list(
        AuditEvent.all_tenants.filter(entity_type="DailyEntry", entity_id=str(entry.pk))
        .order_by("id")
        .values_list("action", flat=True)
    ) == ["DailyEntry.Create", "DailyEntry.Update"]


@mutation(
    "cluck/services/daily_entries.py",
    find=(
        "won = entries.filter(pk=entry.pk, version=entry.version, "
        "status=DailyEntry.Status.DRAFT).update("
    ),
    replace="won = entries.filter(pk=entry.pk).update(",
)
def test_a_submit_that_loses_the_race_is_a_409_and_puts_nothing_in_stock() -> None:
    """The loser read the Draft before the winner committed; its guarded update then matches
    no row.

    Mutation: drop ``version=entry.version, status=Draft`` from the update's filter in
    ``daily_entry_submit`` → red (both submits succeed and the day's eggs are stocked twice).
    """
    caller, flock_id, lines = _setup()
    entry_id = daily_entry_record(
        caller=caller,
        flock_id=flock_id,
        date=caller.farm.today() - dt.timedelta(days=1),
        total_eggs=40,
        cracked_eggs=0,
        dirty_eggs=0,
        mortality_count=0,
        grades=lines,
    ).entry.pk

    holding = threading.Event()
    release = threading.Event()

    def winner() -> DailyEntry:
        with transaction.atomic():
            DailyEntry.all_tenants.select_for_update().get(pk=entry_id)
            holding.set()
            release.wait(BLOCK_DEADLINE_SECONDS)
            return daily_entry_submit(caller=caller, entry_id=entry_id)

    winner_outcome: dict[str, Any] = {}
    loser_outcome: dict[str, Any] = {}
    winner_thread = in_thread(winner, winner_outcome)
    assert holding.wait(BLOCK_DEADLINE_SECONDS)
    loser_thread = in_thread(
        lambda: daily_entry_submit(caller=caller, entry_id=entry_id), loser_outcome
    )
    wait_until_a_backend_waits_on_a_lock()
    release.set()
    winner_thread.join()
    loser_thread.join()

    assert winner_outcome["result"].status == "Submitted"
    error = loser_outcome["error"]
    assert (error.code, error.http_status) == ("DailyEntry.VersionConflict", 409)
    assert list(
        EggLot.all_tenants.filter(daily_entry_id=entry_id).values_list(
            "quantity_produced", flat=True
        )
    ) == [40]
    submits = AuditEvent.all_tenants.filter(
        entity_type="DailyEntry", entity_id=str(entry_id), action="DailyEntry.Submit"
    )
    assert submits.count() == 1
