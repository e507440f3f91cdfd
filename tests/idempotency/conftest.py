from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from idempotency import IdempotencyScope
from idempotency.models import IdempotencyRecord
from tests.testapps.idem.controls import HOLDS
from tests.testapps.idem.models import SideEffect


@pytest.fixture(autouse=True)
def _reset_hold() -> Any:
    yield
    HOLDS.reset()


def make_scope(**overrides: str) -> IdempotencyScope:
    values = {
        "tenant_id": "t1",
        "operation_key": "op:test",
        "caller_key": uuid.uuid4().hex,
        "fingerprint": "f" * 64,
    }
    values.update(overrides)
    return IdempotencyScope(**values)


def effects(label: str | None = None) -> list[str]:
    rows = SideEffect.objects.order_by("pk")
    if label is not None:
        rows = rows.filter(label=label)
    return [row.label for row in rows]


def doctor_in_progress(
    record: IdempotencyRecord | Any, *, lease_delta: timedelta, owner: uuid.UUID | None = None
) -> None:
    """Turn a row back into somebody else's claim whose lease ends at now + ``lease_delta``."""
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        status=IdempotencyRecord.Status.IN_PROGRESS,
        lease_owner=owner or uuid.uuid4(),
        lease_expires_at=timezone.now() + lease_delta,
        result=None,
        completed_at=None,
    )


def foreign_claim(scope: IdempotencyScope, *, lease_delta: timedelta, fingerprint: str = "") -> Any:
    return IdempotencyRecord.objects.create(
        tenant_id=scope.tenant_id,
        operation_key=scope.operation_key,
        caller_key=scope.caller_key,
        fingerprint=fingerprint or scope.fingerprint,
        status=IdempotencyRecord.Status.IN_PROGRESS,
        lease_owner=uuid.uuid4(),
        lease_expires_at=timezone.now() + lease_delta,
    )


@pytest.fixture
def never() -> Callable[[], Any]:
    def work() -> Any:
        raise AssertionError("the work must not run")

    return work
