"""The task store: long-running operations in the database, answerable by any replica.

Protocol-neutral on purpose. A task is an *operation* (a tool name today, an A2A skill
tomorrow) with JSON arguments, owned by one actor (``owner_key``) of one tenant
(``tenant_key``), and a status (``working``, ``input_required``, ``completed``, ``failed``,
``cancelled``) with the protocol's own JSON for its ``result`` or ``error``. The MCP
projections (``mcp_tools.methods.tasks``) shape rows into wire results; another protocol reuses the
store and the task engine (``mcp_tools.tasks.engine``) with its own projection.

Every read and write is scoped to the owner: another actor's task, in this tenant or another,
is indistinguishable from one that does not exist. Status changes are conditional updates (a
cancelled task stays cancelled when its worker finishes later).

A ``working`` task is either queued (no lease: the engine holds a job for it) or claimed by a
worker (``claim``: one more attempt, a lease the worker renews). A claimed task past its lease
lost its worker: it is queued again while it has attempts left (``max_attempts``, from the
tool's ``task_retry``), else reported (and recorded) as failed, so a lost worker never leaves a
task working forever. Whoever reads the task first decides (``get``, ``reap_lapsed``); the
conditional updates make that decision once. ``manage.py purge_expired`` deletes rows past
their retention (``mcp_tools.management.expiring``).
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from mcp_tools.models import TERMINAL_STATUSES, TaskRecord, TaskStatus

# ``secrets.token_urlsafe(24)`` is 32 characters; a little slack, never more than the column.
TASK_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
LOST_RUNNER_ERROR: Final = {
    "code": -32603,
    "message": "The task's worker stopped before it finished; start the operation again.",
}


@dataclass(frozen=True)
class Owner:
    """Who a task belongs to: ``tenant_key`` and ``owner_key`` (the acting user)."""

    tenant_key: str
    owner_key: str


@dataclass(frozen=True)
class TaskView:
    """A snapshot of one task row."""

    task_id: str
    operation: str
    arguments: dict[str, Any]
    status: str
    status_message: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    input_requests: dict[str, Any] | None
    answers: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime
    expires_at: dt.datetime
    context_id: str = ""
    tenant_key: str = ""
    owner_key: str = ""
    membership_key: str = ""
    scopes: list[str] | None = None
    credential_epoch: int | None = None
    token_id: int | None = None
    protocol_version: str = ""
    capabilities: dict[str, Any] | None = None
    can_ask: bool = False
    request_id: str = ""
    attempts: int = 0
    max_attempts: int = 1

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def ttl_ms(self) -> int:
        return int((self.expires_at - self.created_at).total_seconds() * 1000)

    @classmethod
    def of(cls, row: TaskRecord) -> TaskView:
        return cls(
            task_id=row.task_id,
            operation=row.operation,
            arguments=dict(row.arguments or {}),
            status=row.status,
            status_message=row.status_message,
            result=row.result,
            error=row.error,
            input_requests=row.input_requests,
            answers=dict(row.answers or {}),
            created_at=row.created_at,
            updated_at=row.updated_at,
            expires_at=row.expires_at,
            context_id=row.context_id,
            tenant_key=row.tenant_key,
            owner_key=row.owner_key,
            membership_key=row.membership_key,
            scopes=None if row.scopes is None else list(row.scopes),
            credential_epoch=row.credential_epoch,
            token_id=row.token_id,
            protocol_version=row.protocol_version,
            capabilities=row.capabilities,
            can_ask=row.can_ask,
            request_id=row.request_id,
            attempts=row.attempts,
            max_attempts=row.max_attempts,
        )


class TaskStore:
    """The database-backed store (``using`` picks the database alias).

    ``on_requeue(task_id)`` hands a task queued again (its worker was lost, it has attempts
    left) back to the engine; it is called inside the transaction that queues it and answers
    False when the engine cannot take it (the task is then recorded failed).
    """

    def __init__(
        self, using: str = "default", *, on_requeue: Callable[[str], bool] | None = None
    ) -> None:
        self.using = using
        self.on_requeue = on_requeue

    def _rows(self) -> Any:
        return TaskRecord.objects.using(self.using)

    def _owned(self, owner: Owner, task_id: Any) -> Any:
        # Only the shape this store hands out reaches SQL (a NUL would be a database error).
        if not isinstance(task_id, str) or not TASK_ID_RE.fullmatch(task_id):
            return self._rows().none()
        # The owner in every statement: another actor's task id finds nothing.
        return self._rows().filter(
            task_id=task_id,
            tenant_key=owner.tenant_key,
            owner_key=owner.owner_key,
            expires_at__gt=timezone.now(),
        )

    def create(
        self,
        owner: Owner,
        *,
        operation: str,
        arguments: Mapping[str, Any],
        answers: Mapping[str, Any] | None = None,
        ttl_seconds: float,
        request_id: str = "",
        context_id: str = "",
        membership_key: str = "",
        scopes: Iterable[str] | None = None,
        credential_epoch: int | None = None,
        token_id: int | None = None,
        protocol_version: str = "",
        capabilities: Mapping[str, Any] | None = None,
        can_ask: bool = False,
        max_attempts: int = 1,
    ) -> TaskView:
        """A new queued ``working`` task (no lease until a worker claims it).

        Committed with the caller's transaction: create it and hand it to the engine in one
        ``transaction.atomic`` so that a task is never accepted without its job.
        """
        now = timezone.now()
        row = self._rows().create(
            task_id=secrets.token_urlsafe(24),
            tenant_key=owner.tenant_key,
            owner_key=owner.owner_key,
            operation=operation,
            arguments=dict(arguments),
            status=TaskStatus.WORKING,
            answers=dict(answers or {}),
            created_at=now,
            updated_at=now,
            expires_at=now + dt.timedelta(seconds=ttl_seconds),
            lease_expires_at=None,
            request_id=request_id[:64],
            context_id=context_id,
            membership_key=membership_key,
            scopes=None if scopes is None else sorted(scopes),
            credential_epoch=credential_epoch,
            token_id=token_id,
            protocol_version=protocol_version[:32],
            capabilities=None if capabilities is None else dict(capabilities),
            can_ask=can_ask,
            max_attempts=max(1, max_attempts),
        )
        return TaskView.of(row)

    def claim(self, task_id: str, *, lease_seconds: float) -> TaskView | None:
        """A worker takes a queued task: one more attempt, a lease it renews from now on.

        ``None`` when the task is not queued (terminal, cancelled, waiting for input, claimed
        by a live worker, expired or unknown) or has no attempt left: the job then does
        nothing. A duplicate job for one task (an engine that delivers twice) is harmless.
        """
        if not (isinstance(task_id, str) and TASK_ID_RE.fullmatch(task_id)):
            return None  # only ids this store hands out reach SQL
        now = timezone.now()
        claimed = (
            self._rows()
            .filter(
                task_id=task_id,
                status=TaskStatus.WORKING,
                lease_expires_at__isnull=True,
                attempts__lt=F("max_attempts"),
                expires_at__gt=now,
            )
            .update(
                attempts=F("attempts") + 1,
                lease_expires_at=now + dt.timedelta(seconds=lease_seconds),
                updated_at=now,
            )
        )
        if not claimed:
            return None
        return TaskView.of(self._rows().get(task_id=task_id))

    def get(self, owner: Owner, task_id: Any) -> TaskView | None:
        """The owner's task, or ``None`` (unknown, expired or someone else's)."""
        row = self._owned(owner, task_id).first()
        if row is None:
            return None
        if (
            row.status == TaskStatus.WORKING
            and row.lease_expires_at is not None
            and row.lease_expires_at < timezone.now()
        ):
            self._recover(row)
            row.refresh_from_db(using=self.using)
        return TaskView.of(row)

    def _recover(self, row: TaskRecord) -> None:
        """``row``'s worker was lost (its lease lapsed): queue it again while it has attempts
        left, else record it failed. Conditional on the lapsed lease, so of several readers
        deciding at once exactly one acts."""
        lapsed = self._rows().filter(
            task_id=row.task_id, status=TaskStatus.WORKING, lease_expires_at=row.lease_expires_at
        )
        if row.attempts < row.max_attempts and self.on_requeue is not None:
            with transaction.atomic(using=self.using):
                requeued = lapsed.update(
                    lease_expires_at=None,
                    status_message=(
                        f"Its worker stopped; running it again (attempt {row.attempts + 1} "
                        f"of {row.max_attempts})."
                    ),
                    updated_at=timezone.now(),
                )
                if not requeued or self.on_requeue(row.task_id):
                    return  # another reader decided first, or the engine has the task again
                transaction.set_rollback(True, using=self.using)
        lapsed.update(
            status=TaskStatus.FAILED,
            error=LOST_RUNNER_ERROR,
            result=None,
            status_message="",
            input_requests=None,
            updated_at=timezone.now(),
            lease_expires_at=None,
        )

    def reap_lapsed(self, *, limit: int = 100) -> int:
        """Recover (requeue or fail) up to ``limit`` tasks whose worker was lost."""
        rows = list(
            self._rows().filter(status=TaskStatus.WORKING, lease_expires_at__lt=timezone.now())[
                :limit
            ]
        )
        for row in rows:
            self._recover(row)
        return len(rows)

    def cancel(self, owner: Owner, task_id: Any) -> TaskView | None:
        """Cancel a non-terminal task (a terminal one is left as it is); ``None`` if unknown."""
        now = timezone.now()
        self._owned(owner, task_id).exclude(status__in=TERMINAL_STATUSES).update(
            status=TaskStatus.CANCELLED,
            status_message="Cancelled by the client.",
            input_requests=None,
            updated_at=now,
            lease_expires_at=None,
        )
        return self.get(owner, task_id)

    def answer(
        self, owner: Owner, task_id: Any, responses: Mapping[str, Any]
    ) -> tuple[TaskView | None, bool]:
        """Record answers to pending input requests (unknown keys are ignored).

        Returns the task and whether it should resume now: it was ``input_required`` and no
        request is pending any more (it is then ``working`` again, with a fresh lease to be
        set by the runner).
        """
        with transaction.atomic(using=self.using):
            row = self._owned(owner, task_id).select_for_update().first()
            if row is None:
                return None, False
            if row.status != TaskStatus.INPUT_REQUIRED or not row.input_requests:
                return TaskView.of(row), False
            pending = dict(row.input_requests)
            answers = dict(row.answers or {})
            for key in list(pending):
                if key in responses:
                    answers[key] = responses[key]
                    del pending[key]
            row.answers = answers
            row.input_requests = pending or None
            row.updated_at = timezone.now()
            resume = not pending
            if resume:
                # Queued again: a fresh run (with its own attempts) for the engine to claim.
                row.status = TaskStatus.WORKING
                row.status_message = ""
                row.lease_expires_at = None
                row.attempts = 0
            row.save(using=self.using)
            return TaskView.of(row), resume

    def park(self, task_id: str, requests: Mapping[str, Any], answers: Mapping[str, Any]) -> bool:
        """``working`` → ``input_required`` with ``requests`` pending."""
        return bool(
            self._rows()
            .filter(task_id=task_id, status=TaskStatus.WORKING)
            .update(
                status=TaskStatus.INPUT_REQUIRED,
                input_requests=dict(requests),
                answers=dict(answers),
                status_message="Waiting for input from the client.",
                updated_at=timezone.now(),
                lease_expires_at=None,
            )
        )

    def finish(
        self,
        task_id: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        status_message: str = "",
    ) -> bool:
        """``working`` → ``completed`` (``result``) or ``failed`` (``error``); False if the task
        was cancelled (or lost) meanwhile, in which case the outcome is dropped."""
        status = TaskStatus.FAILED if error is not None else TaskStatus.COMPLETED
        return self._settle(task_id, status, result=result, error=error, message=status_message)

    def _settle(
        self,
        task_id: str,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str = "",
    ) -> bool:
        return bool(
            self._rows()
            .filter(task_id=task_id, status=TaskStatus.WORKING)
            .update(
                status=status,
                result=result,
                error=error,
                status_message=message[:500],
                input_requests=None,
                updated_at=timezone.now(),
                lease_expires_at=None,
            )
        )

    def progress(self, task_id: str, message: str, *, lease_seconds: float) -> bool:
        """Record progress (and renew the lease); False once the task is no longer working."""
        now = timezone.now()
        return bool(
            self._rows()
            .filter(task_id=task_id, status=TaskStatus.WORKING)
            .update(
                status_message=message[:500],
                updated_at=now,
                lease_expires_at=now + dt.timedelta(seconds=lease_seconds),
            )
        )

    def is_working(self, task_id: str) -> bool:
        return bool(self._rows().filter(task_id=task_id, status=TaskStatus.WORKING).exists())

    def renew(self, task_ids: Iterable[str], *, lease_seconds: float) -> int:
        """Extend the leases of the running tasks ``task_ids``."""
        ids = list(task_ids)
        if not ids:
            return 0
        until = timezone.now() + dt.timedelta(seconds=lease_seconds)
        return int(
            self._rows()
            .filter(task_id__in=ids, status=TaskStatus.WORKING)
            .update(lease_expires_at=until)
        )
