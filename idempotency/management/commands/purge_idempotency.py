"""``manage.py purge_idempotency``: the retention sweep; safe to run on several hosts at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from idempotency.purge import BATCH_SIZE, MAX_BATCHES, purge


class Command(BaseCommand):
    help = (
        "Delete idempotency records past IDEMPOTENCY_RETENTION_HOURS: completed ones by "
        "completion time (bounded batches, oldest first) and abandoned claims whose lease expired."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
        parser.add_argument("--max-batches", type=int, default=MAX_BATCHES)
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1 or options["max_batches"] < 1:
            raise CommandError("--batch-size and --max-batches must be >= 1")
        result = purge(
            batch_size=options["batch_size"],
            max_batches=options["max_batches"],
            using=options["database"],
        )
        self.stdout.write(
            f"purged completed={result.completed} abandoned={result.abandoned}"
            + (" (more remain; next run continues)" if result.more else "")
        )
