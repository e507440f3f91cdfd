"""Contract suite of the port, in-process: ``IdempotentUnit.run`` on the real database.

Most tests run twice: in autocommit mode (how the adapters call it) and inside an already-open
transaction (savepoint mode, e.g. a ``django_db`` test or a caller's own ``atomic``).
"""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from idempotency import (
    Executed,
    Failure,
    IdempotentUnit,
    InProgress,
    KeyConflict,
    Replayed,
    Success,
)
from idempotency.models import IdempotencyRecord
from tests.idempotency.conftest import effects, foreign_claim, make_scope
from tests.mutations import Edit, mutation
from tests.testapps.idem.models import SideEffect


@pytest.fixture(
    params=[
        # Marks, not getfixturevalue("db"): pytest-django creates the test database only for
        # items that declare it, so a selection of these tests alone would meet an empty one.
        pytest.param("autocommit", marks=pytest.mark.django_db(transaction=True)),
        pytest.param("outer-transaction", marks=pytest.mark.django_db),
    ]
)
def txmode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def writes(label: str, result: Any = None) -> Any:
    def work() -> Success:
        SideEffect.objects.create(tenant_id="t1", label=label)
        return Success(result if result is not None else {"label": label})

    return work


def fails(label: str) -> Any:
    def work() -> Failure:
        SideEffect.objects.create(tenant_id="t1", label=label)
        return Failure({"code": "Domain.Refused"})

    return work


def record_of(scope: Any) -> IdempotencyRecord | None:
    return IdempotencyRecord.objects.filter(
        tenant_id=scope.tenant_id, operation_key=scope.operation_key, caller_key=scope.caller_key
    ).first()


def test_first_run_executes_and_publishes_in_one_step(txmode: str) -> None:
    scope = make_scope()
    outcome = IdempotentUnit().run(scope, writes("first", {"id": 7}))
    assert outcome == Executed(Success({"id": 7}))
    record = record_of(scope)
    assert record is not None
    assert record.status == IdempotencyRecord.Status.COMPLETED
    assert record.completed_at is not None
    assert json.loads(record.result or "") == {"id": 7}
    assert effects() == ["first"]


@mutation(
    "idempotency/unit.py",
    find=(
        "cursor.execute(sql, params)\n"
        "            return bool(cursor.rowcount == 1)\n\n    def _release"
    ),
    replace="return True\n\n    def _release",
)
def test_replay_returns_the_stored_result_without_running_work(txmode: str, never: Any) -> None:
    """Mutation: publish UPDATE removed (row never completed) → second run waits → InProgress →
    red."""
    scope = make_scope()
    IdempotentUnit().run(scope, writes("once", {"id": 1, "név": "ü"}))
    outcome = IdempotentUnit(max_wait_seconds=0.1).run(scope, never)
    assert outcome == Replayed({"id": 1, "név": "ü"})
    assert effects() == ["once"]


@mutation("idempotency/unit.py", find='if connection.vendor != "postgresql":', replace="if True:")
@pytest.mark.postgres
def test_a_replay_is_one_statement_on_postgresql(txmode: str, never: Any) -> None:
    """The claim attempt and the read of the row holding the key share one round trip.

    Mutation: take the two-statement (SQLite) path on PostgreSQL as well → red (2 statements).
    """
    scope = make_scope()
    IdempotentUnit().run(scope, writes("once", {"id": 1}))
    with CaptureQueriesContext(connection) as queries:
        outcome = IdempotentUnit(max_wait_seconds=0.1).run(scope, never)
    assert outcome == Replayed({"id": 1})
    assert len(queries) == 1, [q["sql"] for q in queries]


@mutation(
    "idempotency/unit.py",
    find="        except _Rollback as rollback:\n            self._release(scope, owner)\n",
    replace="        except _Rollback as rollback:\n",
)
def test_failure_rolls_back_releases_the_claim_and_a_corrected_retry_runs_at_once(
    txmode: str,
) -> None:
    """Mutation: ``_release`` skipped after a Failure → the retry finds a live claim and
    answers InProgress (max wait 0) → red."""
    scope = make_scope()
    outcome = IdempotentUnit().run(scope, fails("refused"))
    assert outcome == Executed(Failure({"code": "Domain.Refused"}))
    assert effects() == []  # the failed work's writes were rolled back
    assert record_of(scope) is None  # never stored
    retry = IdempotentUnit(max_wait_seconds=0).run(scope, writes("corrected"))
    assert isinstance(retry, Executed) and isinstance(retry.result, Success)
    assert effects() == ["corrected"]


@mutation(
    "idempotency/unit.py",
    find='if row["fingerprint"] and row["fingerprint"] != scope.fingerprint:',
    replace="if False:",
)
def test_same_key_other_fingerprint_is_a_conflict_and_work_never_runs(
    txmode: str, never: Any
) -> None:
    """Mutation: drop the fingerprint comparison in the claim inspection → Replayed → red."""
    scope = make_scope()
    IdempotentUnit().run(scope, writes("original"))
    other = make_scope(caller_key=scope.caller_key, fingerprint="e" * 64)
    assert IdempotentUnit().run(other, never) == KeyConflict()
    assert effects() == ["original"]


