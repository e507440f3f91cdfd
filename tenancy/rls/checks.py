"""System checks: start-up refuses to serve when the tools' role could see past a policy.

Tagged ``tenancy_rls`` (``mcp_tools.serving.asgi`` runs it before serving) and ``database``
(``manage.py check --database default``). A database with migrations still to apply is
checked after them: ``post_migrate`` installs what they add.
"""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DEFAULT_DB_ALIAS, DatabaseError, OperationalError, connections

from tenancy import conf
from tenancy.rls.install import TENANT_POLICY
from tenancy.rls.registry import any_declared, declared, enabled

CHECK_TAG = "tenancy_rls"
HINT = (
    "Run `manage.py rls_install` as a user that may create roles and alter the tables, or "
    "have the database owner run `manage.py rls_install --sql`; TENANCY_RLS = False turns "
    "row-level security off."
)
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


def _pending_migrations(using: str) -> bool:
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[using])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _error(message: str, id: str) -> checks.Error:
    return checks.Error(message, hint=HINT, id=f"tenancy_rls.{id}")


def _role_errors(cursor: Any, role: str) -> tuple[bool, list[checks.CheckMessage]]:
    """Whether the role exists, and what is wrong with it."""
    cursor.execute(
        "SELECT rolsuper, rolbypassrls, pg_has_role(current_user, oid, 'MEMBER') "
        "FROM pg_roles WHERE rolname = %s",
        [role],
    )
    row = cursor.fetchone()
    if row is None:
        return False, [_error(f"The tools' database role {role!r} does not exist.", "E001")]
    superuser, bypass, member = row
    errors: list[checks.CheckMessage] = []
    if not member:
        errors.append(_error(f"The connecting user cannot take the role {role!r}.", "E001"))
    if superuser or bypass:
        errors.append(
            _error(
                f"The tools' role {role!r} is a superuser or has BYPASSRLS: it ignores every "
                "row-level security policy.",
                "E002",
            )
        )
    return True, errors


def _table_errors(cursor: Any, table: str, role: str) -> list[checks.CheckMessage]:
    cursor.execute(
        "SELECT c.relrowsecurity AND c.relforcerowsecurity, EXISTS ("
        "  SELECT FROM pg_policy p JOIN pg_roles r ON r.oid = ANY(p.polroles)"
        "  WHERE p.polrelid = c.oid AND p.polname = %s AND r.rolname = %s"
        "), " + ", ".join(f"has_table_privilege(%s, c.oid, '{p}')" for p in PRIVILEGES) + " "
        "FROM pg_class c WHERE c.oid = to_regclass(%s)",
        [TENANT_POLICY, role, *[role] * len(PRIVILEGES), table],
    )
    row = cursor.fetchone()
    if row is None:
        return [_error(f"The declared table {table!r} does not exist.", "E003")]
    forced, policy, *granted = row
    errors: list[checks.CheckMessage] = []
    if not forced:
        errors.append(
            _error(
                f"Row-level security on {table!r} is not enabled and forced: its owner (the "
                "connecting user) ignores its policies.",
                "E003",
            )
        )
    if not policy:
        errors.append(_error(f"{table!r} has no tenant policy bound to {role!r}.", "E004"))
    missing = [name for name, ok in zip(PRIVILEGES, granted, strict=True) if not ok]
    if missing:
        errors.append(_error(f"The role {role!r} lacks {', '.join(missing)} on {table!r}.", "E005"))
    return errors


def check_rls(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Errors when the tools' role could bypass a declared table's policy."""
    if not enabled():
        return []  # off, nothing declared, or not PostgreSQL (check_rls_vendor, at deployment)
    if databases is None or DEFAULT_DB_ALIAS not in databases:
        return []  # a database check: `check --database default`, or the server's start
    role = conf.get("RLS_ROLE")
    try:
        if _pending_migrations(DEFAULT_DB_ALIAS):
            return []
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            exists, errors = _role_errors(cursor, role)
            if not exists:
                # A privilege or policy of a role that does not exist cannot be asked about.
                return errors
            for table in declared():
                errors += _table_errors(cursor, table.table, role)
    except OperationalError as unreachable:
        # A server may start before its database (its readiness probe says so): tool calls
        # still take the role, and fail while it is missing; the catalogue is checked by
        # `check --database default` once the database is up.
        return [
            checks.Warning(
                f"Row-level security could not be checked: the database is unreachable "
                f"({unreachable}).",
                hint=HINT,
                id="tenancy_rls.W002",
            )
        ]
    except DatabaseError as failed:
        return [_error(f"Row-level security could not be checked: {failed}", "E006")]
    return errors


def check_rls_vendor(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A warning, at deployment (``check --deploy``), when tables are declared on a database
    that has no row-level security. Not on every command: developing on SQLite (the new
    project's default) is no fault, and a warning on every command would land in what the
    commands print (``mcp_call``'s stderr, ``issue_token``'s output)."""
    if not conf.get("RLS") or not any_declared():
        return []
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        return [
            checks.Warning(
                "Row-level security is PostgreSQL-only: on this database tool calls are "
                "scoped by their queries alone.",
                id="tenancy_rls.W001",
            )
        ]
    return []


checks.register(check_rls, CHECK_TAG, checks.Tags.database)
checks.register(check_rls_vendor, CHECK_TAG, deploy=True)
