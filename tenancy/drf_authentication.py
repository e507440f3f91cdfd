"""DRF authentication that reads what ``TenancyMiddleware`` already resolved (no second lookup)."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from tenancy.challenges import bearer_challenge
from tenancy.context import ActorContext


class TenancyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        actor: ActorContext | None = getattr(request._request, "actor", None)
        if actor is None or not actor.is_resolved or actor.is_system:
            return None
        return (actor.user, actor.token_id)

    def authenticate_header(self, request: Request) -> str | None:
        """The challenge of the first of the view's other authentication classes, if any.

        DRF answers a missing credential with the first class's challenge (401), or 403 when
        it has none. Listed first beside a project's own classes, this one must not turn the
        project's 403s into 401s: it speaks for them. Alone, it challenges for a bearer.
        """
        others = [
            authenticator
            for authenticator in request.authenticators or ()
            if isinstance(authenticator, BaseAuthentication)
            and not isinstance(authenticator, TenancyAuthentication)
        ]
        if others:
            return others[0].authenticate_header(request)
        return bearer_challenge(realm="api")
