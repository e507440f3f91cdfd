"""``manage.py purge_expired``: the retention sweep of every table an app registered
(``mcp_tools.management.retention``), one report line per table.

Safe from cron on every replica at once: each batch is a short transaction that locks its rows
with ``SKIP LOCKED``, so concurrent runs take disjoint rows and never wait on each other.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_tools.management import retention


class Command(BaseCommand):
    help = (
        "Delete the rows past their retention in every registered table (bounded batches, "
        "short transactions); safe to run on every replica at once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--table",
            action="append",
            default=[],
            help="sweep only this table (repeatable); default: every registered one",
        )
        parser.add_argument("--dry-run", action="store_true", help="count, delete nothing")
        parser.add_argument("--batch-size", type=int, default=None)
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        entries = select(options["table"])
        if options["batch_size"] is not None and options["batch_size"] < 1:
            raise CommandError("--batch-size must be >= 1")
        for entry in entries:
            swept = retention.sweep(
                entry,
                dry_run=options["dry_run"],
                batch_size=options["batch_size"],
                using=options["database"],
            )
            self.stdout.write(swept.line())


def select(tables: list[str]) -> list[retention.Expiring]:
    """The registered entries named by ``tables`` (all when empty).

    Raises:
        CommandError: a table nobody registered (with the ones that are).
    """
    if not tables:
        return retention.registered()
    known = {entry.table: entry for entry in retention.registered()}
    unknown = [table for table in tables if table not in known]
    if unknown:
        raise CommandError(f"not a swept table: {', '.join(unknown)} (known: {', '.join(known)})")
    return [known[table] for table in tables]
