"""Writes on memberships: each one that changes what a credential may do bumps the epoch."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from tenancy.models import Membership
from tenancy.roles import active_roles


@transaction.atomic
def membership_set_roles(*, membership: Membership, roles: Iterable[str]) -> Membership:
    new_roles = sorted(set(roles))
    unknown = [r for r in new_roles if r not in active_roles().stored_names()]
    if unknown:
        raise ValueError(f"unknown roles: {unknown}")
    if sorted(membership.roles) != new_roles:
        # The update bumps the credential epoch (MembershipQuerySet.update).
        Membership.objects.filter(pk=membership.pk).update(roles=new_roles)
        membership.roles = new_roles
        membership.refresh_from_db(fields=["credential_epoch"])
    return membership


@transaction.atomic
def membership_disable(*, membership: Membership) -> Membership:
    if membership.disabled_at is None:
        membership.disabled_at = timezone.now()
        # The update bumps the credential epoch (MembershipQuerySet.update).
        Membership.objects.filter(pk=membership.pk).update(disabled_at=membership.disabled_at)
        membership.refresh_from_db(fields=["credential_epoch"])
    return membership


@transaction.atomic
def membership_create(*, user: Any, tenant: Any, roles: Iterable[str] = ()) -> Membership:
    membership = Membership.objects.create(user=user, tenant=tenant, roles=sorted(set(roles)))
    return membership


def user_password_changed(*, user: Any) -> None:
    """Every membership of ``user`` gets a new epoch: old tokens die with the old password."""
    user_credentials_changed(user=user)


def user_credentials_changed(*, user: Any) -> None:
    """Password or active flag changed: every membership of ``user`` gets a new epoch, so
    deactivating and reactivating a user does not revive the tokens issued before."""
    Membership.objects.filter(user=user).update(credential_epoch=F("credential_epoch") + 1)
