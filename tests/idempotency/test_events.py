"""idempotency's signals for observers: every outcome of ``IdempotentUnit.run``, stolen leases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from idempotency import (
    Executed,
    Failure,
    IdempotentUnit,
    InProgress,
    KeyConflict,
    Replayed,
    Success,
    lease_stolen,
    unit_finished,
)
from tests.idempotency.conftest import foreign_claim, make_scope
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def received() -> Iterator[list[tuple[Any, dict[str, Any]]]]:
    heard: list[tuple[Any, dict[str, Any]]] = []

    def listen(signal: Any, sender: Any, **kwargs: Any) -> None:
        heard.append((signal, kwargs))

    unit_finished.connect(listen, dispatch_uid="test-events-finished")
    lease_stolen.connect(listen, dispatch_uid="test-events-stolen")
    yield heard
    unit_finished.disconnect(dispatch_uid="test-events-finished")
    lease_stolen.disconnect(dispatch_uid="test-events-stolen")


@mutation(
    "idempotency/unit.py",
    find=(
        "    @events.reports_outcome  "
        "# observability: sends events.unit_finished with the outcome\n"
    ),
    replace="",
)
def test_every_outcome_of_run_is_signalled_with_its_scope(received):
    """Mutation: drop ``@events.reports_outcome`` from ``IdempotentUnit.run`` → red."""
    scope = make_scope()
    unit = IdempotentUnit(max_wait_seconds=0)
    unit.run(scope, lambda: Failure("no"))
    unit.run(scope, lambda: Success({"n": 1}))
    unit.run(scope, lambda: Success({"n": 2}))
    unit.run(make_scope(caller_key=scope.caller_key, fingerprint="e" * 64), lambda: Success({}))
    busy = make_scope()
    foreign_claim(busy, lease_delta=timedelta(minutes=10))
    unit.run(busy, lambda: Success({}))
    outcomes = [kwargs["outcome"] for signal, kwargs in received]
    assert all(signal is unit_finished for signal, _ in received)
    assert outcomes[0] == Executed(Failure("no"))
    assert outcomes[1] == Executed(Success({"n": 1}))
    assert outcomes[2] == Replayed({"n": 1})
    assert outcomes[3] == KeyConflict()
    assert isinstance(outcomes[4], InProgress)
    assert [kwargs["scope"] for _, kwargs in received][:3] == [scope, scope, scope]


@mutation(
    "idempotency/unit.py",
    find="events.lease_stolen.send(sender=type(self), scope=scope)",
    replace="pass",
)
def test_a_stolen_lease_is_signalled_before_the_work_runs(received):
    """Mutation: drop the ``lease_stolen.send`` from the steal branch of ``_claim`` → red."""
    scope = make_scope()
    foreign_claim(scope, lease_delta=timedelta(minutes=-5))
    IdempotentUnit(max_wait_seconds=0.2).run(scope, lambda: Success({"rerun": True}))
    (stolen, stolen_kwargs), (finished, finished_kwargs) = received
    assert stolen is lease_stolen and stolen_kwargs["scope"] == scope
    assert finished is unit_finished and finished_kwargs["outcome"] == Executed(
        Success({"rerun": True})
    )
