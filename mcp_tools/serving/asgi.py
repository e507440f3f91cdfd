"""An ASGI application for a Django project that serves ``/mcp`` (and anything else).

    # asgi.py of your project
    import os
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "myproject.settings")
    from mcp_tools.serving.asgi import get_asgi_application
    application = get_asgi_application()

Serve it with any ASGI server (``uvicorn myproject.asgi:application --lifespan off``); it
needs no lifespan support. Django's own ``get_asgi_application`` works too, only slower, and
runs no system check: this one runs those tagged ``security`` and refuses to start on an error
(``check_before_serving``).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import django
from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIHandler
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections
from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch

from mcp_tools import conf
from mcp_tools.call import handover
from mcp_tools.serving.middleware import (
    SCOPE_KEY,
    refusal,
    resolve_path,
    route_of,
    too_large,
    view_body_cap,
    wants_jsonrpc,
)
from tenancy.rls.checks import CHECK_TAG as RLS_CHECK_TAG

# System checks run when the application is built; an error among them refuses to start.
# tenancy_rls: the tools' role cannot see past a declared table's policy (tenancy.rls).
START_CHECK_TAGS: Final = (checks.Tags.security, RLS_CHECK_TAG)


class _BodyRefusedError(Exception):
    """The body broke its bound while being read; answered before Django sees the request."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class _CappedReceive:
    """``receive`` that stops at the route's cap and at the body deadline.

    Django's ``read_body`` spools the whole body before any middleware runs; wrapped in
    this, it stops reading at ``limit + 1`` bytes (413) or when the deadline passes (408).
    Once the body is complete, messages (the disconnect) pass straight through.
    """

    __slots__ = ("receive", "limit", "deadline", "received", "complete")

    def __init__(self, receive: Any, limit: int, deadline: float) -> None:
        self.receive = receive
        self.limit = limit
        self.deadline = deadline
        self.received = 0
        self.complete = False

    async def __call__(self) -> Any:
        if self.complete:
            return await self.receive()
        try:
            async with asyncio.timeout_at(self.deadline):
                message = await self.receive()
        except TimeoutError:
            raise _BodyRefusedError(
                408, "Http.BodyTimeout", "Request body not received in time"
            ) from None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                raise _BodyRefusedError(*too_large(self.limit))
            self.complete = not message.get("more_body", False)
        return message


def _content_length(scope: Any) -> int | None:
    """The declared length; ``-1`` when present but not a non-negative integer."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                return -1
            return length if length >= 0 else -1
    return None


class SyncMiddlewareASGIHandler(ASGIHandler):
    """Django's ASGI handler, running the synchronous middleware chain in one thread per request.

    The stock handler adapts every synchronous middleware method on its own: with Django's
    default stack that is about fifteen event loop ↔ thread hops per request, plus a new thread
    for every request. Here the whole chain runs in one thread of a long-lived pool, as it
    would under a threaded WSGI server. Async views (``/mcp``) still run on the event loop, and
    ``sync_to_async`` inside them comes back to that same thread, so a request keeps one thread,
    and so one database connection, throughout. Measured in ``bench/`` (see docs/deploying.md).

    The pool bounds the requests a process serves at once (``MCP_TOOLS_REQUEST_THREADS``, 32).
    """

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        size = threads or int(conf.get("REQUEST_THREADS"))
        self.request_threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="request")

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # The stock __call__ only adds a per-request ThreadSensitiveContext (a new thread for
        # each request); our requests run in the pool instead.
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        """Refuse a body over its route's cap before reading it, then serve as Django does.

        Django's ``read_body`` would spool any body to a temporary file before a middleware
        could look at it. Here the route's cap (``mcp_tools.serving.middleware.view_body_cap``) is
        known first: a declared ``Content-Length`` over it is answered 413 at once, unread;
        a chunked body is cut off at the cap; a body still incomplete after
        ``MCP_TOOLS_BODY_READ_SECONDS`` is answered 408. Each refusal closes the connection.
        """
        declared = _content_length(scope)
        view = None
        if declared or scope.get("method") not in ("GET", "HEAD", "OPTIONS"):
            view = route_of(scope["path"].removeprefix(scope.get("root_path", "")))
        limit = view_body_cap(view)
        jsonrpc = wants_jsonrpc(view)
        if declared == -1:
            await self._refuse(
                send, 400, "Http.InvalidContentLength", "Invalid Content-Length", jsonrpc
            )
            return
        if declared is not None and declared > limit:
            await self._refuse(send, *too_large(limit), jsonrpc)
            return
        deadline = asyncio.get_running_loop().time() + float(conf.get("BODY_READ_SECONDS"))
        capped = _CappedReceive(receive, limit, deadline)
        try:
            await super().handle({**scope, SCOPE_KEY: limit}, capped, send)
        except _BodyRefusedError as refused:
            await self._refuse(send, refused.status, refused.code, refused.message, jsonrpc)

    @staticmethod
    async def _refuse(send: Any, status: int, code: str, message: str, jsonrpc: bool) -> None:
        body, content_type = refusal(status, code, message, jsonrpc=jsonrpc)
        headers = [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode()),
            # The rest of the body is never read: the connection cannot carry another request.
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def make_view_atomic(self, view: Any) -> Any:
        """Django's hook, run in the request's thread right before the view: before an async
        view (``/mcp``), lend this thread's database connections to the call's tool, or hand
        them back to the pool.

        The async view runs on the event loop while this thread waits, and a tool runs in a
        worker thread; the connection the token check used would sit idle for the whole call.
        Pooled, it goes back to the pool: kept, under load it left the pool (psycopg's
        ``max_size``) to waiting request threads and tools waited seconds for a connection
        (bench/mcp_load.py). Unpooled, closing it and opening another in the worker cost a
        second connection per call, so the worker takes this one (``mcp_tools.call.handover``).
        Async views never run inside ``ATOMIC_REQUESTS`` (Django refuses), so no transaction
        is open here.
        """
        wrapped = super().make_view_atomic(view)
        if iscoroutinefunction(wrapped):
            handover.lend()
        return wrapped

    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        """Django's resolution, through the match ``handle`` already made for the body cap."""
        if hasattr(request, "urlconf"):
            return super().resolve_request(request)
        match = resolve_path(request.path_info)
        request.resolver_match = match
        return match

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        serve = sync_to_async(self._serve, thread_sensitive=False, executor=self.request_threads)
        return await serve(request)

    def _serve(self, request: HttpRequest) -> HttpResponseBase:
        # request_started/finished fire on the event loop side, whose thread is not this one:
        # this thread's connections get the same treatment here (CONN_MAX_AGE, broken ones).
        close_old_connections()
        try:
            return self.get_response(request)
        finally:
            handover.reclaim()
            close_old_connections()


