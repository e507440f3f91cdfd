"""The rate-limit counter cache: add/incr are single atomic statements, shared by processes."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)


def test_add_then_incr_counts_and_expiry_frees_the_key() -> None:
    cache = caches["tenancy_counters"]
    assert cache.add("k", 1, 60) is True
    assert cache.add("k", 1, 60) is False
    assert cache.incr("k") == 2 and cache.get("k") == 2
    cache.set("gone", 5, -1)
    assert cache.get("gone") is None
    assert cache.add("gone", 1, 60) is True
    with pytest.raises(ValueError):
        cache.incr("missing")
    with pytest.raises(TypeError):
        cache.set("text", "x")


@mutation(
    "tenancy/rates/counters.py",
    find=(
        '"UPDATE {table} SET value = value + %s WHERE key = %s AND expires > %s "\n'
        '            "RETURNING value, expires",\n'
        "            [self._int(delta), key, self._now()],\n"
        "        )\n"
    ),
    replace=(
        '"SELECT value + %s, expires FROM {table} WHERE key = %s AND expires > %s",\n'
        "            [self._int(delta), key, self._now()],\n"
        "        )\n"
        "        if row is not None:\n"
        '            self._execute("UPDATE {table} SET value = %s WHERE key = %s RETURNING 1",'
        " [row[0], key])\n"
    ),
)
@pytest.mark.postgres
def test_concurrent_increments_are_never_lost() -> None:
    """Mutation: implement ``incr`` as ``get`` then ``set`` → red (lost updates)."""
    cache = caches["tenancy_counters"]
    cache.add("hits", 0, 60)
    barrier = threading.Barrier(8)

    def hammer() -> None:
        try:
            barrier.wait()
            for _ in range(25):
                caches["tenancy_counters"].incr("hits")
        finally:
            connection.close()

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.get("hits") == 200


@mutation(
    "tenancy/rates/counters.py",
    find="        if self._known(key, now):\n            return False\n",
    replace="",
)
def test_a_steady_state_count_is_one_round_trip() -> None:
    """Once this process has seen the counter, ``add`` needs no query: ``add`` + ``incr`` = 1.

    Mutation: drop the known-row shortcut in ``CounterCache.add`` → red (two statements).
    """
    cache = caches["tenancy_counters"]
    assert cache.add("steady", 1, 60) is True
    with CaptureQueriesContext(connection) as queries:
        assert cache.add("steady", 1, 60) is False
        assert cache.incr("steady") == 2
    assert len(queries) == 1


@mutation(
    "tenancy/rates/counters.py",
    find="if until is None or until <= self._now():",
    replace="if True:",
)
def test_a_counter_removed_behind_our_back_is_recreated_by_the_next_incr() -> None:
    """Another process deleting the row after ``add`` answered "present" from memory.

    Mutation: raise ``ValueError`` when ``incr`` finds no row even though the key was known →
    red (django-ratelimit fails closed on it: a spurious 429).
    """
    cache = caches["tenancy_counters"]
    assert cache.add("vanishing", 1, 60) is True
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM tenancy_rate_counter")
    assert cache.add("vanishing", 1, 60) is False  # answered from memory
    assert cache.incr("vanishing") == 1
    assert cache.incr("vanishing") == 2 and cache.get("vanishing") == 2
    with pytest.raises(ValueError):
        cache.incr("never-added")


@mutation(
    "tenancy/migrations/0002_rate_counter.py",
    find="        migrations.RunPython(unlogged, logged),\n",
    replace="",
)
@pytest.mark.postgres
def test_counters_skip_the_write_ahead_log_on_postgresql() -> None:
    """Mutation: make tenancy migration 0002 skip its RunPython → red (``p``, not ``u``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE relname = 'tenancy_rate_counter'")
        assert cursor.fetchone() == ("u",)
