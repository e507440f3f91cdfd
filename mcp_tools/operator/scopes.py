"""OAuth scopes on ``/mcp``: what a credential narrowed by scopes may do (role ∩ scopes).

The role decides what is visible; a credential that carries scopes (``tenancy``'s
``actor.scopes``; a personal token carries none and is decided by its role alone) must also
cover the request: ``MCP_TOOLS_READ_SCOPE`` for every ``tools/call``, ``resources/read``,
``prompts/get``, ``completion/complete`` and ``tasks/*``, and ``MCP_TOOLS_WRITE_SCOPE`` as well
for a write tool; listings follow the role alone. A refusal is a 403 ``insufficient_scope``
naming every scope needed, so the client can step up.
"""

from __future__ import annotations

from mcp_tools import conf
from mcp_tools.call.context import CallContext
from mcp_tools.execution.runner import ScopesRequired


def needed(*, read_only: bool) -> tuple[str, ...]:
    """Every scope a call needs (sorted): read, and write for a write."""
    scopes = {str(conf.get("READ_SCOPE"))}
    if not read_only:
        scopes.add(str(conf.get("WRITE_SCOPE")))
    return tuple(sorted(scopes))


def refusal(ctx: CallContext, *, read_only: bool, what: str) -> ScopesRequired | None:
    """``insufficient_scope`` (403) when the credential's scopes do not cover the call."""
    granted = ctx.actor.scopes
    if granted is None:
        return None
    scopes = needed(read_only=read_only)
    if set(scopes) <= granted:
        return None
    message = f"Forbidden: {what} needs the scopes {' '.join(scopes)}; authorize them again"
    return ScopesRequired(scopes, message)
