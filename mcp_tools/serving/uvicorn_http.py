"""uvicorn's httptools protocol with a bounded request head (size and time).

uvicorn bounds a request head only with its pure-Python ``h11`` parser
(``--h11-max-incomplete-event-size``); with ``httptools`` (the C parser it picks when
installed, about 1 ms faster per request on the bench machine) a client may send megabytes of
headers, or trickle them a byte at a time for ever: uvicorn's ``--timeout-keep-alive`` only
runs between requests. Serve with::

    uvicorn yourproject.asgi:application \
        --http mcp_tools.serving.uvicorn_http:BoundedHttpToolsProtocol

and the same two flags bound both parsers:

- ``--h11-max-incomplete-event-size N`` (default 16 KiB, h11's own): a request line plus
  headers longer than N bytes is answered ``431`` and the connection closed;
- ``--timeout-keep-alive S`` (default 5 s): a connection must deliver a complete request head
  within S seconds of opening, or of its first byte after the previous response; otherwise
  it is closed (``408`` if a request had begun).

The body is the ASGI application's business (``mcp_tools.serving.asgi``: per-route caps and a read
deadline). This module needs ``uvicorn`` and ``httptools``; nothing else imports it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

DEFAULT_MAX_HEAD_BYTES: Final = 16 * 1024  # h11's default max_incomplete_event_size
# After a refusal, bytes still arriving are read and dropped this long before the close, so
# the client reads the refusal instead of a connection reset (a "lingering close").
LINGER_SECONDS: Final = 2.0


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` refusing request heads over a size or past a deadline."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.max_head_bytes = config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD_BYTES
        self.head_seconds = float(config.timeout_keep_alive)
        self._in_head = True  # bytes arriving now belong to a request head
        self._head_fed = 0  # bytes fed to the parser since the head began (upper bound)
        self._head_parsed = 0  # bytes of URL and headers the parser has handed over (exact)
        self._head_begun = False
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False

    # connection -----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            self._head_fed += len(data)
        super().data_received(data)
        # Still inside the head after this chunk: every byte fed since it began is head.
        if self._in_head and not self._refused and self._head_fed > self.max_head_bytes:
            self._refuse(431, b"Request header fields too large")

    # parser callbacks -----------------------------------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_begun = True
        self._head_parsed = 0
        self._arm_head_timer()

    def on_url(self, url: bytes) -> None:
        self._head_parsed += len(url)
        if self._head_parsed <= self.max_head_bytes:
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_parsed += len(name) + len(value) + 4
        if self._head_parsed <= self.max_head_bytes:
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._cancel_head_timer()
        self._in_head = False
        self._head_begun = False
        self._head_fed = 0
        if self._head_parsed > self.max_head_bytes:
            # The whole oversized head came in one read: never start the application.
            self._refuse(431, b"Request header fields too large")
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        super().on_message_complete()
        self._in_head = True  # what follows is the next request's head

    # bounds ---------------------------------------------------------------------------------

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_seconds, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._refused or self.transport.is_closing():
            return
        if self._head_begun:
            self._refuse(408, b"Request head not received in time")
        else:  # an idle connection that never started a request: just close it
            self._refused = True
            self.transport.close()

    def _refuse(self, status: int, message: bytes) -> None:
        self._refused = True
        self._cancel_head_timer()
        reason = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}[status]
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s"
            % (status, reason, len(message), message)
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()
