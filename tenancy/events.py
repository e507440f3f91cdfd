"""Signals ``tenancy`` sends for observers (metrics, audit trails); tenancy never listens.

Sent synchronously in the request's thread; a receiver must be quick and must not raise (a
receiver's exception propagates into the request, as with every Django signal).
"""

from __future__ import annotations

from django.dispatch import Signal

#: A presented bearer was refused (unknown, revoked, expired, superseded, disabled account,
#: suspended tenant, malformed). Sender: the ``AuthenticationFailedError`` subclass.
#: Keyword arguments: ``request``, ``reason`` — tenancy's stable code (``"Auth.InvalidToken"``).
bearer_refused = Signal()

#: A request was refused for its rate on the shared counters (``tenancy.rates.counters``).
#: Sender: whoever counted (a view class or function). Keyword arguments: ``request``,
#: ``group`` — the django-ratelimit group (``"tenancy.login"``, ``"mcp_tools.mcp"``).
rate_limited = Signal()
