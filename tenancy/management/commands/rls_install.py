"""``manage.py rls_install [--sql]``: install row-level security now, or print its SQL."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, DatabaseError

from tenancy.rls.install import install, statements
from tenancy.rls.registry import enabled


class Command(BaseCommand):
    help = (
        "Create the tools' database role and install row-level security on the declared "
        "tables (also done after every migrate); --sql prints the block for a DBA instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sql", action="store_true", help="print the SQL, run nothing")
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS)

    def handle(self, *args: Any, **options: Any) -> None:
        using = options["database"]
        if not enabled(using):
            raise CommandError(
                "Row-level security is off: TENANCY_RLS is False, no model is declared "
                "(TENANCY_RLS_MODELS), or the database is not PostgreSQL."
            )
        if options["sql"]:
            self.stdout.write("BEGIN;")
            for statement in statements(using):
                self.stdout.write(f"{statement};")
            self.stdout.write("COMMIT;")
            return
        try:
            install(using)
        except DatabaseError as refused:
            raise CommandError(
                f"{refused}Run `manage.py rls_install --sql` and have the database owner run it."
            ) from refused
        self.stdout.write(self.style.SUCCESS("Row-level security installed."))
