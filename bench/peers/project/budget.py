"""The peers' rate count: the same membership budget ``/mcp`` counts (``mcp_tools.serving.views``),
counted by ``TenancyMiddleware`` with the token check, answered by each peer's own hook."""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings

from tenancy.rates.throttling import RateBudget, counted_usage


def _rate(group: str, request: Any) -> str | None:
    rate: str = settings.BENCH_PEER_RATE
    return rate


BUDGET: Final = RateBudget(group="bench.peers.mcp", rate=_rate, methods=("POST",))


def over_rate(request: Any) -> bool:
    """Whether this request is over the budget (counted once, by the middleware)."""
    usage = counted_usage(request, BUDGET)
    return usage is not None and usage.should_limit


def resolved(request: Any) -> bool:
    """Whether TenancyMiddleware resolved a member's bearer token for this request."""
    return bool(getattr(request, "tenant", None) and request.tenant.is_resolved)
