"""The farm's roles and policies (brief §5.6), declared to ``tenancy`` (``TENANCY_ROLES``).

Roles by reach: Worker < ReadOnly < Sales < Manager < Owner. A membership with no stored role
is a Worker; the Owner is stored under its legacy name "Admin" (memberships and tokens issued
before the roles were declared keep their meaning).
"""

from __future__ import annotations

from typing import Final

from tenancy import Policy, RoleSet
from tenancy.permissions import policy_permission

FARM_ROLES: Final = RoleSet(
    ["Worker", "ReadOnly", "Sales", "Manager", ("Owner", "Admin")], default="Worker"
)

OWNER_ONLY: Final = Policy("OwnerOnly", {"Owner"})
ADMIN_ONLY: Final = Policy("AdminOnly", {"Owner", "Manager"})
SALES_ACCESS: Final = Policy("SalesAccess", {"Owner", "Manager", "Sales"})
SALES_FLOW: Final = Policy("SalesFlow", {"Owner", "Manager", "Sales", "Worker"})
PRODUCTION_WRITE: Final = Policy("ProductionWrite", {"Owner", "Manager", "Worker"})

# DRF permission classes, one per policy, all decided by tenancy.evaluate.
OwnerOnly = policy_permission(OWNER_ONLY)
AdminOnly = policy_permission(ADMIN_ONLY)
SalesAccess = policy_permission(SALES_ACCESS)
SalesFlow = policy_permission(SALES_FLOW)
ProductionWrite = policy_permission(PRODUCTION_WRITE)
