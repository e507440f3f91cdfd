"""``CounterCache``: rate-limit counters shared by every process, one statement per count.

The cache django-ratelimit counts on must be shared by all workers and replicas and must
increment atomically. Django's own backends are either per-process (``LocMemCache``) or
get-then-set (``DatabaseCache``). This one keeps integers in tenancy's ``RateCounter`` table
and works on PostgreSQL and SQLite alike. ``tenancy`` installs it as the rate-limit cache when
a project configures none (``tenancy.conf.install_counter_cache_default``); production may use
Redis instead.
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connections, router
from django.utils import timezone


def _aware(value: Any) -> datetime:
    """SQLite hands timestamps back as text; PostgreSQL as aware datetimes."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


class CounterCache(BaseCache):
    """Integer counters in one table, each operation a single SQL statement.

    django-ratelimit counts with ``add`` then ``incr``; here ``add`` is one
    ``INSERT … ON CONFLICT`` and ``incr`` one ``UPDATE … RETURNING``, atomic on PostgreSQL and
    SQLite alike and shared by every replica — a fraction of the round trips of a pickling
    database cache. Only integers are stored.

    Once this process has seen a counter in the database (created it, or incremented it), it
    remembers until when that row lives, and ``add`` of a key it knows to be there answers
    ``False`` without a query: a steady-state count is then one round trip. Should the row have
    been removed meanwhile by another process, the ``incr`` that follows finds no row and
    creates it with the window it knew, so the count goes on (django-ratelimit would refuse a
    request whose ``incr`` fails).
    """

    table = "tenancy_rate_counter"
    # Shared by every instance in the process (Django keeps one backend instance per thread,
    # and the ASGI handler uses a thread per request). Bounded: stale entries are swept.
    _known_until: ClassVar[dict[str, datetime]] = {}
    _known_lock: ClassVar[threading.Lock] = threading.Lock()
    MAX_KNOWN: ClassVar[int] = 10_000

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        self.table = location or self.table

    def _remember(self, key: str, expires: datetime) -> None:
        with self._known_lock:
            known = self._known_until
            if len(known) >= self.MAX_KNOWN:
                now = self._now()
                for stale in [k for k, until in known.items() if until <= now]:
                    del known[stale]
                if len(known) >= self.MAX_KNOWN:
                    known.clear()
            known[f"{self.table}:{key}"] = expires

    def _forget(self, key: str | None = None) -> datetime | None:
        """Drop what this process knows of ``key`` (of every key: ``None``); return its expiry."""
        with self._known_lock:
            if key is not None:
                return self._known_until.pop(f"{self.table}:{key}", None)
            prefix = f"{self.table}:"
            for known in [k for k in self._known_until if k.startswith(prefix)]:
                del self._known_until[known]
            return None

    def _known(self, key: str, now: datetime) -> bool:
        until = self._known_until.get(f"{self.table}:{key}")
        return until is not None and until > now

    def _now(self) -> datetime:
        return timezone.now()

    def _expiry(self, timeout: Any) -> datetime:
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        # None = never expires (a century); 0 = already expired, as in Django's backends.
        seconds = 100 * 365 * 86400 if timeout is None else (timeout or -1)
        return self._now() + timedelta(seconds=seconds)

    @staticmethod
    def _int(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError("CounterCache stores integers only")
        return value

    def _execute(self, sql: str, params: list[Any]) -> Any:
        from tenancy.models import RateCounter  # cache backends load before the app registry

        db = router.db_for_write(RateCounter)
        with connections[db].cursor() as cursor:
            cursor.execute(sql.format(table=connections[db].ops.quote_name(self.table)), params)
            return cursor.fetchone()

    def sweep_sometimes(self, now: datetime | None = None) -> None:
        """Housekeeping on one call in a hundred: counters past their expiry go."""
        if random.random() < 0.01:
            now = now or self._now()
            self._execute("DELETE FROM {table} WHERE expires < %s RETURNING 1", [now])

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> bool:
        key = self.make_and_validate_key(key, version=version)
        value = self._int(value)
        now = self._now()
        if self._known(key, now):
            return False
        self.sweep_sometimes(now)
        expires = self._expiry(timeout)
        row = self._execute(
            "INSERT INTO {table} (key, value, expires) VALUES (%s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires "
            "WHERE {table}.expires <= %s RETURNING 1",
            [key, value, expires, now],
        )
        if row is not None:
            self._remember(key, expires)
        return row is not None

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        key = self.make_and_validate_key(key, version=version)
        row = self._execute(
            "UPDATE {table} SET value = value + %s WHERE key = %s AND expires > %s "
            "RETURNING value, expires",
            [self._int(delta), key, self._now()],
        )
        if row is None:
            until = self._forget(key)
            if until is None or until <= self._now():
                raise ValueError(f"Key '{key}' not found")
            # ``add`` answered "present" from memory and the row has gone since: create it
            # with the window we knew, so the answer holds and the count goes on.
            row = self._execute(
                "INSERT INTO {table} (key, value, expires) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = {table}.value + EXCLUDED.value "
                "RETURNING value, expires",
                [key, self._int(delta), until],
            )
        self._remember(key, _aware(row[1]))
        return int(row[0])

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        row = self._execute(
            "SELECT value FROM {table} WHERE key = %s AND expires > %s", [key, self._now()]
        )
        return default if row is None else int(row[0])

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        key = self.make_and_validate_key(key, version=version)
        self._forget(key)
        self._execute(
            "INSERT INTO {table} (key, value, expires) VALUES (%s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires "
            "RETURNING 1",
            [key, self._int(value), self._expiry(timeout)],
        )

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        self._forget(key)
        row = self._execute(
            "UPDATE {table} SET expires = %s WHERE key = %s AND expires > %s RETURNING 1",
            [self._expiry(timeout), key, self._now()],
        )
        return row is not None

    def delete(self, key: Any, version: Any = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        self._forget(key)
        return self._execute("DELETE FROM {table} WHERE key = %s RETURNING 1", [key]) is not None

    def clear(self) -> None:
        self._forget()
        self._execute("DELETE FROM {table} RETURNING 1", [])
