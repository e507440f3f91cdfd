"""The first mistakes of someone following docs/new-project.md, each a system check.

Each test makes one mistake in a copy of the shop (a settings module over the shop's own, or an
app holding one badly declared tool) and runs ``manage.py check`` there, as the person would:
the output names the check's id and a hint that says what to change, and never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.mutations import mutation
from tests.shop.harness import Shop, copy_project

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: Any) -> Shop:
    return Shop(copy_project(Path(tmp_path_factory.mktemp("mistakes"))))


_counter = iter(range(10_000))


def check(shop: Shop, settings: str = "", *, tool: str = "", deploy: bool = False) -> str:
    """``manage.py check`` under the shop's settings plus ``settings`` (Python run after
    ``from shop.settings import *``), with ``tool`` (after ``TOOL_HEADER``) as the ``mcp.py``
    of one more app; its output (stdout, then stderr), which holds no traceback."""
    n = next(_counter)
    lines = ["from shop.settings import *  # noqa: F403", textwrap.dedent(settings)]
    if tool:
        app = shop.path / f"mistake{n}"
        app.mkdir()
        (app / "__init__.py").write_text("")
        (app / "mcp.py").write_text(TOOL_HEADER + textwrap.dedent(tool))
        lines.append(f"INSTALLED_APPS = [*INSTALLED_APPS, 'mistake{n}']")
    (shop.path / "shop" / f"mistake{n}.py").write_text("\n".join(lines) + "\n")
    argv = [sys.executable, "manage.py", "check", *(["--deploy"] if deploy else [])]
    done = subprocess.run(
        argv,
        cwd=shop.path,
        env={**shop.env, "DJANGO_SETTINGS_MODULE": f"shop.mistake{n}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return out


def without(entry: str, name: str = "MIDDLEWARE") -> str:
    return f"{name} = [e for e in {name} if e != {entry!r}]"


TOOL_HEADER = """
from mcp_tools import CallContext, tool
from pydantic import BaseModel
from catalog.models import Product, Store


class Count(BaseModel):
    count: int
