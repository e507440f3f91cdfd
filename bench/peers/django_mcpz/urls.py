"""``/mcp``: a django-mcpz ``MCPServer`` (itself the view) with the tool, as its README shows.

Authentication and the rate count go through the peer's one hook, ``auth=``: a callable that
answers a refusal or ``None``. Here it reads what TenancyMiddleware resolved from the bearer
token and counted (instead of django-mcpz's own ``bearer_tokens.token_auth``, a second lookup
on a token table of its own).
"""

from __future__ import annotations

from http import HTTPStatus

import msgspec
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django_mcpz.server import MCPServer

from bench.peers.project.budget import BUDGET, over_rate, resolved
from idempotency import handles_own_idempotency
from tenancy.rates.throttling import rate_budget


def tenancy_auth(request: HttpRequest) -> HttpResponse | None:
    if not resolved(request):
        return HttpResponse(status=HTTPStatus.UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
    if over_rate(request):
        return HttpResponse(status=HTTPStatus.TOO_MANY_REQUESTS)
    return None


server = MCPServer(name="bench", version="1.0.0", auth=tenancy_auth)


class AddParams(msgspec.Struct):
    a: int
    b: int


class Sum(msgspec.Struct):
    sum: int
    tenant: int


@server.tool(description="a + b", read_only=True)
def bench_add(request: HttpRequest, params: AddParams) -> Sum:
    return Sum(sum=params.a + params.b, tenant=request.tenant.id)  # type: ignore[attr-defined]


urlpatterns = [path("mcp", handles_own_idempotency(rate_budget(BUDGET)(server)))]
