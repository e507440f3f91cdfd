"""Single assignment of the request-scoped identity values and the flock-scope defaults."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cluck.roles import FARM_ROLES
from tenancy import ActorContext, ReassignmentError, RowScope, TenantContext
from tests.mutations import mutation


def _tenant(pk: int) -> SimpleNamespace:
    return SimpleNamespace(pk=pk)


def _user(pk: int) -> SimpleNamespace:
    return SimpleNamespace(pk=pk, email=f"u{pk}@example.test")


def test_tenant_resolving_the_same_tenant_again_is_a_no_op():
    tenant = TenantContext()
    first = _tenant(7)
    tenant.resolve(first)
    tenant.resolve(_tenant(7))
    assert tenant.instance is first


@mutation(
    "tenancy/context.py",
    find="        if self._is_resolved:\n            if self._instance.pk == tenant.pk:",
    replace="        if False:\n            if self._instance.pk == tenant.pk:",
)
def test_tenant_reassignment_to_another_tenant_raises_and_keeps_the_original():
    """Mutation: make ``TenantContext.resolve`` overwrite when already resolved → red."""
    tenant = TenantContext()
    first = _tenant(7)
    tenant.resolve(first)
    with pytest.raises(ReassignmentError):
        tenant.resolve(_tenant(8))
    assert tenant.instance is first and tenant.id == 7


@mutation(
    "tenancy/context.py",
    find=(
        "            if self._identity() == candidate:\n                return\n"
        '            raise ReassignmentError("actor already resolved to a different principal")\n'
        "        self.user = user\n"
    ),
    replace="            pass\n        self.user = user\n",
)
def test_actor_reassignment_to_another_person_raises_and_keeps_the_original():
    """Mutation: drop the identity comparison in ``ActorContext.resolve`` → red."""
    actor = ActorContext()
    actor.resolve(user=_user(1), membership_id=10, roles=("Admin",), role=FARM_ROLES["Owner"])
    actor.resolve(user=_user(1), membership_id=10, roles=("Admin",), role=FARM_ROLES["Owner"])
    with pytest.raises(ReassignmentError):
        actor.resolve(user=_user(2), membership_id=11, roles=(), role=FARM_ROLES["Worker"])
    with pytest.raises(ReassignmentError):
        actor.resolve_system("cli:test")
    assert actor.user_id == 1 and actor.role is FARM_ROLES["Owner"] and not actor.is_system


@mutation(
    "tenancy/context.py",
    find='raise ReassignmentError("row scope already resolved to a different value")',
    replace="pass",
)
def test_flock_scope_reassignment_to_other_flocks_raises_and_keeps_the_original():
    """Mutation: let ``RowScope.resolve`` overwrite a resolved scope → red."""
    scope = RowScope()
    scope.resolve(unrestricted=False, row_ids=frozenset({1, 2}))
    scope.resolve(unrestricted=False, row_ids=frozenset({2, 1}))
    with pytest.raises(ReassignmentError):
        scope.resolve(unrestricted=True)
    assert scope.row_ids == {1, 2} and not scope.is_unrestricted


@mutation(
    "tenancy/context.py",
    find="self._is_unrestricted = True",
    replace="self._is_unrestricted = False",
)
def test_an_unresolved_flock_scope_reports_unrestricted_but_not_resolved():
    """The default that makes ``is_resolved`` — never ``is_unrestricted`` — the safety check.

    Mutation: default ``_is_unrestricted`` to False → red (the documented default changed).
    """
    scope = RowScope()
    assert scope.is_unrestricted is True
    assert scope.is_resolved is False
    assert TenantContext().is_resolved is False
    assert ActorContext().is_resolved is False


def test_the_system_actor_is_resolved_marked_and_has_no_user():
    actor = ActorContext()
    actor.resolve_system("cli:seed_demo")
    assert actor.is_resolved and actor.is_system
    assert actor.user_id is None and actor.roles == () and actor.label == "cli:seed_demo"
