"""The SQL that makes PostgreSQL enforce the declared tables under the tools' role.

Per declared table: ``ENABLE`` and ``FORCE ROW LEVEL SECURITY`` (Django's migrations make the
connecting role the owner, and an owner ignores policies without FORCE), a tenant policy bound
``TO`` the tools' role (``USING`` filters reads, updates and deletes; ``WITH CHECK`` refuses a
row written with another tenant's key), and a host policy that admits every row to any other
role, so the project's own code sees the table exactly as before. The role is ``NOLOGIN
NOSUPERUSER NOBYPASSRLS`` (a superuser or BYPASSRLS role ignores every policy) and granted to
the connecting user, which takes it with ``SET LOCAL ROLE`` (``scoped``).

Idempotent: run after every migration (``post_migrate``) and by ``manage.py rls_install``,
whose ``--sql`` prints the same block for a DBA.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from tenancy import conf
from tenancy.rls.registry import Declared, declared, enabled

logger = logging.getLogger("tenancy.rls")

TENANT_POLICY = "tenancy_rls_tenant"
HOST_POLICY = "tenancy_rls_host"


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def role_statements(role: str, quote: Any, grantee: str = "CURRENT_USER") -> list[str]:
    """Create the role (once) and let the connecting user (``grantee``) take it."""
    return [
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
        f"{_literal(role)}) THEN CREATE ROLE {quote(role)} NOLOGIN NOSUPERUSER NOBYPASSRLS; "
        "END IF; END $$",
        f"GRANT {quote(role)} TO {grantee}",
    ]


def grant_statements(role: str, quote: Any) -> list[str]:
    """Tool code touches more than the declared tables (claims, tasks, memberships): the role
    may use every table and sequence of the schema; the policies narrow the declared ones."""
    return [
        f"GRANT USAGE ON SCHEMA {quote('public')} TO {quote(role)}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {quote(role)}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {quote(role)}",
    ]


def table_statements(table: Declared, role: str, setting: str, quote: Any) -> list[str]:
    name = quote(table.table)
    # NULLIF: a custom setting reads '' (not NULL) once a SET LOCAL of it has ended, and a
    # cast of '' would fail the query; NULL admits no row. The sub-select runs once per
    # statement instead of once per row.
    tenant = f"(SELECT NULLIF(current_setting({_literal(setting)}, true), '')::{table.sql_type})"
    own = f"{quote(table.column)} = {tenant}"
    host = f"current_user <> {_literal(role)}"
    return [
        f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {name} FORCE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {TENANT_POLICY} ON {name}",
        f"CREATE POLICY {TENANT_POLICY} ON {name} AS PERMISSIVE FOR ALL TO {quote(role)} "
        f"USING ({own}) WITH CHECK ({own})",
        f"DROP POLICY IF EXISTS {HOST_POLICY} ON {name}",
        f"CREATE POLICY {HOST_POLICY} ON {name} AS PERMISSIVE FOR ALL TO PUBLIC "
        f"USING ({host}) WITH CHECK ({host})",
    ]


def statements(using: str = DEFAULT_DB_ALIAS, *, tables: list[Declared] | None = None) -> list[str]:
    """The whole block, in order: role, grants, then each declared table."""
    connection = connections[using]
    quote = connection.ops.quote_name
    role, setting = conf.get("RLS_ROLE"), conf.get("RLS_SETTING")
    # The project's user by name: a DBA who runs the printed block as someone else grants the
    # role to the user the project connects as, not to themselves (tenancy_rls.E001).
    user = connection.settings_dict.get("USER")
    grantee = quote(user) if user else "CURRENT_USER"
    block = role_statements(role, quote, grantee) + grant_statements(role, quote)
    for table in declared(using) if tables is None else tables:
        block += table_statements(table, role, setting, quote)
    return block


def existing(using: str = DEFAULT_DB_ALIAS) -> list[Declared]:
    """The declared tables the database has (a migration may not have created one yet)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        present = set(connection.introspection.table_names(cursor))
    return [table for table in declared(using) if table.table in present]


def install(using: str = DEFAULT_DB_ALIAS) -> None:
    """Run the block in one transaction (nothing half-installed).

    Raises:
        django.db.DatabaseError: the connecting user may not create the role or alter a
            table; ``manage.py rls_install --sql`` prints the block for someone who may.
    """
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        for statement in statements(using, tables=existing(using)):
            cursor.execute(statement)


def install_after_migrate(using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """``post_migrate``: install on every migration; a user without the rights gets a warning
    (system check ``tenancy_rls.E001``–``E005`` say what is missing) and the migration stands."""
    if not enabled(using):
        return
    try:
        install(using)
    except DatabaseError as refused:
        logger.warning(
            "row-level security not installed on %r (%s); run `manage.py rls_install --sql` "
            "and have the database owner run it",
            using,
            refused,
        )
