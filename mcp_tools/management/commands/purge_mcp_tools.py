"""``manage.py purge_mcp_tools``: delete expired tasks, redeemed request states and old change
rows of ``subscriptions/listen`` (``mcp_tools.notifications``).

Safe to run from cron on every replica at once (each statement deletes what has expired).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_tools import notifications
from mcp_tools.requeststate import purge_expired
from mcp_tools.taskstore import TaskStore


class Command(BaseCommand):
    help = "Delete MCP tasks past their retention and request-state redemptions past expiry."

    def handle(self, *args: Any, **options: Any) -> None:
        tasks = TaskStore().purge_expired()
        states = purge_expired()
        self.stdout.write(f"purged {tasks} task(s), {states} request state redemption(s)")
        changes = notifications.purge_expired()
        self.stdout.write(f"purged {changes} change event(s)")
