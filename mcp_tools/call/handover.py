"""The request thread's database connection, handed to the thread that runs the call's tool.

A request served by ``mcp_tools.serving.asgi`` checks its token in the request's thread, which
connects to the database; the tool then runs in a worker thread (``mcp_tools.execution.bounds``),
which has connections of its own. Without a pool, under Django's default ``CONN_MAX_AGE = 0``,
that was two PostgreSQL connections opened and closed per call where the same operation's REST
view opens one, about 1.3 M instructions more a call (``bench/instr_bench.py``), and one more
server process started for each. So before an async view the request thread *lends* its open,
idle connections (:func:`lend`); the worker thread that runs the call's tool (in
``mcp_tools.execution.bounds``) *adopts* them when it has none open of its own
(:func:`adopt`), uses them as its own and closes them under the usual rules at the end of the
call (``close_old_connections``: ``CONN_MAX_AGE``, broken ones); what no worker took, the
request thread takes back after the view (:func:`reclaim`).

Each connection has one owner at a time: a lent connection is out of the request thread's
hands until it is taken back (that thread connects anew if it needs the database meanwhile),
and taking is a ``dict.pop``, so one thread gets it. A tool that outlives its request (its
time bound ran out) keeps the connection it took; the request has nothing to take back.

Not lent, closed before the view as they always were: pooled connections (giving one back to
the pool and drawing another is cheap, and the pool bounds how many are out), connections
inside a transaction, connections shared between threads (tests) and in-memory SQLite.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import Any

from django.db import connections

# What the request lent, by alias; read where the call starts (a worker thread does not run in
# the request's context), taken with ``dict.pop`` (one taker gets each connection).
LENT: ContextVar[dict[str, Any] | None] = ContextVar("mcp_tools_lent_connections", default=None)


def _lendable(connection: Any) -> bool:
    return (
        connection.connection is not None
        and not connection.settings_dict.get("OPTIONS", {}).get("pool")
        and not connection.allow_thread_sharing
        and not (connection.vendor == "sqlite" and connection.is_in_memory_db())
    )


def lend() -> None:
    """Request thread, before an async view: lend its open, idle, unpooled connections to the
    call's worker thread; close the other idle ones (they would sit checked out meanwhile)."""
    lent: dict[str, Any] = {}
    for connection in connections.all(initialized_only=True):
        if connection.in_atomic_block:
            continue
        if _lendable(connection):
            del connections[connection.alias]
            lent[connection.alias] = connection
        else:
            connection.close()
    if lent:
        LENT.set(lent)


def reclaim() -> None:
    """Request thread, after the view: take back what no worker took (a connection opened here
    meanwhile stays, and the lent one is closed)."""
    lent = LENT.get()
    if lent is not None:
        LENT.set(None)
        adopt(lent, close_if_open=True)


def adopt(lent: dict[str, Any], *, close_if_open: bool) -> None:
    """Make each lent connection this thread's own; where this thread has that alias's
    connection open already, leave it lent (a worker with a persistent connection of its own)
    or, ``close_if_open``, close it (the request thread, after the view)."""
    open_here = {c.alias for c in connections.all(initialized_only=True) if c.connection}
    for alias in list(lent):
        if alias in open_here and not close_if_open:
            continue
        connection = lent.pop(alias, None)
        if connection is None:
            continue
        if alias in open_here:
            connection.close()
            continue
        # Django lets a connection be used only by the thread that made it (its
        # ``_thread_ident``; ``inc_thread_sharing`` would let every thread use it instead). The
        # lending thread no longer holds it, so it is re-made this thread's.
        connection._thread_ident = threading.get_ident()
        connections[alias] = connection
