"""Where finished tasks live: a small port (``TaskStore``) and its Django ORM adapter.

Tool calls finish within their request, so a task is stored when its request ends — finished,
or waiting for input (a message that invoked no skill) — and only read back afterwards by the
member who created it (tenant + user). A waiting task changes once more, when a message
continues it or it is canceled: a compare-and-set on its state, so two such requests never both
win. The port is deliberately narrow — save, update, get, list — so that a store shared with
the MCP tasks extension can back it later (``A2A_TOOLS_TASK_STORE``) without touching the
protocol code.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.utils import timezone
from django.utils.module_loading import import_string

from a2a_tools import conf


@dataclass(frozen=True)
class TaskOwner:
    """Who may read a task: the tenant and the user that created it."""

    tenant_id: str
    user_id: int


@dataclass(frozen=True)
class TaskPage:
    tasks: list[dict[str, Any]]
    next_cursor: str  # "" on the last page
    total: int


class InvalidCursorError(ValueError):
    """A page token this store did not issue."""


class TaskStore(Protocol):
    """Stores finished tasks (the ``Task`` JSON object) per owner.

    Every method is scoped by ``owner``: a task of another tenant or user is indistinguishable
    from one that does not exist.
    """

    def save(self, owner: TaskOwner, task: dict[str, Any], *, skill: str) -> None:
        """Store ``task`` (its ``id``, ``contextId`` and ``status`` are read from it)."""

    def update(
        self, owner: TaskOwner, task: dict[str, Any], *, skill: str, expected_state: str
    ) -> bool:
        """Replace ``owner``'s stored task ``task["id"]`` if its state is still
        ``expected_state``; ``False`` (nothing changed) otherwise."""

    def get(self, owner: TaskOwner, task_id: str) -> dict[str, Any] | None:
        """The task, or ``None`` if ``owner`` has no task with that id."""

    def list(
        self,
        owner: TaskOwner,
        *,
        page_size: int,
        cursor: str = "",
        context_id: str = "",
        state: str = "",
        updated_after: datetime | None = None,
    ) -> TaskPage:
        """A page of ``owner``'s tasks, most recently updated first (``updated_after``
        inclusive, as ``statusTimestampAfter`` is).

        Raises:
            InvalidCursorError: ``cursor`` was not issued by this store.
        """


def parse_timestamp(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _encode_cursor(updated_at: datetime, task_id: str) -> str:
    raw = json.dumps([updated_at.isoformat(), task_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, task_id = json.loads(raw)
        return datetime.fromisoformat(stamp), str(task_id)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise InvalidCursorError(cursor) from exc


class DatabaseTaskStore:
    """``TaskStore`` on the ``a2a_tools.A2ATask`` table (keyset pagination)."""

    def save(self, owner: TaskOwner, task: dict[str, Any], *, skill: str) -> None:
        from django.db import connections, router

        from a2a_tools.models import A2ATask

        using = router.db_for_write(A2ATask)
        connection = connections[using]
        row = {
            "id": task["id"],
            "tenant_id": owner.tenant_id,
            "user_id": owner.user_id,
            "context_id": task["contextId"],
            "state": task["status"]["state"],
            "skill": skill,
            "updated_at": parse_timestamp(task["status"]["timestamp"]),
            "created_at": timezone.now(),
        }
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            _insert_without_waiting_for_the_wal(connection, row, task)
        else:
            A2ATask.objects.using(using).create(**row, task=task)

    def update(
        self, owner: TaskOwner, task: dict[str, Any], *, skill: str, expected_state: str
    ) -> bool:
        from a2a_tools.models import A2ATask

        changed = A2ATask.objects.filter(
            pk=task["id"],
            tenant_id=owner.tenant_id,
            user_id=owner.user_id,
            state=expected_state,
        ).update(
            state=task["status"]["state"],
            skill=skill,
            updated_at=parse_timestamp(task["status"]["timestamp"]),
            task=task,
        )
        return changed == 1

    def get(self, owner: TaskOwner, task_id: str) -> dict[str, Any] | None:
        from a2a_tools.models import A2ATask

        row = (
            A2ATask.objects.filter(pk=task_id, tenant_id=owner.tenant_id, user_id=owner.user_id)
            .values_list("task", flat=True)
            .first()
        )
        return row

    def list(
        self,
        owner: TaskOwner,
        *,
        page_size: int,
        cursor: str = "",
        context_id: str = "",
        state: str = "",
        updated_after: datetime | None = None,
    ) -> TaskPage:
        from django.db.models import Q

        from a2a_tools.models import A2ATask

        rows = A2ATask.objects.filter(tenant_id=owner.tenant_id, user_id=owner.user_id)
        if context_id:
            rows = rows.filter(context_id=context_id)
        if state:
            rows = rows.filter(state=state)
        if updated_after is not None:
            rows = rows.filter(updated_at__gte=updated_after)
        total = rows.count()
        if cursor:
            stamp, last_id = _decode_cursor(cursor)
            rows = rows.filter(Q(updated_at__lt=stamp) | Q(updated_at=stamp, id__lt=last_id))
        page = list(
            rows.order_by("-updated_at", "-id").values_list("id", "updated_at", "task")[
                : page_size + 1
            ]
        )
        more = len(page) > page_size
        page = page[:page_size]
        next_cursor = _encode_cursor(page[-1][1], page[-1][0]) if more else ""
        return TaskPage(tasks=[task for _, _, task in page], next_cursor=next_cursor, total=total)


@functools.lru_cache(maxsize=4)
def _insert_statement(table: str, columns: tuple[str, ...]) -> str:
    # PostgreSQL's own identifier quoting; the statement text is the same for every row.
    quoted = ", ".join(f'"{name}"' for name in (*columns, "task"))
    return (
        "WITH _async AS (SELECT set_config('synchronous_commit', 'off', true)) "
        f'INSERT INTO "{table}" ({quoted}) '
        f"SELECT {', '.join(['%s'] * len(columns))}, %s::jsonb FROM _async"
    )


def _insert_without_waiting_for_the_wal(
    connection: Any, row: dict[str, Any], task: dict[str, Any]
) -> None:
    """One statement, one round trip, and a commit that does not wait for the WAL flush.

    A task row records work already done (a write's effects were committed by the idempotent
    unit), so ``synchronous_commit`` is off for this row's transaction only: a crash may lose
    the last moments of task rows (their GetTask is then TaskNotFound) and nothing else. The
    setting is made transaction-local (``set_config(..., true)``) inside the statement, which
    runs as its own implicit transaction — hence only outside an atomic block, where it would
    leak into the caller's commit. It stays one parameterized statement, which PostgreSQL
    prepares once per connection (server-side binding).
    """
    from a2a_tools.models import A2ATask

    statement = _insert_statement(A2ATask._meta.db_table, tuple(row))
    # psycopg's own execute on Django's connection (Django's cursor wrapper costs as much as
    # the statement here); errors still surface as django.db errors.
    connection.ensure_connection()
    with connection.wrap_database_errors:
        connection.connection.execute(statement, [*row.values(), json.dumps(task)])


@functools.lru_cache(maxsize=4)
def _store_class(path: str) -> type[TaskStore]:
    store: type[TaskStore] = import_string(path)
    return store


def task_store() -> TaskStore:
    """The configured store (``A2A_TOOLS_TASK_STORE``)."""
    return _store_class(str(conf.get("TASK_STORE")))()
