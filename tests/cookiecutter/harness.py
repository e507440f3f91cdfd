"""Run Harbor as its own project (``tests.project_harness``): its files, its section of
docs/existing-project.md, its settings modules, and its organizations, members and tokens."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.existing.harness import COOKIECUTTER_SECTION
from tests.project_harness import (
    ROOT,
    GuidePart,
    Project,
    copy_files,
    project_env,
    server_command,
)

PROJECT = Path(__file__).resolve().parent
GUIDE = GuidePart(ROOT / "docs" / "existing-project.md", start=COOKIECUTTER_SECTION)
PROJECT_FILES = ("manage.py", "config", "harbor")
# What production.py reads from the environment (cookiecutter's DJANGO_* variables).
PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": "harbor-production-" + "x7Kq2-vB9mZp4wLr8TnY3sHc6JdF1gQe5UaR0" * 2,
    "DJANGO_ADMIN_URL": "harbor-admin-q7/",
}
_ISSUE_ID = re.compile(r"\((\w+\.[EWCI]\d{3})\)")


def guide_server_command(kind: str) -> list[str]:
    return server_command(GUIDE, kind)


@dataclass
class Harbor(Project):
    """One copy of Harbor, under its local settings (what ``manage.py`` and ``config/asgi.py``
    pick by default)."""

    env: dict[str, str] = field(default_factory=project_env)
    server_command: Callable[[str], list[str]] = guide_server_command

    def production(self) -> Harbor:
        """The same copy under ``config.settings.production``."""
        return Harbor(self.path, {**self.env, **PRODUCTION})

    def python(self, code: str) -> str:
        """``python -c code`` in the copy: no ``manage.py``, so none of its ``sys.path``."""
        return self.run(["python", "-c", code])


def copy_harbor(destination: Path) -> Harbor:
    return Harbor(copy_files(PROJECT, PROJECT_FILES, destination / "harbor-project"))


def check_ids(out: str) -> set[str]:
    """The ids of the issues a ``check`` printed."""
    return set(_ISSUE_ID.findall(out))


# Run by one ``manage.py shell`` of the copy: members through the project's own models, a
# personal token each through the toolkit's command.
SEED_SCRIPT = """
import io, json
from django.core.management import call_command
from harbor.orgs.models import Membership, Organization
from harbor.users.models import User

tokens = {}
for slug, username, role in %(members)r:
    organization = Organization.objects.get_or_create(slug=slug, name=slug.title())[0]
    email = f"{username}@{slug}.example"
    user = User.objects.filter(username=username).first() or User.objects.create_user(
        username, email, "a-long-and-unusual-password"
    )
    Membership.objects.update_or_create(
        user=user, organization=organization, defaults={"role": role}
    )
    out = io.StringIO()
    call_command("issue_token", tenant=slug, email=email, stdout=out)
    tokens[username] = out.getvalue().strip()
print("TOKENS=" + json.dumps(tokens))
"""


def seed(harbor: Harbor, members: list[tuple[str, str, str]]) -> dict[str, str]:
    """``{username: personal token}`` for ``[(slug, username, role)]``, in one process."""
    out = harbor.manage("shell", "-c", SEED_SCRIPT % {"members": members})
    (line,) = [line for line in out.splitlines() if line.startswith("TOKENS=")]
    tokens: dict[str, str] = json.loads(line.removeprefix("TOKENS="))
    return tokens
