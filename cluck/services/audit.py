"""The audit writer: one row per change, inside the caller's transaction."""

from __future__ import annotations

from typing import Any

from cluck.caller import Caller
from cluck.models import AuditEvent


def audit_record(
    *,
    caller: Caller,
    action: str,
    entity_type: str,
    entity_id: Any,
    details: dict[str, Any] | None = None,
    reason: str | None = None,
) -> AuditEvent:
    """Append an audit event. Fails closed if the actor is unresolved."""
    actor = caller.actor
    if not actor.is_resolved:
        raise RuntimeError("audit_record refused: the actor is unresolved")
    return AuditEvent.objects.create(
        farm=caller.farm,
        actor_user_id=actor.user_id,
        actor_label=actor.label if actor.is_system else actor.email,
        channel=caller.channel,
        action=action,
        entity_type=entity_type,
        entity_id=str(entity_id),
        details=details,
        reason=reason,
    )
