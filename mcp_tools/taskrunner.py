"""Running tasks in the background of the replica that created (or resumed) them.

A bounded pool per process, separate from the call slots: at most
``MCP_TOOLS_MAX_CONCURRENT_TASKS`` tasks run at once, and a task is only created (or resumed)
after a slot is reserved for it, so an accepted task never queues behind others. While a task
runs, a housekeeping thread renews its lease in the store every third of
``MCP_TOOLS_TASK_LEASE_SECONDS``; if the process dies, the lease lapses and any replica reports
the task failed. Protocol-neutral: a job is a callable; what it runs and how it records the
outcome is the projection's business (``mcp_tools.tasks``).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Final

from django.db import close_old_connections

from mcp_tools import conf

logger = logging.getLogger(__name__)
MAX_TASK_THREADS: Final = 64


class TaskRunner:
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
                    self._running.discard(task_id)
                    self._reserved -= 1

        with self._lock:
            self._running.add(task_id)
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=MAX_TASK_THREADS, thread_name_prefix="mcp-task"
                )
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(
                    target=self._renew_forever, name="mcp-task-leases", daemon=True
                )
                self._renewer.start()
            pool = self._pool
        try:
            pool.submit(run)
        except BaseException:
            with self._lock:
                self._running.discard(task_id)
                self._reserved -= 1
            raise

    def running(self) -> set[str]:
        with self._lock:
            return set(self._running)

    def _renew_forever(self) -> None:
        from mcp_tools.taskstore import TaskStore

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


runner = TaskRunner()
