"""Run the shop as its own project: a copy outside the repository, its own settings, real servers.

The copy, its environment and its servers are ``tests.project_harness``'s (shared with
tests/existing); this module adds what is the shop's: its files, its guide
(docs/new-project.md) and the commands that set it up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.project_harness import (
    ROOT,
    Project,
    copy_files,
    fenced_blocks,
    file_blocks,
    free_port,
    server_command,
    shell_commands,
)
from tests.project_harness import project_env as shop_env

__all__ = ["ROOT", "free_port", "shop_env"]

PROJECT = Path(__file__).resolve().parent
GUIDE = ROOT / "docs" / "new-project.md"
PROJECT_FILES = ("manage.py", "shop", "catalog")


def copy_project(destination: Path) -> Path:
    """The shop's files (no caches, no database) under ``destination/shop``."""
    return copy_files(PROJECT, PROJECT_FILES, destination / "shop")


def guide_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block of docs/new-project.md, in order."""
    return fenced_blocks(GUIDE)


def guide_file_blocks() -> dict[str, str]:
    """The blocks of docs/new-project.md that are files of the shop, by path."""
    return file_blocks(GUIDE)


def guide_commands() -> list[list[str]]:
    """The ``python manage.py …`` and ``uvicorn`` lines of docs/new-project.md."""
    return shell_commands(GUIDE)


def guide_server_command(kind: str) -> list[str]:
    """The guide's own line for ``runserver`` or ``uvicorn``."""
    return server_command(GUIDE, kind)


@dataclass
class Shop(Project):
    """One copy of the shop, served with the guide's own commands."""

    env: dict[str, str] = field(default_factory=shop_env)
    server_command: Callable[[str], list[str]] = guide_server_command


# --- set-up ------------------------------------------------------------------------------

CLERK_PASSWORD = "a-long-clerk-password"

# Run by one ``manage.py shell`` process: a store, its owner and a personal access token per
# code, through the same commands the guide shows (add_member, issue_token).
SETUP_SCRIPT = """
import io, json
from django.core.management import call_command
from catalog.models import Store

tokens = {}
for code, email in %(members)r:
    Store.objects.get_or_create(code=code, defaults={"name": code.title()})
    call_command("add_member", tenant=code, email=email, role="Admin", stdout=io.StringIO())
    out = io.StringIO()
    call_command("issue_token", tenant=code, email=email, stdout=out)
    tokens[email] = out.getvalue().strip()
print("TOKENS=" + json.dumps(tokens))
"""


def owners_with_tokens(shop: Shop, members: list[tuple[str, str]]) -> dict[str, str]:
    """``{email: token}`` for ``[(store code, owner email)]``, in one process."""
    out = shop.manage("shell", "-c", SETUP_SCRIPT % {"members": members})
    (line,) = [line for line in out.splitlines() if line.startswith("TOKENS=")]
    tokens: dict[str, str] = json.loads(line.removeprefix("TOKENS="))
    return tokens


@dataclass
class GuidedShop:
    """The shop after the guide's commands: their outputs, and the tokens they printed."""

    shop: Shop
    outputs: list[tuple[list[str], str]] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def output_of(self, *argv: str) -> str:
        (out,) = [out for command, out in self.outputs if command[: len(argv)] == list(argv)]
        return out


def run_guide(shop: Shop) -> GuidedShop:
    """Every ``python manage.py …`` line of the guide, verbatim and in order (but startapp and
    the servers)."""
    guided = GuidedShop(shop)
    for argv in guide_commands():
        # The copy is the project startapp began (its files are the guide's); servers are
        # started by the tests that talk to them.
        if argv[:1] == ["uvicorn"] or {"startapp", "runserver"} & set(argv[2:3]):
            continue
        stdin = f"{CLERK_PASSWORD}\n" if "--password-from-stdin" in argv else None
        out = shop.run(argv, stdin=stdin)
        guided.outputs.append((argv, out))
        if argv[2] == "issue_token":  # it prints only the token (stderr aside)
            (token,) = re.findall(r"^ck_pat_\S+$", out, re.M)
            guided.tokens[argv[argv.index("--email") + 1]] = token
    return guided
