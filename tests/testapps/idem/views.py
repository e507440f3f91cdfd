"""Plain Django write views with controllable outcomes, behind the real middleware stack."""

from __future__ import annotations

import json
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from tests.testapps.idem.controls import HOLDS
from tests.testapps.idem.models import SideEffect


def _tenant_id(request: HttpRequest) -> str:
    return str(request.tenant.id)  # type: ignore[attr-defined]


@csrf_exempt
def effect(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    """Write a side-effect row, then answer as the body asks: ``{"label", "status", "raise"}``."""
    body = json.loads(request.body or b"{}")
    row = SideEffect.objects.create(
        tenant_id=_tenant_id(request),
        label=str(body.get("label", "")),
        attempt=request.headers.get("X-Attempt", ""),
    )
    HOLDS[row.attempt].pass_through()
    # Across processes (fault tests): stay inside the transaction this long, to be killed.
    time.sleep(min(float(request.headers.get("X-Sleep", "0")), 30))
    if body.get("raise"):
        raise RuntimeError("handler exploded after its side effect")
    status = int(body.get("status", 201))
    return JsonResponse({"id": row.pk, "label": row.label, "attempt": row.attempt}, status=status)


@csrf_exempt
def empty(request: HttpRequest) -> HttpResponse:
    SideEffect.objects.create(tenant_id=_tenant_id(request), label="empty")
    return HttpResponse(status=204)


@csrf_exempt
def binary(request: HttpRequest) -> HttpResponse:
    row = SideEffect.objects.create(tenant_id=_tenant_id(request), label="binary")
    content = bytes([0xFF, 0x00, 0xFE, row.pk % 256])
    return HttpResponse(content, status=200, content_type="application/octet-stream")


@csrf_exempt
async def async_effect(request: HttpRequest) -> HttpResponse:
    from asgiref.sync import sync_to_async

    row = await sync_to_async(SideEffect.objects.create)(
        tenant_id=_tenant_id(request), label="async"
    )
    return JsonResponse({"id": row.pk}, status=201)
