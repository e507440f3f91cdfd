"""The effective-role rule and the policies, evaluated through the live permission classes."""

from __future__ import annotations

import pytest

from tenancy import Role, effective_role
from tenancy.permissions import (
    AdminOnly,
    IsTenantMember,
    OwnerOnly,
    ProductionWrite,
    SalesAccess,
    SalesFlow,
    admitted_roles,
)

OW, M, S, W, R = Role.OWNER, Role.MANAGER, Role.SALES, Role.WORKER, Role.READ_ONLY


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ([], Role.WORKER),
        (["Admin"], Role.OWNER),
        (["ReadOnly", "Admin"], Role.OWNER),
        (["Sales", "Manager"], Role.MANAGER),
        (["ReadOnly"], Role.READ_ONLY),
        (["Bogus"], Role.DENIED),
        (["Bogus", "Sales"], Role.SALES),
    ],
)
def test_effective_role_is_the_highest_known_role(stored, expected):
    assert effective_role(stored) is expected


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
    """Mutation: add Role.SALES to PRODUCTION_WRITE's admitted set → red."""
    assert admitted_roles([permission]) == expected
