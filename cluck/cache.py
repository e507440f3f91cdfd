"""A database cache whose ``incr`` is atomic across processes and hosts.

Rate-limit counters (django-ratelimit: ``cache.add`` then ``cache.incr``) must be shared by all
replicas. Django's ``DatabaseCache.incr`` is get-then-set, so two replicas can lose a count; this
backend locks the row (``SELECT … FOR UPDATE``) inside a transaction instead.
"""

from __future__ import annotations

import base64
import pickle
from typing import Any

from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router, transaction


class AtomicDatabaseCache(DatabaseCache):
    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        key = self.make_and_validate_key(key, version=version)
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)  # type: ignore[attr-defined]
        with transaction.atomic(using=db), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                # A lost counter increment after a crash is harmless; waiting for a WAL flush
                # on every rate-limited request is not.
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
            lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
            cursor.execute(f"SELECT value FROM {table} WHERE cache_key = %s{lock}", [key])
            row = cursor.fetchone()
            if row is None:
                raise ValueError(f"Key '{key}' not found")
            value = pickle.loads(base64.b64decode(row[0].encode()))
            new_value = value + delta
            encoded = base64.b64encode(pickle.dumps(new_value, self.pickle_protocol)).decode(
                "latin1"
            )
            cursor.execute(f"UPDATE {table} SET value = %s WHERE cache_key = %s", [encoded, key])
        return int(new_value)
