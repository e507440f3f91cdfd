"""Roles, the effective-role rule and the route policies (brief §5.6).

Routes and MCP tools pick a *policy*, never a raw role; both are evaluated by ``evaluate``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tenancy.context import ActorContext


class Role(enum.IntEnum):
    """Effective roles, ordered by reach; ``DENIED`` sorts last but admits nothing."""

    WORKER = 0
    READ_ONLY = 1
    SALES = 2
    MANAGER = 3
    OWNER = 4
    DENIED = 5

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Role.WORKER: "Worker",
    Role.READ_ONLY: "ReadOnly",
    Role.SALES: "Sales",
    Role.MANAGER: "Manager",
    Role.OWNER: "Owner",
    Role.DENIED: "Denied",
}

# Stored role strings. Owner is stored under its legacy name "Admin"; a Worker has no role at all.
STORED_ROLE_NAMES: dict[str, Role] = {
    "Admin": Role.OWNER,
    "Manager": Role.MANAGER,
    "Sales": Role.SALES,
    "ReadOnly": Role.READ_ONLY,
}
ASSIGNABLE_ROLES: dict[Role, str] = {role: name for name, role in STORED_ROLE_NAMES.items()}


def effective_role(stored: Iterable[str]) -> Role:
    """No roles → Worker; otherwise the highest recognised role; only unknown strings → Denied.

    Multi-role principals take the highest role so "Owner + ReadOnly" is never locked out.
    """
    names = list(stored)
    if not names:
        return Role.WORKER
    known = [STORED_ROLE_NAMES[name] for name in names if name in STORED_ROLE_NAMES]
    if not known:
        return Role.DENIED
    return max(known)


@dataclass(frozen=True)
class Policy:
    """A named set of admitted effective roles."""

    name: str
    admits: frozenset[Role]

    def allows_role(self, role: Role) -> bool:
        return role in self.admits


OWNER_ONLY = Policy("OwnerOnly", frozenset({Role.OWNER}))
ADMIN_ONLY = Policy("AdminOnly", frozenset({Role.OWNER, Role.MANAGER}))
SALES_ACCESS = Policy("SalesAccess", frozenset({Role.OWNER, Role.MANAGER, Role.SALES}))
SALES_FLOW = Policy("SalesFlow", frozenset({Role.OWNER, Role.MANAGER, Role.SALES, Role.WORKER}))
PRODUCTION_WRITE = Policy("ProductionWrite", frozenset({Role.OWNER, Role.MANAGER, Role.WORKER}))
AUTHENTICATED = Policy(
    "Authenticated",
    frozenset({Role.OWNER, Role.MANAGER, Role.SALES, Role.WORKER, Role.READ_ONLY}),
)

POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (OWNER_ONLY, ADMIN_ONLY, SALES_ACCESS, SALES_FLOW, PRODUCTION_WRITE, AUTHENTICATED)
}


def evaluate(policy: Policy, actor: ActorContext) -> bool:
    """The one authorization decision shared by the REST routes and the MCP tools.

    A system actor is never admitted over a network channel; an unresolved actor never is.
    """
    if not actor.is_resolved or actor.is_system:
        return False
    return policy.allows_role(actor.role)
