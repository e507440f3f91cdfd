"""The port: claim → execute → publish, exactly once per (tenant, operation, caller key).

It knows nothing of HTTP. An adapter builds an ``IdempotencyScope`` and hands ``run`` a callable
that returns an explicit ``Success`` (its JSON-serializable result is stored and replayed) or
``Failure`` (never stored; the claim is released so a corrected retry runs at once).

Phases (brief §4.6–4.9):

1. CLAIM, in its own short committed step: insert a fresh in-progress row (``ON CONFLICT DO
   NOTHING``), or steal an expired lease whose fingerprint matches ours (conditional UPDATE).
   The unique constraint on ``(tenant_id, operation_key, caller_key)`` is the arbiter, so this
   is atomic across processes and hosts sharing the database. A row with another fingerprint
   → ``KeyConflict``; a completed row → ``Replayed``; a live lease → poll until
   ``max_wait_seconds``, then ``InProgress``.
2. EXECUTE, once (never retried): ``work()`` inside ``transaction.atomic()``.
3. PUBLISH, in that same transaction: a guarded UPDATE that succeeds only while our lease token
   still owns the row. Zero rows → we were presumed dead and stolen from: roll our work back and
   replay the winner.

If ``run`` is called inside an already-open transaction, the claim and the work are savepoints
of that transaction: correct within one process, but other processes cannot see the claim until
the outer transaction commits (so they block on the unique index, or on SQLite on the write
lock, instead of polling). Call it in autocommit mode whenever other processes may compete.
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Field
from django.utils import timezone

from idempotency import conf, events
from idempotency.fingerprint import canonical_json

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IdempotencyScope:
    """Where a key lives. All four are opaque strings; the three keys are usually SHA-256 hex.

    ``tenant_id`` isolates tenants (two tenants with the same literal key never meet);
    ``operation_key`` isolates operations (an HTTP route, an MCP tool); ``caller_key`` is the
    client's key; ``fingerprint`` identifies the request, so a reused key with another request is
    refused instead of replayed.
    """

    tenant_id: str
    operation_key: str
    caller_key: str
    fingerprint: str

    def __post_init__(self) -> None:
        for name in ("tenant_id", "operation_key", "caller_key", "fingerprint"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or len(value) > 64:
                raise ValueError(f"IdempotencyScope.{name} must be a 1..64 character string")


@dataclass(frozen=True)
class Success:
    """The work succeeded; ``result`` (JSON-serializable) is published and replayed verbatim."""

    result: Any


@dataclass(frozen=True)
class Failure:
    """The work failed: nothing is published, the claim is released, ``error`` is returned."""

    error: Any


@dataclass(frozen=True)
class Executed:
    """The work ran in this call. ``result`` is what it returned."""

    result: Success | Failure


@dataclass(frozen=True)
class Replayed:
    """A completed earlier attempt's stored ``Success.result``; the work did not run."""

    result: Any


@dataclass(frozen=True)
class KeyConflict:
    """The key was already used with another fingerprint; the work did not run."""


@dataclass(frozen=True)
class InProgress:
    """A live competing attempt still holds the key after the wait budget. Retry later."""

    retry_after: float


Outcome = Executed | Replayed | KeyConflict | InProgress


@dataclass(frozen=True)
class _Claimed:
    pass


class _Rollback(Exception):  # noqa: N818 - internal control flow, never escapes run()
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


class _LeaseLost(Exception):  # noqa: N818 - internal control flow, never escapes run()
    pass


