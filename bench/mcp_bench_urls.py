"""Bench-only URLs: the project's, plus a bare Django JSON view and django-stateless-mcp."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from pydantic import BaseModel

from cluck.urls import urlpatterns as project_patterns
from idempotency import handles_own_idempotency


@csrf_exempt
@handles_own_idempotency
async def bare_view(request: HttpRequest) -> HttpResponse:
    """The same work as bench_add with no MCP: parse, add, answer JSON (behind the same auth)."""
    if not request.tenant.is_resolved:  # type: ignore[attr-defined]
        return HttpResponse(status=401)
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


def _dsm_view():  # type: ignore[no-untyped-def]
    from django_stateless_mcp.views import mcp_view
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("dsm-bench", subscriptions=False)

    @server.tool()
    def bench_add(a: int, b: int) -> DsmSum:
        return DsmSum(sum=a + b, tenant=0)

    return handles_own_idempotency(mcp_view(server))


urlpatterns = [
    path("bench/bare", bare_view),
    path("bench/dsm/mcp", _dsm_view()),
    *project_patterns,
]