class StartupCheckError(ImproperlyConfigured):
    """A system check of a tag checked at start-up reported an error: the server must not serve."""


def check_before_serving(tags: Sequence[str] = START_CHECK_TAGS) -> None:
    """Run the system checks tagged ``tags`` and raise ``StartupCheckError`` on any error.

    ``manage.py runserver`` runs the system checks; an ASGI server (``uvicorn``, ``daphne``)
    never does, so an error such as ``tenancy_oauth.E001`` (a test-only override on a public
    host) would otherwise be served. Warnings are left to ``manage.py check --deploy``;
    silenced ids (``SILENCED_SYSTEM_CHECKS``) stay silent. The security checks are a few
    settings reads: start-up stays cheap.

    Raises:
        StartupCheckError: listing every error, with its id and hint.
    """
    if not tags:
        return
    errors = [
        message
        for message in _start_checks(tags)
        if message.is_serious() and not message.is_silenced()
    ]
    if errors:
        listed = "\n".join(f"  {message}" for message in errors)
        raise StartupCheckError(f"refusing to serve: system check errors\n{listed}")


def _start_checks(tags: Sequence[str]) -> list[checks.CheckMessage]:
    """The checks tagged ``tags``, the default database's too (row-level security reads its
    catalogue): on a thread of their own when the application is built inside a running
    event loop (``uvicorn.Server.run`` loads it there), where Django refuses a query."""

    def run() -> list[checks.CheckMessage]:
        try:
            return list(checks.run_checks(tags=list(tags), databases=[DEFAULT_DB_ALIAS]))
        finally:
            connections.close_all()  # this thread's connections only

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return list(checks.run_checks(tags=list(tags), databases=[DEFAULT_DB_ALIAS]))
    with ThreadPoolExecutor(1, thread_name_prefix="start-checks") as beside:
        return beside.submit(run).result()


def get_asgi_application(
    *, check_tags: Sequence[str] = START_CHECK_TAGS
) -> SyncMiddlewareASGIHandler:
    """Set Django up, run the start-up checks (``check_before_serving``), build the handler.

    ``check_tags=()`` skips the checks.
    """
    django.setup(set_prefix=False)
    check_before_serving(check_tags)
    application = SyncMiddlewareASGIHandler()
    # Everything loaded so far (Django, the apps, the MCP SDK and its pydantic models) lives as
    # long as the process: move it out of the collector's reach, so that the full collections
    # a request's allocations trigger do not re-scan it each time (bench/mcp_profile.py).
    gc.collect()
    gc.freeze()
    return application
