"""What runs a task's work: Django's tasks framework, or (development only) this process.

``MCP_TOOLS_TASK_ENGINE`` picks it:

- ``"django_tasks"`` (the default): the work is a job of Django's tasks API (Django 6's own
  ``django.tasks``; on Django 5.2 the ``django-tasks`` backport of it) on the ``TASKS`` backend
  ``MCP_TOOLS_TASK_BACKEND``, queue ``MCP_TOOLS_TASK_QUEUE``: the database backend
  (``django_tasks_db.DatabaseBackend``, ``manage.py db_worker``), a Redis-backed one
  (``django_tasks_rq.RQBackend``, ``manage.py rqworker``) or Celery
  (``django_tasks_fennel.CeleryBackend``, ``celery worker``). The job carries the task id only;
  the worker reads everything else from the task store (``mcp_tools.tasks.run.execute``). With
  the
  database backend the job row is written in the transaction that commits the task, so an
  accepted task always has its job, whatever happens to the web process next; any other
  backend is handed the job once that transaction commits.
- ``"in_process"``: a bounded thread pool of the process that accepted (or resumed) the task,
  at most ``MCP_TOOLS_MAX_CONCURRENT_TASKS`` at once, a slot reserved before the task is
  created. For development and tests: a task dies with its process (then retried or failed
  through its lease, as on the engine, but only when some replica is left to run it).

Either way a running task holds a lease in the store that a housekeeping thread of the running
process renews every third of ``MCP_TOOLS_TASK_LEASE_SECONDS`` (``task_engine.holding``); a process
that dies stops renewing, and the store requeues or fails the task (``TaskStore.get``).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from django.core.exceptions import ImproperlyConfigured
from django.db import close_old_connections, transaction

from mcp_tools import conf
from tenancy.process import ProcessObject

logger = logging.getLogger(__name__)
MAX_TASK_THREADS: Final = 64
DJANGO_TASKS: Final = "django_tasks"
IN_PROCESS: Final = "in_process"
ENGINES: Final = (DJANGO_TASKS, IN_PROCESS)
# Backends whose job rows live in the project's database: enqueued inside the task's own
# transaction (atomic with it), not after it commits.
TRANSACTIONAL_BACKENDS: Final = frozenset({"django_tasks_db.backend.DatabaseBackend"})


def engine() -> str:
    """The configured engine (``MCP_TOOLS_TASK_ENGINE``).

    Raises:
        ImproperlyConfigured: an unknown engine name (system check ``mcp_tools.E0xx`` too).
    """
    name = conf.get("TASK_ENGINE")
    if name not in ENGINES:
        raise ImproperlyConfigured(f"MCP_TOOLS_TASK_ENGINE must be one of {ENGINES}, not {name!r}")
    return str(name)


def in_process() -> bool:
    return engine() == IN_PROCESS


def enqueue(job: Any, task_id: str) -> None:
    """Hand ``task_id`` to the tasks framework's backend as ``job`` (a ``django_tasks.Task``).

    Call it inside the transaction that commits (or requeues) the task row.
    """
    configured = job.using(
        backend=str(conf.get("TASK_BACKEND")), queue_name=str(conf.get("TASK_QUEUE"))
    )
    backend = configured.get_backend()
    path = f"{type(backend).__module__}.{type(backend).__qualname__}"
    if path in TRANSACTIONAL_BACKENDS:
        configured.enqueue(task_id)
    else:
        # Redis (or anything outside the database) must not run a task that may still roll
        # back, so the job goes out right after the commit. (A process killed in between
        # leaves the task queued without a job: the one window the database backend has not.)
        transaction.on_commit(lambda: configured.enqueue(task_id))


class TaskEngine:
    """The in-process engine's pool, and the lease renewer of whatever process runs tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reserved = 0
        self._running: set[str] = set()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._renewer: threading.Thread | None = None
        self._wake = threading.Event()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._reserved

    def reserve(self) -> bool:
        """Reserve a slot for a task about to start; False when every slot is taken."""
        limit = min(int(conf.get("MAX_CONCURRENT_TASKS")), MAX_TASK_THREADS)
        with self._lock:
            if self._reserved >= limit:
                return False
            self._reserved += 1
            return True

    def release(self) -> None:
        """Give back a reservation that will not be used."""
        with self._lock:
            self._reserved -= 1

    def start(self, task_id: str, job: Callable[[], None]) -> None:
        """Run ``job`` for ``task_id`` on a reserved slot (released when the job returns)."""

        def run() -> None:
            try:
                job()
            except BaseException:  # a job records its own outcome; this is the last resort
                logger.exception("MCP task %s crashed outside its job's handling", task_id)
            finally:
                close_old_connections()
                with self._lock:
                    self._reserved -= 1

        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=MAX_TASK_THREADS, thread_name_prefix="mcp-task"
                )
            pool = self._pool
        try:
            pool.submit(run)
        except BaseException:
            with self._lock:
                self._reserved -= 1
            raise

    @contextmanager
    def holding(self, task_id: str) -> Iterator[None]:
        """Renew ``task_id``'s lease from this process while the block runs."""
        with self._lock:
            self._running.add(task_id)
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(
                    target=self._renew_forever, name="mcp-task-leases", daemon=True
                )
                self._renewer.start()
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(task_id)

    def running(self) -> set[str]:
        with self._lock:
            return set(self._running)

    def _renew_forever(self) -> None:
        from mcp_tools.tasks.store import TaskStore

        store = TaskStore()
        while True:
            lease = float(conf.get("TASK_LEASE_SECONDS"))
            self._wake.wait(max(lease / 3, 0.05))
            self._wake.clear()
            ids = self.running()
            if not ids:
                continue
            try:
                store.renew(ids, lease_seconds=lease)
            except Exception:
                logger.exception("MCP task lease renewal failed")
            finally:
                close_old_connections()


# Process state (mcp_tools.operator.process): renewed in place, the same object that
# ``task_engine`` names; its pool and lease renewer start with the first task run here.
TASK_ENGINE: Final = ProcessObject(
    "tasks.engine", TaskEngine, kind="thread", renew=TaskEngine.__init__
)
task_engine = TASK_ENGINE.get()
