"""The credential epoch holds on every write path: admin, model save, QuerySet.update, user."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from tenancy.models import Membership
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def _status(raw: str) -> tuple[int, str]:
    response = Client().get("/api/v1/me/", headers={"Authorization": f"Bearer {raw}"})
    return response.status_code, response.json().get("code", "")


def _member(**kwargs: Any) -> tuple[Membership, str]:
    membership = MembershipFactory.create(tenant=FarmFactory.create(), **kwargs)
    return membership, bearer_for(membership)


@mutation(
    "tenancy/models.py",
    find="    def save(self, *args: Any, **kwargs: Any) -> None:",
    replace="    def _save_dropped(self, *args: Any, **kwargs: Any) -> None:",
)
def test_a_role_changed_in_the_admin_ends_the_old_tokens() -> None:
    """The admin's change form saves the model: the old token must stop at once.

    Mutation: drop ``Membership.save`` → red (the old token keeps working, as Manager).
    """
    membership, raw = _member(roles=["Sales"])
    admin = get_user_model().objects.create_superuser("root@x.example", "root@x.example", "pw")
    client = Client()
    client.force_login(admin)
    created = timezone.localtime(membership.created_at)
    response = client.post(
        f"/admin/tenancy/membership/{membership.pk}/change/",
        {
            "user": membership.user_id,
            "tenant": membership.tenant_id,
            "roles": '["Manager"]',
            "disabled_at_0": "",
            "disabled_at_1": "",
            "created_at_0": created.strftime("%Y-%m-%d"),
            "created_at_1": created.strftime("%H:%M:%S"),
        },
    )
    assert response.status_code == 302, response.content[:2000]
    membership.refresh_from_db()
    assert membership.roles == ["Manager"]
    assert _status(raw) == (401, "Auth.CredentialsSuperseded")


@mutation(
    "tenancy/models.py",
    find='        names = (cls.USER_FIELD, cls.TENANT_FIELD, cls.ROLE_FIELD, "disabled_at")',
    replace="        names = (cls.ROLE_FIELD,)",
)
def test_re_enabling_a_membership_does_not_revive_its_tokens() -> None:
    """Mutation: compare only ``roles`` in ``Membership.save`` → red."""
    membership, raw = _member()
    membership.disabled_at = timezone.now()
    membership.save()
    assert _status(raw)[0] == 401
    membership.disabled_at = None
    membership.save()
    assert _status(raw) == (401, "Auth.CredentialsSuperseded")
    assert _status(bearer_for(membership))[0] == 200


@mutation(
    "tenancy/signals.py",
    find='for name in ("password", "is_active") if name in names]',
    replace='for name in ("password",) if name in names]',
)
def test_reactivating_a_user_does_not_revive_their_tokens() -> None:
    """Mutation: watch only ``password`` in ``tenancy.signals._watched`` → red."""
    membership, raw = _member()
    user = membership.user
    user.is_active = False
    user.save()
    user.is_active = True
    user.save()
    assert _status(raw) == (401, "Auth.CredentialsSuperseded")


@mutation(
    "tenancy/models.py",
    find="    def update(self, **kwargs: Any) -> int:",
    replace="    def _update_dropped(self, **kwargs: Any) -> int:",
)
def test_a_queryset_update_of_roles_bumps_the_epoch() -> None:
    """Mutation: drop ``MembershipQuerySet.update`` → red."""
    membership, raw = _member(roles=["Sales"])
    Membership.objects.filter(pk=membership.pk).update(roles=["Manager"])
    assert _status(raw) == (401, "Auth.CredentialsSuperseded")


@mutation(
    "tenancy/models.py",
    find='self.credential_epoch = F("credential_epoch") + (1 if changed else 0)',
    replace="self.credential_epoch = self.credential_epoch + (1 if changed else 0)",
)
def test_a_stale_save_never_writes_back_an_older_epoch() -> None:
    """A form opened before a password change, saved after it, must not revive old tokens.

    Mutation: write ``credential_epoch`` from memory in ``Membership.save`` → red.
    """
    membership, raw = _member()
    stale = Membership.objects.get(pk=membership.pk)
    user = membership.user
    user.set_password("a-new-password-123")
    user.save()
    stale.save()  # nothing of its own changed
    assert _status(raw) == (401, "Auth.CredentialsSuperseded")


def test_an_unrelated_save_keeps_the_tokens() -> None:
    membership, raw = _member()
    membership.save()
    assert _status(raw)[0] == 200
