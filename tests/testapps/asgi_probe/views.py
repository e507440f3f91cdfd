"""Views that report which thread served them (tests/cluck/test_asgi.py)."""

from __future__ import annotations

import threading

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt


def _thread_name() -> str:
    return threading.current_thread().name


@csrf_exempt
def sync_probe(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"thread": _thread_name()})


@csrf_exempt
async def async_probe(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"thread": await sync_to_async(_thread_name)()})
