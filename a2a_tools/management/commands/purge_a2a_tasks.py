"""``manage.py purge_a2a_tasks``: an alias of ``purge_expired --table a2a_tools_tasks``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from a2a_tools.purge import EXPIRING
from mcp_tools.management import retention


class Command(BaseCommand):
    help = (
        "Delete A2A tasks last updated before A2A_TOOLS_TASK_RETENTION_HOURS (bounded batches); "
        "safe to run on several hosts at once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] is not None and options["batch_size"] < 1:
            raise CommandError("--batch-size must be >= 1")
        swept = retention.sweep(
            EXPIRING, batch_size=options["batch_size"], using=options["database"]
        )
        self.stdout.write(swept.line())
