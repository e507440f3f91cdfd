"""A rate limit per membership for every authenticated request, on the shared counters.

Counted with django-ratelimit on ``caches[RATELIMIT_USE_CACHE]`` (tenancy's counter table
unless the project chose a cache), so every worker and replica counts into one budget. The
budget belongs to the membership, not the token: minting more tokens buys no more requests.
``TenancyMiddleware`` counts right after it resolves the caller, *before* the
``Idempotency-Key`` middleware opens the write's transaction: a count made inside it would
hold the counter row locked until the write commits (serialising a member's writes), and a
rolled-back write would take its count with it. The rate is ``TENANCY_API_RATE``
(django-ratelimit syntax, ``"300/m"``); over it the answer is 429 problem JSON with
``Retry-After``. A view that keeps its own budget (``/mcp``) carries ``counts_own_rate``.
"""

from __future__ import annotations

import math
from typing import Any, Final

from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from tenancy import conf
from tenancy.permissions import request_actor
from tenancy.problems import problem_response

RATE_GROUP: Final = "tenancy.api"


def membership_rate_key(group: str, request: Any) -> str:
    """The counter key of a resolved caller: its membership (its user, failing that)."""
    actor = request_actor(request)
    if actor.membership_id is not None:
        return f"membership:{actor.membership_id}"
    return f"user:{actor.user_id}"


def rate_refusal(request: HttpRequest) -> HttpResponse | None:
    """Count one request of the resolved caller; 429 problem JSON when over the rate."""
    usage = get_usage(
        request,
        group=RATE_GROUP,
        key=membership_rate_key,
        rate=conf.get("API_RATE"),
        increment=True,
    )
    if usage is None or not usage["should_limit"]:
        return None
    retry_after = max(math.ceil(float(usage["time_left"])), 1)
    return problem_response(
        request=request,
        status=429,
        code="Http.RateLimited",
        title="Too many requests. Slow down and retry shortly.",
        headers={"Retry-After": str(retry_after)},
    )
