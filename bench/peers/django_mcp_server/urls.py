"""``/mcp``: django-mcp-server's view, mounted as its README's "customized setup" does.

Authentication and the rate count go through the hooks the peer offers, DRF's: tenancy's
``TenancyAuthentication`` (it reads what TenancyMiddleware resolved from the bearer token) with
``IsAuthenticated``, and a DRF throttle answering the budget the middleware counted.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from mcp_server.views import MCPServerStreamableHttpView
from rest_framework.permissions import IsAuthenticated
from rest_framework.throttling import BaseThrottle

from bench.peers.project.budget import BUDGET, over_rate
from idempotency import handles_own_idempotency
from tenancy.drf_authentication import TenancyAuthentication
from tenancy.rates.throttling import rate_budget


class BudgetThrottle(BaseThrottle):
    def allow_request(self, request: Any, view: Any) -> bool:
        return not over_rate(request._request)


view = MCPServerStreamableHttpView.as_view(
    authentication_classes=[TenancyAuthentication],
    permission_classes=[IsAuthenticated],
    throttle_classes=[BudgetThrottle],
)
urlpatterns = [path("mcp", handles_own_idempotency(rate_budget(BUDGET)(view)))]
