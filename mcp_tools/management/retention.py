"""One retention sweep: each app registers what expires; ``manage.py purge_expired`` runs them.

An :class:`Expiring` names a table, the rows of it past their retention at a given moment (a
queryset, so the predicate is written once, in the app that owns the table) and the batch size.
:func:`sweep` deletes them in short transactions of at most one batch each: lock a batch of
expired rows with ``FOR UPDATE SKIP LOCKED``, delete those of them that the re-stated predicate
still matches, commit, repeat until a batch comes back short. Two runs at once (cron on every
replica) therefore take disjoint rows: each row is deleted, and reported, by one run only, and
neither waits on the other's locks. The locks are transaction-scoped, so this also holds behind
a transaction-pooling pgbouncer, where a session advisory lock would not.

The registry lives here because this is the lowest layer that reaches every app with a table to
sweep: ``tenancy`` and ``idempotency`` import neither each other nor ``mcp_tools``, so each keeps
a registry-free predicate (``tenancy.oauth.purge.unused_cimd_applications``,
``idempotency.purge.expired``) that this module registers for them when they are installed;
``a2a_tools`` registers its own from its ``ready()``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

BATCH_SIZE = 500


@dataclass(frozen=True)
class Expiring:
    """One table's retention."""

    table: str
    # The rows expired at ``now`` (the database alias is applied by the sweep).
    expired: Callable[[dt.datetime], QuerySet[Any]]
    # What "expired" means, for the report: "older than <this>".
    older_than: Callable[[], str]
    batch_size: int = BATCH_SIZE


@dataclass(frozen=True)
class Swept:
    table: str
    deleted: int
    older_than: str
    dry_run: bool = False

    def line(self) -> str:
        verb = "would be deleted" if self.dry_run else "deleted"
        return f"{self.table}: {self.deleted} {verb} (older than {self.older_than})"


_registry: dict[str, Expiring] = {}


def register(entry: Expiring) -> None:
    """Add (or replace, by table) one table's retention."""
    _registry[entry.table] = entry


def registered() -> list[Expiring]:
    """Every registered table's retention, by table name."""
    return [_registry[table] for table in sorted(_registry)]


def get(table: str) -> Expiring:
    """Raises ``KeyError`` for a table nobody registered."""
    return _registry[table]


def sweep(
    entry: Expiring,
    *,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    batch_size: int | None = None,
    using: str = "default",
) -> Swept:
    """Delete ``entry``'s expired rows in bounded batches; ``dry_run`` only counts them."""
    now = now or timezone.now()
    size = batch_size or entry.batch_size
    if dry_run:
        count = entry.expired(now).using(using).count()
        return Swept(entry.table, count, entry.older_than(), dry_run=True)
    deleted = 0
    for taken, gone in _batches(entry, now=now, size=size, using=using):
        deleted += gone
        if taken < size:
            break
    return Swept(entry.table, deleted, entry.older_than())


def _batches(
    entry: Expiring, *, now: dt.datetime, size: int, using: str
) -> Iterator[tuple[int, int]]:
    """(rows locked, rows deleted) per batch, one short transaction each, forever."""
    while True:
        with transaction.atomic(using=using):
            expired = entry.expired(now).using(using)
            locked = list(
                expired.order_by()
                .select_for_update(skip_locked=True, of=("self",))
                .values_list("pk", flat=True)[:size]
            )
            gone = 0
            if locked:
                # Re-stated under the lock: a row that changed since (a late completion, a
                # grant written for it) no longer matches and stays.
                _, per_model = entry.expired(now).using(using).filter(pk__in=locked).delete()
                gone = per_model.get(expired.model._meta.label, 0)
        yield len(locked), gone


def with_age(
    entry: Expiring, age: dt.timedelta, expired: Callable[[dt.datetime], QuerySet[Any]]
) -> Expiring:
    """``entry`` with another age (``purge_mcp_audit --older-than``)."""
    return replace(entry, expired=expired, older_than=lambda: describe(age))


def describe(age: dt.timedelta) -> str:
    seconds = age.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
