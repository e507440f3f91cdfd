"""The HTTP adapter against real routes: ``POST /api/v1/customers/`` (a DRF write that audits
``Customer.Create``) and the test app's plain Django write views (``tests/testapps/idem``).

Side effects are asserted as AuditEvent / SideEffect rows: a second row is the thing a replay
must never produce.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from cluck.models import AuditEvent
from idempotency.fingerprint import sha256_hex
from idempotency.models import IdempotencyRecord
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.idempotency.conftest import doctor_in_progress, effects
from tests.mutations import Edit, mutation
from tests.testapps.idem.controls import HOLDS
from tests.testapps.idem.models import SideEffect

CUSTOMERS = "/api/v1/customers/"
EFFECTS = "/idem-test/effects/"


def customer_audits(farm: Any) -> int:
    return AuditEvent.all_tenants.filter(farm=farm, action="Customer.Create").count()


def post(client: APIClient, path: str, body: dict[str, Any], key: str | None, **extra: Any) -> Any:
    if key is not None:
        extra["HTTP_IDEMPOTENCY_KEY"] = key
    return client.post(path, body, format="json", **extra)


@pytest.fixture
def farm_client(member_client: Any) -> tuple[APIClient, Any]:
    client, membership = member_client()
    client.raise_request_exception = False
    return client, membership.tenant


def record_for(farm: Any, path: str, key: str, method: str = "POST") -> IdempotencyRecord:
    return IdempotencyRecord.objects.get(
        tenant_id=str(farm.pk),
        operation_key=sha256_hex(f"{method}:{path}"),
        caller_key=sha256_hex(key),
    )


# --- the gate -------------------------------------------------------------------------------------


@mutation(
    "idempotency/middleware.py",
    find="problem = key_problem(raw_key)\n",
    replace=(
        "problem = key_problem(raw_key)\n        if raw_key is None:\n            return None\n"
    ),
)
def test_a_tracked_write_without_a_key_is_refused_before_the_view(farm_client: Any) -> None:
    """Mutation: skip the missing-key check (treat it as untracked) → 201 → red."""
    client, farm = farm_client
    response = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key=None)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "Idempotency.KeyRequired"
    assert set(body) == {"type", "title", "status", "code", "detail"}
    assert body["status"] == 400
    assert customer_audits(farm) == 0


def test_a_blank_key_is_refused(farm_client: Any) -> None:
    client, farm = farm_client
    response = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="   ")
    assert response.status_code == 400
    assert response.json()["code"] == "Idempotency.KeyRequired"


def test_key_length_is_bounded(farm_client: Any) -> None:
    client, farm = farm_client
    too_long = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="k" * 256)
    assert too_long.status_code == 400
    assert too_long.json()["code"] == "Idempotency.KeyInvalid"
    longest = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="k" * 255)
    assert longest.status_code == 201
    assert customer_audits(farm) == 1


def test_reads_are_not_tracked(farm_client: Any) -> None:
    client, _ = farm_client
    assert client.get(CUSTOMERS).status_code == 200
    assert not IdempotencyRecord.objects.exists()


def test_an_unresolved_tenant_is_not_tracked(api_client: APIClient, db: Any) -> None:
    """Anonymous writes reach the view's own authentication (401), not the key check (400)."""
    response = post(api_client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key=None)
    assert response.status_code == 401


@mutation(
    "tenancy/api.py",
    find='@never_replayed("token creation returns the live secret once")\n',
    replace="",
)
def test_a_never_replay_view_needs_no_key_and_is_never_stored(farm_client: Any) -> None:
    """``POST /api/v1/me/tokens/`` returns a live secret: never stored, never replayed.

    Mutation: remove ``@never_replayed`` from ``TokenListCreateApi`` (``me-token-list``) →
    400 KeyRequired → red.
    """
    client, _ = farm_client
    first = client.post("/api/v1/me/tokens/", {"name": "ci"}, format="json")
    assert first.status_code == 201
    second = post(client, "/api/v1/me/tokens/", {"name": "ci"}, key="same")
    third = post(client, "/api/v1/me/tokens/", {"name": "ci"}, key="same")
    assert second.status_code == third.status_code == 201
    assert "Idempotent-Replayed" not in third
    assert second.json()["token"] != third.json()["token"]
    assert not IdempotencyRecord.objects.exists()


