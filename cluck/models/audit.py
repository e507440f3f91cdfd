from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from cluck.models.base import TenantOwned


class AuditEvent(TenantOwned):
    """Append-only; written in the same transaction as the change it records."""

    class Channel(models.TextChoices):
        HTTP = "http"
        MCP = "mcp"
        CLI = "cli"

    occurred_at = models.DateTimeField(default=timezone.now)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Snapshot of who acted: the email for a person, the label for the system actor.
    actor_label = models.CharField(max_length=256)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    # Action vocabulary is a public contract: add, never rename.
    action = models.CharField(max_length=100)
    entity_type = models.CharField(max_length=100)
    entity_id = models.CharField(max_length=64)
    reason = models.CharField(max_length=500, null=True, blank=True)
    details = models.JSONField(null=True, blank=True)

    class Meta(TenantOwned.Meta):
        indexes = [
            models.Index(fields=["farm", "entity_type", "entity_id"], name="cluck_audit_entity")
        ]
