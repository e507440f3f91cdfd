"""``ATOMIC_REQUESTS = True`` on every database alias, for one test (a host project's setting).

Django reads it per request from ``connections.settings[alias]``, the dict each connection
holds as ``settings_dict``; ``override_settings(DATABASES=...)`` would not reach it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections


@contextmanager
def atomic_requests() -> Iterator[None]:
    saved = {
        alias: database.get("ATOMIC_REQUESTS", False)
        for alias, database in connections.settings.items()
    }
    for alias in saved:
        connections.settings[alias]["ATOMIC_REQUESTS"] = True
    try:
        yield
    finally:
        for alias, value in saved.items():
            connections.settings[alias]["ATOMIC_REQUESTS"] = value
