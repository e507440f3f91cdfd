"""Work outside the calling thread's transaction: a thread of its own, a connection of its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import connections

T = TypeVar("T")


def on_own_connection(work: Callable[[], T], *, name: str) -> T:
    """``work()`` on a thread named ``name`` with a database connection of its own (autocommit),
    so that what it writes is committed, and seen by others, at once; its result or exception
    comes back to the caller."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as raised:  # re-raised in the caller's thread
            outcome.append(raised)
        finally:
            connections.close_all()  # this thread's connections only

    beside = threading.Thread(target=run, name=name, daemon=True)
    beside.start()
    beside.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    done: T = outcome[0]
    return done
