"""``manage.py issue_token --tenant CODE --email EMAIL [--name NAME] [--expires-days N]``.

Prints only the raw personal access token on stdout (so scripts can capture it); every
problem goes to stderr with a non-zero exit.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from tenancy import conf
from tenancy.management.commands._tenant import add_tenant_argument, tenant_by_code
from tenancy.members import memberships, user_field_path
from tenancy.tokens import issue_token


class Command(BaseCommand):
    help = "Issue a personal access token for a member of a tenant and print it (only the token)."

    def add_arguments(self, parser: CommandParser) -> None:
        add_tenant_argument(parser)
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
        limit = int(conf.get("PERSONAL_TOKEN_MAX_DAYS"))
        if days is not None and not 1 <= days <= limit:
            raise CommandError(f"--expires-days must be between 1 and {limit}.")
        tenant = tenant_by_code(options["tenant"])
        noun = conf.get("TENANT_NOUN")
        email = options["email"].strip()
        queryset = memberships(tenant=tenant)
        email_field = get_user_model().get_email_field_name()
        membership = (
            queryset.select_related(queryset.model.USER_FIELD)
            .filter(**{user_field_path(queryset.model, f"{email_field}__iexact"): email})
            .first()
        )
        if membership is None:
            raise CommandError(f"{email!r} is not a member of the {noun} {options['tenant']!r}.")
        if membership.disabled_at is not None:
            raise CommandError(f"{email!r} is disabled in the {noun} {options['tenant']!r}.")
        expires_at = timezone.now() + timedelta(days=days) if days is not None else None
        _, raw = issue_token(membership=membership, name=name, expires_at=expires_at)
        self.stdout.write(raw)
