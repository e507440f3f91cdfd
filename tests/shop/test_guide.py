"""docs/new-project.md, held to the project it describes and run as written.

The guide's files are the shop's files; its ``python manage.py …`` lines are run verbatim in a
copy of the shop outside the repository (SQLite, the default), then the shop is migrated from
zero on a fresh PostgreSQL database; both are served (``runserver``, uvicorn on
``mcp_tools.serving.asgi``) and driven by the official ``mcp`` SDK client, and people sign in
through
``include("tenancy.urls")``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mutations import mutation
from tests.project_harness import (
    GuidePart,
    fenced_blocks,
    postgres_database,
)
from tests.shop.harness import (
    CLERK_PASSWORD,
    GUIDE,
    PROJECT,
    GuidedShop,
    Shop,
    copy_project,
    guide_blocks,
    guide_commands,
    guide_file_blocks,
    owners_with_tokens,
    shop_env,
)
from tests.shop.mcp_story import run_story, tool_names

# Printed by one process of the shop: is the farm importable, which settings are in use, and
# do the committed migrations of every app (tenancy's with the shop's tenant model) match the
# models.
PROBE = """
import importlib.util, io
from django.conf import settings
from django.core.management import call_command
print("farm:", importlib.util.find_spec("cluck"))
print("settings:", settings.SETTINGS_MODULE)
call_command("makemigrations", check=True, dry_run=True, stdout=io.StringIO())
print("migrations: up to date")
"""


def test_every_file_the_guide_shows_is_the_shops_file() -> None:
    files = guide_file_blocks()
    assert set(files) == {
        "catalog/models.py",
        "catalog/mcp.py",
        "shop/settings.py",
        "shop/urls.py",
        "shop/asgi.py",
    }
    for path, text in files.items():
        assert (PROJECT / path).read_text() == text, f"docs/new-project.md differs from {path}"


@mutation(
    "docs/new-project.md",
    find='TENANCY_RLS_MODELS = {"catalog.Product": "store"}\n```',
    replace='TENANCY_RLS_MODELS = {"catalog.Product": "store_id"}\n```',
)
def test_the_row_level_security_step_shows_the_shops_own_declaration() -> None:
    """Step 12's block (the declaration, outside the whole settings file of step 3) is a line
    of shop/settings.py, which tests/shop/test_rls.py proves on PostgreSQL.

    Mutation: the step's block names another field → red."""
    step = GuidePart(
        GUIDE, start="## 12. Row-level security: the database refuses another store's rows"
    )
    declarations = [
        block
        for language, block in fenced_blocks(step)
        if language == "python" and "TENANCY_RLS" in block  # the A2A and worker block: test_rls
    ]
    assert declarations, "step 12 shows no declaration"
    settings = (PROJECT / "shop/settings.py").read_text().splitlines()
    for block in declarations:
        assert block.strip() in settings, block


def test_the_guide_lists_the_commands_the_tests_run() -> None:
    lines = [shlex.join(argv) for argv in guide_commands()]
    assert lines[:4] == [
        "python manage.py startapp catalog",
        "python manage.py makemigrations catalog",
        "python manage.py migrate",
        "python manage.py check",
    ]
    assert "python manage.py runserver" in lines
    assert "uvicorn shop.asgi:application --lifespan off" in lines
    assert any("--password-from-stdin" in line for line in lines)
    text = GUIDE.read_text()
    assert "claude mcp add --transport http shop http://127.0.0.1:8000/mcp" in text


def test_the_guides_commands_set_up_the_shop_on_sqlite(
    guided_sqlite_shop: GuidedShop,
) -> None:
    guided = guided_sqlite_shop
    assert "No changes detected in app 'catalog'" in guided.output_of(
        "python", "manage.py", "makemigrations"
    )
    migrated = guided.output_of("python", "manage.py", "migrate")
    assert "Applying tenancy.0001_initial... OK" in migrated
    assert "Applying tenancy.0002_rate_counter... OK" in migrated
    assert "Applying idempotency.0001_initial... OK" in migrated
    checked = guided.output_of("python", "manage.py", "check")
    assert "System check identified no issues" in checked, checked
    assert "added: owner@main.example (new user) is Admin" in guided.output_of(
        "python", "manage.py", "add_member", "--tenant", "main", "--email", "owner@main.example"
    )
    assert guided.tokens["owner@main.example"].startswith("ck_pat_")
    catalogue = guided.output_of("python", "manage.py", "mcp_tools")
    read_only = catalogue.split("ReadOnly (")[1].split("\n\n")[0]
    assert "shop_list_products" in read_only and "shop_add_product" not in read_only
    assert "None" not in catalogue

    probe = guided.shop.manage("shell", "-c", PROBE)
    assert "farm: None" in probe
    assert "settings: shop.settings" in probe
    assert "migrations: up to date" in probe
    assert (guided.shop.path / "db.sqlite3").exists()


