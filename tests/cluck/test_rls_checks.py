"""Start-up refuses to serve when the tools' role could see past a declared table's policy
(``tenancy_rls`` system checks, issue 35): one test per cause, each with its id and hint."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core import checks
from django.db import DEFAULT_DB_ALIAS, connection

from mcp_tools.serving.asgi import StartupCheckError, check_before_serving
from tenancy.rls import declared
from tenancy.rls.checks import CHECK_TAG
from tenancy.rls.install import TENANT_POLICY, install
from tests.mutations import mutation

pytestmark = [pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
ROLE = "cluck_tools"
TABLE = "cluck_customer"


@pytest.fixture
def installed(settings: Any, db: Any) -> None:
    """RLS on and installed, inside the test's transaction: each test's DDL is rolled back."""
    settings.TENANCY_RLS = True
    install()


def _sql(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def _rls_messages() -> list[checks.CheckMessage]:
    return checks.run_checks(tags=[CHECK_TAG], databases=[DEFAULT_DB_ALIAS])


def _check_passes(*options: str, **env: str) -> str:
    """``manage.py check --database default`` (and ``options``) with RLS on in ``env``: it
    passes; its output."""
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--database", "default", *options],
        cwd=ROOT,
        env={**os.environ, "CLUCK_RLS": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    return output


def _only(id: str, *words: str) -> checks.CheckMessage:
    messages = _rls_messages()
    assert [message.id for message in messages] == [id], messages
    (message,) = messages
    assert all(word in message.msg for word in words), message.msg
    assert message.hint and "manage.py rls_install --sql" in message.hint
    return message


@mutation(
    "tenancy/rls/install.py",
    find='        f"ALTER TABLE {name} FORCE ROW LEVEL SECURITY",\n',
    replace="",
)
@mutation(
    "tenancy/rls/checks.py",
    find='"SELECT c.relrowsecurity AND c.relforcerowsecurity, EXISTS ("',
    replace='"SELECT c.relrowsecurity, EXISTS ("',
)
def test_a_declared_table_without_force_refuses_to_start(installed: None) -> None:
    """E003. Mutation: FORCE left out of the install (its owner, the connecting user, would
    ignore the policies) → E003 after install → red; the check reads ENABLE alone → red."""
    tables = [table.table for table in declared()]
    assert TABLE in tables
    for table in tables:
        _sql(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    install()
    assert _rls_messages() == []
    check_before_serving()  # installed: the server starts

    _sql(f"ALTER TABLE {TABLE} NO FORCE ROW LEVEL SECURITY")
    _only("tenancy_rls.E003", TABLE, "forced")
    with pytest.raises(StartupCheckError, match="tenancy_rls.E003"):
        check_before_serving()


@pytest.mark.parametrize("attribute", ["BYPASSRLS", "SUPERUSER"])
@mutation("tenancy/rls/checks.py", find="    if superuser or bypass:", replace="    if superuser:")
def test_a_tools_role_that_bypasses_policies_refuses_to_start(
    installed: None, attribute: str
) -> None:
    """E002: a superuser or BYPASSRLS role ignores every policy, FORCE or not.

    Mutation: the check reads rolsuper alone → a BYPASSRLS role passes → red."""
    _sql(f"ALTER ROLE {ROLE} {attribute}")
    _only("tenancy_rls.E002", ROLE, "BYPASSRLS")


@pytest.mark.parametrize("policy", ["dropped", "bound to another role"])
@mutation(
    "tenancy/rls/checks.py",
    find="WHERE p.polrelid = c.oid AND p.polname = %s AND r.rolname = %s",
    replace="WHERE p.polrelid = c.oid AND p.polname = %s AND %s::text IS NOT NULL",
)
def test_a_declared_table_without_its_policy_refuses_to_start(installed: None, policy: str) -> None:
    """E004. Mutation: the check finds the policy by name, whatever role it binds → the
    policy bound to the connecting user (which would filter the project, not the tools) passes
    → red."""
    _sql(f"DROP POLICY {TENANT_POLICY} ON {TABLE}")
    if policy != "dropped":
        _sql(f"CREATE POLICY {TENANT_POLICY} ON {TABLE} TO CURRENT_USER USING (true)")
    _only("tenancy_rls.E004", TABLE, ROLE)


@mutation(
    "tenancy/rls/checks.py",
    find='PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")',
    replace='PRIVILEGES = ("SELECT", "INSERT", "UPDATE")',
)
def test_a_tools_role_without_its_privileges_refuses_to_start(installed: None) -> None:
    """E005: a tool's delete would fail on a permission error, not on the policy.

    Mutation: the check leaves DELETE out → red."""
    _sql(f"REVOKE DELETE ON {TABLE} FROM {ROLE}")
    _only("tenancy_rls.E005", TABLE, "DELETE")


@mutation(
    "tenancy/rls/checks.py",
    find="""return False, [_error(f"The tools' database role {role!r} does not exist.", "E001")]""",
    replace="return False, []",
)
def test_a_missing_tools_role_refuses_to_start(installed: None, settings: Any) -> None:
    """E001 alone (its privileges and policies are not asked about: a role that does not
    exist cannot be named). Mutation: the missing role not reported → red."""
    settings.TENANCY_RLS_ROLE = "cluck_no_such_role"
    _only("tenancy_rls.E001", "cluck_no_such_role", "does not exist")


@mutation(
    "tenancy/rls/checks.py",
    find='                id="tenancy_rls.W001",\n            )\n        ]',
    replace='                id="tenancy_rls.W001",\n            )\n        ][:0]',
)
def test_sqlite_warns_that_rls_is_postgresql_only() -> None:
    """W001: on SQLite the tables cannot be enforced; ``check --deploy`` says so and still
    passes (a plain ``check`` does not: developing on SQLite is no fault, tests/shop's
    test_the_shop_as_documented_has_no_issue).

    Mutation: the warning dropped → red."""
    output = _check_passes("--deploy", DATABASE_URL="sqlite:///:memory:")
    assert "tenancy_rls.W001" in output and "PostgreSQL-only" in output, output


@mutation(
    "tenancy/rls/checks.py",
    find="    except OperationalError as unreachable:",
    replace="    except ZeroDivisionError as unreachable:",
)
def test_an_unreachable_database_at_start_is_a_warning_not_a_crash() -> None:
    """W002: a server may start before its database (readiness says so, tests/mcp_tools/
    test_health.py); the check says it could not look, and ``check`` still passes.

    Mutation: the unreachable database not caught → the check crashes → red."""
    output = _check_passes(DATABASE_URL="postgres://nobody@127.0.0.1:9/nothing", CLUCK_DB_POOL="0")
    assert "tenancy_rls.W002" in output and "unreachable" in output, output


@mutation(
    "mcp_tools/serving/asgi.py",
    find="        asyncio.get_running_loop()\n    except RuntimeError:",
    replace="        raise RuntimeError\n    except RuntimeError:",
)
def test_the_start_checks_read_the_database_inside_a_running_loop(rls_on: None) -> None:
    """``scripts/serve`` (``uvicorn.Server.run``) builds the application inside its event
    loop, where Django refuses a query: the checks that read the database run beside it.

    Mutation: the checks run on the loop's thread → SynchronousOnlyOperation → red."""

    async def build() -> None:
        check_before_serving()

    asyncio.run(build())
