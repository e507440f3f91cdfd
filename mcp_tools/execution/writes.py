"""A write tool's idempotency scope: the key space its idempotent unit claims in.

The unit itself (claim → execute → publish) runs in ``mcp_tools.execution.results.run_write``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_FIELD, ToolSpec
from mcp_tools.call.context import CallContext

if TYPE_CHECKING:
    from idempotency import IdempotencyScope


def scope_for(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> IdempotencyScope:
    """The idempotent unit's scope of one write call (tenant, tool, caller's key, request)."""
    import idempotency as port

    key: str = getattr(validated, IDEMPOTENCY_KEY_FIELD)
    arguments = validated.model_dump(mode="json", by_alias=True, exclude={IDEMPOTENCY_KEY_FIELD})
    scope = port.IdempotencyScope(
        tenant_id=str(ctx.tenant_id),
        # The port's keys are at most 64 characters; tool names may be 128.
        operation_key=port.sha256_hex(spec.operation_key),
        # Tenant-scoped, exactly like the HTTP adapter's caller key (SHA-256 of the raw key):
        # one key space per tenant, namespaced per tool by the operation key. Keeping the two
        # adapters' caller keys identical is what makes guard 19 (HTTP and MCP never alias)
        # a real test of the operation-key namespaces.
        caller_key=port.sha256_hex(key),
        # The acting user is part of the request, bound exactly as the HTTP adapter binds it: a
        # second member reusing the key is refused (KeyReused), never handed the first
        # member's result.
        fingerprint=port.bound_fingerprint(
            port.fingerprint_json(arguments), user_id=str(ctx.user_id)
        ),
    )
    return scope
