"""A copy of the tracker set up with the commands of docs/existing-project.md, its
organizations and members (the project's own rows), and its servers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.existing.harness import Tracker, copy_tracker, guide_commands, seed

# (organization, member, role): the project's own rows, made before the guide's add_member.
# ada owns acme, bob is a member there, cy owns globex.
MEMBERS = [
    ("acme", "ada@acme.example", "owner"),
    ("acme", "bob@acme.example", "member"),
    ("globex", "cy@globex.example", "owner"),
]


@dataclass
class Guided:
    """The tracker after the guide's commands: their outputs, and the members' tokens
    (``"<email>@<slug>"``)."""

    tracker: Tracker
    outputs: list[tuple[list[str], str]] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def output_of(self, *argv: str) -> str:
        (out,) = [out for command, out in self.outputs if command[: len(argv)] == list(argv)]
        return out

    def token(self, email: str, slug: str) -> str:
        return self.tokens[f"{email}@{slug}"]


@pytest.fixture(scope="session")
def guided_tracker(tmp_path_factory: Any) -> Guided:
    """The tracker on SQLite (its ``db.sqlite3``): every ``python manage.py …`` line of the
    guide, verbatim and in order (but the servers); MEMBERS are added, as the team's own rows,
    right before the guide's first ``add_member``."""
    guided = Guided(copy_tracker(Path(tmp_path_factory.mktemp("existing"))))
    for argv in guide_commands():
        if argv[:1] == ["uvicorn"] or "runserver" in argv:
            continue
        if argv[2] == "add_member" and not guided.tokens:
            guided.tokens = seed(guided.tracker, MEMBERS)
        out = guided.tracker.run(argv)
        guided.outputs.append((argv, out))
        if argv[2] == "issue_token":
            (token,) = re.findall(r"^ck_pat_\S+$", out, re.M)
            slug = argv[argv.index("--organization") + 1]
            guided.tokens[f"{argv[argv.index('--email') + 1]}@{slug}"] = token
    return guided


@pytest.fixture(scope="session")
def tracker_servers(guided_tracker: Guided) -> Iterator[dict[str, str]]:
    """``{"runserver": url, "uvicorn": url}``, both serving the guided copy."""
    kinds = ["runserver", "uvicorn"]
    with guided_tracker.tracker.servers(kinds) as urls:
        yield dict(zip(kinds, urls, strict=True))
