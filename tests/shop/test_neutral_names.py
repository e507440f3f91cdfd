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

TOOLKIT = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")
ROOT = Path(__file__).resolve().parents[2]
# Prose is scanned for the farm's own words; the plain computing ones (a worker, a layer, an
# escape hatch) are prose too. "cluck" is the distribution's name (``pip install "cluck[a2a]"``)
# and is allowed only so, and the farm's seeded names count as farm words.
TEXT_FARM_WORDS = (FARM_WORDS - {"worker", "layer", "hatch"}) | {"sunrise", "hillside", "barn"}
DISTRIBUTION_EXTRA = re.compile(r"cluck\[\w+\]")


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


def text_farm_words(line: str) -> list[str]:
    found = []
    for word in words(DISTRIBUTION_EXTRA.sub("", line)):
        stem = word[:-1] if word.endswith("s") else word
        if word in TEXT_FARM_WORDS or stem in TEXT_FARM_WORDS:
            found.append(word)
    return found


@mutation(
    "mcp_tools/authoring/rules.py",
    find='e.g. Order.NotFound")',
    replace='e.g. Flock.NotFound")',
)
@mutation(
    "tenancy/migrations/0001_initial.py",
    find="# AUTH_USER_MODEL).",
    replace="# AUTH_USER_MODEL, the farm's cluck.Farm here).",
)
def test_no_farm_word_in_the_toolkits_code_comments_or_templates() -> None:
    """Docstrings, comments, messages, migrations and templates of the four reusable apps.

    Mutation: a farm word back in an error message, or in a migration's comment → red.
    """
    offending, scanned = [], set()
    for package in TOOLKIT:
        for path in sorted((ROOT / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            scanned.add(path.suffix)
            for number, line in enumerate(text.splitlines(), start=1):
                if found := text_farm_words(line):
                    offending.append(f"{path.relative_to(ROOT)}:{number}: {found}")
    assert {".py", ".html"} <= scanned
    assert offending == []


def test_the_text_scan_knows_prose_from_farm_words() -> None:
    assert text_farm_words("the farm's egg grades, one flock") == ["farm", "egg", "flock"]
    assert text_farm_words("Housekeeping: when the hens are fed") == ["hens"]
    assert text_farm_words('pip install "cluck[oauth]"; a worker thread; an escape hatch') == []
    assert text_farm_words("CLUCK_DB_POOL_MAX, the Hillside farm") == ["cluck", "hillside", "farm"]


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


def test_the_deploying_guides_oauth_settings_are_the_toolkits() -> None:
    """docs/deploying.md's OAuth section names only settings a project of its own has; the
    farm's ``CLUCK_*`` variables stay in their own, marked subsection."""
    text = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    section = text.split("## OAuth sign-in for MCP clients", 1)[1].split("\n## ", 1)[0]
    toolkit, farm = section.split("### The farm's environment variables", 1)
    assert re.findall(r"CLUCK_\w+", toolkit) == []
    assert "TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS" in toolkit
    assert {"CLUCK_PUBLIC_URL", "CLUCK_TRUST_PROXY_HEADERS"} <= set(re.findall(r"CLUCK_\w+", farm))
