"""``tenancy``: who is calling — tenant, actor and flock scope, resolved once per request.

Public surface (import-safe; no models): the request-scoped context types, roles and policies,
the view markers and the errors. Models live in ``tenancy.models``.
"""

from tenancy.context import ActorContext, FlockScope, TenantContext
from tenancy.exceptions import (
    AuthenticationFailedError,
    ReassignmentError,
    TenancyError,
    TenantNotResolvedError,
)
from tenancy.markers import accepts_superseded_credentials, ignores_ambient_credentials
from tenancy.roles import (
    ADMIN_ONLY,
    AUTHENTICATED,
    OWNER_ONLY,
    PRODUCTION_WRITE,
    SALES_ACCESS,
    SALES_FLOW,
    Policy,
    Role,
    effective_role,
    evaluate,
)

__all__ = [
    "ADMIN_ONLY",
    "AUTHENTICATED",
    "OWNER_ONLY",
    "PRODUCTION_WRITE",
    "SALES_ACCESS",
    "SALES_FLOW",
    "ActorContext",
    "AuthenticationFailedError",
    "FlockScope",
    "Policy",
    "ReassignmentError",
    "Role",
    "TenancyError",
    "TenantContext",
    "TenantNotResolvedError",
    "accepts_superseded_credentials",
    "effective_role",
    "evaluate",
    "ignores_ambient_credentials",
]
