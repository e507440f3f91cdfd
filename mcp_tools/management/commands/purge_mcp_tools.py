"""``manage.py purge_mcp_tools``: delete expired tasks, redeemed request states,
server-to-client requests past their expiry and old change rows of ``subscriptions/listen``
(``mcp_tools.subscriptions.bus``), and recover tasks whose worker was lost (queued again or
failed, per the tool's ``task_retry``).

Safe to run from cron on every replica at once (each statement deletes what has expired; a
lost task is recovered by exactly one conditional update).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_tools.asking import mailbox
from mcp_tools.asking.requeststate import purge_expired
from mcp_tools.subscriptions import bus as notifications
from mcp_tools.tasks import run as mcp_tasks


class Command(BaseCommand):
    help = (
        "Delete MCP tasks past their retention, request-state redemptions and client "
        "requests past expiry."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        tasks = mcp_tasks.store.purge_expired()
        states = purge_expired()
        asked = mailbox.purge_expired()
        lost = mcp_tasks.store.reap_lapsed(limit=10_000)
        changes = notifications.purge_expired()
        self.stdout.write(
            f"purged {tasks} task(s), {states} request state redemption(s), "
            f"{asked} client request(s), {changes} change event(s); "
            f"recovered {lost} task(s) whose worker was lost"
        )
