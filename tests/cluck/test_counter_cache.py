"""The rate-limit counter cache: add/incr are single atomic statements, shared by processes."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import caches
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def test_add_then_incr_counts_and_expiry_frees_the_key() -> None:
    cache = caches["ratelimit"]
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


@pytest.mark.postgres
def test_concurrent_increments_are_never_lost() -> None:
    """Mutation: implement ``incr`` as ``get`` then ``set`` → red (lost updates)."""
    cache = caches["ratelimit"]
    cache.add("hits", 0, 60)
    barrier = threading.Barrier(8)

    def hammer() -> None:
        try:
            barrier.wait()
            for _ in range(25):
                caches["ratelimit"].incr("hits")
        finally:
            connection.close()

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.get("hits") == 200
