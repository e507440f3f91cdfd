"""Harbor with the toolkit added as the cookiecutter-django section says, run in a copy
outside the repository: migrations, ``check`` under local settings (the toolbar's middleware
appended after ``IdempotencyMiddleware``), ``check --deploy`` under production settings, the
project's OpenAPI schema, the roles path under pytest, ``python -c`` and uvicorn, and a served
``tools/list`` and tool call through ``config/asgi.py``."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.cookiecutter.conftest import Migrated
from tests.cookiecutter.harness import check_ids
from tests.existing.harness import rpc
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_migrations_apply_and_match_the_models(migrated_harbor: Migrated) -> None:
    out = migrated_harbor.migrate_output
    for applied in ("orgs.0001_initial", "berths.0001_initial", "tenancy.0001_initial"):
        assert f"Applying {applied}... OK" in out, out
    assert "No changes detected" in migrated_harbor.harbor.manage(
        "makemigrations", "--check", "--dry-run"
    )


@mutation(
    "idempotency/checks.py",
    find="skipped = [entry for entry in later if _has_process_view(entry)]",
    replace="skipped = later",
)
def test_check_is_clean_under_local_settings_with_the_toolbar_last(
    migrated_harbor: Migrated,
) -> None:
    """local.py appends django-debug-toolbar's middleware after base.py's
    IdempotencyMiddleware; the toolbar has no ``process_view``, so nothing is lost and
    ``check`` (local settings, manage.py's default) reports nothing.

    Mutation: idempotency.W001 judges every later middleware, not those with a
    ``process_view`` → the toolbar is reported → red.
    """
    harbor = migrated_harbor.harbor
    last = harbor.manage(
        "shell", "-c", "from django.conf import settings; print(settings.MIDDLEWARE[-2:])"
    )
    assert last.strip().splitlines()[-1] == str(
        [
            "idempotency.middleware.IdempotencyMiddleware",
            "debug_toolbar.middleware.DebugToolbarMiddleware",
        ]
    )
    out = harbor.manage("check")
    assert check_ids(out) == set(), out
    assert "System check identified no issues" in out, out


@mutation(
    "tenancy/apps.py", find='if find_spec("drf_spectacular") is not None:', replace="if False:"
)
def test_check_deploy_is_clean_under_production_settings(migrated_harbor: Migrated) -> None:
    """``check --deploy`` under config.settings.production (cookiecutter's security settings,
    the guide's one silenced id) reports no issue: drf-spectacular's deploy check generates
    the project's schema, and ``TenancyAuthentication`` has its OpenAPI extension.

    Mutation: tenancy never registers tenancy.openapi → drf_spectacular.W001 ("could not
    resolve authenticator") → red.
    """
    out = migrated_harbor.harbor.production().manage("check", "--deploy")
    assert check_ids(out) == set(), out
    assert "System check identified no issues" in out, out


@mutation(
    "tenancy/apps.py", find='if find_spec("drf_spectacular") is not None:', replace="if False:"
)
def test_the_projects_schema_describes_ck_tokens(migrated_harbor: Migrated) -> None:
    """The project's own OpenAPI schema (``manage.py spectacular``) has ``bearerAuth``, an
    HTTP bearer scheme, on its own API (``/api/berths/``) and on the toolkit's token views.

    Mutation: tenancy never registers tenancy.openapi → no bearerAuth → red.
    """
    harbor = migrated_harbor.harbor
    harbor.manage("spectacular", "--format", "openapi-json", "--file", "schema.json")
    schema = json.loads((harbor.path / "schema.json").read_text())
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    berths = schema["paths"]["/api/berths/"]["get"]["security"]
    assert {"bearerAuth": []} in berths, berths
    assert {"tokenAuth": []} in berths, berths  # the project's own, beside it


@mutation(
    "tests/cookiecutter/config/settings/base.py",
    find='TENANCY_ROLES = "harbor.orgs.roles.ROLES"',
    replace='TENANCY_ROLES = "orgs.roles.ROLES"',
)
def test_the_roles_load_under_pytest_and_python_c(migrated_harbor: Migrated) -> None:
    """``TENANCY_ROLES`` as the guide writes it (the full module path) loads where no
    ``manage.py`` put ``harbor/`` on ``sys.path``: the team's pytest run and a plain
    ``python -c`` — and it is the module the tools import, not a second copy.

    Mutation: the short ``orgs.roles.ROLES`` (an app label where a module path belongs) →
    ``check`` refuses it (tenancy.E011), pytest and ``python -c`` cannot import it → red.
    """
    harbor = migrated_harbor.harbor
    loaded = harbor.python(
        "import os, django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings.local')\n"
        "django.setup()\n"
        "from tenancy.roles import active_roles\n"
        "from harbor.orgs import roles\n"
        "print(active_roles() is roles.ROLES, active_roles().names)\n"
    )
    assert loaded.strip() == "True ('staff', 'owner')", loaded
    out = harbor.run(
        [
            "python",
            "-m",
            "pytest",
            "--ds=config.settings.test",
            "-p",
            "no:cacheprovider",
            "-q",
            "harbor/orgs/tests.py",
        ]
    )
    assert "1 passed" in out, out


@mutation(
    "tests/cookiecutter/config/settings/base.py",
    find='TENANCY_ROLES = "harbor.orgs.roles.ROLES"',
    replace='TENANCY_ROLES = "orgs.roles.ROLES"',
)
def test_tools_list_and_a_call_through_config_asgi(
    migrated_harbor: Migrated, harbor_uvicorn: str
) -> None:
    """uvicorn serves ``config.asgi`` (local settings, the toolbar on): the owner gets both
    tools and the staff member only the read one (the roles the policy names, loaded without
    ``manage.py``); a write runs once per key, and the berth is on the project's own API for
    the same ``ck_`` token (``TenancyAuthentication`` added to a tuple of classes).

    Mutation: the short roles path → uvicorn (``mcp_tools.serving.asgi`` runs the checks) refuses to
    start → red.
    """
    owner, staff = migrated_harbor.tokens["ada"], migrated_harbor.tokens["bo"]
    listed = rpc(harbor_uvicorn, owner, "tools/list").json()["result"]["tools"]
    assert {tool["name"] for tool in listed} == {"harbor_list_berths", "harbor_add_berth"}
    listed = rpc(harbor_uvicorn, staff, "tools/list").json()["result"]["tools"]
    assert {tool["name"] for tool in listed} == {"harbor_list_berths"}

    call = {
        "name": "harbor_add_berth",
        "arguments": {"name": "A1", "lengthCm": 1200, "idempotencyKey": "berth-a1"},
    }
    first = rpc(harbor_uvicorn, owner, "tools/call", call).json()["result"]
    again = rpc(harbor_uvicorn, owner, "tools/call", call).json()["result"]
    assert not first.get("isError"), first
    assert first["structuredContent"]["berth"]["name"] == "A1"
    assert again["structuredContent"]["berth"] == first["structuredContent"]["berth"]
    assert (first["structuredContent"]["replayed"], again["structuredContent"]["replayed"]) == (
        False,
        True,
    )

    api = httpx.get(
        f"{harbor_uvicorn}/api/berths/", headers={"Authorization": f"Bearer {owner}"}, timeout=30
    )
    assert api.status_code == 200, api.text
    assert [berth["name"] for berth in api.json()] == ["A1"]