@mutation(
    "idempotency/unit.py",
    find="fingerprint=scope.fingerprint,\n                        status=in_progress,",
    replace="status=in_progress,",
)
def test_an_expired_claim_with_another_fingerprint_is_never_stolen(txmode: str, never: Any) -> None:
    """The look before the steal refuses another request's claim (``KeyConflict``); the steal's
    own predicate must refuse it too, for a row that changes hands between the look and the
    steal: the look sees our request's abandoned claim, the steal meets another request's.

    Mutation: drop ``fingerprint=`` from the steal predicate → the other request's claim is
    stolen and the work runs → red."""
    scope = make_scope()
    foreign_claim(scope, lease_delta=timedelta(minutes=-5), fingerprint="e" * 64)
    assert IdempotentUnit().run(scope, never) == KeyConflict()

    raced = make_scope()
    foreign_claim(raced, lease_delta=timedelta(minutes=-5))

    class ChangesHandsAfterTheLook(IdempotentUnit):
        def _insert_or_inspect(self, *args: Any) -> Any:
            seen = super()._insert_or_inspect(*args)
            IdempotencyRecord.objects.filter(caller_key=raced.caller_key).update(
                fingerprint="e" * 64
            )
            return seen

    unit = ChangesHandsAfterTheLook(max_wait_seconds=1, poll_interval=0.01)
    assert unit.run(raced, never) == KeyConflict()


@mutation(
    "idempotency/unit.py",
    find="if row is not None:\n                # A different request is never stolen over",
    replace="if False:\n                # A different request is never stolen over",
)
def test_an_abandoned_claim_is_stolen_and_the_work_runs(txmode: str) -> None:
    """Mutation: steal UPDATE removed → the expired claim blocks until the wait budget →
    InProgress → red."""
    scope = make_scope()
    foreign_claim(scope, lease_delta=timedelta(minutes=-5))
    outcome = IdempotentUnit(max_wait_seconds=0.2).run(scope, writes("rerun"))
    assert isinstance(outcome, Executed)
    assert effects() == ["rerun"]


@mutation(
    "idempotency/unit.py",
    find="                        lease_expires_at__lt=now,\n",
    replace="",
)
def test_a_live_competitor_past_the_wait_budget_is_in_progress(txmode: str, never: Any) -> None:
    """Mutation: drop ``lease_expires_at__lt=now`` from the steal predicate (a live lease is
    stolen) → the work runs → red."""
    scope = make_scope()
    foreign_claim(scope, lease_delta=timedelta(minutes=10))
    started = time.monotonic()
    outcome = IdempotentUnit(lease_seconds=60, max_wait_seconds=0.2, poll_interval=0.02).run(
        scope, never
    )
    elapsed = time.monotonic() - started
    assert isinstance(outcome, InProgress)
    assert outcome.retry_after >= 1
    assert 0.2 <= elapsed < 5


def test_two_tenants_with_the_same_key_both_execute(txmode: str) -> None:
    scope = make_scope(tenant_id="farm-a")
    twin = make_scope(tenant_id="farm-b", caller_key=scope.caller_key)
    assert isinstance(IdempotentUnit().run(scope, writes("a")), Executed)
    assert isinstance(IdempotentUnit().run(twin, writes("b")), Executed)
    assert effects() == ["a", "b"]


@mutation(
    "idempotency/unit.py",
    find="return replay\n            self._release(scope, owner)\n            raise",
    replace="return replay\n            raise",
)
def test_an_exception_rolls_back_releases_and_is_reraised_without_retrying(txmode: str) -> None:
    """Mutation: no ``_release`` in the exception path → the retry answers InProgress → red."""
    scope = make_scope()
    calls: list[int] = []

    def explodes() -> Success:
        calls.append(1)
        SideEffect.objects.create(tenant_id="t1", label="exploded")
        raise OperationalError("connection reset")

    with pytest.raises(OperationalError):
        IdempotentUnit().run(scope, explodes)
    assert calls == [1]  # never retried
    assert effects() == []
    assert record_of(scope) is None
    assert isinstance(IdempotentUnit(max_wait_seconds=0).run(scope, writes("retry")), Executed)


def test_a_result_that_cannot_be_stored_leaves_no_side_effect(txmode: str) -> None:
    scope = make_scope()
    with pytest.raises(TypeError):
        IdempotentUnit().run(scope, writes("unstorable", {"when": object()}))
    assert effects() == []
    assert record_of(scope) is None


