"""Writes on memberships: each one that changes what a credential may do bumps the epoch."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenancy.models import Membership
from tenancy.roles import active_roles
from tenancy.tokens import bump_credential_epoch


@transaction.atomic
def membership_set_roles(*, membership: Membership, roles: Iterable[str]) -> Membership:
    new_roles = sorted(set(roles))
    unknown = [r for r in new_roles if r not in active_roles().stored_names()]
    if unknown:
        raise ValueError(f"unknown roles: {unknown}")
    if sorted(membership.roles) != new_roles:
        Membership.objects.filter(pk=membership.pk).update(roles=new_roles)
        membership.roles = new_roles
        bump_credential_epoch(membership)
    return membership


@transaction.atomic
def membership_disable(*, membership: Membership) -> Membership:
    if membership.disabled_at is None:
        membership.disabled_at = timezone.now()
        Membership.objects.filter(pk=membership.pk).update(disabled_at=membership.disabled_at)
        bump_credential_epoch(membership)
    return membership


@transaction.atomic
def membership_create(*, user: Any, tenant: Any, roles: Iterable[str] = ()) -> Membership:
    membership = Membership.objects.create(user=user, tenant=tenant, roles=sorted(set(roles)))
    return membership


def user_password_changed(*, user: Any) -> None:
    """Every membership of ``user`` gets a new epoch: old tokens die with the old password."""
    for membership in Membership.objects.filter(user=user):
        bump_credential_epoch(membership)
