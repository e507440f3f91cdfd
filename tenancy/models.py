"""Memberships (a user's role in one tenant) and bearer access tokens."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenancy import conf
from tenancy.roles import Role, effective_role


class TenantForeignKey(models.ForeignKey):
    """A foreign key to ``TENANCY_TENANT_MODEL`` that migrations record as that setting.

    Django writes ``settings.AUTH_USER_MODEL`` into migrations because ``auth.User`` declares
    itself swappable; a project's own tenant model does not, so this field says it instead.
    ``makemigrations`` then writes ``settings.TENANCY_TENANT_MODEL`` and a swappable
    dependency — never the farm's, or any project's, app label.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["to"] = conf.tenant_model_label()
        super().__init__(*args, **kwargs)

    @property
    def swappable_setting(self) -> str:
        return conf.TENANT_MODEL_SETTING

    def deconstruct(self) -> Any:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.ForeignKey", args, kwargs


class Membership(models.Model):
    """A user's place in one tenant. Identity checks re-read this row on every request."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    tenant = TenantForeignKey(on_delete=models.CASCADE, related_name="memberships")
    # Stored role strings of the project's RoleSet (TENANCY_ROLES); empty = its default role.
    roles = models.JSONField(default=list, blank=True)
    # Bumped on role change, password change, suspension: every older token stops working.
    credential_epoch = models.PositiveIntegerField(default=1)
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "tenant"], name="tenancy_membership_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.effective_role.label})"

    @property
    def effective_role(self) -> Role:
        return effective_role(self.roles)


class AccessToken(models.Model):
    """A bearer token bound to one membership. Only the SHA-256 digest of the secret is kept."""

    class Kind(models.TextChoices):
        PERSONAL = "personal", "Personal access token"
        SESSION = "session", "Login session token"

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="tokens")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=100)
    # The non-secret leading characters, shown in listings so a user can tell tokens apart.
    prefix = models.CharField(max_length=24)
    digest = models.CharField(max_length=64, unique=True)
    credential_epoch = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["membership", "kind"], name="tenancy_token_member_kind")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class RateCounter(models.Model):
    """Fixed-window rate-limit counters (``tenancy.counters.CounterCache``), shared by processes.

    UNLOGGED on PostgreSQL (migration 0002): a crash may reopen a rate window, never more.
    """

    key = models.CharField(max_length=250, primary_key=True)
    value = models.BigIntegerField()
    expires = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "tenancy_rate_counter"