"""


@mutation(
    "tenancy/rls/checks.py",
    find="checks.register(check_rls_vendor, CHECK_TAG, deploy=True)",
    replace="checks.register(check_rls_vendor, CHECK_TAG)",
)
def test_the_shop_as_documented_has_no_issue(shop: Shop) -> None:
    """The shop declares its products for row-level security and runs on SQLite: that is no
    issue while developing (``check --deploy`` warns tenancy_rls.W001).

    Mutation: W001 on every command → red."""
    assert "System check identified no issues (1 silenced)." in check(shop)
    assert "tenancy_rls.W001" in check(shop, deploy=True)


@mutation(
    "tenancy/checks.py",
    find="        if isinstance(related, str):\n            # A lazy reference",
    replace="        if False:\n            # A lazy reference",
)
@pytest.mark.parametrize("value", ["", "catalog.Stor"], ids=["missing", "misspelt"])
def test_a_missing_or_misspelt_tenant_model_is_E003_not_a_traceback(shop: Shop, value: str) -> None:
    """Mutation: the membership check follows the unresolved foreign key → AttributeError
    ('str' object has no attribute '_meta') → a traceback, red."""
    settings = "del TENANCY_TENANT_MODEL" if not value else f"TENANCY_TENANT_MODEL = {value!r}"
    out = check(shop, settings)
    assert "tenancy.E003" in out
    assert 'Set TENANCY_TENANT_MODEL = "<app_label>.<ModelName>"' in out


@mutation("tenancy/checks.py", find="auth_at > tenancy_at", replace="False")
def test_tenancy_middleware_before_authentication_is_E010(shop: Shop) -> None:
    """Mutation: the order is not compared → no tenancy.E010 → red."""
    out = check(
        shop,
        """
        MIDDLEWARE = [e for e in MIDDLEWARE if e != "tenancy.middleware.TenancyMiddleware"]
        MIDDLEWARE.insert(1, "tenancy.middleware.TenancyMiddleware")
        """,
    )
    assert "tenancy.E010" in out
    assert "Move tenancy.middleware.TenancyMiddleware below" in out


@mutation("mcp_tools/checks.py", find="        if not apps.is_installed(app)\n", replace="")
@pytest.mark.parametrize(
    "app, check_id",
    [("rest_framework", "mcp_tools.E006"), ("idempotency", "mcp_tools.E007")],
)
def test_a_missing_toolkit_app_is_named(shop: Shop, app: str, check_id: str) -> None:
    """Mutation: the check reports every app, installed or not → the documented shop has
    issues → red (and without the condition's intent nothing names the missing one)."""
    settings = without(app, "INSTALLED_APPS")
    if app == "idempotency":
        settings += "\n" + without("idempotency.middleware.IdempotencyMiddleware")
    out = check(shop, settings)
    assert f"{check_id}" in out
    assert f'Add "{app}" to INSTALLED_APPS.' in out
    assert out.count("mcp_tools.E00") == 1, out


@mutation(
    "mcp_tools/checks.py",
    find='if apps.is_installed("idempotency") and middleware_index(IDEMPOTENCY_MIDDLEWARE) is None',
    replace="if False",
)
def test_a_missing_idempotency_middleware_is_E008(shop: Shop) -> None:
    """Mutation: the middleware is never looked for → no mcp_tools.E008 → red."""
    out = check(shop, without("idempotency.middleware.IdempotencyMiddleware"))
    assert "mcp_tools.E008" in out
    assert "as the last entry of MIDDLEWARE" in out


@mutation("mcp_tools/checks.py", find="    if mcp_path() is not None:", replace="    if True:")
def test_no_mcp_route_is_W003(shop: Shop) -> None:
    """Mutation: the route is never looked for → no mcp_tools.W003 → red."""
    (shop.path / "shop" / "urls_no_mcp.py").write_text(
        "from django.urls import include, path\n"
        'urlpatterns = [path("api/v1/", include("tenancy.urls"))]\n'
    )
    out = check(shop, 'ROOT_URLCONF = "shop.urls_no_mcp"')
    assert "mcp_tools.W003" in out
    assert 'Add path("", include("mcp_tools.urls"))' in out


@mutation(
    "mcp_tools/authoring/rules.py",
    find="        _refuse_tenant_argument(where, param.name)\n",
    replace="",
)
def test_a_tenant_argument_is_refused_by_E009(shop: Shop) -> None:
    """Mutation: parameter names are not vetted → `tenant: int` registers → red."""
    out = check(
        shop,
        tool="""
        @tool(name="shop_count_for", read_only=True, description="Products of a store.")
        def count_for(ctx: CallContext, *, tenant: int) -> Count:
            return Count(count=Product.objects.filter(store_id=tenant).count())
        """,
    )
    assert "mcp_tools.E009" in out
    assert "'shop_count_for'" in out
    assert "argument 'tenant' would let the caller name a tenant" in out


@mutation(
    "mcp_tools/authoring/spec.py",
    find="        if isinstance(candidate, type) and issubclass(candidate, Model):",
    replace="        if False:",
)
def test_a_model_typed_argument_is_refused_with_the_tool_named(shop: Shop) -> None:
    """Mutation: model annotations are not looked for → pydantic's schema error, which names
    no tool → red."""
    out = check(
        shop,
        tool="""
        @tool(name="shop_price_of", read_only=True, description="One product's price.")
        def price_of(ctx: CallContext, *, product: Product) -> str:
            return str(product.price)
        """,
    )
    assert "mcp_tools.E009" in out
    assert "'shop_price_of'" in out
    assert "parameter 'product' takes the model Product (take its id or code" in out


@mutation(
    "mcp_tools/authoring/registry.py",
    find="                if not self._deferring:\n                    raise\n",
    replace="                raise\n",
)
def test_a_duplicate_tool_name_is_a_check_not_a_traceback(shop: Shop) -> None:
    """Mutation: registration problems raise during app loading again → a traceback → red."""
    out = check(
        shop,
        tool="""
        @tool(name="shop_list_products", read_only=True, description="Again.")
        def list_products_again(ctx: CallContext) -> Count:
            return Count(count=0)
        """,
    )
    assert "mcp_tools.E009" in out
    assert "MCP tool name 'shop_list_products' is registered twice" in out


@mutation(
    "idempotency/checks.py",
    find="    skipped = [entry for entry in later if _has_process_view(entry)]",
    replace="    skipped = later",
)
def test_a_later_middleware_without_process_view_does_not_warn(shop: Shop) -> None:
    """Mutation: every later middleware counts → the appended GZip middleware (no
    process_view, like the debug toolbar's) warns idempotency.W001 → red."""
    out = check(shop, 'MIDDLEWARE += ["django.middleware.gzip.GZipMiddleware"]')
    assert "idempotency.W001" not in out
    assert "System check identified no issues (1 silenced)." in out


@mutation("idempotency/checks.py", find="    if not skipped:\n        return []\n", replace="")
def test_a_later_middleware_with_process_view_warns_W001(shop: Shop) -> None:
    """Mutation: the warning is given whatever follows → also for the documented shop,
    where nothing does → red."""
    quiet = check(shop)
    assert "idempotency.W001" not in quiet
    out = check(shop, 'MIDDLEWARE += ["django.middleware.csrf.CsrfViewMiddleware"]')
    assert "idempotency.W001" in out
    assert "django.middleware.csrf.CsrfViewMiddleware" in out


@mutation(
    "tenancy/checks.py",
    find="        if config.label == head and config.name != head:",
    replace="        if False:",
)
def test_a_roles_path_from_an_app_label_names_the_full_path(shop: Shop) -> None:
    """Mutation: app labels are not compared → the hint names no path, and a label path that
    imports by accident passes → red."""
    package = shop.path / "apps"
    (package / "orgs").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "orgs" / "__init__.py").write_text("")
    (package / "orgs" / "apps.py").write_text(
        "from django.apps import AppConfig\n\n\n"
        "class OrgsConfig(AppConfig):\n"
        '    name = "apps.orgs"\n'
        '    label = "orgs"\n'
    )
    (package / "orgs" / "roles.py").write_text(
        "from tenancy import DEFAULT_ROLES\n\nROLES = DEFAULT_ROLES\n"
    )
    base = 'INSTALLED_APPS = [*INSTALLED_APPS, "apps.orgs"]\nTENANCY_ROLES = "orgs.roles.ROLES"\n'
    out = check(shop, base)
    assert "tenancy.E006" in out
    assert "TENANCY_ROLES = 'apps.orgs.roles.ROLES'" in out
    # The same path importing only through a sys.path entry a manage.py added (as
    # cookiecutter-django's does): still refused, since pytest and uvicorn lack that entry.
    accidental = check(shop, base + f"import sys\nsys.path.append({str(package)!r})\n")
    assert "tenancy.E011" in accidental
    assert "TENANCY_ROLES = 'apps.orgs.roles.ROLES'" in accidental
