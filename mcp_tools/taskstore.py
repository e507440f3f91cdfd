"""The task store: long-running operations in the database, answerable by any replica.

Protocol-neutral on purpose. A task is an *operation* (a tool name today, an A2A skill
tomorrow) with JSON arguments, owned by one actor (``owner_key``) of one tenant
(``tenant_key``), and a status (``working``, ``input_required``, ``completed``, ``failed``,
``cancelled``) with the protocol's own JSON for its ``result`` or ``error``. The MCP
projections (``mcp_tools.tasks``) shape rows into wire results; another protocol reuses the
store and the runner (``mcp_tools.taskrunner``) with its own projection.

Every read and write is scoped to the owner: another actor's task, in this tenant or another,
is indistinguishable from one that does not exist. Status changes are conditional updates (a
cancelled task stays cancelled when its worker finishes later). A running task holds a lease
its worker renews; a ``working`` task past its lease is reported (and recorded) as failed, so
a lost worker never leaves a task working forever. ``purge_expired`` deletes rows past their
retention.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import transaction
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
        )


class TaskStore:
    """The database-backed store (``using`` picks the database alias)."""

    def __init__(self, using: str = "default") -> None:
        self.using = using

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
        lease_seconds: float,
        request_id: str = "",
        context_id: str = "",
    ) -> TaskView:
        """A new ``working`` task, committed before this returns (any replica can read it)."""
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
            lease_expires_at=now + dt.timedelta(seconds=lease_seconds),
            request_id=request_id[:64],
            context_id=context_id,
        )
        return TaskView.of(row)

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
            self._settle(row.task_id, TaskStatus.FAILED, error=LOST_RUNNER_ERROR)
            row.refresh_from_db(using=self.using)
        return TaskView.of(row)

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
                row.status = TaskStatus.WORKING
                row.status_message = ""
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

    def purge_expired(self) -> int:
        """Delete tasks past their retention (safe on every replica at once)."""
        deleted, _ = self._rows().filter(expires_at__lte=timezone.now()).delete()
        return deleted
