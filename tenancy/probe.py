"""Synthetic resolved requests, one per declared role, for evaluating live permission code."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tenancy.context import ActorContext, RowScope, TenantContext
from tenancy.roles import Role, active_roles


def probe_actor(role: Role) -> ActorContext:
    actor = ActorContext()
    user = SimpleNamespace(pk=-1, email="probe@invalid")
    stored = tuple(active_roles().stored_for(role.name))
    actor.resolve(user=user, membership_id=-1, roles=stored, role=role)
    return actor


def probe_request(role: Role) -> Any:
    tenant = TenantContext()
    tenant.resolve(SimpleNamespace(pk=-1))
    scope = RowScope()
    scope.resolve(unrestricted=True)
    return SimpleNamespace(tenant=tenant, actor=probe_actor(role), row_scope=scope)
