"""A side-effect row per handler run: tests assert on its presence, never on upserted counts."""

from __future__ import annotations

from django.db import models


class SideEffect(models.Model):
    # Spelled out: mypy's Django plugin does not see test-only apps.
    objects: models.Manager[SideEffect] = models.Manager()

    tenant_id = models.CharField(max_length=64)
    label = models.CharField(max_length=200)
    # Which attempt wrote it (``X-Attempt`` header, not part of the fingerprint).
    attempt = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "idem_testapp"
