"""An ASGI application for a Django project that serves ``/mcp`` (and anything else).

    # asgi.py of your project
    import os
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "myproject.settings")
    from mcp_tools.asgi import get_asgi_application
    application = get_asgi_application()

Serve it with any ASGI server (``uvicorn myproject.asgi:application --lifespan off``); it
needs no lifespan support. Django's own ``get_asgi_application`` works too, only slower.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponseBase

from mcp_tools import conf


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
            close_old_connections()


def get_asgi_application() -> SyncMiddlewareASGIHandler:
    django.setup(set_prefix=False)
    return SyncMiddlewareASGIHandler()
