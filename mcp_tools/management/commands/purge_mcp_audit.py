"""``manage.py purge_mcp_audit --older-than 90d``: apply the stored call audit's retention.

Safe to run from cron on every replica at once (one DELETE of what is past the cutoff).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Final

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_tools.observability.audit import purge

_AGE: Final = re.compile(r"^([0-9]+)([smhd])$")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_age(text: str) -> dt.timedelta:
    """``"90d"``, ``"12h"``, ``"30m"``, ``"45s"`` as a ``timedelta``.

    Raises:
        CommandError: anything else.
    """
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise CommandError(f"--older-than takes <number><s|m|h|d>, e.g. 90d (got {text!r})")
    return dt.timedelta(**{_UNITS[match[2]]: int(match[1])})


class Command(BaseCommand):
    help = "Delete stored call audit rows older than --older-than (e.g. 90d)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than", required=True, help="age past which rows go: 90d, 12h, 30m, 45s"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = purge(older_than=parse_age(options["older_than"]))
        self.stdout.write(f"purged {deleted} call audit row(s)")
