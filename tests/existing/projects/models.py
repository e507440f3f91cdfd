"""Projects: what an organization works on."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from tenancy.scoping import TenantScopedQuerySetMixin


class ProjectQuerySet(models.QuerySet["Project"]):
    def active(self) -> ProjectQuerySet:
        return self.filter(archived_at__isnull=True)

    def visible_to(self, user: Any) -> ProjectQuerySet:
        """Projects of the organizations ``user`` belongs to."""
        return self.filter(organization__memberships__user=user)


class ScopedProjectQuerySet(TenantScopedQuerySetMixin, ProjectQuerySet):
    """ProjectQuerySet that refuses to run until narrowed to one organization."""

    tenant_field = "organization"


class Project(models.Model):
    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.CASCADE, related_name="projects"
    )
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(null=True, blank=True)

    objects = ProjectQuerySet.as_manager()
    # The MCP tools' way in: Project.scoped.for_tenant(ctx.tenant).active(); fails closed.
    scoped = ScopedProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="projects_name_unique")
        ]

    def __str__(self) -> str:
        return self.name
