"""docs/testing-your-tools.md's ``manage.py mcp_call`` lines, run as a user runs them.

Each line is a real ``python manage.py mcp_call …`` process in a copy of the shop (its own
settings, logging and URLconf), so what a user sees on stdout, on stderr and in the exit
status is what is held here — the in-process tests (tests/mcp_tools/test_mcp_call.py) capture
the command's streams, not the process's.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mutations import mutation
from tests.project_harness import ROOT, shell_commands
from tests.shop.harness import Shop, copy_project

TESTING_GUIDE = ROOT / "docs" / "testing-your-tools.md"


@dataclass
class Finished:
    status: int
    stdout: str
    stderr: str


def _mcp_call_lines() -> list[list[str]]:
    lines = [argv for argv in shell_commands(TESTING_GUIDE) if argv[2:3] == ["mcp_call"]]
    assert len(lines) == 3, "docs/testing-your-tools.md shows three mcp_call lines"
    return lines


def _run(shop: Shop, argv: list[str]) -> Finished:
    assert argv[0] == "python"
    done = subprocess.run(
        [shop.interpreter(), *argv[1:]],
        cwd=shop.path,
        env=shop.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def corner(tmp_path_factory: Any) -> Shop:
    """A copy of the shop migrated on SQLite, with the guide's store ``corner``, its owner and
    its clerk, made with the shop's commands."""
    shop = Shop(copy_project(Path(tmp_path_factory.mktemp("mcp-call"))))
    shop.manage("migrate", "-v", "0")
    shop.manage(
        "shell",
        "-c",
        "from catalog.models import Store; Store.objects.create(code='corner', name='Corner')",
    )
    shop.manage(
        "add_member", "--tenant", "corner", "--email", "owner@corner.example", "--role", "Admin"
    )
    shop.manage(
        "add_member", "--tenant", "corner", "--email", "clerk@corner.example", "--role", "ReadOnly"
    )
    return shop


def test_the_guides_mcp_call_lines_print_what_the_guide_says(corner: Shop) -> None:
    """The read prints the result as JSON; the write prints ``executed`` then, with the same
    key, ``replayed`` and the stored result; nothing else reaches stderr (no Django
    ``Bad Request`` line, no traceback)."""
    listing, first, again = _mcp_call_lines()

    listed = _run(corner, listing)
    assert listed.status == 0, listed.stderr
    assert json.loads(listed.stdout) == {"products": []}
    assert listed.stderr == ""

    made = _run(corner, first)
    assert made.status == 0, made.stderr
    assert re.fullmatch(r"[^\n]*executed[^\n]*\n", made.stderr), made.stderr
    replayed = _run(corner, again)
    assert replayed.status == 0, replayed.stderr
    assert re.fullmatch(r"[^\n]*replayed[^\n]*\n", replayed.stderr), replayed.stderr
    stored = json.loads(replayed.stdout)
    assert stored.pop("replayed") is True
    original = json.loads(made.stdout)
    original.pop("replayed", None)
    assert stored == original
    names = [product["name"] for product in json.loads(_run(corner, listing).stdout)["products"]]
    assert names == ["Tea"], "the replay added no second product"


@mutation(
    "mcp_tools/management/commands/mcp_call.py",
    find="            with _quiet_client_errors():\n",
    replace="            if True:\n",
)
def test_a_refused_call_is_one_json_error_and_exit_status_2(corner: Shop) -> None:
    """A tool the clerk's role does not see is the JSON-RPC error ``-32602`` on stdout, exit
    status 2, and stderr carries no ``Bad Request: /mcp`` line from Django's request logger
    (issue 33: the process printed one before the command's own output). Mutation: the call
    made without quieting that logger → the line is back on stderr → red."""
    listing = _mcp_call_lines()[0]
    argv = [*listing[:3], "shop_add_product", *listing[4:]]
    refused = _run(corner, argv)
    assert refused.status == 2, (shlex.join(argv), refused.stdout, refused.stderr)
    assert json.loads(refused.stdout)["error"]["code"] == -32602
    assert "Bad Request" not in refused.stderr
    assert "Traceback" not in refused.stderr
