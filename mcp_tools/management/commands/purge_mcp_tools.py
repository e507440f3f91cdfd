"""``manage.py purge_mcp_tools``: an alias of ``purge_expired`` for mcp_tools' per-call tables
(expired tasks, redeemed request states, client requests past expiry, old change rows and stale
listeners), plus the recovery of tasks whose worker was lost (queued again or failed, per the
tool's ``task_retry``).

Safe from cron on every replica at once (the sweep's batches skip each other's rows; a lost task
is recovered by exactly one conditional update).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_tools.management import retention
from mcp_tools.tasks import run as mcp_tasks

TABLES = (
    "mcp_tools_task",
    "mcp_tools_request_state_redemption",
    "mcp_tools_client_request",
    "mcp_tools_change_event",
    "mcp_tools_listener",
)


class Command(BaseCommand):
    help = "purge_expired --table for each of mcp_tools' per-call tables; recover lost tasks."

    def handle(self, *args: Any, **options: Any) -> None:
        for table in TABLES:
            self.stdout.write(retention.sweep(retention.get(table)).line())
        lost = mcp_tasks.store.reap_lapsed(limit=10_000)
        self.stdout.write(f"recovered {lost} task(s) whose worker was lost")
