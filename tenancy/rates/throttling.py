"""A rate budget per membership for every authenticated request, on the shared counters.

Counted on ``caches[RATELIMIT_USE_CACHE]`` (tenancy's counter table unless the project chose a
cache, e.g. Redis) with django-ratelimit's keys and fixed windows, so every worker and replica
counts into one budget. The budget belongs to the membership, not the token: minting more
tokens buys no more requests.

``TenancyMiddleware`` counts right after it resolves the caller, *before* the
``Idempotency-Key`` middleware opens the write's transaction: a count made inside it would
hold the counter row locked until the write commits (serialising a member's writes), and a
rolled-back write would take its count with it.

On tenancy's counter table (PostgreSQL) the count rides in the token check's own statement
(``tenancy.tokens.lookup``): the request pays no round trip for it. On Django's ``RedisCache`` the
count is one script (one round trip) with django-ratelimit's key and window; any other cache
is counted right after the check, through django-ratelimit's ``add``/``incr``.

Which budget: ``TENANCY_API_RATE`` (``"300/m"``, group ``tenancy.api``), answered over the
rate with a 429 problem JSON and ``Retry-After``; a view may name its own (``rate_budget``,
``/mcp``), which the middleware counts the same way and leaves for the view to answer
(``counted_usage``); a view marked ``counts_own_rate`` is not counted at all.
"""

from __future__ import annotations

import hashlib
import math
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string
from django_ratelimit.core import (
    ALL,
    EXPIRATION_FUDGE,
    _get_window,
    _make_cache_key,
    _split_rate,
    get_usage,
)

from tenancy import conf
from tenancy.events import rate_limited
from tenancy.markers import COUNTS_OWN_RATE, has_marker
from tenancy.models import RateCounter
from tenancy.permissions import request_actor
from tenancy.problems import problem_response
from tenancy.rates.counters import CounterCache

F = TypeVar("F", bound=Callable[..., Any])
RATE_GROUP: Final = "tenancy.api"
# The view attribute naming its own budget (``rate_budget``), read by TenancyMiddleware.
RATE_BUDGET: Final = "tenancy_rate_budget"
# Set on the request by TenancyMiddleware once it counted the view's budget (``counted_usage``).
USAGE_ATTRIBUTE: Final = "rate_usage"


@dataclass(frozen=True)
class RateBudget:
    """What one request of a resolved caller counts against.

    Attributes:
        group: the counter's name (django-ratelimit's ``group``), e.g. ``"mcp_tools.mcp"``.
        rate: ``"300/m"``-style, or ``callable(group, request) -> rate | None`` read per
            request (``None``: not limited), as django-ratelimit takes it.
        methods: the HTTP methods counted; ``None`` counts every method.
    """

    group: str
    rate: str | Callable[[str, Any], str | None]
    methods: tuple[str, ...] | None = None

    def rate_for(self, request: Any) -> str | None:
        return self.rate(self.group, request) if callable(self.rate) else self.rate

    def counts(self, request: Any) -> bool:
        return self.methods is None or request.method in self.methods

    @property
    def ratelimit_methods(self) -> Any:
        """django-ratelimit's ``method`` argument (part of the counter's key)."""
        return ALL if self.methods is None else list(self.methods)


@dataclass(frozen=True)
class RateUsage:
    """One counted request: the count in the current window and whether it is over."""

    group: str
    count: int
    limit: int
    should_limit: bool
    # Seconds until the window ends (django-ratelimit's ``time_left``; -1 when unknown).
    time_left: int

    @property
    def retry_after(self) -> int:
        """Whole seconds for ``Retry-After`` (at least 1)."""
        return max(math.ceil(float(self.time_left)), 1)


def _api_rate(group: str, request: Any) -> str | None:
    rate: str | None = conf.get("API_RATE")
    return rate


API_BUDGET: Final = RateBudget(group=RATE_GROUP, rate=_api_rate)


def rate_budget(budget: RateBudget) -> Callable[[F], F]:
    """Count ``budget`` for this view instead of ``TENANCY_API_RATE`` (``/mcp``: its own).

    TenancyMiddleware counts it with the token check and leaves the answer to the view, which
    reads the result with ``counted_usage(request)`` and refuses over the rate itself.
    """

    def mark(view: F) -> F:
        setattr(view, RATE_BUDGET, budget)
        return view

    return mark


def budget_of(view_func: Any) -> RateBudget | None:
    """The budget a request to ``view_func`` counts against; ``None`` for ``counts_own_rate``."""
    if has_marker(view_func, COUNTS_OWN_RATE):
        return None
    budget = getattr(view_func, RATE_BUDGET, None)
    if budget is None:
        view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
        budget = getattr(view_class, RATE_BUDGET, None)
    return budget if isinstance(budget, RateBudget) else API_BUDGET


def membership_rate_key(group: str, request: Any) -> str:
    """The counter key of a resolved caller: its membership (its user, failing that)."""
    actor = request_actor(request)
    if actor.membership_id is not None:
        return f"membership:{actor.membership_id}"
    return f"user:{actor.user_id}"


def _counter_key(budget: RateBudget, rate: str, value: str, cache: Any) -> tuple[str, int, int]:
    """django-ratelimit's counter for ``value`` under ``rate``: its full cache key, the end of
    its window (epoch seconds) and its expiry (seconds from now)."""
    _, period = _split_rate(rate)
    window = _get_window(value, period)
    key = _make_cache_key(budget.group, window, rate, value, budget.ratelimit_methods)
    return cache.make_and_validate_key(key), window, period + EXPIRATION_FUDGE


