"""The retention sweep for stored tasks; safe to run from cron on several hosts at once."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from a2a_tools import conf
from a2a_tools.models import A2ATask

BATCH_SIZE = 500
MAX_BATCHES = 20


def purge(
    *,
    now: datetime | None = None,
    retention_hours: float | None = None,
    batch_size: int = BATCH_SIZE,
    max_batches: int = MAX_BATCHES,
    using: str = "default",
) -> tuple[int, bool]:
    """Delete tasks last updated before the retention, oldest first, in bounded batches.

    Returns ``(deleted, more)``: ``more`` when the batch limit left eligible rows behind.
    """
    now = now or timezone.now()
    hours = float(
        retention_hours if retention_hours is not None else conf.get("TASK_RETENTION_HOURS")
    )
    cutoff = now - timedelta(hours=hours)
    eligible = A2ATask.objects.using(using).filter(updated_at__lt=cutoff)
    deleted = 0
    for _ in range(max_batches):
        ids = list(eligible.order_by("updated_at", "pk").values_list("pk", flat=True)[:batch_size])
        if not ids:
            return deleted, False
        # The predicate is re-stated: a concurrent sweep may have taken some of these already.
        count, _ = eligible.filter(pk__in=ids).delete()
        deleted += count
        if len(ids) < batch_size:
            return deleted, False
    return deleted, eligible.exists()
