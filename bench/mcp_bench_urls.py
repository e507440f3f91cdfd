"""Bench-only URLs: the project's, plus a bare Django JSON view and django-stateless-mcp."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from pydantic import BaseModel

from cluck.urls import urlpatterns as project_patterns
from idempotency import handles_own_idempotency
from mcp_tools.serving.views import RATE_BUDGET, rate_usage
from tenancy.markers import counts_own_rate
from tenancy.rates.throttling import rate_budget


@csrf_exempt
@handles_own_idempotency
@counts_own_rate
async def bare_view(request: HttpRequest) -> HttpResponse:
    """The same work as bench_add with no MCP: parse, add, answer JSON (behind the same auth)."""
    if not request.tenant.is_resolved:  # type: ignore[attr-defined]
        return HttpResponse(status=401)
    return _answer(request)


@csrf_exempt
@handles_own_idempotency
@rate_budget(RATE_BUDGET)
async def bare_limited_view(request: HttpRequest) -> HttpResponse:
    """``bare_view`` plus /mcp's own per-member rate count (the same budget, counted the same
    way: by TenancyMiddleware with the token check, read with ``rate_usage``)."""
    if not request.tenant.is_resolved:  # type: ignore[attr-defined]
        return HttpResponse(status=401)
    usage = await rate_usage(request)
    if usage is not None and usage.should_limit:
        return HttpResponse(status=429)
    return _answer(request)


def _answer(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    args = body["params"]["arguments"]
    result = {"sum": args["a"] + args["b"], "tenant": request.tenant.id}  # type: ignore[attr-defined]
    payload = {
        "jsonrpc": "2.0",
        "id": body["id"],
        "result": {
            "content": [{"type": "text", "text": json.dumps(result)}],
            "structuredContent": result,
            "isError": False,
        },
    }
    return HttpResponse(json.dumps(payload), content_type="application/json")


class DsmSum(BaseModel):
    sum: int
    tenant: int


def _dsm_view() -> Callable[..., Any]:
    from django_stateless_mcp.views import mcp_view
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("dsm-bench", subscriptions=False)

    @server.tool()
    def bench_add(a: int, b: int) -> DsmSum:
        return DsmSum(sum=a + b, tenant=0)

    inner = mcp_view(server)

    @csrf_exempt
    @handles_own_idempotency
    @rate_budget(RATE_BUDGET)
    async def limited(request: HttpRequest) -> HttpResponseBase:
        """django-stateless-mcp behind the same authentication and the same rate count."""
        usage = await rate_usage(request)
        if usage is not None and usage.should_limit:
            return HttpResponse(status=429)
        response: HttpResponseBase = await inner(request)
        return response

    return limited


@csrf_exempt
@handles_own_idempotency
@counts_own_rate
def profile(request: HttpRequest, action: str) -> HttpResponse:
    """bench/mcp_profile.py: ``reset`` forgets the warm-up; ``save`` writes the profile."""
    import yappi

    if action == "reset":
        yappi.clear_stats()
    else:
        yappi.stop()
        stats = yappi.get_func_stats()
        if os.environ.get("MCP_BENCH_PROFILE_LOOP"):
            # Only the event loop's thread (uvicorn's main thread): what runs on the loop.
            main = next(t.id for t in yappi.get_thread_stats() if t.name == "_MainThread")
            stats = yappi.get_func_stats(filter={"ctx_id": main})
        stats.save(os.environ["MCP_BENCH_PROFILE"], type="pstat")
    return HttpResponse(status=204)


urlpatterns = [
    path("bench/profile/<str:action>", profile),
    path("bench/bare", bare_view),
    path("bench/bare-limited", bare_limited_view),
    path("bench/dsm/mcp", _dsm_view()),
    *project_patterns,
]