def test_work_must_say_success_or_failure(txmode: str) -> None:
    scope = make_scope()

    def returns_normally() -> Any:
        SideEffect.objects.create(tenant_id="t1", label="implicit")
        return {"ok": True}

    with pytest.raises(TypeError):
        IdempotentUnit().run(scope, returns_normally)
    assert effects() == []
    assert record_of(scope) is None


def test_run_inside_a_callers_transaction_leaves_it_usable(db: Any) -> None:
    scope = make_scope()
    with transaction.atomic():
        SideEffect.objects.create(tenant_id="t1", label="caller")
        IdempotentUnit().run(scope, fails("refused"))
        IdempotentUnit().run(make_scope(), writes("inner"))
    assert effects() == ["caller", "inner"]


@mutation(
    "idempotency/unit.py",
    find="replay = self._probe_own(scope, owner)",
    replace="replay = None",
)
@pytest.mark.django_db(transaction=True)
def test_ambiguous_commit_replays_our_own_published_result() -> None:
    """The commit lands, then the caller sees an exception (a lost acknowledgement, simulated
    by an ``on_commit`` hook that raises after COMMIT).

    Mutation: skip ``_probe_own`` in the exception path → the ConnectionError escapes → red.
    """
    scope = make_scope()

    def work() -> Success:
        SideEffect.objects.create(tenant_id="t1", label="landed")

        def ack_lost() -> None:
            raise ConnectionError("server closed the connection after COMMIT")

        transaction.on_commit(ack_lost)
        return Success({"id": 42})

    assert IdempotentUnit().run(scope, work) == Replayed({"id": 42})
    assert effects() == ["landed"]


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
def test_a_lease_stolen_mid_execution_rolls_the_losers_work_back() -> None:
    """The loser outlives its tiny lease; mid-run a second thread steals the expired lease and
    starts executing. The loser then tries to publish while the thief is still running: the
    publish matches no row, the loser's work is rolled back and it replays the thief's result.

    Mutation: drop ``lease_owner=owner`` from the publish UPDATE → the loser publishes over
    the live thief, its side-effect row survives (and the thief rolls back instead) → red.
    """
    scope = make_scope()
    unit = IdempotentUnit(lease_seconds=0.2, max_wait_seconds=5, poll_interval=0.02)
    thief_in_work = threading.Event()
    thief: list[Any] = []

    def thief_work() -> Success:
        SideEffect.objects.create(tenant_id="t1", label="winner")
        thief_in_work.set()
        # Give the loser a bounded chance to publish while we still run: with a correct
        # publish its row never becomes visible, so this waits the whole 0.5 s.
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and not SideEffect.objects.filter(label="loser"):
            time.sleep(0.02)
        return Success({"by": "winner"})

    def thief_run() -> None:
        try:
            thief.append(unit.run(scope, thief_work))
        finally:
            connection.close()

    thread = threading.Thread(target=thief_run)

    def loser_work() -> Success:
        time.sleep(0.3)  # outlive the 0.2 s lease: we are now presumed dead
        thread.start()
        assert thief_in_work.wait(timeout=10)
        SideEffect.objects.create(tenant_id="t1", label="loser")
        return Success({"by": "loser"})

    outcome = unit.run(scope, loser_work)
    thread.join(timeout=10)
    assert thief == [Executed(Success({"by": "winner"}))]
    assert outcome == Replayed({"by": "winner"})
    assert effects() == ["winner"]


@pytest.mark.django_db(transaction=True)
def test_a_loser_whose_winner_released_answers_in_progress() -> None:
    scope = make_scope()
    unit = IdempotentUnit(lease_seconds=0.2, max_wait_seconds=0.5, poll_interval=0.02)

    def thief_fails() -> None:
        try:
            unit.run(scope, fails("thief"))
        finally:
            connection.close()

    def loser_work() -> Success:
        time.sleep(0.3)
        thief = threading.Thread(target=thief_fails)
        thief.start()
        thief.join(timeout=10)
        SideEffect.objects.create(tenant_id="t1", label="loser")
        return Success({"by": "loser"})

    assert isinstance(unit.run(scope, loser_work), InProgress)
    assert effects() == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lease_seconds": 0},
        {"lease_seconds": -1},
        {"max_wait_seconds": -0.1},
        {"poll_interval": 0},
        {"poll_interval": float("nan")},
        {"lease_seconds": True},
    ],
)
def test_options_are_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        IdempotentUnit(**kwargs)


@pytest.mark.parametrize("field", ["tenant_id", "operation_key", "caller_key", "fingerprint"])
@pytest.mark.parametrize("bad", ["", "x" * 65])
def test_scope_fields_are_bounded(field: str, bad: str) -> None:
    with pytest.raises(ValueError):
        make_scope(**{field: bad})


def test_scope_is_frozen() -> None:
    scope = make_scope()
    with pytest.raises(AttributeError):
        scope.tenant_id = "other"  # type: ignore[misc]
    assert scope == make_scope(caller_key=scope.caller_key)