class IdempotentUnit:
    """Run a unit of work at most once per ``IdempotencyScope``.

    Options default to the ``IDEMPOTENCY_*`` settings, read when ``run`` is called.
    """

    #: Seam for tests and for deployments that want another clock. Every host must agree on
    #: time within a small fraction of the lease (NTP); leases are compared with this clock.
    clock: Callable[[], datetime] = staticmethod(timezone.now)
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(
        self,
        *,
        lease_seconds: float | None = None,
        max_wait_seconds: float | None = None,
        poll_interval: float | None = None,
        using: str = "default",
    ) -> None:
        for name, value, zero_allowed in (
            ("lease_seconds", lease_seconds, False),
            ("max_wait_seconds", max_wait_seconds, True),
            ("poll_interval", poll_interval, False),
        ):
            if value is not None and not is_duration(value, zero_allowed=zero_allowed):
                raise ValueError(
                    f"{name} must be a finite number {'>=' if zero_allowed else '>'} 0"
                )
        self._lease_seconds = lease_seconds
        self._max_wait_seconds = max_wait_seconds
        self._poll_interval = poll_interval
        self.using = using

    @property
    def lease_seconds(self) -> float:
        return float(self._lease_seconds or conf.get("LEASE_SECONDS"))

    @property
    def max_wait_seconds(self) -> float:
        if self._max_wait_seconds is not None:
            return float(self._max_wait_seconds)
        return float(conf.get("MAX_WAIT_SECONDS"))

    @property
    def poll_interval(self) -> float:
        return float(self._poll_interval or conf.get("POLL_INTERVAL_SECONDS"))

    # --- the protocol ----------------------------------------------------------------------

    @events.reports_outcome  # observability: sends events.unit_finished with the outcome
    def run(self, scope: IdempotencyScope, work: Callable[[], Success | Failure]) -> Outcome:
        """Claim ``scope``, run ``work`` once and publish its ``Success`` atomically with it.

        Never retries ``work``. An exception from ``work`` (or from the commit) rolls the work
        back and is re-raised, unless our own claim turns out to be completed (the commit landed
        and only its acknowledgement was lost), in which case the stored result is replayed.
        """
        owner = uuid.uuid4()
        deadline = time.monotonic() + self.max_wait_seconds
        claim = self._claim(scope, owner, deadline)
        if not isinstance(claim, _Claimed):
            return claim
        try:
            with transaction.atomic(using=self.using):
                outcome = work()
                if isinstance(outcome, Failure):
                    raise _Rollback(outcome)
                if not isinstance(outcome, Success):
                    raise TypeError(
                        f"work must return Success or Failure, not {type(outcome).__name__}"
                    )
                # Serialised before the commit: a result that cannot be stored must not leave
                # a committed side effect behind.
                payload = canonical_json(outcome.result)
                if not self._publish(scope, owner, payload):
                    raise _LeaseLost()
        except _Rollback as rollback:
            self._release(scope, owner)
            return Executed(rollback.failure)
        except _LeaseLost:
            logger.warning("idempotency lease lost mid-execution; work rolled back")
            return self._await_winner(scope, deadline)
        except BaseException:
            replay = self._probe_own(scope, owner)
            if replay is not None:
                logger.warning("idempotency commit acknowledgement lost; replaying own result")
                return replay
            self._release(scope, owner)
            raise
        return Executed(outcome)

    # --- phases ------------------------------------------------------------------------------

    def _records(self, scope: IdempotencyScope) -> Any:
        from idempotency.models import IdempotencyRecord

        # Every statement carries the full key, tenant included, as defence in depth.
        return IdempotencyRecord.objects.using(self.using).filter(
            tenant_id=scope.tenant_id,
            operation_key=scope.operation_key,
            caller_key=scope.caller_key,
        )

    def _claim(
        self, scope: IdempotencyScope, owner: uuid.UUID, deadline: float
    ) -> _Claimed | Replayed | KeyConflict | InProgress:
        from idempotency.models import IdempotencyRecord

        in_progress = IdempotencyRecord.Status.IN_PROGRESS
        while True:
            now = self.clock()
            lease_until = now + timedelta(seconds=self.lease_seconds)
            claimed, row = self._insert_or_inspect(scope, owner, now, lease_until)
            if claimed:
                return _Claimed()
            # Inspecting before stealing keeps a replay at one statement (two on SQLite); the
            # steal itself is still decided by its own predicate in the database.
            decided = self._decide(row, scope, owner)
            if decided is not None:
                return decided
            if row is not None:
                # A different request is never stolen over: the fingerprint is in the predicate.
                stolen = (
                    self._records(scope)
                    .filter(
                        fingerprint=scope.fingerprint,
                        status=in_progress,
                        lease_expires_at__lt=now,
                    )
                    .update(lease_owner=owner, lease_expires_at=lease_until)
                )
                if stolen == 1:
                    events.lease_stolen.send(sender=type(self), scope=scope)  # observability
                    return _Claimed()
            waited = self._wait_or_give_up(row, now, deadline)
            if waited is not None:
                return waited

    def _insert_or_inspect(
        self, scope: IdempotencyScope, owner: uuid.UUID, now: datetime, lease_until: datetime
    ) -> tuple[bool, dict[str, Any] | None]:
        """Try the claim; when the key is taken, the row that holds it (``None``: not visible).

        On PostgreSQL one statement does both: the insert in a CTE, and beside it a read of the
        existing row, so a replay costs one round trip. The read sees the snapshot taken when
        the statement began: a competitor that committed while our insert waited for it is not
        seen, and the caller treats that like a live lease (poll, look again).
        """
        connection = transaction.get_connection(self.using)
        if connection.vendor != "postgresql":
            if self._insert_claim(scope, owner, now, lease_until):
                return True, None
            return False, self._inspect(scope)
        insert, params = self._insert_claim_sql(scope, owner, now, lease_until)
        quote = connection.ops.quote_name
        table = quote(self._meta().db_table)
        columns = ("fingerprint", "status", "lease_owner", "lease_expires_at", "result")
        sql = (
            f"WITH claim AS ({insert} RETURNING 1) "
            "SELECT EXISTS (SELECT 1 FROM claim), "
            f"{', '.join(f'existing.{quote(name)}' for name in columns)} "
            f"FROM (SELECT 1) AS one LEFT JOIN {table} AS existing "
            "ON existing.tenant_id = %s AND existing.operation_key = %s "
            "AND existing.caller_key = %s"
        )
        params += [scope.tenant_id, scope.operation_key, scope.caller_key]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            claimed, *values = cursor.fetchone()
        if claimed:
            return True, None
        if values[0] is None:
            return False, None
        return False, dict(zip(columns, values, strict=True))

    @staticmethod
    def _meta() -> Any:
        from idempotency.models import IdempotencyRecord

        return IdempotencyRecord._meta

    def _insert_claim(
        self, scope: IdempotencyScope, owner: uuid.UUID, now: datetime, lease_until: datetime
    ) -> bool:
        """INSERT … ON CONFLICT DO NOTHING: True if we inserted the claim.

        Hand-written because it is the hot path of every tracked write: no exception and no
        savepoint for an existing key (a retry), and one statement to build. The unique
        constraint is the arbiter; a concurrent uncommitted claim makes PostgreSQL wait for it.
        """
        sql, params = self._insert_claim_sql(scope, owner, now, lease_until)
        # One statement in autocommit: its own short committed step, one round trip.
        with transaction.get_connection(self.using).cursor() as cursor:
            cursor.execute(sql, params)
            return bool(cursor.rowcount == 1)

    def _insert_claim_sql(
        self, scope: IdempotencyScope, owner: uuid.UUID, now: datetime, lease_until: datetime
    ) -> tuple[str, list[Any]]:
        from idempotency.models import IdempotencyRecord

        connection = transaction.get_connection(self.using)
        meta = IdempotencyRecord._meta
        values = {
            "id": uuid.uuid4(),
            "tenant_id": scope.tenant_id,
            "operation_key": scope.operation_key,
            "caller_key": scope.caller_key,
            "fingerprint": scope.fingerprint,
            "status": IdempotencyRecord.Status.IN_PROGRESS.value,
            "lease_owner": owner,
            "lease_expires_at": lease_until,
            "created_at": now,
        }
        columns = [_concrete(meta.get_field(name)) for name in values]
        params = [
            field.get_db_prep_value(value, connection)
            for field, value in zip(columns, values.values(), strict=True)
        ]
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(meta.db_table)} "
            f"({', '.join(quote(field.column) for field in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))}) "
            "ON CONFLICT (tenant_id, operation_key, caller_key) DO NOTHING"
        )
        return sql, params

    def _inspect(self, scope: IdempotencyScope) -> dict[str, Any] | None:
        row: dict[str, Any] | None = (
            self._records(scope)
            .values("fingerprint", "status", "lease_owner", "lease_expires_at", "result")
            .first()
        )
        return row

    def _decide(
        self, row: dict[str, Any] | None, scope: IdempotencyScope, owner: uuid.UUID
    ) -> _Claimed | Replayed | KeyConflict | None:
        """What an existing row means for us; ``None`` = nobody's result yet (retry or wait)."""
        from idempotency.models import IdempotencyRecord

        if row is None:
            return None
        # An empty stored fingerprint means "unknown" (legacy rows) and matches.
        if row["fingerprint"] and row["fingerprint"] != scope.fingerprint:
            return KeyConflict()
        if row["status"] == IdempotencyRecord.Status.COMPLETED:
            return Replayed(json.loads(row["result"]))
        if row["lease_owner"] == owner:
            # Our own insert or steal committed but its acknowledgement was lost.
            return _Claimed()
        return None

    def _wait_or_give_up(
        self, row: dict[str, Any] | None, now: datetime, deadline: float
    ) -> InProgress | None:
        if time.monotonic() >= deadline:
            return InProgress(retry_after=self._retry_after(row, now))
        self.sleep(self.poll_interval)
        return None

    def _retry_after(self, row: dict[str, Any] | None, now: datetime) -> float:
        # The competitor's remaining lease bounds how long it can still block us; it is only a
        # hint, so it is clamped to one lease and rounded up to whole seconds.
        remaining = self.lease_seconds
        if row is not None:
            remaining = (row["lease_expires_at"] - now).total_seconds()
        return float(max(1, math.ceil(min(max(remaining, 0.0), self.lease_seconds))))

    def _publish(self, scope: IdempotencyScope, owner: uuid.UUID, payload: str) -> bool:
        """The guarded UPDATE: succeeds only while our lease token still owns the in-progress
        row. Hand-written (like the claim INSERT) because every tracked write pays for it."""
        from idempotency.models import IdempotencyRecord

        connection = transaction.get_connection(self.using)
        meta = IdempotencyRecord._meta
        quote = connection.ops.quote_name

        def prep(name: str, value: Any) -> Any:
            return _concrete(meta.get_field(name)).get_db_prep_value(value, connection)

        sql = (
            f"UPDATE {quote(meta.db_table)} SET status = %s, result = %s, completed_at = %s "
            "WHERE tenant_id = %s AND operation_key = %s AND caller_key = %s "
            "AND lease_owner = %s AND status = %s"
        )
        params = [
            IdempotencyRecord.Status.COMPLETED.value,
            payload,
            prep("completed_at", self.clock()),
            scope.tenant_id,
            scope.operation_key,
            scope.caller_key,
            prep("lease_owner", owner),
            IdempotencyRecord.Status.IN_PROGRESS.value,
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return bool(cursor.rowcount == 1)

    def _release(self, scope: IdempotencyScope, owner: uuid.UUID) -> None:
        """Delete our claim (never a thief's, never a completed row) so a retry runs at once."""
        from idempotency.models import IdempotencyRecord

        try:
            self._records(scope).filter(
                lease_owner=owner, status=IdempotencyRecord.Status.IN_PROGRESS
            ).delete()
        except DatabaseError:
            # Best effort: an unreleased claim only delays a retry until its lease expires.
            logger.exception("idempotency claim release failed")

    def _probe_own(self, scope: IdempotencyScope, owner: uuid.UUID) -> Replayed | None:
        from idempotency.models import IdempotencyRecord

        try:
            row = (
                self._records(scope)
                .filter(lease_owner=owner, status=IdempotencyRecord.Status.COMPLETED)
                .values_list("result", flat=True)
                .first()
            )
        except DatabaseError:
            logger.exception("idempotency probe after a failed execution failed")
            return None
        return None if row is None else Replayed(json.loads(row))

    def _await_winner(self, scope: IdempotencyScope, deadline: float) -> Replayed | InProgress:
        """After a steal-loss: wait (same deadline, but look at least once) for the winner."""
        from idempotency.models import IdempotencyRecord

        while True:
            now = self.clock()
            row = self._inspect(scope)
            if row is not None and row["status"] == IdempotencyRecord.Status.COMPLETED:
                return Replayed(json.loads(row["result"]))
            if row is None:
                # The winner failed and released: nobody holds a result to replay.
                return InProgress(retry_after=1.0)
            waited = self._wait_or_give_up(row, now, deadline)
            if waited is not None:
                return waited


def _concrete(field: Any) -> Field[Any, Any]:
    assert isinstance(field, Field)
    return field


def is_duration(value: Any, *, zero_allowed: bool = False) -> bool:
    """A finite, non-boolean number > 0 (or >= 0): shared with the system checks."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return False
    return value >= 0 if zero_allowed else value > 0
