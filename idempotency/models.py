"""One row per (tenant, operation, caller key): the claim, then the published result."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q
from django.utils import timezone


class IdempotencyRecord(models.Model):
    class Status(models.IntegerChoices):
        IN_PROGRESS = 0, "in progress"
        COMPLETED = 1, "completed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # A plain string, not a foreign key: idempotency knows nothing of the tenant model, and
    # records must not cascade away with (or block the deletion of) a tenant.
    tenant_id = models.CharField(max_length=64)
    operation_key = models.CharField(max_length=64)
    caller_key = models.CharField(max_length=64)
    fingerprint = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(choices=Status.choices, default=Status.IN_PROGRESS)
    # Fresh per attempt (regenerated on claim and on steal): the publish and the release are
    # guarded by it, so a presumed-dead attempt can never overwrite the one that stole its lease.
    lease_owner = models.UUIDField()
    lease_expires_at = models.DateTimeField()
    # JSON text of the published ``Success.result``; null while in progress.
    result = models.TextField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "idempotency_records"
        constraints = [
            # The arbiter between processes and hosts: one claim per key, ever (until purged).
            models.UniqueConstraint(
                fields=["tenant_id", "operation_key", "caller_key"],
                name="idempotency_record_key_unique",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status=0, completed_at__isnull=True, result__isnull=True)
                    | Q(status=1, completed_at__isnull=False, result__isnull=False)
                ),
                name="idempotency_record_completed_at_iff_completed",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "completed_at"], name="idempotency_purge_completed"),
            models.Index(fields=["status", "created_at"], name="idempotency_purge_abandoned"),
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id}:{self.operation_key[:8]}:{self.caller_key[:8]} ({self.status})"
