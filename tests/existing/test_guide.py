"""docs/existing-project.md, held to the project it describes (tests/existing).

Every Python block whose first line names a file of the project is that file (``# <path>``) or
a part of it (``# <path>, <which part>``: its pieces, between ``# …`` lines, appear in the file
in that order). The guide's ``python manage.py …`` lines are the ones conftest's
``guided_tracker`` runs, in order; the other tests use that copy.
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import Any

import pytest

from tests.existing.harness import GUIDE, PROJECT, guide_commands
from tests.mutations import mutation
from tests.project_harness import ROOT, assert_blocks_in_project, code_blocks


def test_every_file_block_of_the_guide_is_in_the_project() -> None:
    assert assert_blocks_in_project(GUIDE, PROJECT) == {
        "orgs/models.py",
        "orgs/roles.py",
        "tracker/settings.py",
        "tracker/urls.py",
        "projects/models.py",
        "projects/apps.py",
        "projects/mcp.py",
        "tracker/asgi.py",
    }


_IN_PLACE = {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault"}


def _assigned(code: str) -> set[str]:
    """The settings ``code`` assigns or changes in place; its own ``_temporaries`` are none
    (Django reads upper-case names only, and ``from .base import *`` skips them)."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and not target.id.startswith("_"):
                names.add(target.id)
            elif isinstance(target, ast.Subscript):  # REST_FRAMEWORK[...] = ...
                names.add(getattr(target.value, "id", ""))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr not in _IN_PLACE:  # MIDDLEWARE.index(...) changes nothing
                continue
            if isinstance(node.func.value, ast.Name):  # MIDDLEWARE.insert(...)
                names.add(node.func.value.id)
            elif isinstance(node.func.value, ast.Subscript):  # REST_FRAMEWORK[...].insert(...)
                names.add(getattr(node.func.value.value, "id", ""))
    return names


def test_the_toolkit_changes_only_what_the_settings_block_shows() -> None:
    settings = (PROJECT / "tracker/settings.py").read_text()
    ((_, _, block),) = [b for b in code_blocks(GUIDE) if b[0] == "tracker/settings.py"]
    assert settings.endswith(block)
    assert _assigned(block) == {
        "INSTALLED_APPS",
        "MIDDLEWARE",
        "TENANCY_TENANT_MODEL",
        "TENANCY_TENANT_CODE_FIELD",
        "TENANCY_TENANT_ACTIVE_FIELD",
        "TENANCY_TENANT_NOUN",
        "TENANCY_MEMBERSHIP_MODEL",
        "TENANCY_ROLES",
        "REST_FRAMEWORK",
        "OAUTH2_PROVIDER",
    }
    # The project's own settings, above the block, name nothing of the toolkit's and keep
    # their login, token auth and transactions.
    before = settings.removesuffix(block)
    assert not re.search(r"tenancy|mcp_tools|idempotency|oauth2_provider", before)
    assert 'LOGIN_URL = "account_login"' in before
    assert '"ATOMIC_REQUESTS": True' in before
    assert "rest_framework_simplejwt.authentication.JWTAuthentication" in before
    assert not re.search(r"^LOGIN_URL", block, re.M)


def test_the_guide_lists_the_commands_the_tests_run() -> None:
    lines = [shlex.join(argv) for argv in guide_commands()]
    assert lines == [
        "python manage.py makemigrations orgs",
        "python manage.py migrate",
        "python manage.py check",
        "python manage.py test",
        "python manage.py add_member --organization acme --email dana@acme.example --role admin",
        "python manage.py issue_token --organization acme --email dana@acme.example",
        "python manage.py mcp_tools",
        "python manage.py runserver",
        "uvicorn tracker.asgi:application --lifespan off",
    ]
    assert "claude mcp add --transport http tracker http://127.0.0.1:8000/mcp" in GUIDE.read_text()


def test_the_guide_is_linked() -> None:
    assert "(docs/existing-project.md)" in (ROOT / "README.md").read_text()
    assert "(existing-project.md)" in (ROOT / "docs" / "new-project.md").read_text()


@mutation(
    "docs/existing-project.md",
    find='"] = [\n    "tenancy.drf_authentication.TenancyAuthentication",\n'
    '    *REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"],\n]',
    replace='"].insert(\n    0, "tenancy.drf_authentication.TenancyAuthentication"\n)',
)
@mutation(
    "docs/existing-project.md",
    find="INSTALLED_APPS = [\n    *INSTALLED_APPS,\n",
    replace="INSTALLED_APPS += [\n",
)
@pytest.mark.parametrize("kind", [list, tuple])
def test_the_settings_block_runs_on_lists_and_tuples_and_changes_nothing_of_yours(
    kind: type,
) -> None:
    """The guide's settings block, run on a project's settings held as lists or as tuples
    (cookiecutter-django's ``DEFAULT_AUTHENTICATION_CLASSES`` is a tuple): the toolkit's entries
    where the guide says, the project's own values untouched, in their order.

    Mutation: the block ``.insert``s into ``DEFAULT_AUTHENTICATION_CLASSES``, or ``+=`` a list
    onto ``INSTALLED_APPS`` → a tuple raises (``AttributeError``, ``TypeError``) → red.
    """
    ((_, _, block),) = [b for b in code_blocks(GUIDE) if b[0] == "tracker/settings.py"]
    apps = kind(["django.contrib.auth", "rest_framework", "orgs"])
    middleware = kind(
        [
            "django.middleware.security.SecurityMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ]
    )
    authentication = kind(["rest_framework.authentication.SessionAuthentication"])
    settings: dict[str, Any] = {
        "INSTALLED_APPS": apps,
        "MIDDLEWARE": middleware,
        "REST_FRAMEWORK": {"DEFAULT_AUTHENTICATION_CLASSES": authentication},
    }
    exec(block, settings)
    assert settings["INSTALLED_APPS"][:3] == list(apps)
    assert settings["MIDDLEWARE"] == [
        "django.middleware.security.SecurityMiddleware",
        "mcp_tools.serving.middleware.BodyCapMiddleware",
        *middleware[1:],
        "tenancy.middleware.TenancyMiddleware",
        "idempotency.middleware.IdempotencyMiddleware",
    ]
    assert settings["REST_FRAMEWORK"]["DEFAULT_AUTHENTICATION_CLASSES"] == [
        "tenancy.drf_authentication.TenancyAuthentication",
        *authentication,
    ]
    # Nothing you have changes: the project's own objects are as they were.
    assert list(apps) == ["django.contrib.auth", "rest_framework", "orgs"]
    assert len(middleware) == 3 and list(authentication) == [
        "rest_framework.authentication.SessionAuthentication"
    ]
