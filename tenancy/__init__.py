"""``tenancy``: who is calling — tenant, actor and row scope, resolved once per request.

Public surface (import-safe; no models): the request-scoped context types, roles and policies,
the view markers (``handles_own_transactions`` among them: ``ATOMIC_REQUESTS`` skips such a
view), the bearer challenge, the errors and the signals observers receive (``bearer_refused``,
``rate_limited``). Models live in ``tenancy.models``; the REST views in ``tenancy.urls``.
"""

from tenancy.challenges import bearer_challenge
from tenancy.context import ActorContext, RowScope, TenantContext
from tenancy.events import bearer_refused, rate_limited
from tenancy.exceptions import (
    AuthenticationFailedError,
    NotAuthenticatedError,
    ReassignmentError,
    TenancyError,
    TenantNotResolvedError,
)
from tenancy.markers import (
    accepts_superseded_credentials,
    claims_authorization,
    handles_own_transactions,
    ignores_ambient_credentials,
    renders_authentication_failure,
)
from tenancy.roles import (
    AUTHENTICATED,
    DEFAULT_ROLES,
    DENIED,
    Policy,
    Role,
    RoleSet,
    active_roles,
    effective_role,
    evaluate,
    evaluate_role,
    has_perm,
    load_permissions,
)

__all__ = [
    "AUTHENTICATED",
    "DEFAULT_ROLES",
    "DENIED",
    "ActorContext",
    "AuthenticationFailedError",
    "NotAuthenticatedError",
    "Policy",
    "ReassignmentError",
    "Role",
    "RoleSet",
    "RowScope",
    "TenancyError",
    "TenantContext",
    "TenantNotResolvedError",
    "accepts_superseded_credentials",
    "active_roles",
    "bearer_challenge",
    "bearer_refused",
    "claims_authorization",
    "effective_role",
    "evaluate",
    "evaluate_role",
    "handles_own_transactions",
    "has_perm",
    "ignores_ambient_credentials",
    "load_permissions",
    "rate_limited",
    "renders_authentication_failure",
]
