"""DRF permission classes: one per policy, all decided by ``tenancy.roles.evaluate``."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from tenancy import roles
from tenancy.context import ActorContext, TenantContext
from tenancy.roles import Policy, Role


def request_actor(request: Request | Any) -> ActorContext:
    raw = getattr(request, "_request", request)
    actor = getattr(raw, "actor", None)
    return actor if isinstance(actor, ActorContext) else ActorContext()


class PolicyPermission(BasePermission):
    """Admit a request when its resolved actor passes ``policy`` and its tenant is resolved."""

    policy: Policy = roles.AUTHENTICATED
    message = "Your role does not allow this action."
    code = "Auth.Forbidden"

    def has_permission(self, request: Request, view: Any) -> bool:
        raw = getattr(request, "_request", request)
        tenant = getattr(raw, "tenant", None)
        if not isinstance(tenant, TenantContext) or not tenant.is_resolved:
            return False
        return roles.evaluate(self.policy, request_actor(request))


class IsTenantMember(PolicyPermission):
    policy = roles.AUTHENTICATED


def policy_permission(policy: Policy) -> type[PolicyPermission]:
    """A DRF permission class admitting exactly ``policy`` (``permission_classes = [...]``)."""
    return type(f"{policy.name}Permission", (PolicyPermission,), {"policy": policy})


def admitted_roles(permission_classes: list[type[BasePermission]] | tuple[Any, ...]) -> set[Role]:
    """The roles a view's live permission classes admit, found by asking them.

    Used by parity guards (an MCP tool never admits a role its mirrored route denies): the
    answer comes from running ``has_permission``, not from reading policy names.
    """
    from tenancy.probe import probe_request

    admitted: set[Role] = set()
    for role in roles.active_roles():
        request = probe_request(role)
        if all(cls().has_permission(request, None) for cls in permission_classes):  # type: ignore[arg-type]
            admitted.add(role)
    return admitted
