"""``serverInfo`` names the project, not the package that happens to hold its settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from mcp_tools import conf
from mcp_tools.checks import check_server_name
from tests.mutations import mutation

# cookiecutter-django's layout: config/settings/*.py, config/urls.py, the project directory.
UNNAMED = {"MCP_TOOLS_SERVER_NAME": None, "MCP_TOOLS_SERVER_VERSION": None}
COOKIECUTTER = override_settings(
    ROOT_URLCONF="config.urls", BASE_DIR=Path("/srv/acme_shop"), **UNNAMED
)


@pytest.fixture
def settings_in_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings.production")


@mutation(
    "mcp_tools/conf.py",
    find="        if name and name.lower() not in GENERIC_PROJECT_NAMES:",
    replace="        if name:",
)
@pytest.mark.usefixtures("settings_in_config")
def test_a_layout_package_is_skipped_for_the_projects_directory_name() -> None:
    """Mutation: take the settings package whatever it is called → red ("config")."""
    with COOKIECUTTER:
        assert conf.server_info() == ("acme_shop", "0.0.0")
        assert check_server_name() == []


@pytest.mark.usefixtures("settings_in_config")
def test_the_settings_package_names_the_project_when_it_is_not_a_layout_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "shop.settings")
    with COOKIECUTTER:
        assert conf.default_server_name() == "shop"


@mutation(
    "mcp_tools/checks.py",
    find="    if name.lower() not in conf.GENERIC_PROJECT_NAMES:\n        return []\n",
    replace="    return []\n",
)
@pytest.mark.usefixtures("settings_in_config")
def test_a_generic_name_left_standing_is_a_warning_until_the_setting_names_the_server() -> None:
    """Mutation: never warn → red."""
    with override_settings(ROOT_URLCONF="config.urls", BASE_DIR=Path("/app"), **UNNAMED):
        assert conf.server_info() == ("config", "0.0.0")
        assert [warning.id for warning in check_server_name()] == ["mcp_tools.W002"]
        with override_settings(MCP_TOOLS_SERVER_NAME="Acme", MCP_TOOLS_SERVER_VERSION="2.1"):
            assert conf.server_info() == ("Acme", "2.1")
            assert check_server_name() == []
