"""Memberships (a user's role in one tenant) and bearer access tokens."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import models
from django.db.models import F
from django.utils import timezone

from tenancy import conf
from tenancy.roles import DENIED, Role, effective_role, group_roles


class TenantForeignKey(models.ForeignKey):
    """A foreign key to ``TENANCY_TENANT_MODEL`` that migrations record as that setting.

    Django writes ``settings.AUTH_USER_MODEL`` into migrations because ``auth.User`` declares
    itself swappable; a project's own tenant model does not, so this field says it instead.
    ``makemigrations`` then writes ``settings.TENANCY_TENANT_MODEL`` and a swappable
    dependency — never any project's app label.
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


class MembershipQuerySet(models.QuerySet[Any]):
    def update(self, **kwargs: Any) -> int:
        """``QuerySet.update`` (and ``bulk_update``) of an epoch field bumps the epoch too.

        Conservative: an update that writes the same value still ends the old tokens.
        """
        if self.model.epoch_field_names() & kwargs.keys() and "credential_epoch" not in kwargs:
            kwargs["credential_epoch"] = F("credential_epoch") + 1
        return super().update(**kwargs)


class AbstractMembership(models.Model):
    """What the toolkit needs of a membership row: a user's place, with a role, in one tenant.

    A project with a membership table of its own inherits this the way a custom user model
    inherits ``AbstractBaseUser``, names it in ``TENANCY_MEMBERSHIP_MODEL``, and says which of
    its fields are the user, the tenant and the role(s) with ``USER_FIELD``, ``TENANT_FIELD``
    and ``ROLE_FIELD`` (the role column holds one role name, or a list of them). This base adds
    the credential epoch and the disabled state.

    Identity checks re-read the row on every request, so a role written to it is the role of
    the very next call. The credential epoch holds on every ORM write path: ``save()`` (the
    admin, forms, shell) bumps it when the user, tenant, role or disabled state changed, and
    never writes back an epoch read earlier (an admin form open during a password change
    would otherwise revive the old tokens); ``QuerySet.update``/``bulk_update`` of those
    fields bump it (``MembershipQuerySet``; a custom manager must use it). Raw SQL is not
    covered: a role it writes still applies on the next call, but old tokens live on.
    """

    USER_FIELD: ClassVar[str] = "user"
    TENANT_FIELD: ClassVar[str] = "tenant"
    ROLE_FIELD: ClassVar[str] = "roles"

    # Bumped on role change, password change, suspension: every older token stops working.
    credential_epoch = models.PositiveIntegerField(default=1)
    disabled_at = models.DateTimeField(null=True, blank=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        abstract = True

    def get_user(self) -> Any:
        return getattr(self, self.USER_FIELD)

    def get_tenant(self) -> Any:
        return getattr(self, self.TENANT_FIELD)

    def get_roles(self) -> tuple[str, ...]:
        """The stored role names (empty: the role set's default role)."""
        value = getattr(self, self.ROLE_FIELD)
        if value is None or value == "":
            return ()
        if isinstance(value, str):
            return (value,)
        return tuple(str(role) for role in value)

    def set_roles(self, roles: list[str]) -> None:
        """Assign ``roles`` to the role column in its own shape (one name, or a list)."""
        setattr(self, self.ROLE_FIELD, self.stored_roles(roles))

    @classmethod
    def stored_roles(cls, roles: list[str]) -> Any:
        """``roles`` as the role column stores them.

        Raises:
            ValueError: several roles for a column that holds one.
        """
        field = cls._meta.get_field(cls.ROLE_FIELD)
        if isinstance(field, models.JSONField):
            return sorted(set(roles))
        if len(roles) > 1:
            raise ValueError(f"{cls._meta.label}.{cls.ROLE_FIELD} holds one role, not {roles}")
        return roles[0] if roles else ""

    @property
    def effective_role(self) -> Role:
        """The stored roles' effective role, raised by the user's groups when
        ``TENANCY_ROLES_FROM_GROUPS`` (a group named like a role grants it; never lowers)."""
        role = effective_role(self.get_roles())
        if role is DENIED or not conf.get("ROLES_FROM_GROUPS"):
            return role
        return max([role, *group_roles(self.get_user())], key=lambda found: found.rank)

    @classmethod
    def epoch_fields(cls) -> list[models.Field[Any, Any]]:
        """The fields whose change ends the membership's tokens."""
        names = (cls.USER_FIELD, cls.TENANT_FIELD, cls.ROLE_FIELD, "disabled_at")
        fields = [cls._meta.get_field(name) for name in names]
        return [field for field in fields if isinstance(field, models.Field)]

    @classmethod
    def epoch_attnames(cls) -> tuple[str, ...]:
        return tuple(field.attname for field in cls.epoch_fields())

    @classmethod
    def epoch_field_names(cls) -> frozenset[str]:
        """What ``update(**kwargs)`` may name for those fields (name or attname)."""
        fields = cls.epoch_fields()
        return frozenset({f.name for f in fields} | {f.attname for f in fields})

    def save(self, *args: Any, **kwargs: Any) -> None:
        update_fields = kwargs.get("update_fields")
        if self._state.adding or self.pk is None:
            super().save(*args, **kwargs)
            return
        watched = [
            a
            for a in self.epoch_attnames()
            if update_fields is None or {a, a.removesuffix("_id")} & set(update_fields)
        ]
        previous = (
            type(self)._base_manager.filter(pk=self.pk).values(*watched).first()
            if watched
            else None
        )
        changed = previous is not None and any(previous[a] != getattr(self, a) for a in watched)
        writes_epoch = update_fields is None or "credential_epoch" in update_fields
        if changed or writes_epoch:
            # Computed in the database: an epoch read before a concurrent bump is never
            # written back.
            self.credential_epoch = F("credential_epoch") + (1 if changed else 0)
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "credential_epoch"}
        super().save(*args, **kwargs)
        if not isinstance(self.credential_epoch, int):
            self.refresh_from_db(fields=["credential_epoch"])


class Membership(AbstractMembership):
    """tenancy's own membership table, for projects without one (``TENANCY_MEMBERSHIP_MODEL``
    swaps it out, as ``AUTH_USER_MODEL`` swaps out ``auth.User``)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    tenant = TenantForeignKey(on_delete=models.CASCADE, related_name="memberships")
    # Stored role strings of the project's RoleSet (TENANCY_ROLES); empty = its default role.
    roles = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        swappable = conf.MEMBERSHIP_MODEL_SETTING
        constraints = [
            models.UniqueConstraint(fields=["user", "tenant"], name="tenancy_membership_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.effective_role.label})"


class AccessToken(models.Model):
    """A bearer token bound to one membership. Only the SHA-256 digest of the secret is kept."""

    class Kind(models.TextChoices):
        PERSONAL = "personal", "Personal access token"
        SESSION = "session", "Login session token"

    membership = models.ForeignKey(
        conf.membership_model_label(), on_delete=models.CASCADE, related_name="tokens"
    )
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
    """Fixed-window rate-limit counters (``tenancy.rates.counters.CounterCache``), shared by
    processes.

    UNLOGGED on PostgreSQL (migration 0002): a crash may reopen a rate window, never more.
    """

    key = models.CharField(max_length=250, primary_key=True)
    value = models.BigIntegerField()
    expires = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "tenancy_rate_counter"
