"""The cookiecutter-django section of docs/existing-project.md, held to Harbor
(tests/cookiecutter) as the rest of the page is to the tracker: every Python block whose first
line names a file is that file or a part of it, and section 4's settings block is the end of
Harbor's ``config/settings/base.py`` but for the roles path."""

from __future__ import annotations

import shlex

from tests.cookiecutter.harness import GUIDE, PROJECT
from tests.existing.harness import GUIDE as TRACKER_GUIDE
from tests.project_harness import assert_blocks_in_project, code_blocks, shell_commands

TRACKER_ROLES = 'TENANCY_ROLES = "orgs.roles.ROLES"\n'
HARBOR_ROLES = (
    "# A module path, not an app label: the full one, importable without manage.py's sys.path"
    ' line.\nTENANCY_ROLES = "harbor.orgs.roles.ROLES"\n'
)


def test_every_file_block_of_the_section_is_in_harbor() -> None:
    assert assert_blocks_in_project(GUIDE, PROJECT) == {
        "config/settings/base.py",
        "config/settings/production.py",
        "config/urls.py",
        "config/asgi.py",
    }


def test_base_py_ends_with_section_4s_block_but_for_the_roles_path() -> None:
    ((_, _, block),) = [b for b in code_blocks(TRACKER_GUIDE) if b[0] == "tracker/settings.py"]
    assert block.count(TRACKER_ROLES) == 1
    base = (PROJECT / "config/settings/base.py").read_text()
    assert base.endswith(block.replace(TRACKER_ROLES, HARBOR_ROLES))
    # Above the block, base.py is cookiecutter's: a tuple of authentication classes.
    before = base.removesuffix(block.replace(TRACKER_ROLES, HARBOR_ROLES))
    assert '"DEFAULT_AUTHENTICATION_CLASSES": (\n' in before
    assert "tenancy" not in before and "mcp_tools" not in before


def test_the_section_shows_the_commands_the_tests_run() -> None:
    assert [shlex.join(argv) for argv in shell_commands(GUIDE)] == [
        "python manage.py migrate",
        "python manage.py check",
        "uvicorn config.asgi:application --lifespan off",
    ]
    text = GUIDE.read_text()
    assert (
        "DJANGO_SETTINGS_MODULE=config.settings.production python manage.py check --deploy" in text
    )
    # The one check production.py silences is explained on the page.
    assert "`oauth2_provider.W008`, says that OAuth redirect URIs may be plain `http`" in text
