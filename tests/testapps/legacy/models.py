"""An existing project's models, adopting tenant scoping without touching their ``objects``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from tenancy.scoping import TenantScopedManager, TenantScopedQuerySetMixin


class NoteQuerySet(models.QuerySet[Any]):
    """The project's own queryset, with its own methods, long before tenancy came."""

    def pinned(self) -> NoteQuerySet:
        return self.filter(pinned=True)


class ScopedNoteQuerySet(TenantScopedQuerySetMixin, NoteQuerySet):
    tenant_field = "account"


class Note(models.Model):
    account = models.ForeignKey(
        settings.TENANCY_TENANT_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    title = models.CharField(max_length=100)
    pinned = models.BooleanField(default=False)

    # Untouched: every existing Note.objects… call keeps working (and stays the default).
    objects = NoteQuerySet.as_manager()
    # New code: Note.scoped.for_tenant(ctx.tenant).pinned(), failing closed without a tenant.
    scoped = ScopedNoteQuerySet.as_manager()

    class Meta:
        app_label = "legacy_testapp"


class Memo(models.Model):
    """The simplest form: a plain ``objects`` and ``TenantScopedManager`` as ``scoped``."""

    tenant = models.ForeignKey(
        settings.TENANCY_TENANT_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    text = models.CharField(max_length=100)

    objects: models.Manager[Any] = models.Manager()
    scoped = TenantScopedManager()

    class Meta:
        app_label = "legacy_testapp"