@dataclass
class PendingCount:
    """A count the token check may make in its own statement (``tenancy.tokens.lookup``).

    ``prepare(membership_id)`` gives the counter's full cache key, its expiry (seconds from
    now) and the table; the check fills in ``value`` when its statement counted.
    """

    budget: RateBudget
    rate: str
    cache: Any
    value: int | None = None
    window: int = 0

    def prepare(self, membership_id: int) -> tuple[str, int]:
        key, self.window, expiry = _counter_key(
            self.budget, self.rate, f"membership:{membership_id}", self.cache
        )
        return key, expiry

    def usage(self) -> RateUsage:
        assert self.value is not None
        self.cache.sweep_sometimes()
        limit, _ = _split_rate(self.rate)
        return RateUsage(
            group=self.budget.group,
            count=self.value,
            limit=limit,
            should_limit=self.value > limit,
            time_left=self.window - int(time.time()),
        )


def pending_count(request: HttpRequest, budget: RateBudget) -> PendingCount | None:
    """A count of ``budget`` the token check can carry, when the counters allow it.

    Only on tenancy's own counter table (``CounterCache``); ``None`` means: count afterwards
    (``count``), or nothing to count (the method is not counted, limits are off, no rate).
    """
    if not budget.counts(request) or not conf.ratelimit_enabled():
        return None
    rate = budget.rate_for(request)
    if rate is None:
        return None
    cache = caches[conf.rate_cache_alias()]
    if not isinstance(cache, CounterCache) or cache.table != RateCounter._meta.db_table:
        return None
    return PendingCount(budget=budget, rate=rate, cache=cache)


def count(request: HttpRequest, budget: RateBudget) -> RateUsage | None:
    """Count one request of the resolved caller against ``budget`` on the rate-limit cache.

    ``None`` when nothing is counted (the method is not counted, limits are off, no rate).
    """
    if not budget.counts(request):
        return None
    cache = caches[conf.rate_cache_alias()]
    if isinstance(cache, RedisCache):
        return _count_on_redis(request, budget, cache)
    usage = get_usage(
        request,
        group=budget.group,
        key=membership_rate_key,
        rate=budget.rate_for(request),
        method=budget.ratelimit_methods,
        increment=True,
    )
    if usage is None:
        return None
    return RateUsage(
        group=budget.group,
        count=int(usage["count"]),
        limit=int(usage["limit"]),
        should_limit=bool(usage["should_limit"]),
        time_left=int(usage["time_left"]),
    )


# django-ratelimit's add-then-incr in one round trip: the counter is created with its expiry by
# the INCR that makes it 1. Through Django's RedisCache the two commands cost about three times
# the CPU of this one script (a client built per command, key validation, pickling checks), the
# difference between counting on Redis and counting in the token check's own statement.
_REDIS_COUNT: Final = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""
_REDIS_COUNT_SHA: Final = hashlib.sha1(_REDIS_COUNT.encode(), usedforsecurity=False).hexdigest()


def _count_on_redis(request: HttpRequest, budget: RateBudget, cache: Any) -> RateUsage | None:
    """``count`` on Django's ``RedisCache``: django-ratelimit's key and window, one script."""
    from redis.exceptions import NoScriptError  # installed: a RedisCache is in use

    rate = budget.rate_for(request)
    if isinstance(rate, str) and "." in rate:
        rate = import_string(rate)(budget.group, request)  # as django-ratelimit reads it
    if rate is None:
        return None
    limit, _ = _split_rate(rate)
    key, window, expiry = _counter_key(
        budget, rate, membership_rate_key(budget.group, request), cache
    )
    client = cache._cache.get_client(key, write=True)
    try:
        try:
            counted = int(client.evalsha(_REDIS_COUNT_SHA, 1, key, expiry))
        except NoScriptError:
            counted = int(client.eval(_REDIS_COUNT, 1, key, expiry))
    except socket.gaierror:
        # As django-ratelimit answers a cache it cannot reach: open or closed, as configured.
        if getattr(settings, "RATELIMIT_FAIL_OPEN", False):
            return None
        return RateUsage(group=budget.group, count=0, limit=0, should_limit=True, time_left=-1)
    return RateUsage(
        group=budget.group,
        count=counted,
        limit=limit,
        should_limit=counted > limit,
        time_left=window - int(time.time()),
    )


_NOT_COUNTED: Final = object()


def counted_usage(request: HttpRequest, budget: RateBudget) -> RateUsage | None:
    """What TenancyMiddleware counted for ``budget`` on this request; counts now if it did not.

    Never counts a request twice. ``None``: nothing was counted (see ``count``).
    """
    counted: Any = getattr(request, USAGE_ATTRIBUTE, _NOT_COUNTED)
    if counted is _NOT_COUNTED or (counted is not None and counted.group != budget.group):
        counted = count(request, budget)
        setattr(request, USAGE_ATTRIBUTE, counted)
    assert counted is None or isinstance(counted, RateUsage)
    return counted


def was_counted(request: HttpRequest) -> bool:
    """TenancyMiddleware already counted this request (``counted_usage`` needs no I/O)."""
    return hasattr(request, USAGE_ATTRIBUTE)


def rate_refusal(request: HttpRequest, usage: RateUsage | None) -> HttpResponse | None:
    """The 429 problem JSON for a request over ``TENANCY_API_RATE``; ``None`` under it."""
    if usage is None or not usage.should_limit:
        return None
    rate_limited.send(sender=rate_refusal, request=request, group=usage.group)  # observability
    return problem_response(
        request=request,
        status=429,
        code="Http.RateLimited",
        title="Too many requests. Slow down and retry shortly.",
        headers={"Retry-After": str(usage.retry_after)},
    )
