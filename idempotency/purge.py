"""The retention sweep (brief §4.12), safe to run concurrently on several hosts.

Every DELETE re-states its whole predicate, so under READ COMMITTED a row that changed between
selection and deletion (a steal renewed its lease, a late completion) is re-checked and kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from idempotency import conf
from idempotency.models import IdempotencyRecord

BATCH_SIZE = 500
MAX_BATCHES = 20


@dataclass(frozen=True)
class PurgeResult:
    completed: int
    abandoned: int
    # True when the batch limit stopped the sweep with eligible rows left for the next run.
    more: bool


def expired(*, now: datetime, cutoff: datetime) -> QuerySet[IdempotencyRecord]:
    """Every record past the retention ``cutoff`` at ``now``: completed ones by completion time,
    and claims whose lease expired and that are older than the retention (what ``purge`` takes;
    ``manage.py purge_expired`` sweeps the same rows, ``mcp_tools.management.retention``)."""
    return IdempotencyRecord.objects.filter(
        Q(status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)
        | abandoned(now=now, cutoff=cutoff)
    )


def abandoned(*, now: datetime, cutoff: datetime) -> Q:
    """In-progress rows whose lease expired and that are older than the retention."""
    return Q(
        status=IdempotencyRecord.Status.IN_PROGRESS,
        lease_expires_at__lt=now,
        created_at__lt=cutoff,
    )


def retention_cutoff(now: datetime) -> datetime:
    """The retention's cutoff at ``now`` (``IDEMPOTENCY_RETENTION_HOURS``)."""
    return now - timedelta(hours=float(conf.get("RETENTION_HOURS")))


def purge_abandoned(*, now: datetime, cutoff: datetime, using: str = "default") -> int:
    """One predicated DELETE of in-progress rows whose lease expired and that are older than
    the retention (a concurrent steal renews the lease, making its row ineligible)."""
    deleted, _ = (
        IdempotencyRecord.objects.using(using).filter(abandoned(now=now, cutoff=cutoff)).delete()
    )
    return deleted


def delete_completed_batch(ids: Sequence[Any], *, cutoff: datetime, using: str = "default") -> int:
    deleted, _ = (
        IdempotencyRecord.objects.using(using)
        .filter(pk__in=ids, status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)
        .delete()
    )
    return deleted


def purge(
    *,
    now: datetime | None = None,
    retention_hours: float | None = None,
    batch_size: int = BATCH_SIZE,
    max_batches: int = MAX_BATCHES,
    using: str = "default",
) -> PurgeResult:
    """Delete completed records by completion time (oldest first, bounded batches) and
    abandoned claims. Completion time, not creation: a stolen old claim may complete late and
    must stay replayable for the whole retention after that."""
    now = now or timezone.now()
    hours = float(retention_hours if retention_hours is not None else conf.get("RETENTION_HOURS"))
    cutoff = now - timedelta(hours=hours)
    abandoned = purge_abandoned(now=now, cutoff=cutoff, using=using)
    completed = 0
    more = False
    for batch in range(max_batches):
        ids = list(
            IdempotencyRecord.objects.using(using)
            .filter(status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)
            .order_by("completed_at", "pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            break
        completed += delete_completed_batch(ids, cutoff=cutoff, using=using)
        if len(ids) < batch_size:
            break
        if batch == max_batches - 1:
            more = (
                IdempotencyRecord.objects.using(using)
                .filter(status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)
                .exists()
            )
    return PurgeResult(completed=completed, abandoned=abandoned, more=more)
