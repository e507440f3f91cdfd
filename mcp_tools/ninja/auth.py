"""Ninja authentication that reads what ``TenancyMiddleware`` already resolved."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from tenancy import AUTHENTICATED, Policy, evaluate


class TenancyAuth:
    """A Ninja ``auth=`` callable: the caller ``TenancyMiddleware`` resolved, under ``policy``.

    Over REST the middleware resolved the bearer; through ``ninja_tool`` the request carries the
    ``CallContext``'s actor the same way, so one operation authenticates both alike. No
    resolved member: ``None`` (Ninja answers 401). A member the policy refuses: Ninja's
    ``AuthorizationError`` (403) with ``message``.
    """

    def __init__(
        self,
        policy: Policy = AUTHENTICATED,
        *,
        message: str = "You do not have permission to perform this action.",
    ) -> None:
        self.policy = policy
        self.message = message

    def __call__(self, request: HttpRequest) -> Any:
        from ninja.errors import AuthorizationError

        actor = getattr(request, "actor", None)
        if actor is None or not actor.is_resolved or actor.is_system:
            return None
        if not evaluate(self.policy, actor):
            raise AuthorizationError(message=self.message)
        return actor.user
