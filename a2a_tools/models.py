"""Finished A2A tasks, kept so their creator can read them back (``GetTask``, ``ListTasks``)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class A2ATask(models.Model):
    """One task as the caller saw it, owned by (tenant, user). Written when its request ends
    (tool calls finish within their request); a task waiting for input changes once more
    (continued or canceled). Purged after the retention."""

    id = models.CharField(primary_key=True, max_length=64)
    # Plain values, not foreign keys: like idempotency records, tasks must not cascade away
    # with (or block the deletion of) a tenant or a user; the retention sweep removes them.
    tenant_id = models.CharField(max_length=64)
    user_id = models.BigIntegerField()
    context_id = models.CharField(max_length=255)
    state = models.CharField(max_length=32)
    skill = models.CharField(max_length=128)
    # The status timestamp: ListTasks orders by it (newest first) and filters on it.
    updated_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    # The Task object in its JSON form (camelCase, ProtoJSON enums), exactly as returned.
    task = models.JSONField()

    class Meta:
        db_table = "a2a_tools_tasks"
        indexes = [
            models.Index(
                fields=["tenant_id", "user_id", "-updated_at", "-id"], name="a2a_task_owner_recent"
            ),
            models.Index(fields=["updated_at"], name="a2a_task_purge"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.state})"