# --- replay ---------------------------------------------------------------------------------------


@mutation(
    "idempotency/unit.py",
    find=(
        "cursor.execute(sql, params)\n"
        "            return bool(cursor.rowcount == 1)\n\n    def _release"
    ),
    replace="return True\n\n    def _release",
)
def test_a_replay_returns_the_stored_response_and_writes_no_second_audit_row(
    farm_client: Any,
) -> None:
    """Mutation: the publish UPDATE writes nothing (``_publish`` returns True without updating)
    → the retry meets a live claim → 409 → red."""
    client, farm = farm_client
    first = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="k1")
    second = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="k1")
    assert first.status_code == second.status_code == 201
    assert "Idempotent-Replayed" not in first
    assert second["Idempotent-Replayed"] == "true"
    assert second.content == first.content
    assert second["Content-Type"] == first["Content-Type"]
    assert customer_audits(farm) == 1


def test_the_query_string_is_not_part_of_the_operation(farm_client: Any) -> None:
    client, farm = farm_client
    post(client, CUSTOMERS + "?x=1", {"name": "Ana", "phone": "1"}, key="q")
    again = post(client, CUSTOMERS + "?x=2", {"name": "Ana", "phone": "1"}, key="q")
    assert again["Idempotent-Replayed"] == "true"
    assert customer_audits(farm) == 1


@mutation(
    "idempotency/middleware.py",
    find='operation_key=sha256_hex(f"{method}:{request.path}")',
    replace="operation_key=sha256_hex(method)",
)
def test_the_same_key_on_another_path_is_another_operation(farm_client: Any) -> None:
    """Mutation: hash only the method into the operation key → the second path replays the
    first → red."""
    client, _ = farm_client
    a = post(client, EFFECTS, {"label": "a"}, key="same")
    b = post(client, EFFECTS + "1/", {"label": "b"}, key="same")
    assert a.status_code == b.status_code == 201
    assert "Idempotent-Replayed" not in b
    assert effects() == ["a", "b"]


def test_a_204_replay_has_no_body(farm_client: Any) -> None:
    client, _ = farm_client
    first = post(client, "/idem-test/empty/", {}, key="e")
    again = post(client, "/idem-test/empty/", {}, key="e")
    assert first.status_code == again.status_code == 204
    assert again["Idempotent-Replayed"] == "true"
    assert again.content == b""
    assert effects() == ["empty"]


def test_a_binary_body_replays_byte_identical(farm_client: Any) -> None:
    client, _ = farm_client
    first = post(client, "/idem-test/binary/", {}, key="b")
    again = post(client, "/idem-test/binary/", {}, key="b")
    assert again.content == first.content
    assert again["Content-Type"] == "application/octet-stream"
    assert effects() == ["binary"]


def test_an_async_view_runs_inside_the_unit(farm_client: Any) -> None:
    client, _ = farm_client
    first = post(client, "/idem-test/async/", {}, key="a")
    again = post(client, "/idem-test/async/", {}, key="a")
    assert first.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert effects() == ["async"]


# --- failures are never cached --------------------------------------------------------------------


@mutation(
    "idempotency/unit.py",
    find="        except _Rollback as rollback:\n            self._release(scope, owner)\n",
    replace="        except _Rollback as rollback:\n",
)
def test_a_refused_request_releases_the_claim_so_the_corrected_one_runs(
    farm_client: Any,
) -> None:
    """A domain error (400 field errors), then the corrected body with the same key succeeds.

    Mutation: no ``_release`` after a Failure → the corrected body meets the refused request's
    claim with another fingerprint → 422 → red.
    """
    client, farm = farm_client
    refused = post(client, CUSTOMERS, {"name": "", "phone": "1"}, key="fix-me")
    assert refused.status_code == 400
    assert refused.json()["code"] != "Idempotency.KeyRequired"
    corrected = post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="fix-me")
    assert corrected.status_code == 201
    assert "Idempotent-Replayed" not in corrected
    assert customer_audits(farm) == 1


