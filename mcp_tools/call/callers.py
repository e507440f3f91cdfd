"""The caller of work that outlives its request, judged again: a queued task, an open stream.

Such work keeps what its request knew of the credential (never the secret: the membership,
the token's id, the credential epoch, the OAuth scopes) and, when it goes on, asks
``live_context`` for the caller as it is *now*: ``tenancy.tokens.ensure_still_live`` (the
request path's own liveness rule) first, then the live role and row scope in a fresh
``CallContext``. One function for the task worker (``mcp_tools.tasks.run``) and the listen
streams
(``mcp_tools.methods.subscriptions``), so neither can drift from the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from mcp_tools.call.context import CallContext, request_in_flight
from mcp_tools.codes import UNAUTHENTICATED
from tenancy import ActorContext, AuthenticationFailedError, RowScope, TenantContext


class CallerGoneError(Exception):
    """The caller is no longer a member of the tenant its work belongs to."""


def unauthenticated_error(refused: AuthenticationFailedError) -> dict[str, Any]:
    """The JSON-RPC error of a refused credential, as ``/mcp`` answers it (its 401 body):
    tenancy's stable code in ``data.code``."""
    return {
        "code": UNAUTHENTICATED,
        "message": str(refused.detail),
        "data": {"code": str(refused.default_code)},
    }


@dataclass(frozen=True)
class KeptCaller:
    """What long-lived work keeps of its caller to judge it again later."""

    tenant_key: str
    owner_key: str
    membership_key: str
    credential_epoch: int | None
    token_id: int | None
    scopes: frozenset[str] | None

    @classmethod
    def of(cls, ctx: CallContext) -> KeptCaller:
        actor = ctx.actor
        return cls(
            tenant_key=str(ctx.tenant_id),
            owner_key=str(ctx.user_id),
            membership_key=str(actor.membership_id),
            credential_epoch=actor.credential_epoch,
            token_id=actor.token_id,
            scopes=actor.scopes,
        )


def live_context(
    kept: KeptCaller,
    *,
    request_id: str,
    protocol_version: str,
    client_capabilities: Mapping[str, Any] | None,
) -> CallContext:
    """The caller's ``CallContext`` as it is now (role and row scope read again).

    Costs one read of the membership with its user and tenant, one of the token (when the
    work came with one) and the row-scope resolver's own (none for an unrestricted role).

    Raises:
        CallerGoneError: the membership no longer exists (or is another user's, or tenant's).
        AuthenticationFailedError: what the caller's next request with that credential gets
            (token revoked or expired, credentials superseded, user or member disabled, tenant
            suspended); its subclass carries the stable code.
    """
    from tenancy.members import memberships, with_user_and_tenant
    from tenancy.middleware import resolve_member
    from tenancy.tokens import ensure_still_live

    membership = (
        with_user_and_tenant(memberships(user=kept.owner_key, tenant=kept.tenant_key))
        .filter(pk=kept.membership_key)
        .first()
        if kept.membership_key.isdigit()
        else None
    )
    if membership is None:
        raise CallerGoneError()
    ensure_still_live(membership, credential_epoch=kept.credential_epoch, token_id=kept.token_id)
    request = HttpRequest()
    tenant, actor, row_scope = TenantContext(), ActorContext(), RowScope()
    resolve_member(
        tenant,
        actor,
        row_scope,
        membership,
        token_id=kept.token_id,
        scopes=kept.scopes,
        credential_epoch=kept.credential_epoch,
    )
    request.tenant = tenant  # type: ignore[attr-defined]
    request.actor = actor  # type: ignore[attr-defined]
    request.row_scope = row_scope  # type: ignore[attr-defined]
    with request_in_flight(request):
        return CallContext.from_request(
            request,
            tenant=tenant,
            request_id=request_id,
            protocol_version=protocol_version,
            client_capabilities=client_capabilities,
        )
