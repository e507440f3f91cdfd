"""The shop's own pytest suite (``catalog/tests.py``) runs in a copy of the shop, as a project's
suite would: ``from mcp_tools.testing.client import MCPClient``, the plugin's fixtures, no
server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutations import mutation
from tests.shop.harness import Shop, copy_project, shop_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@mutation(
    "tenancy/scoping.py",
    find='clone = self.filter(**{f"{self.tenant_field}_id": tenant_id})',
    replace="clone = self.all()",
)
def test_the_shops_own_suite_tests_its_tools_in_process(tmp_path: Path) -> None:
    """Mutation: ``for_tenant`` stops narrowing to the tenant → the shop's isolation test
    (``assert_tenant_isolated``) is red → this is red."""
    # As a project's own run: pytest loads its installed plugins (pytest-django) itself, even
    # when this run was started with autoloading off (the mutation runner does that).
    env = {k: v for k, v in shop_env().items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    shop = Shop(copy_project(tmp_path), env=env)
    output = shop.run(
        [
            "python",
            "-m",
            "pytest",
            "catalog/tests.py",
            "--ds=shop.settings",
            "-p",
            "mcp_tools.testing.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        timeout=300,
    )
    assert " passed" in output and "failed" not in output, output