@mutation(
    "idempotency/middleware.py",
    find="if 200 <= response.status_code < 300:",
    replace="if True:",
)
@pytest.mark.parametrize("status", [422, 409, 500, 503])
def test_a_non_2xx_response_rolls_the_views_writes_back_and_is_not_stored(
    farm_client: Any, status: int
) -> None:
    """Mutation: publish every status (``Success`` for any response) → the row survives and
    the retry replays → red."""
    client, _ = farm_client
    first = post(client, EFFECTS, {"label": "x", "status": status}, key="s")
    assert first.status_code == status
    assert effects() == []
    assert not IdempotencyRecord.objects.exists()
    retry = post(client, EFFECTS, {"label": "x", "status": status}, key="s")
    assert "Idempotent-Replayed" not in retry


def test_a_view_exception_rolls_back_and_releases(farm_client: Any) -> None:
    client, _ = farm_client
    response = post(client, EFFECTS, {"label": "boom", "raise": True}, key="x")
    assert response.status_code == 500
    assert effects() == []
    assert not IdempotencyRecord.objects.exists()


# --- brief §4.13, on POST /api/v1/customers/ ------------------------------------------------------


@mutation(
    "idempotency/unit.py",
    find='if row["fingerprint"] and row["fingerprint"] != scope.fingerprint:',
    replace="if False:",
)
def test_same_key_different_body_is_refused_and_the_handler_never_ran(farm_client: Any) -> None:
    """§4.13 (1). Mutation: drop the fingerprint comparison in the claim inspection → the
    second body is answered with the first's replay (201) → red."""
    client, farm = farm_client
    assert post(client, CUSTOMERS, {"name": "Ana", "phone": "1"}, key="k").status_code == 201
    other = post(client, CUSTOMERS, {"name": "Ben", "phone": "2"}, key="k")
    assert other.status_code == 422
    assert other["Content-Type"] == "application/problem+json"
    assert other.json()["code"] == "Idempotency.KeyReused"
    assert customer_audits(farm) == 1


@mutation(
    "idempotency/unit.py",
    find="if row is not None:\n                # A different request is never stolen over",
    replace="if False:\n                # A different request is never stolen over",
)
@override_settings(IDEMPOTENCY_MAX_WAIT_SECONDS=0.5)
def test_an_abandoned_claim_is_stolen_and_the_handler_runs_again(farm_client: Any) -> None:
    """§4.13 (2): the completed row doctored back to somebody's claim whose lease expired 5 min
    ago; the resend steals it on first sight.

    Mutation: remove the steal UPDATE → the expired claim blocks until the budget → 409 → red.
    """
    client, farm = farm_client
    body = {"name": "Ana", "phone": "1"}
    assert post(client, CUSTOMERS, body, key="k").status_code == 201
    doctor_in_progress(record_for(farm, CUSTOMERS, "k"), lease_delta=timedelta(minutes=-5))
    started = time.monotonic()
    again = post(client, CUSTOMERS, body, key="k")
    assert time.monotonic() - started < 10
    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again
    assert customer_audits(farm) == 2


@mutation(
    "idempotency/middleware.py",
    find="tenant_id=str(tenant_id),",
    replace='tenant_id="one-tenant",',
)
def test_two_farms_with_the_same_literal_key_both_execute(member_client: Any) -> None:
    """§4.13 (3). Mutation: a constant ``tenant_id`` in the middleware's scope → farm B gets
    farm A's replay → red."""
    client_a, member_a = member_client()
    client_b, member_b = member_client()
    body = {"name": "Ana", "phone": "1"}
    a = post(client_a, CUSTOMERS, body, key="shared-literal-key")
    b = post(client_b, CUSTOMERS, body, key="shared-literal-key")
    assert a.status_code == b.status_code == 201
    assert "Idempotent-Replayed" not in b
    assert customer_audits(member_a.tenant) == 1
    assert customer_audits(member_b.tenant) == 1


@mutation(
    "idempotency/unit.py",
    find="                        lease_expires_at__lt=now,\n",
    replace="",
)
@override_settings(IDEMPOTENCY_LEASE_SECONDS=60, IDEMPOTENCY_MAX_WAIT_SECONDS=1)
def test_a_live_competing_lease_answers_409_within_the_budget(farm_client: Any) -> None:
    """§4.13 (4): a claim whose lease ends in 10 min; the resend waits 1 s, then 409.

    Mutation: drop ``lease_expires_at__lt=now`` from the steal predicate → the live claim is
    stolen and the handler runs again (201) → red.
    """
    client, farm = farm_client
    body = {"name": "Ana", "phone": "1"}
    assert post(client, CUSTOMERS, body, key="k").status_code == 201
    doctor_in_progress(record_for(farm, CUSTOMERS, "k"), lease_delta=timedelta(minutes=10))
    started = time.monotonic()
    busy = post(client, CUSTOMERS, body, key="k")
    elapsed = time.monotonic() - started
    assert busy.status_code == 409
    assert busy.json()["code"] == "Idempotency.InProgress"
    assert int(busy["Retry-After"]) >= 1
    assert 1 <= elapsed < 10
    assert customer_audits(farm) == 1


