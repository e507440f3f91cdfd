"""Each reusable app's public surface is exactly what it means to promise."""

from __future__ import annotations

import importlib

import pytest

from tests.mutations import mutation

EXPECTED = {
    "a2a_tools": {"TaskOwner", "TaskPage", "TaskStore"},
    "tenancy": {
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
    },
    "idempotency": {
        "KEY_PATTERN",
        "Executed",
        "ExemptView",
        "Failure",
        "IdempotencyScope",
        "IdempotentUnit",
        "InProgress",
        "KeyConflict",
        "Outcome",
        "Replayed",
        "Success",
        "bound_fingerprint",
        "exempt_views",
        "exemption_of",
        "fingerprint_bytes",
        "fingerprint_json",
        "handles_own_idempotency",
        "key_problem",
        "lease_stolen",
        "max_key_length",
        "never_replay",
        "sha256_hex",
        "unit_finished",
        "user_scoped_keys",
    },
    "mcp_tools": {
        "CallCancelled",
        "CallContext",
        "CallContextRefusedError",
        "Elicited",
        "FactoryTool",
        "ResourceNotFoundError",
        "TaskCancelled",
        "ToolError",
        "ToolFailure",
        "prompt",
        "raw_tool",
        "resource",
        "resource_template",
        "tool",
        "tool_factory",
    },
}


@mutation(
    "tenancy/__init__.py",
    find='__all__ = [\n    "AUTHENTICATED",',
    replace='__all__ = [\n    "conf",\n    "AUTHENTICATED",',
)
@pytest.mark.parametrize("app", sorted(EXPECTED))
def test_public_surface_is_pinned(app):
    """Mutation: add a name to ``tenancy.__all__`` → red."""
    module = importlib.import_module(app)
    assert set(module.__all__) == EXPECTED[app]
    assert all(hasattr(module, name) for name in module.__all__)