def _login_body() -> dict[str, Any]:
    """The JSON the guide's ``curl …/auth/login/`` line posts, with the clerk's password."""
    for language, text in guide_blocks():
        if language == "bash" and "/api/v1/auth/login/" in text:
            argv = shlex.split(text)
            body: dict[str, Any] = json.loads(argv[argv.index("-d") + 1])
            return {**body, "password": CLERK_PASSWORD}
    raise AssertionError("docs/new-project.md shows no login")


@pytest.mark.e2e
def test_runserver_serves_the_shop_to_the_mcp_sdk_and_people_sign_in(
    guided_sqlite_shop: GuidedShop,
) -> None:
    guided = guided_sqlite_shop
    with guided.shop.serve("runserver") as url:
        run_story(
            url,
            owner=guided.tokens["owner@main.example"],
            other=guided.tokens["owner@harbour.example"],
        )

        body = _login_body()
        assert set(body) == {"tenantCode", "email", "password"}
        login = httpx.post(f"{url}/api/v1/auth/login/", json=body)
        assert login.status_code == 200, login.text
        session = login.json()["accessToken"]
        assert session.startswith("ck_ses_")
        me = httpx.get(f"{url}/api/v1/me/", headers={"Authorization": f"Bearer {session}"})
        assert me.status_code == 200, me.text
        assert me.json()["tenantCode"] == "main" and me.json()["role"] == "ReadOnly"
        # A ReadOnly member sees the read tool only (the write tool's policy leaves it out).
        assert tool_names(url, session) == {"shop_list_products"}

        anonymous = httpx.get(f"{url}/api/v1/me/")
        assert anonymous.status_code == 401, anonymous.text
        assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")

        # A personal token of the clerk's own: created without a key, revoked with one.
        signed_in = {"Authorization": f"Bearer {session}"}
        created = httpx.post(f"{url}/api/v1/me/tokens/", json={"name": "laptop"}, headers=signed_in)
        assert created.status_code == 201, created.text
        personal = created.json()
        revoke = f"{url}/api/v1/me/tokens/{personal['id']}/"
        keyless = httpx.delete(revoke, headers=signed_in)
        assert keyless.status_code == 400 and keyless.json()["code"] == "Idempotency.KeyRequired"
        revoked = httpx.delete(revoke, headers={**signed_in, "Idempotency-Key": "revoke-laptop"})
        assert revoked.status_code == 204, revoked.text
        refused = httpx.get(
            f"{url}/api/v1/me/", headers={"Authorization": f"Bearer {personal['token']}"}
        )
        assert refused.status_code == 401 and refused.json()["code"] == "Auth.InvalidToken"


# --- PostgreSQL ------------------------------------------------------------------------------


@pytest.fixture
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty database on the test run's PostgreSQL server; dropped afterwards."""
    try:
        with postgres_database("shop") as url:
            yield url
    except LookupError as missing:
        pytest.skip(str(missing))


@pytest.mark.e2e
@pytest.mark.postgres
def test_the_shop_migrates_from_zero_on_postgresql_and_uvicorn_serves_it(
    fresh_postgres_database: str, tmp_path: Path
) -> None:
    shop = Shop(copy_project(tmp_path), shop_env(database_url=fresh_postgres_database))
    migrated = shop.manage("migrate")
    assert "Applying tenancy.0002_rate_counter... OK" in migrated
    assert "System check identified no issues" in shop.manage("check")
    tokens = owners_with_tokens(
        shop, [("main", "owner@main.example"), ("harbour", "owner@harbour.example")]
    )
    with shop.serve("uvicorn") as url:
        run_story(url, owner=tokens["owner@main.example"], other=tokens["owner@harbour.example"])
