"""The retention sweep: completed by completion time in bounded batches, abandoned claims only
when their lease expired; every DELETE re-states its predicate (safe on several hosts)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from idempotency.models import IdempotencyRecord
from idempotency.purge import delete_completed_batch, purge
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db
HOUR = timedelta(hours=1)


def row(
    *,
    completed_ago: timedelta | None = None,
    created_ago: timedelta = timedelta(0),
    lease_in: timedelta = timedelta(minutes=-1),
) -> IdempotencyRecord:
    now = timezone.now()
    completed = completed_ago is not None
    return IdempotencyRecord.objects.create(
        tenant_id="t",
        operation_key="op",
        caller_key=uuid.uuid4().hex,
        fingerprint="f",
        status=IdempotencyRecord.Status.COMPLETED if completed else 0,
        lease_owner=uuid.uuid4(),
        lease_expires_at=now + lease_in,
        result="{}" if completed else None,
        completed_at=now - completed_ago if completed_ago is not None else None,
        created_at=now - created_ago,
    )


def alive(*rows: IdempotencyRecord) -> list[bool]:
    present = set(IdempotencyRecord.objects.values_list("pk", flat=True))
    return [r.pk in present for r in rows]


@mutation(
    Edit(
        "idempotency/purge.py",
        find=(
            ".filter(status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)\n"
            '            .order_by("completed_at", "pk")'
        ),
        replace=(
            ".filter(status=IdempotencyRecord.Status.COMPLETED, created_at__lt=cutoff)\n"
            '            .order_by("created_at", "pk")'
        ),
    ),
    Edit(
        "idempotency/purge.py",
        find="pk__in=ids, status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff",
        replace="pk__in=ids, status=IdempotencyRecord.Status.COMPLETED, created_at__lt=cutoff",
    ),
)
def test_completed_rows_go_by_completion_time_not_creation_time() -> None:
    """A claim created long ago but completed recently (stolen late) stays replayable.

    Mutation: key the completed sweep on ``created_at`` → the late completion is purged → red.
    """
    old = row(completed_ago=49 * HOUR, created_ago=49 * HOUR)
    late = row(completed_ago=1 * HOUR, created_ago=100 * HOUR)
    fresh = row(completed_ago=1 * HOUR)
    result = purge()
    assert (result.completed, result.abandoned) == (1, 0)
    assert alive(old, late, fresh) == [False, True, True]


@mutation("idempotency/purge.py", find="        lease_expires_at__lt=now,\n", replace="")
def test_abandoned_claims_go_only_when_their_lease_expired_and_they_are_old() -> None:
    """Mutation: drop ``lease_expires_at__lt=now`` from the abandoned DELETE → the renewed
    (just stolen) old claim is deleted under its new owner → red."""
    abandoned = row(created_ago=49 * HOUR, lease_in=-48 * HOUR)
    renewed = row(created_ago=49 * HOUR, lease_in=timedelta(seconds=30))
    young = row(created_ago=1 * HOUR, lease_in=-HOUR)
    result = purge()
    assert (result.completed, result.abandoned) == (0, 1)
    assert alive(abandoned, renewed, young) == [False, True, True]


def test_batches_are_bounded_and_oldest_first() -> None:
    rows = [row(completed_ago=(60 + i) * HOUR) for i in range(5)]  # rows[4] is the oldest
    first = purge(batch_size=2, max_batches=2)
    assert (first.completed, first.more) == (4, True)
    assert alive(*rows) == [True, False, False, False, False]
    second = purge(batch_size=2, max_batches=2)
    assert (second.completed, second.more) == (1, False)
    assert not IdempotencyRecord.objects.exists()


@mutation(
    "idempotency/purge.py",
    find=".filter(pk__in=ids, status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)",
    replace=".filter(pk__in=ids)",
)
def test_a_batch_delete_rechecks_its_predicate() -> None:
    """Between selecting a batch and deleting it, another host may have changed a row (here
    its completion moved inside the retention). The DELETE must keep it.

    Mutation: delete by ``pk__in`` alone → the changed row is deleted → red.
    """
    moved = row(completed_ago=60 * HOUR)
    other = row(completed_ago=60 * HOUR)
    IdempotencyRecord.objects.filter(pk=moved.pk).update(completed_at=timezone.now())
    cutoff: datetime = timezone.now() - 48 * HOUR
    assert delete_completed_batch([moved.pk, other.pk], cutoff=cutoff) == 1
    assert alive(moved, other) == [True, False]


def test_a_second_concurrent_sweep_finds_nothing_left_and_fails_nothing() -> None:
    row(completed_ago=60 * HOUR)
    assert purge().completed == 1
    assert purge().completed == 0


def test_the_command_prints_counts(settings: Any) -> None:
    settings.IDEMPOTENCY_RETENTION_HOURS = 1
    row(completed_ago=2 * HOUR)
    row(created_ago=2 * HOUR, lease_in=-HOUR)
    out = StringIO()
    call_command("purge_idempotency", stdout=out)
    assert out.getvalue().strip() == "purged completed=1 abandoned=1"


def test_the_command_refuses_nonsense_bounds() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("purge_idempotency", "--batch-size", "0")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_sweeps_delete_each_row_once() -> None:
    import threading

    from django.db import connection

    rows = [row(completed_ago=60 * HOUR) for _ in range(40)]
    totals: list[int] = []
    errors: list[BaseException] = []

    def sweep() -> None:
        try:
            totals.append(purge(batch_size=5, max_batches=20).completed)
        except BaseException as error:  # surfaced by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sum(totals) == len(rows)
    assert not IdempotencyRecord.objects.exists()
