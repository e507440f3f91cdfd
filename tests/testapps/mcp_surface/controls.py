"""Knobs and probes the tests use from outside the definitions (same process only)."""

from __future__ import annotations

import threading
import weakref
from typing import Any

_lock = threading.Lock()
# Weak references to what identity factories built: a guard checks none outlives a request.
built_models: list[weakref.ref[Any]] = []


def built(model: Any) -> None:
    with _lock:
        built_models.append(weakref.ref(model))


def alive() -> list[Any]:
    with _lock:
        return [m for m in (ref() for ref in built_models) if m is not None]


def forget() -> None:
    with _lock:
        built_models.clear()
