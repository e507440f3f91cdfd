"""ASGI entry point (``uvicorn cluck.asgi:application``). Needs no lifespan support."""

from __future__ import annotations

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class SyncMiddlewareASGIHandler(ASGIHandler):
    """Django's ASGI handler, running the synchronous middleware chain in one thread per request.

    The stock handler adapts every synchronous middleware method on its own: with Django's
    default stack that is about fifteen event loop ↔ worker thread hops per request, which
    measured as a third of a bare request's time (``bench/mcp_bench.py``). Here the whole chain
    runs in the request's thread-sensitive worker, as it would under WSGI. Async views (``/mcp``)
    still run on the event loop, and ``sync_to_async`` inside them comes back to that same
    worker, so a request keeps one thread, and so one database connection, throughout.
    """

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def get_asgi_application() -> SyncMiddlewareASGIHandler:
    django.setup(set_prefix=False)
    return SyncMiddlewareASGIHandler()


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")
application = get_asgi_application()
