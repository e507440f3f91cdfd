"""Row locks that keep money and stock right under concurrency (real PostgreSQL, two connections).

A second connection runs the same service while the first still holds its transaction open; it
must read the order (payments) or the lots (confirm) only *under* their row locks, so it sees the
first one's effect once that commits.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction

from cluck.caller import Caller
from cluck.models import EggLot, SalesOrder
from cluck.services.orders import (
    OrderLineInput,
    SalesOrderInsufficientStockError,
    sales_order_confirm,
    sales_order_create,
)
from cluck.services.payments import PaymentOverpaymentError, payment_record
from tests.factories import CustomerFactory, FarmFactory, SaleGradeFactory, sellable_lot
from tests.mutations import mutation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

LOCK_TIMEOUT = "200ms"


@contextmanager
def held_open(work: Callable[[], Any]) -> Iterator[None]:
    """Run ``work`` in a transaction on another connection and keep it uncommitted until the
    ``with`` block ends; then commit it."""
    done_work = threading.Event()
    release = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with transaction.atomic():
                work()
                done_work.set()
                release.wait(10)
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
            done_work.set()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert done_work.wait(10)
    try:
        assert not errors, errors
        yield
    finally:
        release.set()
        thread.join(10)
    assert not errors, errors


def with_lock_timeout(work: Callable[[], Any]) -> Any:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        return work()


def stocked_order(quantity: int, *, stock: int) -> tuple[Caller, Any, SalesOrder]:
    farm = FarmFactory.create()
    caller = Caller.system(farm, label="test:concurrency")
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=stock, production_date=farm.today() - dt.timedelta(days=1))
    order = sales_order_create(
        caller=caller,
        customer_id=CustomerFactory.create(farm=farm).pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=quantity, unit_price="1.00")],
    )
    return caller, grade, order


@mutation(
    "cluck/services/payments.py",
    find="SalesOrder.objects.for_tenant(caller.tenant).select_for_update().filter(pk=order_id)",
    replace="SalesOrder.objects.for_tenant(caller.tenant).filter(pk=order_id)",
)
def test_the_overpay_check_runs_under_the_order_row_lock() -> None:
    """Mutation: drop ``select_for_update()`` from the order fetch in ``payment_record`` → red
    (the second payment of the full amount succeeds while the first is uncommitted)."""
    caller, _, order = stocked_order(10, stock=10)
    sales_order_confirm(caller=caller, order_id=order.pk)

    def pay_all() -> Any:
        return payment_record(caller=caller, order_id=order.pk, amount="10.00", method="Cash")

    with held_open(pay_all):
        with pytest.raises(OperationalError):  # lock_timeout: it waited for the order row
            with_lock_timeout(pay_all)
    with pytest.raises(PaymentOverpaymentError):
        pay_all()


def wait_until_blocked_on_a_lock(pid: int) -> None:
    """Poll the server until backend ``pid`` waits on a lock (bounded; no fixed sleep)."""
    poll = threading.Event()
    for _ in range(2000):
        with connection.cursor() as cursor:
            cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
            row = cursor.fetchone()
        if row and row[0] == "Lock":
            return
        poll.wait(0.005)
    raise AssertionError(f"backend {pid} never waited on a lock")


@mutation(
    "cluck/services/orders.py",
    find="batch = list(qs.select_for_update().order_by(",
    replace="batch = list(qs.order_by(",
)
def test_two_confirms_competing_for_one_lot_never_oversell() -> None:
    """The second confirm must read the lot only after the first commits.

    Mutation: drop ``select_for_update()`` from the lot query in ``_lock_fifo_lots`` → red (the
    second confirm plans on the stale 10 eggs, waits only at its UPDATE, then succeeds: 20 eggs
    sold from a lot of 10).
    """
    caller, grade, first = stocked_order(10, stock=10)
    second = sales_order_create(
        caller=caller,
        customer_id=first.customer_id,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=10)],
    )
    outcome: dict[str, Any] = {}
    pid_known = threading.Event()

    def confirm_second() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                outcome["pid"] = cursor.fetchone()[0]
            pid_known.set()
            sales_order_confirm(caller=caller, order_id=second.pk)
            outcome["result"] = "confirmed"
        except SalesOrderInsufficientStockError:
            outcome["result"] = "short"
        finally:
            pid_known.set()
            connection.close()

    with held_open(lambda: sales_order_confirm(caller=caller, order_id=first.pk)):
        rival = threading.Thread(target=confirm_second)
        rival.start()
        assert pid_known.wait(10)
        wait_until_blocked_on_a_lock(outcome["pid"])
    rival.join(10)

    assert outcome["result"] == "short"
    assert EggLot.all_tenants.get(grade=grade).quantity_available == 0
    assert SalesOrder.all_tenants.get(pk=second.pk).status == SalesOrder.Status.DRAFT
