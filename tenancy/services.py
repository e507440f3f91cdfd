"""Writes on memberships: each one that changes what a credential may do bumps the epoch."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from tenancy.members import create_membership, get_membership_model
from tenancy.models import AbstractMembership
from tenancy.roles import active_roles


@transaction.atomic
def membership_set_roles(
    *, membership: AbstractMembership, roles: Iterable[str]
) -> AbstractMembership:
    new_roles = sorted(set(roles))
    unknown = [r for r in new_roles if r not in active_roles().stored_names()]
    if unknown:
        raise ValueError(f"unknown roles: {unknown}")
    if sorted(membership.get_roles()) != new_roles:
        model = type(membership)
        stored = model.stored_roles(new_roles)
        # The update bumps the credential epoch (MembershipQuerySet.update).
        model._default_manager.filter(pk=membership.pk).update(**{model.ROLE_FIELD: stored})
        membership.set_roles(new_roles)
        membership.refresh_from_db(fields=["credential_epoch"])
    return membership


@transaction.atomic
def membership_disable(*, membership: AbstractMembership) -> AbstractMembership:
    if membership.disabled_at is None:
        membership.disabled_at = timezone.now()
        # The update bumps the credential epoch (MembershipQuerySet.update).
        type(membership)._default_manager.filter(pk=membership.pk).update(
            disabled_at=membership.disabled_at
        )
        membership.refresh_from_db(fields=["credential_epoch"])
    return membership


@transaction.atomic
def membership_create(*, user: Any, tenant: Any, roles: Iterable[str] = ()) -> AbstractMembership:
    return create_membership(user=user, tenant=tenant, roles=roles)


def user_credentials_changed(*, user: Any) -> None:
    """Password or active flag changed: every membership of ``user`` gets a new epoch, so
    deactivating and reactivating a user does not revive the tokens issued before."""
    model = get_membership_model()
    model._default_manager.filter(**{model.USER_FIELD: user}).update(
        credential_epoch=F("credential_epoch") + 1
    )
