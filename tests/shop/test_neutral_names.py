"""The toolkit speaks no farm: its public names and stable codes carry none of the farm's words.

The names are read by ``public_names.py`` in a process of the shop (every toolkit setting at its
default, so the REST fields and command options are the ones an outside project gets): every
module and ``__all__`` name, public module-level names and the attributes of the classes
defined there (the request contexts and ``CallContext`` included), setting names from each
``conf.DEFAULTS``, management commands and their options, REST field names of ``tenancy.api``,
route, model, table and field names, logger and context-variable names, default roles and
policies — and every error code (``default_code``, ``code=`` literals, ``Area.Code`` strings,
``ToolError`` codes) and system-check id.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.mutations import mutation
from tests.shop.harness import PROJECT, Shop, copy_project

FARM_WORDS = {
    "bird",
    "breed",
    "broiler",
    "chicken",
    "cluck",
    "coop",
    "egg",
    "farm",
    "flock",
    "hatch",
    "hen",
    "house",
    "layer",
    "mortality",
    "pullet",
    "poultry",
    "rooster",
    "worker",
    "yolk",
}
# Words the farm uses that are also plain computing terms, allowed only in these phrases.
ALLOWED_PHRASES = {("worker", "threads"), ("worker", "thread")}


def words(name: str) -> list[str]:
    """``MAX_WORKER_THREADS`` → max, worker, threads; ``assignedFlockIds`` → assigned, flock,
    ids; ``Auth.TenantSuspended`` → auth, tenant, suspended."""
    return [word.lower() for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)]


def farm_words(name: str) -> list[str]:
    found = []
    split = words(name)
    for index, word in enumerate(split):
        stem = word[:-1] if word.endswith("s") else word
        if word in FARM_WORDS or stem in FARM_WORDS:
            if tuple(split[index : index + 2]) not in ALLOWED_PHRASES:
                found.append(word)
    return found


def test_the_word_splitter_finds_farm_words_inside_names() -> None:
    assert farm_words("assigned_flock_ids") == ["flock"]
    assert farm_words("assignedFlockIds") == ["flock"]
    assert farm_words("--farm") == ["farm"]
    assert farm_words("FlockScope.NotAssigned") == ["flock"]
    assert farm_words("Egg.GradeUnknown") == ["egg"]
    assert farm_words("MAX_WORKER_THREADS") == []
    assert farm_words("workers") == ["workers"]
    assert farm_words("then_when") == []


@pytest.fixture(scope="module")
def public_names(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    shop = Shop(copy_project(Path(tmp_path_factory.mktemp("names"))))
    out = shop.run([sys.executable, str(PROJECT / "public_names.py")])
    return [(where, name) for where, name in json.loads(out.splitlines()[-1])]


def test_the_scan_sees_the_names_it_must_see(public_names: list[tuple[str, str]]) -> None:
    names = {name for _, name in public_names}
    assert {"row_ids", "is_row_restricted", "row_scope", "RowScope"} <= names
    assert {"tenantCode", "assignedRowIds", "rowRestricted", "--tenant", "add_member"} <= names
    assert {"TENANCY_ROW_SCOPE_RESOLVER", "MCP_TOOLS_RATE", "IDEMPOTENCY_LEASE_SECONDS"} <= names
    assert {"Auth.TenantSuspended", "Idempotency.KeyReused", "Tool.InvalidArguments"} <= names
    assert {"tenancy.E003", "mcp_tools.E001", "Member"} <= names
    assert len(public_names) > 1000


@mutation(
    "tenancy/context.py",
    find="    def row_ids(self) -> frozenset[Any]:",
    replace="    def assigned_flock_ids(self) -> frozenset[Any]:",
)
def test_no_public_name_or_code_of_the_toolkit_is_farm_vocabulary(
    public_names: list[tuple[str, str]],
) -> None:
    """Mutation: rename ``RowScope.row_ids`` back to ``assigned_flock_ids`` → red."""
    offending = sorted(f"{where}: {name}" for where, name in public_names if farm_words(name))
    assert offending == []
