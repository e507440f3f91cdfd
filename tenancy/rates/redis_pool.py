"""One Redis connection pool per process for Django's ``RedisCache`` (the rate counts on Redis).

Django keeps cache handles per context (``caches`` is an ``asgiref.local.Local``): under ASGI
every request gets a fresh ``RedisCache``, and each makes its own ``ConnectionPool`` from the
URL, so every counted request opened a new TCP connection to Redis and left it to the garbage
collector (issue 22: counting on Redis cost more than counting in PostgreSQL). This pool class
is shared instead: ``from_url`` hands every handle of the process the same pool for the same
URL and options, so requests borrow pooled connections. redis-py's pool notices a fork and
starts afresh in the child.

    CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://…",
        "OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},
    }}
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import redis


class ProcessConnectionPool(redis.ConnectionPool):
    """A ``redis.ConnectionPool`` whose ``from_url`` returns one pool per URL and options."""

    _shared: ClassVar[dict[tuple[str, str], ProcessConnectionPool]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Any:
        key = (url, repr(sorted(kwargs.items(), key=lambda item: item[0])))
        with cls._shared_lock:
            pool = cls._shared.get(key)
            if pool is None:
                pool = cls._shared[key] = super().from_url(url, **kwargs)
        return pool
