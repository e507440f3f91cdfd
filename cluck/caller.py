"""``Caller``: who is acting, handed explicitly to every service and selector.

Built once at the edge — from a DRF request (``channel="http"``), from an MCP call context
(``channel="mcp"``) or for a management command (the system actor, ``channel="cli"``). Services
never read the request, globals or contextvars.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cluck.roles import SALES_ACCESS
from tenancy import ActorContext, RowScope, TenantContext, evaluate

if TYPE_CHECKING:
    from cluck.models import Farm


@dataclass(frozen=True)
class Caller:
    tenant: TenantContext
    actor: ActorContext
    scope: RowScope  # the flock scope: flocks are the rows
    channel: str

    @property
    def farm(self) -> Farm:
        farm: Farm = self.tenant.instance
        return farm

    @property
    def sees_money(self) -> bool:
        """The money rule, one for every channel: every money value — order totals, line
        prices and totals, settlement, payments, receivables, egg-grade list prices — is the
        money tier's (``SALES_ACCESS``: Owner, Manager, Sales). The selectors leave it out of
        what they return to anyone else, so REST and MCP cannot disagree (a Worker may sell,
        without seeing prices). The system actor of a management command sees everything."""
        if self.channel == "cli" and self.actor.is_resolved and self.actor.is_system:
            return True
        return evaluate(SALES_ACCESS, self.actor)

    @classmethod
    def from_request(cls, request: Any, *, channel: str = "http") -> Caller:
        raw = getattr(request, "_request", request)
        return cls(tenant=raw.tenant, actor=raw.actor, scope=raw.row_scope, channel=channel)

    @classmethod
    def system(cls, farm: Farm, *, label: str) -> Caller:
        """The system actor on ``farm`` (management commands). Farm-wide flock reach."""
        tenant = TenantContext()
        tenant.resolve(farm)
        actor = ActorContext()
        actor.resolve_system(label)
        scope = RowScope()
        scope.resolve(unrestricted=True)
        return cls(tenant=tenant, actor=actor, scope=scope, channel="cli")
