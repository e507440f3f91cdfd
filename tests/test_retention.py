"""``manage.py purge_expired``: every registered table loses its expired rows and keeps its
fresh ones, in bounded batches, and concurrent runs (cron on every replica) share the work."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.utils import timezone
from oauth2_provider.models import get_application_model

from a2a_tools.models import A2ATask
from idempotency.models import IdempotencyRecord
from mcp_tools.management import retention
from mcp_tools.models import (
    CallAudit,
    ChangeEvent,
    ClientRequest,
    Listener,
    RequestStateRedemption,
    TaskRecord,
)
from tests.mutations import mutation

LONG_AGO = dt.timedelta(days=400)  # past every retention
Row = tuple[type[Any], Any]


def _uid() -> str:
    return uuid.uuid4().hex


def _task(expired: bool) -> Row:
    now = timezone.now()
    row = TaskRecord.objects.create(
        task_id=_uid(),
        tenant_key="t",
        owner_key="o",
        operation="op",
        status="completed",
        created_at=now,
        updated_at=now,
        expires_at=now - LONG_AGO if expired else now + dt.timedelta(hours=1),
    )
    return TaskRecord, row.pk


def _redemption(expired: bool) -> Row:
    now = timezone.now()
    expires = now - LONG_AGO if expired else now + dt.timedelta(hours=1)
    row = RequestStateRedemption.objects.create(nonce=_uid(), expires_at=expires)
    return RequestStateRedemption, row.pk


def _client_request(expired: bool) -> Row:
    now = timezone.now()
    row = ClientRequest.objects.create(
        request_id=_uid(),
        tenant_key="t",
        owner_key="o",
        tool="tool",
        call_id="c",
        method="elicitation/create",
        expires_at=now - LONG_AGO if expired else now + dt.timedelta(hours=1),
    )
    return ClientRequest, row.pk


def _change_event(expired: bool) -> Row:
    at = timezone.now() - (LONG_AGO if expired else dt.timedelta(0))
    return ChangeEvent, ChangeEvent.objects.create(method="m", created_at=at).pk


def _listener(expired: bool) -> Row:
    now = timezone.now()
    row = Listener.objects.create(
        listener_id=_uid(),
        tenant_key="t",
        owner_key="o",
        started_at=now - LONG_AGO,
        seen_at=now - LONG_AGO if expired else now,
    )
    return Listener, row.pk


def _audit(expired: bool) -> Row:
    at = timezone.now() - (LONG_AGO if expired else dt.timedelta(0))
    row = CallAudit.objects.create(at=at, tenant_key="t", protocol="mcp", outcome="ok")
    return CallAudit, row.pk


def _a2a_task(expired: bool) -> Row:
    at = timezone.now() - (LONG_AGO if expired else dt.timedelta(0))
    row = A2ATask.objects.create(
        id=_uid(),
        tenant_id="t",
        user_id=1,
        context_id="c",
        state="completed",
        skill="s",
        updated_at=at,
        task={},
    )
    return A2ATask, row.pk


def _idempotency_record(expired: bool) -> Row:
    now = timezone.now()
    row = IdempotencyRecord.objects.create(
        tenant_id="t",
        operation_key="op",
        caller_key=_uid(),
        fingerprint="f",
        status=IdempotencyRecord.Status.COMPLETED,
        lease_owner=uuid.uuid4(),
        lease_expires_at=now - LONG_AGO,
        result="{}",
        completed_at=now - LONG_AGO if expired else now,
        created_at=now - LONG_AGO,
    )
    return IdempotencyRecord, row.pk


def _cimd_application(expired: bool) -> Row:
    Application = get_application_model()
    row = Application.objects.create(
        client_id=f"https://client.example/{_uid()}.json",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://localhost/callback",
        registration_source=Application.RegistrationSource.CIMD,
        name="probe",
    )
    created = timezone.now() - (LONG_AGO if expired else dt.timedelta(0))
    Application.objects.filter(pk=row.pk).update(created=created)
    return Application, row.pk


ROWS: dict[str, Callable[[bool], Row]] = {
    "mcp_tools_task": _task,
    "mcp_tools_request_state_redemption": _redemption,
    "mcp_tools_client_request": _client_request,
    "mcp_tools_change_event": _change_event,
    "mcp_tools_listener": _listener,
    "mcp_tools_call_audit": _audit,
    "a2a_tools_tasks": _a2a_task,
    "idempotency_records": _idempotency_record,
    "oauth2_provider_application": _cimd_application,
}


def _exists(row: Row) -> bool:
    model, pk = row
    return bool(model.objects.filter(pk=pk).exists())


def _purge(*args: str) -> str:
    out = StringIO()
    call_command("purge_expired", *args, stdout=out)
    return out.getvalue()


def test_every_registered_table_is_one_this_module_proves() -> None:
    """A table registered without a row factory here would be swept untested."""
    assert {entry.table for entry in retention.registered()} == set(ROWS)


@mutation(
    "mcp_tools/management/expiring.py",
    find="TaskRecord.objects.filter(expires_at__lte=now)",
    replace="TaskRecord.objects.filter(expires_at__gte=now)",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="RequestStateRedemption.objects.filter(expires_at__lt=now)",
    replace="RequestStateRedemption.objects.filter(expires_at__gt=now)",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="ClientRequest.objects.filter(expires_at__lt=now)",
    replace="ClientRequest.objects.filter(expires_at__gt=now)",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="ChangeEvent.objects.filter(created_at__lt=now",
    replace="ChangeEvent.objects.filter(created_at__gt=now",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="Listener.objects.filter(seen_at__lt=now",
    replace="Listener.objects.filter(seen_at__gt=now",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="CallAudit.objects.filter(at__lt=cutoff)",
    replace="CallAudit.objects.filter(at__gt=cutoff)",
)
@mutation("a2a_tools/purge.py", find="updated_at__lt=now", replace="updated_at__gt=now")
@mutation(
    "idempotency/purge.py",
    find="Q(status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=cutoff)",
    replace="Q(status=IdempotencyRecord.Status.COMPLETED, completed_at__gt=cutoff)",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="lambda now: unused_cimd_applications(cutoff=now - hours())",
    replace="lambda now: unused_cimd_applications(cutoff=now + hours()).none()",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="        entries.append(_idempotency())\n",
    replace="        pass\n",
)
@mutation(
    "mcp_tools/management/expiring.py",
    find="        entries.append(_unused_cimd_clients())\n",
    replace="        pass\n",
)
@mutation(
    "a2a_tools/apps.py", find="        retention.register(EXPIRING)\n", replace="        pass\n"
)
@pytest.mark.parametrize("table", sorted(ROWS))
@pytest.mark.django_db
def test_an_expired_row_goes_and_a_fresh_one_stays(table: str) -> None:
    """One line per table, naming what "expired" means there.

    Mutations: each table's age comparison flipped (the fresh row goes, or the expired one
    stays) → red; another app's registration dropped (idempotency, tenancy.oauth, a2a_tools)
    → ``--table`` refuses it → red.
    """
    expired, fresh = ROWS[table](True), ROWS[table](False)
    report = _purge("--table", table)
    assert report.startswith(f"{table}: 1 deleted (older than "), report
    assert (_exists(expired), _exists(fresh)) == (False, True)


@mutation(
    "mcp_tools/management/retention.py",
    find="        if taken < size:\n            break",
    replace="        break",
)
@pytest.mark.django_db
def test_the_sweep_goes_on_batch_after_batch_until_a_short_one() -> None:
    """Mutation: stop after the first batch → three of five expired rows stay → red."""
    rows = [_change_event(True) for _ in range(5)]
    assert _purge("--table", "mcp_tools_change_event", "--batch-size", "2") == (
        "mcp_tools_change_event: 5 deleted"
        " (older than 10m, MCP_TOOLS_CHANGE_EVENT_RETENTION_SECONDS)\n"
    )
    assert not any(_exists(row) for row in rows)


@pytest.mark.django_db
def test_a_dry_run_counts_and_deletes_nothing() -> None:
    row = _change_event(True)
    report = _purge("--dry-run", "--table", "mcp_tools_change_event")
    assert report.startswith("mcp_tools_change_event: 1 would be deleted (older than 10m")
    assert _exists(row)


@pytest.mark.django_db
def test_an_unknown_table_is_refused_with_the_known_ones() -> None:
    with pytest.raises(CommandError, match="not a swept table: nope .*mcp_tools_task"):
        _purge("--table", "nope")


@pytest.mark.django_db
def test_every_table_gets_its_line() -> None:
    lines = _purge().splitlines()
    assert [line.split(":")[0] for line in lines] == sorted(ROWS)


def _in_thread(*args: str) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["report"] = _purge(*args)
        except BaseException as error:  # noqa: BLE001 - reported to the test
            outcome["error"] = error
        finally:
            connection.close()

    return threading.Thread(target=run), outcome


@mutation(
    "mcp_tools/management/retention.py",
    find='.select_for_update(skip_locked=True, of=("self",))',
    replace='.select_for_update(of=("self",))',
)
@pytest.mark.django_db(transaction=True)
def test_a_run_skips_rows_another_transaction_holds_instead_of_waiting() -> None:
    """Mutation: lock without ``SKIP LOCKED`` → the run waits on the held row → red."""
    held, free = _change_event(True), _change_event(True)
    with transaction.atomic():
        list(ChangeEvent.objects.select_for_update().filter(pk=held[1]))
        worker, outcome = _in_thread("--table", "mcp_tools_change_event")
        worker.start()
        worker.join(timeout=15)
        assert not worker.is_alive(), "the sweep waited on a row another transaction holds"
    assert "error" not in outcome
    assert outcome["report"].startswith("mcp_tools_change_event: 1 deleted")
    assert (_exists(held), _exists(free)) == (True, False)


@mutation(
    "mcp_tools/management/retention.py",
    find='.select_for_update(skip_locked=True, of=("self",))',
    replace='.select_for_update(nowait=True, of=("self",))',
)
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_delete_each_expired_row_once_and_both_succeed() -> None:
    """Cron on two replicas at the same minute: the reported counts add up to the expired rows
    (none counted twice), every one is gone, and neither run fails.

    Mutation: refuse a locked row (``NOWAIT``) instead of skipping it → a run fails → red.
    """
    now = timezone.now()
    ChangeEvent.objects.bulk_create(
        ChangeEvent(method="m", created_at=now - LONG_AGO) for _ in range(600)
    )
    runs = [_in_thread("--table", "mcp_tools_change_event", "--batch-size", "5") for _ in "ab"]
    for worker, _ in runs:
        worker.start()
    for worker, _ in runs:
        worker.join(timeout=60)
    assert [outcome.get("error") for _, outcome in runs] == [None, None]
    counts = [int(outcome["report"].split(": ")[1].split(" ")[0]) for _, outcome in runs]
    assert sum(counts) == 600, counts
    assert not ChangeEvent.objects.exists()
