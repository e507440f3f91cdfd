"""``manage.py purge_a2a_tasks``: the retention sweep for stored A2A tasks."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from a2a_tools.purge import BATCH_SIZE, MAX_BATCHES, purge


class Command(BaseCommand):
    help = (
        "Delete A2A tasks last updated before A2A_TOOLS_TASK_RETENTION_HOURS (bounded batches, "
        "oldest first); safe to run on several hosts at once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
        parser.add_argument("--max-batches", type=int, default=MAX_BATCHES)
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1 or options["max_batches"] < 1:
            raise CommandError("--batch-size and --max-batches must be >= 1")
        deleted, more = purge(
            batch_size=options["batch_size"],
            max_batches=options["max_batches"],
            using=options["database"],
        )
        self.stdout.write(
            f"purged tasks={deleted}" + (" (more remain; next run continues)" if more else "")
        )
