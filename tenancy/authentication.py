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

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (not 403) when credentials are missing.
        return bearer_challenge(realm="api")
