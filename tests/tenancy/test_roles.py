"""Declared roles, the effective-role rule and the policies, through the live permission classes."""

from __future__ import annotations

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from cluck.roles import AdminOnly, OwnerOnly, ProductionWrite, SalesAccess, SalesFlow
from tenancy import DEFAULT_ROLES, DENIED, Policy, RoleSet, active_roles, effective_role
from tenancy.checks import check_roles
from tenancy.permissions import IsTenantMember, admitted_roles
from tests.mutations import mutation

FARM = active_roles()
OW, M, S, W, R = (FARM[name] for name in ("Owner", "Manager", "Sales", "Worker", "ReadOnly"))


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ([], "Worker"),
        (["Admin"], "Owner"),
        (["ReadOnly", "Admin"], "Owner"),
        (["Sales", "Manager"], "Manager"),
        (["ReadOnly"], "ReadOnly"),
        (["Bogus"], "Denied"),
        (["Bogus", "Sales"], "Sales"),
    ],
)
def test_effective_role_is_the_highest_known_role(stored, expected):
    assert effective_role(stored).name == expected


@mutation(
    "cluck/roles.py",
    find='Policy("ProductionWrite", {"Owner", "Manager", "Worker"})',
    replace='Policy("ProductionWrite", {"Owner", "Manager", "Worker", "Sales"})',
)
@pytest.mark.parametrize(
    ("permission", "expected"),
    [
        (OwnerOnly, {OW}),
        (AdminOnly, {OW, M}),
        (SalesAccess, {OW, M, S}),
        (SalesFlow, {OW, M, S, W}),
        (ProductionWrite, {OW, M, W}),
        (IsTenantMember, {OW, M, S, W, R}),
    ],
)
def test_each_policy_admits_exactly_its_roles(permission, expected):
    """Mutation: add "Sales" to PRODUCTION_WRITE's admitted names in cluck/roles.py → red."""
    assert admitted_roles([permission]) == expected


def test_the_neutral_default_roles_need_no_declaration():
    """A project that declares nothing gets ReadOnly < Member < Admin; no stored role = Member."""
    assert [role.name for role in DEFAULT_ROLES] == ["ReadOnly", "Member", "Admin"]
    assert DEFAULT_ROLES.effective([]).name == "Member"
    assert DEFAULT_ROLES.effective(["Member"]).name == "Member"
    assert DEFAULT_ROLES.effective(["ReadOnly", "Admin"]).name == "Admin"
    assert DEFAULT_ROLES.effective(["Owner"]) is DENIED
    assert DEFAULT_ROLES.stored_for("Member") == [] and DEFAULT_ROLES.stored_for("Admin") == [
        "Admin"
    ]


def test_a_role_set_without_a_default_denies_a_membership_with_no_role():
    strict = RoleSet(["Viewer", "Editor"], default=None)
    assert strict.effective([]) is DENIED
    with pytest.raises(ImproperlyConfigured):
        RoleSet(["A", "A"], default=None)
    with pytest.raises(ImproperlyConfigured):
        RoleSet(["A"], default="B")


def test_denied_is_admitted_by_no_policy_not_even_authenticated():
    from tenancy import AUTHENTICATED

    assert not AUTHENTICATED.allows_role(DENIED)
    assert AUTHENTICATED.allows_role(W)


@mutation("tenancy/checks.py", find="        if unknown:\n", replace="        if False:\n")
def test_a_policy_naming_an_undeclared_role_fails_the_system_check():
    """Mutation: skip undeclared names in ``check_roles`` → red."""
    Policy("TypoPolicy", {"Ownr"})
    try:
        errors = [e for e in check_roles() if e.id == "tenancy.E004"]
        assert errors and "Ownr" in errors[0].msg
    finally:
        from tenancy import roles

        roles._declared_policies[:] = [
            p for p in roles._declared_policies if p.name != "TypoPolicy"
        ]


@override_settings(TENANCY_ROLES="no.such.module.ROLES")
def test_an_unimportable_role_set_is_a_check_error_not_a_crash():
    errors = check_roles()
    assert [e.id for e in errors] == ["tenancy.E006"]
    assert isinstance(errors[0], checks.Error)