# --- user-scoped keys (/api/v1/me) ----------------------------------------------------------------


@mutation(
    "idempotency/middleware.py",
    find="if keys_are_user_scoped(view_func) or _is_user_scoped(request.path):",
    replace="if False:",
)
def test_two_users_of_one_farm_with_the_same_key_on_their_own_me_write_both_execute(
    db: Any,
) -> None:
    """Mutation: drop the user-scoped branch of ``caller_key_for`` → the second user gets the
    first user's replay → red."""
    farm = FarmFactory()
    clients = []
    for _ in range(2):
        client = APIClient()
        membership: Any = MembershipFactory(tenant=farm)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(membership)}")
        clients.append(client)
    path = "/api/v1/me/idem-test-notes/"
    first = post(clients[0], path, {"label": "note"}, key="mine")
    second = post(clients[1], path, {"label": "note"}, key="mine")
    again = post(clients[1], path, {"label": "note"}, key="mine")
    assert "Idempotent-Replayed" not in second
    assert again["Idempotent-Replayed"] == "true"
    assert first.status_code == second.status_code == 201
    assert effects() == ["note", "note"]


# --- a lease stolen mid-execution, over HTTP ------------------------------------------------------


@mutation(
    Edit(
        "idempotency/unit.py",
        find='"AND lease_owner = %s AND status = %s"',
        replace='"AND status = %s"',
    ),
    Edit("idempotency/unit.py", find='            prep("lease_owner", owner),\n', replace=""),
)
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@override_settings(IDEMPOTENCY_LEASE_SECONDS=0.3, IDEMPOTENCY_MAX_WAIT_SECONDS=5)
def test_a_stolen_lease_rolls_the_slow_requests_writes_back_and_it_replays_the_winner() -> None:
    """A slow request (held by the test app after writing its side effect) outlives its 0.3 s
    lease; a retry steals the claim and is held too. The slow one is released first and tries
    to publish while the retry still runs; then the retry is released and publishes.

    Mutation: drop ``lease_owner=owner`` from the publish UPDATE → the slow request publishes
    over the live thief, its side-effect row (attempt "slow") survives and the retry replays
    it → red.
    """
    farm = FarmFactory()
    membership: Any = MembershipFactory(tenant=farm)
    bearer = bearer_for(membership)
    key = str(uuid.uuid4())
    responses: dict[str, Any] = {}

    def send(attempt: str) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
        try:
            responses[attempt] = post(client, EFFECTS, {"label": "x"}, key, HTTP_X_ATTEMPT=attempt)
        finally:
            connection.close()

    slow, retry = HOLDS["slow"], HOLDS["retry"]
    slow.arm()
    retry.arm()
    slow_thread = threading.Thread(target=send, args=("slow",))
    slow_thread.start()
    assert slow.entered.wait(timeout=10)
    time.sleep(0.4)  # the slow request's lease is now expired
    retry_thread = threading.Thread(target=send, args=("retry",))
    retry_thread.start()
    assert retry.entered.wait(timeout=10)  # the retry stole the claim and is mid-execution
    slow.release()
    # Correct code: the slow request's publish fails and it polls for the winner (still
    # running after this bounded wait). Mutated: it publishes and finishes.
    slow_thread.join(timeout=0.5)
    retry.release()
    retry_thread.join(timeout=15)
    slow_thread.join(timeout=15)

    assert list(SideEffect.objects.values_list("attempt", flat=True)) == ["retry"]
    winner, loser = responses["retry"], responses["slow"]
    assert winner.status_code == 201
    assert "Idempotent-Replayed" not in winner
    assert winner.json()["attempt"] == "retry"
    assert loser.status_code == 201
    assert loser["Idempotent-Replayed"] == "true"
    assert loser.content == winner.content
