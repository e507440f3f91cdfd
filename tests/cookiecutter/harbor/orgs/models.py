"""Organizations (the marinas Harbor serves) and who belongs to them."""

from django.conf import settings
from django.db import models
from tenancy.models import AbstractMembership


class Organization(models.Model):
    name = models.CharField(max_length=100)
    slug = models.SlugField(unique=True)

    def __str__(self) -> str:
        return self.name


class Membership(AbstractMembership):
    """Who belongs to which organization, with which role: also the toolkit's membership
    (TENANCY_MEMBERSHIP_MODEL)."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        STAFF = "staff", "Staff"

    USER_FIELD = "user"
    TENANT_FIELD = "organization"
    ROLE_FIELD = "role"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STAFF)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="orgs_one_membership")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"
