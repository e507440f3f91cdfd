"""``manage.py issue_token --farm CODE --email EMAIL [--name NAME] [--expires-days N]``.

Prints only the raw personal access token on stdout (so scripts can capture it); every
problem goes to stderr with a non-zero exit.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from cluck.models import Farm
from tenancy.models import Membership
from tenancy.tokens import issue_token

MAX_EXPIRES_DAYS = 3650


class Command(BaseCommand):
    help = "Issue a personal access token for a farm member and print it (only the token)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--farm", required=True, help="Farm code, e.g. sunrise.")
        parser.add_argument("--email", required=True, help="The member's email.")
        parser.add_argument("--name", default="cli token", help="A label for the token.")
        parser.add_argument(
            "--expires-days", type=int, default=None, help="Lifetime in days (default: none)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = (options["name"] or "").strip()
        if not name or len(name) > 100:
            raise CommandError("--name must be 1–100 characters.")
        days = options["expires_days"]
        if days is not None and not 1 <= days <= MAX_EXPIRES_DAYS:
            raise CommandError(f"--expires-days must be between 1 and {MAX_EXPIRES_DAYS}.")
        farm = Farm.objects.filter(code=options["farm"]).first()
        if farm is None:
            raise CommandError(f"No farm has the code {options['farm']!r}.")
        if not farm.is_active:
            raise CommandError(f"Farm {farm.code!r} is suspended.")
        membership = (
            Membership.objects.select_related("user")
            .filter(tenant=farm, user__email__iexact=options["email"].strip())
            .first()
        )
        if membership is None:
            raise CommandError(f"{options['email']!r} is not a member of farm {farm.code!r}.")
        if membership.disabled_at is not None:
            raise CommandError(f"{options['email']!r} is disabled on farm {farm.code!r}.")
        expires_at = timezone.now() + timedelta(days=days) if days is not None else None
        _, raw = issue_token(membership=membership, name=name, expires_at=expires_at)
        self.stdout.write(raw)
