"""Berths: the moorings an organization rents out."""

from __future__ import annotations

from django.db import models
from tenancy.scoping import TenantScopedQuerySetMixin


class BerthQuerySet(models.QuerySet["Berth"]):
    def visible_to(self, user: object) -> BerthQuerySet:
        """Berths of the organizations ``user`` belongs to."""
        return self.filter(organization__memberships__user=user)


class ScopedBerthQuerySet(TenantScopedQuerySetMixin, BerthQuerySet):
    """BerthQuerySet that refuses to run until narrowed to one organization."""

    tenant_field = "organization"


class Berth(models.Model):
    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.CASCADE, related_name="berths"
    )
    name = models.CharField(max_length=50)
    length_cm = models.PositiveIntegerField()

    objects = BerthQuerySet.as_manager()
    # The MCP tools' way in: Berth.scoped.for_tenant(ctx.tenant); fails closed.
    scoped = ScopedBerthQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="berths_name_unique")
        ]

    def __str__(self) -> str:
        return self.name
