from __future__ import annotations

from django.conf import settings
from django.db import models

from tenancy.models import AbstractMembership, TenantForeignKey


class TeamMembership(AbstractMembership):
    """Shaped like a SaaS project's ``Membership(user, organization, role)``."""

    TENANT_FIELD = "organisation"
    ROLE_FIELD = "role"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    organisation = TenantForeignKey(on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=20, blank=True)
    note = models.CharField(max_length=100, blank=True)


class MisnamedMembership(AbstractMembership):
    """Names a tenant field it does not have (system check tenancy.E008)."""

    TENANT_FIELD = "organization"
    ROLE_FIELD = "role"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    team = TenantForeignKey(on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=20, blank=True)
