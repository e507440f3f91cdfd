"""Run the tracker as its own project (``tests.project_harness``): its files, its guide
(docs/existing-project.md), and the organizations, members and tokens the tests use.

The members are made the way the team makes them — ``User.objects.create_user`` and
``Membership.objects.create`` on the project's own models — and get their tokens from the
toolkit's ``issue_token``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.project_harness import (
    ROOT,
    GuidePart,
    Project,
    copy_files,
    file_blocks,
    project_env,
    server_command,
    shell_commands,
)

PROJECT = Path(__file__).resolve().parent
# The page's last section is the cookiecutter-django project's (tests/cookiecutter).
COOKIECUTTER_SECTION = "## 13. A cookiecutter-django project"
GUIDE = GuidePart(ROOT / "docs" / "existing-project.md", stop=COOKIECUTTER_SECTION)
PROJECT_FILES = ("manage.py", "tracker", "accounts", "orgs", "projects")
PASSWORD = "a-long-and-unusual-password"


def guide_server_command(kind: str) -> list[str]:
    return server_command(GUIDE, kind)


def guide_commands() -> list[list[str]]:
    return shell_commands(GUIDE)


def guide_file_blocks() -> dict[str, str]:
    return file_blocks(GUIDE)


@dataclass
class Tracker(Project):
    """One copy of the tracker, served with the guide's own commands."""

    env: dict[str, str] = field(default_factory=project_env)
    server_command: Callable[[str], list[str]] = guide_server_command


def copy_tracker(destination: Path) -> Tracker:
    return Tracker(copy_files(PROJECT, PROJECT_FILES, destination / "tracker"))


# Run by one ``manage.py shell`` of the copy: organizations and members through the project's
# own models, a personal token each through the toolkit's command.
SEED_SCRIPT = """
import io, json
from django.core.management import call_command
from accounts.models import User
from orgs.models import Membership, Organization

tokens = {}
for slug, email, role in %(members)r:
    organization = Organization.objects.get_or_create(slug=slug, name=slug.title())[0]
    user = User.objects.filter(email=email).first() or User.objects.create_user(
        email, %(password)r
    )
    Membership.objects.update_or_create(
        user=user, organization=organization, defaults={"role": role}
    )
    out = io.StringIO()
    call_command("issue_token", tenant=slug, email=email, stdout=out)
    tokens[email + "@" + slug] = out.getvalue().strip()
print("TOKENS=" + json.dumps(tokens))
"""


def seed(tracker: Project, members: list[tuple[str, str, str]]) -> dict[str, str]:
    """``{"<email>@<slug>": personal token}`` for ``[(slug, email, role)]``, in one process."""
    out = tracker.manage("shell", "-c", SEED_SCRIPT % {"members": members, "password": PASSWORD})
    (line,) = [line for line in out.splitlines() if line.startswith("TOKENS=")]
    tokens: dict[str, str] = json.loads(line.removeprefix("TOKENS="))
    return tokens


def issue_token(tracker: Project, slug: str, email: str) -> str:
    """The token the command printed (its stdout's one line; on SQLite stderr also holds the
    check warning tenancy_rls.W001)."""
    out = tracker.manage("issue_token", "--tenant", slug, "--email", email)
    (token,) = re.findall(r"^ck_pat_\S+$", out, re.M)
    return str(token)


def orm(tracker: Project, code: str) -> str:
    """Run ``code`` in the copy's ``manage.py shell`` (``Membership``, ``User``,
    ``Organization`` and ``Project`` imported); what it printed."""
    prelude = (
        "from accounts.models import User\n"
        "from orgs.models import Membership, Organization\n"
        "from projects.models import Project\n"
    )
    return tracker.manage("shell", "-c", prelude + code)


def rpc(url: str, bearer: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
    """One JSON-RPC request to ``url``/mcp, as any MCP client's POST."""
    return httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}},
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )


def listed_tools(url: str, bearer: str) -> set[str]:
    response = rpc(url, bearer, "tools/list")
    assert response.status_code == 200, response.text
    return {tool["name"] for tool in response.json()["result"]["tools"]}


def refusal_code(response: httpx.Response) -> str:
    """tenancy's code of a 401 from /mcp (``error.data.code``)."""
    assert response.status_code == 401, response.text
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    return str(response.json()["error"]["data"]["code"])
