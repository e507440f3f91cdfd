"""Edges of the token and identity modules that mutmut found no test for (docs/testing.md)."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from tenancy import DENIED, ActorContext, RowScope, TenantContext
from tenancy.models import AccessToken
from tenancy.tokens import issue_session_token, issue_token, revoke_token
from tests.factories import MembershipFactory


@pytest.mark.django_db
def test_a_login_session_token_expires_after_the_session_minutes(settings) -> None:
    settings.TENANCY_SESSION_TOKEN_MINUTES = 15
    token, raw = issue_session_token(membership=MembershipFactory.create())
    assert raw.startswith("ck_ses_") and token.kind == AccessToken.Kind.SESSION
    assert token.expires_at is not None
    assert abs(token.expires_at - (timezone.now() + timedelta(minutes=15))) < timedelta(minutes=1)


@pytest.mark.django_db
def test_revoking_one_token_leaves_every_other_token_live() -> None:
    membership = MembershipFactory.create()
    revoked, _ = issue_token(membership=membership, name="one")
    kept, _ = issue_token(membership=membership, name="two")
    other, _ = issue_token(membership=MembershipFactory.create(), name="elsewhere")
    revoke_token(revoked)
    assert revoked.revoked_at is not None
    live = set(AccessToken.objects.filter(revoked_at__isnull=True).values_list("pk", flat=True))
    assert {kept.pk, other.pk} <= live and revoked.pk not in live


def test_the_system_actor_has_the_denied_role_and_a_label() -> None:
    actor = ActorContext()
    actor.resolve_system("cli:seed_demo")
    assert actor.role is DENIED and actor.roles == () and actor.email == "cli:seed_demo"
    with pytest.raises(ValueError):
        ActorContext().resolve_system("")


@pytest.mark.parametrize("tenant", [None, SimpleNamespace(pk=None)])
def test_a_tenant_must_be_a_saved_instance(tenant) -> None:
    context = TenantContext()
    with pytest.raises(ValueError):
        context.resolve(tenant)
    assert not context.is_resolved


@pytest.mark.parametrize("user", [None, SimpleNamespace(pk=None, email="x@example.test")])
def test_a_person_actor_needs_a_saved_user(user) -> None:
    actor = ActorContext()
    with pytest.raises(ValueError):
        actor.resolve(user=user, membership_id=1, roles=(), role=DENIED)
    assert not actor.is_resolved


def test_a_restricted_scope_allows_exactly_its_rows() -> None:
    scope = RowScope()
    scope.resolve(unrestricted=False, row_ids=frozenset({3}))
    assert scope.allows(3) and not scope.allows(4)
    everywhere = RowScope()
    everywhere.resolve(unrestricted=True, row_ids=frozenset({3}))
    assert everywhere.allows(4) and everywhere.row_ids == frozenset()
