"""A project's own keyed write in a project with ``ATOMIC_REQUESTS = True``.

Django wraps the view in the request transaction in ``make_view_atomic``, *after* the view
middleware ran; ``IdempotencyMiddleware.process_view`` runs the view itself, so a keyed write
never reaches that wrapper: the claim commits on its own (other processes see it and wait),
and the view's writes and the publish are the unit's one transaction. ``transactional_db``:
what another connection sees is what was committed.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from idempotency.fingerprint import sha256_hex
from idempotency.models import IdempotencyRecord
from tests.atomic_requests import atomic_requests
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation
from tests.testapps.idem.controls import HOLDS
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

EFFECTS = "/idem-test/effects/"


@pytest.fixture(autouse=True)
def _atomic_requests() -> Iterator[None]:
    with atomic_requests():
        yield
    HOLDS.reset()


@pytest.fixture
def bearer() -> str:
    membership: Any = MembershipFactory(tenant=FarmFactory(), user__password=None)
    return bearer_for(membership)


def _client(bearer: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
    client.raise_request_exception = False
    return client


def _claims(key: str) -> list[str]:
    return list(
        IdempotencyRecord.objects.filter(
            operation_key=sha256_hex(f"POST:{EFFECTS}"), caller_key=sha256_hex(key)
        ).values_list("status", flat=True)
    )


@mutation(
    "idempotency/middleware.py",
    find="outcome = self.unit_class().run(scope, work)",
    replace=(
        "outcome = __import__('django.db').db.transaction.atomic()("
        "self.unit_class().run)(scope, work)"
    ),
)
def test_the_claim_commits_before_the_view_runs_and_the_write_replays(bearer: str) -> None:
    """While the view is held after its write, another connection sees the committed claim
    (in progress) and not yet the write; then one side effect, and the retry replays it.

    Mutation: run the unit inside a request-wide transaction (what wrapping the keyed write
    in ATOMIC_REQUESTS' transaction would do) → the claim is invisible to other connections
    until the response → red.
    """
    key = str(uuid.uuid4())
    responses: list[Any] = []

    def send() -> None:
        try:
            responses.append(
                _client(bearer).post(
                    EFFECTS,
                    {"label": "x"},
                    format="json",
                    HTTP_IDEMPOTENCY_KEY=key,
                    HTTP_X_ATTEMPT="held",
                )
            )
        finally:
            connection.close()

    HOLDS["held"].arm()
    thread = threading.Thread(target=send)
    thread.start()
    try:
        assert HOLDS["held"].entered.wait(timeout=10)
        assert _claims(key) == [IdempotencyRecord.Status.IN_PROGRESS]
        assert SideEffect.objects.count() == 0
    finally:
        HOLDS["held"].release()
        thread.join(timeout=15)
    (first,) = responses
    assert first.status_code == 201, first.content
    again = _client(bearer).post(EFFECTS, {"label": "x"}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    assert _claims(key) == [IdempotencyRecord.Status.COMPLETED]
    assert SideEffect.objects.count() == 1


def test_a_refused_keyed_write_rolls_back_and_releases_its_claim(bearer: str) -> None:
    key = str(uuid.uuid4())
    client = _client(bearer)
    refused = client.post(
        EFFECTS, {"label": "x", "status": 400}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )
    assert refused.status_code == 400
    assert (SideEffect.objects.count(), _claims(key)) == (0, [])
    corrected = client.post(EFFECTS, {"label": "x"}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert corrected.status_code == 201
    assert SideEffect.objects.count() == 1
