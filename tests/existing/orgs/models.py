"""Organizations and who belongs to them, with which role."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from tenancy.models import AbstractMembership


class OrganizationQuerySet(models.QuerySet["Organization"]):
    def for_user(self, user: Any) -> OrganizationQuerySet:
        return self.filter(memberships__user=user)


class Organization(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrganizationQuerySet.as_manager()

    def __str__(self) -> str:
        return self.name


class Membership(AbstractMembership):
    """Who belongs to which organization, with which role: also the toolkit's membership
    (TENANCY_MEMBERSHIP_MODEL), so a role change here applies to every token at once."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        ADMIN = "admin", "Admin"
        MEMBER = "member", "Member"

    # Which of the fields below the toolkit reads.
    USER_FIELD = "user"
    TENANT_FIELD = "organization"
    ROLE_FIELD = "role"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.MEMBER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="orgs_one_membership")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"


def role_of(user: Any, organization: Organization) -> str | None:
    """The user's role in the organization, or None for a non-member."""
    return (
        Membership.objects.filter(user=user, organization=organization)
        .values_list("role", flat=True)
        .first()
    )
