"""``manage.py purge_mcp_audit [--older-than 90d]``: an alias of
``purge_expired --table mcp_tools_call_audit``, with the age given here in place of
``MCP_TOOLS_AUDIT_RETENTION_DAYS``. Safe from cron on every replica at once.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Final

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_tools.management import expiring, retention

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
    help = "Delete stored call audit rows older than --older-than (e.g. 90d; default: the setting)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            default=None,
            help="age past which rows go: 90d, 12h, 30m, 45s (default: the setting)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        entry = retention.get("mcp_tools_call_audit")
        if options["older_than"] is not None:
            age = parse_age(options["older_than"])
            entry = retention.with_age(entry, age, lambda now: expiring.audit_rows(now - age))
        self.stdout.write(retention.sweep(entry).line())
