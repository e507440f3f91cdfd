"""The farm's flock scope: tenancy's row scope, with flocks as the rows
(``TENANCY_ROW_SCOPE_RESOLVER``).

Brief §5.4: any role but Worker → unrestricted, no DB read. A Worker with no assignment rows →
unrestricted (grandfathered); with any farm-wide row → unrestricted; otherwise restricted to the
assigned flocks.
"""

from __future__ import annotations

from typing import Any

from cluck.roles import FARM_ROLES
from tenancy import ActorContext, TenantContext


def resolve_flock_scope(
    *, tenant: TenantContext, actor: ActorContext
) -> tuple[bool, frozenset[Any]]:
    from cluck.models import WorkerAssignment

    if not actor.is_resolved or actor.role != FARM_ROLES["Worker"] or actor.is_system:
        return True, frozenset()
    rows = list(
        WorkerAssignment.objects.for_tenant(tenant)
        .filter(membership_id=actor.membership_id)
        .values_list("flock_id", flat=True)
    )
    if not rows or any(flock_id is None for flock_id in rows):
        return True, frozenset()
    return False, frozenset(rows)
