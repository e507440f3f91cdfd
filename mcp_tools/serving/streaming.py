"""Streamed responses: a request's own notifications, then its result, on one SSE response.

When (and only when) all of these hold, a ``tools/call`` answers with ``text/event-stream``:

1. the client's ``Accept`` admits ``text/event-stream``;
2. the client asked for notifications on this request: a ``_meta.progressToken``, or log
   messages (2026-07-28: ``_meta["io.modelcontextprotocol/logLevel"]``; handshake era: every
   request, at ``MCP_TOOLS_LOG_LEVEL`` and above, since ``logging/setLevel`` cannot be
   remembered without a session);
3. the tool actually reports something *before* it returns (a call that reports nothing is a
   plain JSON response, whatever was offered);
4. the request is served over ASGI (under WSGI, e.g. ``runserver``, notifications are dropped
   and the answer is JSON).

The stream is that one request's: no ``Mcp-Session-Id``, no event ids, no resumption, no
server-to-client requests. It ends with the JSON-RPC response. Closing it cancels the call
(``mcp_tools.call.cancellation``): the tool stops at its next checkpoint and its slot is freed.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from django.http import StreamingHttpResponse

from mcp_tools.rpc import jsonrpc as _jsonrpc

EVENT_STREAM: Final = "text/event-stream"
# Notifications one call may queue; beyond it they are dropped (a runaway progress loop must
# not grow memory without bound).
MAX_QUEUED_EVENTS: Final = 1024


def accepts_event_stream(accept: str | None) -> bool:
    if not accept:
        return False
    for item in accept.split(","):
        media, _, params = item.partition(";")
        if media.strip().lower() in (EVENT_STREAM, "text/*", "*/*"):
            compact = params.replace(" ", "")
            if "q=0" in compact and "q=0." not in compact:
                continue
            return True
    return False


class Channel:
    """Notifications from the tool (a worker thread or the loop) to the request's event loop.

    One waiter future at a time, woken by a notification or by the call's end: no task for a
    queue read and no ``asyncio.wait`` per call (most calls report nothing and end first).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: collections.deque[dict[str, Any]] = collections.deque()
        self._queued = 0
        self._waiter: asyncio.Future[None] | None = None

    def put(self, message: dict[str, Any]) -> None:
        """Called from the worker thread (or the loop)."""
        if self._queued >= MAX_QUEUED_EVENTS:
            return
        self._queued += 1
        self._loop.call_soon_threadsafe(self._arrived, message)

    def _arrived(self, message: dict[str, Any]) -> None:
        self._queue.append(message)
        self._wake()

    def _wake(self, *_: Any) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _next(self, call: asyncio.Future[Any]) -> dict[str, Any] | None:
        """The next notification, or ``None`` once ``call`` finished before one arrived."""
        while not self._queue:
            if call.done():
                return None
            self._waiter = self._loop.create_future()
            call.add_done_callback(self._wake)
            try:
                await self._waiter  # cancelled with it when the client went away mid-wait
            finally:
                call.remove_done_callback(self._wake)
                self._waiter = None
        return self._queue.popleft()

    async def first(self, call: asyncio.Future[Any]) -> dict[str, Any] | None:
        """The first notification, or ``None`` if ``call`` finished before any arrived."""
        return await self._next(call)

    async def rest(self, call: asyncio.Future[Any]) -> AsyncIterator[dict[str, Any]]:
        """Every further notification until ``call`` finishes (then what is still queued)."""
        while (message := await self._next(call)) is not None:
            yield message
        while self._queue:
            yield self._queue.popleft()


@dataclass(frozen=True)
class StreamReply:
    """A streamed answer: the events of one request, the last one its response."""

    events: AsyncIterator[bytes]


def sse(message: dict[str, Any] | bytes) -> bytes:
    data = message if isinstance(message, bytes) else _jsonrpc.dumps(message)
    return b"event: message\ndata: " + data + b"\n\n"


def stream(
    channel: Channel,
    first: dict[str, Any],
    call: asyncio.Future[Any],
    finish: Callable[[], Awaitable[bytes]],
) -> StreamReply:
    """The SSE events: ``first``, the rest, then the JSON-RPC response ``finish`` makes."""

    async def events() -> AsyncIterator[bytes]:
        try:
            yield sse(first)
            async for message in channel.rest(call):
                yield sse(message)
            yield sse(await finish())
        finally:
            # Closed before its end: the client went away (Django cancels the sending on
            # http.disconnect and closes this iterator). That cancels the call.
            call.cancel()

    return StreamReply(events())


def response(reply: StreamReply) -> StreamingHttpResponse:
    out = StreamingHttpResponse(reply.events, content_type=EVENT_STREAM, status=200)
    out["Cache-Control"] = "no-cache"
    # Proxies (nginx) must not buffer a stream whose point is arriving as it happens.
    out["X-Accel-Buffering"] = "no"
    return out
