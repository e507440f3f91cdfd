"""A copy of Harbor, migrated under its local settings, with its members and their tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cookiecutter.harness import Harbor, copy_harbor, seed

# (organization, member, role): ada owns acme, bo is staff there.
MEMBERS = [("acme", "ada", "owner"), ("acme", "bo", "staff")]


@dataclass
class Migrated:
    harbor: Harbor
    migrate_output: str
    tokens: dict[str, str]


@pytest.fixture(scope="session")
def migrated_harbor(tmp_path_factory: Any) -> Migrated:
    """Harbor on SQLite (its ``db.sqlite3``) after the section's ``migrate``."""
    harbor = copy_harbor(Path(tmp_path_factory.mktemp("cookiecutter")))
    out = harbor.manage("migrate")
    return Migrated(harbor, out, seed(harbor, MEMBERS))


@pytest.fixture(scope="session")
def harbor_uvicorn(migrated_harbor: Migrated) -> Iterator[str]:
    """The section's uvicorn line serving the copy (local settings, the toolbar on)."""
    with migrated_harbor.harbor.serve("uvicorn") as url:
        yield url
