"""Signals the port sends for observers (metrics); nothing in ``idempotency`` listens.

Sent synchronously from ``IdempotentUnit.run`` in the caller's thread (any adapter: the HTTP
middleware, ``mcp_tools``' write tools); a receiver must be quick and must not raise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.dispatch import Signal

R = TypeVar("R")

#: ``IdempotentUnit.run`` returned. Sender: the unit's class. Keyword arguments: ``scope``
#: (the ``IdempotencyScope``) and ``outcome``: ``Executed`` (its ``result`` a ``Success`` or a
#: ``Failure``), ``Replayed``, ``KeyConflict`` or ``InProgress``. A ``run`` that raises sends
#: nothing.
unit_finished = Signal()

#: A claim took over an expired lease of the same request (its first holder was presumed
#: dead). Sender: the unit's class. Keyword arguments: ``scope``.
lease_stolen = Signal()


def reports_outcome(run: Callable[..., R]) -> Callable[..., R]:
    """Decorate ``IdempotentUnit.run``: send ``unit_finished`` with what it returns."""

    @functools.wraps(run)
    def wrapper(unit: Any, scope: Any, work: Any) -> R:
        outcome = run(unit, scope, work)
        unit_finished.send(sender=type(unit), scope=scope, outcome=outcome)
        return outcome

    return wrapper
