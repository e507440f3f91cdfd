"""Synthetic resolved requests, one per role, for evaluating live permission code."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tenancy.context import ActorContext, FlockScope, TenantContext
from tenancy.roles import ASSIGNABLE_ROLES, Role


def probe_actor(role: Role) -> ActorContext:
    actor = ActorContext()
    stored = () if role is Role.WORKER else (ASSIGNABLE_ROLES.get(role, "Unknown"),)
    user = SimpleNamespace(pk=-1, email="probe@invalid")
    actor.resolve(user=user, membership_id=-1, roles=stored, role=role)
    return actor


def probe_request(role: Role) -> Any:
    tenant = TenantContext()
    tenant.resolve(SimpleNamespace(pk=-1))
    scope = FlockScope()
    scope.resolve(unrestricted=True)
    return SimpleNamespace(tenant=tenant, actor=probe_actor(role), flock_scope=scope)
