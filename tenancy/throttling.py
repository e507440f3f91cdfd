"""``MembershipRateThrottle``: a REST rate limit per membership, on the shared counters.

A DRF throttle counted with django-ratelimit on ``caches[RATELIMIT_USE_CACHE]`` (tenancy's
counter table unless the project chose a cache), so every worker and replica counts into one
budget. The budget belongs to the membership, not the token: minting more tokens buys no
more requests. Add it to ``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``; the rate is
``TENANCY_API_RATE`` (django-ratelimit syntax, ``"300/m"``). Refusals are DRF's ``Throttled``
(429 with ``Retry-After``).
"""

from __future__ import annotations

import math
from typing import Any, Final

from django_ratelimit.core import get_usage
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from tenancy import conf
from tenancy.permissions import request_actor

RATE_GROUP: Final = "tenancy.api"


def membership_rate_key(group: str, request: Any) -> str:
    """The counter key of a resolved caller: its membership (its user, failing that)."""
    actor = request_actor(request)
    if actor.membership_id is not None:
        return f"membership:{actor.membership_id}"
    return f"user:{actor.user_id}"


class MembershipRateThrottle(BaseThrottle):
    def __init__(self) -> None:
        self.time_left: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        actor = request_actor(request)
        if not actor.is_resolved or actor.is_system:
            return True  # anonymous requests: 401 from the permission check, login its own limit
        usage = get_usage(
            request._request,
            group=RATE_GROUP,
            key=membership_rate_key,
            rate=conf.get("API_RATE"),
            increment=True,
        )
        if usage is not None and usage["should_limit"]:
            self.time_left = float(usage["time_left"])
            return False
        return True

    def wait(self) -> float | None:
        return None if self.time_left is None else max(math.ceil(self.time_left), 1)
