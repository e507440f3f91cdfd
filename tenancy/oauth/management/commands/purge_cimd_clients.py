"""``manage.py purge_cimd_clients``: delete applications client ID metadata documents created
and nothing used; safe to run from cron on several hosts at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tenancy.oauth.purge import BATCH_SIZE, MAX_BATCHES, purge_unused_cimd_applications


class Command(BaseCommand):
    help = (
        "Delete applications created from a client ID metadata document that no grant, token "
        "or approval ever used, once older than TENANCY_OAUTH_CIMD_UNUSED_RETENTION_HOURS "
        "(or --hours)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hours", type=float, default=None)
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
        parser.add_argument("--max-batches", type=int, default=MAX_BATCHES)
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1 or options["max_batches"] < 1:
            raise CommandError("--batch-size and --max-batches must be >= 1")
        if options["hours"] is not None and options["hours"] < 0:
            raise CommandError("--hours must be >= 0")
        result = purge_unused_cimd_applications(
            retention_hours=options["hours"],
            batch_size=options["batch_size"],
            max_batches=options["max_batches"],
            using=options["database"],
        )
        self.stdout.write(
            f"purged {result.deleted} unused CIMD application(s)"
            + (" (more remain; next run continues)" if result.more else "")
        )
