"""``manage.py add_member --tenant CODE --email EMAIL --role ROLE [--password-from-stdin]``.

Creates the user when the email is new (without a usable password unless one is given on
stdin, so tokens are the only way in), then makes them a member of the tenant with the role —
or changes the role of an existing member, which ends every token they hold (credential epoch).
"""

from __future__ import annotations

import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

from tenancy import active_roles, conf
from tenancy.management.commands._tenant import add_tenant_argument, tenant_by_code
from tenancy.members import memberships
from tenancy.services import membership_create, membership_set_roles


class Command(BaseCommand):
    @property
    def help(self) -> str:  # type: ignore[override]
        noun = conf.get("TENANT_NOUN")
        return f"Add a user (created if new) to a {noun} with a role, or change their role."

    def add_arguments(self, parser: CommandParser) -> None:
        add_tenant_argument(parser)
        parser.add_argument("--email", required=True, help="The member's email (their login).")
        parser.add_argument(
            "--role",
            required=True,
            help="One of the declared roles (TENANCY_ROLES): " + ", ".join(active_roles().names),
        )
        parser.add_argument(
            "--password-from-stdin",
            action="store_true",
            help="Read a password for a new user from standard input (first line).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        roles = active_roles()
        if options["role"] not in roles:
            raise CommandError(
                f"Unknown role {options['role']!r}; declared roles: {', '.join(roles.names)}."
            )
        email = options["email"].strip().lower()
        try:
            validate_email(email)
        except ValidationError as exc:
            raise CommandError(f"{options['email']!r} is not an email address.") from exc
        tenant = tenant_by_code(options["tenant"], require_active=False)
        password = sys.stdin.readline().rstrip("\n") if options["password_from_stdin"] else None
        stored = roles.stored_for(options["role"])
        with transaction.atomic():
            user, created = _user(email, password)
            membership = memberships(user=user, tenant=tenant).first()
            if membership is None:
                membership_create(user=user, tenant=tenant, roles=stored)
                verb = "added"
            else:
                membership_set_roles(membership=membership, roles=stored)
                verb = "updated"
        if options["verbosity"] < 1:  # -v 0: a script wants the exit status, not the line
            return
        noun = conf.get("TENANT_NOUN")
        new = " (new user)" if created else ""
        self.stdout.write(
            f"{verb}: {email}{new} is {options['role']} in the {noun} {options['tenant']}"
        )


def _user(email: str, password: str | None) -> tuple[Any, bool]:
    """The user whose email is ``email``, else a new one made by the user model's own manager.

    ``create_user`` is the model's contract for a new user (Django's normalises the email and
    hashes the password; a custom email-only model has no ``username`` at all), so the fields
    are keyed by the model's ``USERNAME_FIELD`` and ``EMAIL_FIELD``, never spelled out here.
    Without a password the user gets an unusable one (``create_user(password=None)``).
    """
    model = get_user_model()
    manager = model._default_manager
    field = model.get_email_field_name()
    existing = manager.filter(**{f"{field}__iexact": email}).first()
    if existing is not None:
        return existing, False
    fields = {model.USERNAME_FIELD: email, field: email}
    user = manager.create_user(**fields, password=password or None)
    return user, True
