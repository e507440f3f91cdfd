"""The change bus behind ``subscriptions/listen``: any replica publishes, every replica hears.

A change (a resource updated, a list changed) is a row of ``ChangeEvent``, written after the
publishing transaction commits (a rolled-back write announces nothing). Each process that has
listen streams open runs one poller thread (``Hub``): every ``MCP_TOOLS_LISTEN_POLL_SECONDS``
it reads the rows written since its last look (a window with some slack, deduplicated by id,
so a row committed a little after a later one is not skipped) and hands each to the streams of
that row's tenant whose filter asks for it. One query per process per interval, whatever the
number of streams; no state in memory that another replica would need.

Open streams are also rows (``Listener``): the bound per member (``MAX_LISTENERS_PER_MEMBER``)
holds across replicas. The poller renews its streams' rows and deletes those that ended.

Every ``MCP_TOOLS_LISTEN_RECHECK_SECONDS`` the poller also judges each stream's caller again
(the stream's ``recheck``: ``mcp_tools.call.callers.live_context``) and keeps the caller as it is
now on the stream (``LocalListener.caller``: its row scope, read afresh); a caller refused
there ends its stream with a last message (``StreamEndedError``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from django.db import close_old_connections, transaction
from django.utils import timezone

from mcp_tools import conf
from mcp_tools.models import ChangeEvent, Listener
from tenancy.process import ProcessObject

logger = logging.getLogger("mcp_tools.subscriptions.bus")

RESOURCE_UPDATED: Final = "notifications/resources/updated"
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
PROMPTS_LIST_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_LIST_CHANGED: Final = "notifications/resources/list_changed"
LIST_CHANGED: Final = {
    TOOLS_LIST_CHANGED: "toolsListChanged",
    PROMPTS_LIST_CHANGED: "promptsListChanged",
    RESOURCES_LIST_CHANGED: "resourcesListChanged",
}
# A row committed this long after a later-numbered one is still found (the window's slack).
WINDOW_SLACK: Final = timedelta(seconds=5)
# Ids already delivered, remembered for the window's sake.
SEEN_IDS: Final = 4096
# A stream's own backlog: a client that stopped reading loses what exceeds it (no replay).
MAX_QUEUED: Final = 256
# How often the poller renews its streams' Listener rows, and how old a row may be and count.
RENEW_SECONDS: Final = 30.0
STALE_AFTER: Final = timedelta(seconds=120)
# The queue item that tells a stream its caller was refused (``LocalListener.ended``).
ENDED: Final = "ended"


def notify_resource_updated(uri: str, *, tenant: Any, row: Any = None) -> None:
    """Announce that ``uri`` of ``tenant`` (a tenant or its id) changed, once the current
    transaction commits (at once outside one).

    ``row``: the id of the row whose change this is, in the terms of tenancy's row scope
    (``TENANCY_ROW_SCOPE_RESOLVER``): a stream whose caller's row scope leaves that row out
    does not hear it, even when the URI (a day, a list) stays readable to them."""
    row_key = "" if row is None else str(row)
    _publish(RESOURCE_UPDATED, tenant_key=_key(tenant), uri=uri, row_key=row_key)


def notify_list_changed(method: str, *, tenant: Any = None) -> None:
    """Announce a changed tool, prompt or resource list (``method`` is its notification),
    for ``tenant`` or, without one, for every tenant."""
    if method not in LIST_CHANGED:
        raise ValueError(f"not a list-change notification: {method!r}")
    _publish(method, tenant_key="" if tenant is None else _key(tenant), uri="")


def _key(tenant: Any) -> str:
    return str(getattr(tenant, "pk", tenant))


def _publish(method: str, *, tenant_key: str, uri: str, row_key: str = "") -> None:
    def write() -> None:
        now = timezone.now()
        ChangeEvent.objects.create(
            tenant_key=tenant_key, method=method, uri=uri, row_key=row_key, created_at=now
        )

    transaction.on_commit(write)


# --- listeners ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interest:
    """What one stream honours: list-change kinds (notification methods) and resource URIs."""

    lists: frozenset[str]
    uris: frozenset[str]

    def wants(self, method: str, uri: str) -> bool:
        if method == RESOURCE_UPDATED:
            return uri in self.uris
        return method in self.lists


class StreamEndedError(Exception):
    """Raised by a stream's ``recheck``: its caller may no longer listen; ``last`` is what the
    stream tells its client before it ends."""

    def __init__(self, last: Any) -> None:
        super().__init__("stream ended")
        self.last = last


@dataclass(eq=False)
class LocalListener:
    """One open stream in this process: its tenant, its interest, its queue on its loop.

    ``recheck`` (run by the poller every ``LISTEN_RECHECK_SECONDS``) returns the caller as it
    is now, kept in ``caller``, or raises ``StreamEndedError``; ``ended`` then holds its
    ``last`` and the queue gets an ``ENDED`` item."""

    tenant_key: str
    owner_key: str
    interest: Interest
    loop: asyncio.AbstractEventLoop
    recheck: Callable[[], Any] | None = None
    caller: Any = None
    ended: Any = None
    listener_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # (method, uri, row key) of each change; (ENDED, "", "") once the caller was refused.
    queue: asyncio.Queue[tuple[str, str, str]] = field(default_factory=asyncio.Queue)

    def offer(self, method: str, uri: str, row_key: str = "") -> None:
        """Called from the poller thread."""
        if self.queue.qsize() >= MAX_QUEUED:
            return
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (method, uri, row_key))

    def end(self, last: Any) -> None:
        """Called from the poller thread: the caller was refused (past the backlog bound)."""
        self.ended = last
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (ENDED, "", ""))


class ListenerLimitError(Exception):
    """The member already has ``MAX_LISTENERS_PER_MEMBER`` streams open."""


def admit(listener: LocalListener) -> None:
    """Count ``listener`` against its member's bound (a ``Listener`` row) or refuse it.

    Raises:
        ListenerLimitError: the member's live streams, this one included, exceed the bound.
    """
    now = timezone.now()
    Listener.objects.create(
        listener_id=listener.listener_id,
        tenant_key=listener.tenant_key,
        owner_key=listener.owner_key,
        started_at=now,
        seen_at=now,
    )
    # Insert, then count: two streams opened at once may both be refused, never both let in
    # beyond the bound.
    live = Listener.objects.filter(
        tenant_key=listener.tenant_key,
        owner_key=listener.owner_key,
        seen_at__gte=now - STALE_AFTER,
    ).count()
    if live > int(conf.get("MAX_LISTENERS_PER_MEMBER")):
        Listener.objects.filter(listener_id=listener.listener_id).delete()
        raise ListenerLimitError()


class Hub:
    """This process's poller and its open streams."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[LocalListener] = set()
        self._ended: list[str] = []
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def attach(self, listener: LocalListener) -> None:
        with self._lock:
            self._listeners.add(listener)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="mcp-tools-listen", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def detach(self, listener: LocalListener) -> None:
        """The stream ended: its row goes on the poller's next round."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.discard(listener)
                self._ended.append(listener.listener_id)
        self._wake.set()

    def _run(self) -> None:
        since = timezone.now() - WINDOW_SLACK
        seen: deque[int] = deque(maxlen=SEEN_IDS)
        seen_set: set[int] = set()
        renewed_at = 0.0
        rechecked_at = time.monotonic()
        while True:
            with self._lock:
                listeners = list(self._listeners)
                ended, self._ended = self._ended, []
                if not listeners and not ended:
                    self._thread = None
                    return
            try:
                if ended:
                    Listener.objects.filter(listener_id__in=ended).delete()
                now = timezone.now()
                if listeners and (now.timestamp() - renewed_at >= RENEW_SECONDS):
                    Listener.objects.filter(
                        listener_id__in=[item.listener_id for item in listeners]
                    ).update(seen_at=now)
                    renewed_at = now.timestamp()
                recheck = float(conf.get("LISTEN_RECHECK_SECONDS"))
                if listeners and time.monotonic() - rechecked_at >= recheck:
                    rechecked_at = time.monotonic()
                    _recheck(listeners)
                if listeners:
                    since = self._deliver(listeners, since, seen, seen_set)
            except Exception:  # the poller's boundary: a database hiccup must not end it
                logger.exception("listen poller round failed")
            finally:
                close_old_connections()
            self._wake.clear()
            self._wake.wait(float(conf.get("LISTEN_POLL_SECONDS")))

    def _deliver(
        self,
        listeners: list[LocalListener],
        since: Any,
        seen: deque[int],
        seen_set: set[int],
    ) -> Any:
        tenants = {item.tenant_key for item in listeners} | {""}
        rows = list(
            ChangeEvent.objects.filter(created_at__gte=since - WINDOW_SLACK, tenant_key__in=tenants)
            .order_by("id")
            .values_list("id", "tenant_key", "method", "uri", "row_key", "created_at")
        )
        newest = since
        for row_id, tenant_key, method, uri, row_key, created_at in rows:
            newest = max(newest, created_at)
            if row_id in seen_set:
                continue
            if len(seen) == seen.maxlen:
                seen_set.discard(seen[0])
            seen.append(row_id)
            seen_set.add(row_id)
            for listener in listeners:
                # The one tenant check of delivery: a stream hears its own tenant's changes
                # and the changes for every tenant, never another tenant's.
                if tenant_key and tenant_key != listener.tenant_key:
                    continue
                if listener.interest.wants(method, uri):
                    listener.offer(method, uri, row_key)
        return newest


def _recheck(listeners: list[LocalListener]) -> None:
    """Judge every stream's caller again: its reads (``mcp_tools.call.callers.live_context``: a few
    indexed reads) per stream and round, whatever the number of changes."""
    for listener in listeners:
        if listener.recheck is None or listener.ended is not None:
            continue
        try:
            listener.caller = listener.recheck()
        except StreamEndedError as refused:
            listener.end(refused.last)
        except Exception:  # one stream's failure (a database hiccup) is not another's
            logger.exception("listen stream re-check failed")


# This process's poller and streams (mcp_tools.operator.process), made by the first stream;
# a forked child starts with none of its parent's streams.
HUB: Final = ProcessObject("subscriptions.hub", Hub, kind="thread")
