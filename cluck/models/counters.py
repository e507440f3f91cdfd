from __future__ import annotations

from django.db import models


class RateCounter(models.Model):
    """Fixed-window rate-limit counters (``cluck.cache.CounterCache``), shared by replicas.

    UNLOGGED on PostgreSQL (migration 0004): a crash may reopen a rate window, never more.
    """

    key = models.CharField(max_length=250, primary_key=True)
    value = models.BigIntegerField()
    expires = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "cluck_rate_counter"
