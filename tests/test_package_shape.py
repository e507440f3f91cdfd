"""The toolkit's packages keep the shape a newcomer reads them by (issue 36).

``mcp_tools`` shows its public face at the top and one package per concern below it; every
module of ``mcp_tools`` and ``tenancy`` sits in a layer of an import-linter contract (so
``lint-imports`` decides what it may import); no module grows past what one reading holds.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.mutations import Move, mutation

ROOT = Path(__file__).resolve().parent.parent
TOP_LEVEL = {"apps", "checks", "codes", "conf", "exceptions", "models", "urls"}
MAX_LINES = 500


def _children(package: str) -> set[str]:
    """The modules and subpackages directly inside ``package`` (``__init__`` aside)."""
    names: set[str] = set()
    for path in (ROOT / package).iterdir():
        if path.suffix == ".py" and path.stem != "__init__":
            names.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            names.add(path.name)
    return names


def _layered(package: str) -> set[str]:
    """What the contracts contained in ``package`` name, by their first dotted part."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named: set[str] = set()
    for contract in config["contracts"]:
        if contract.get("containers") != [package]:
            continue
        for layer in contract["layers"]:
            named.update(part.strip().split(".")[0] for part in layer.split("|"))
    return named


@mutation("pyproject.toml", find='  "models | migrations",', replace='  "models",')
def test_every_module_of_mcp_tools_and_tenancy_is_in_a_layers_contract() -> None:
    """Mutation: the mcp_tools contract stops naming ``migrations`` (a package no layer
    holds, whose imports nothing checks) — the test names it."""
    for package in ("mcp_tools", "tenancy"):
        assert _children(package) - _layered(package) == set(), package


@mutation(Move("bench/steady.py", to="mcp_tools/steady.py"))
def test_mcp_tools_top_level_holds_only_its_public_face() -> None:
    """Mutation: a module lands at the flat top level — the test names it."""
    modules = {path.stem for path in (ROOT / "mcp_tools").glob("*.py") if path.stem != "__init__"}
    assert modules - TOP_LEVEL == set()
    assert len(modules) + 1 <= 8


@mutation(Move("tests/cluck/test_production_api.py", to="tenancy/production_api.py"))
def test_no_toolkit_module_is_over_500_lines() -> None:
    """Mutation: a 671-line module lands in ``tenancy`` — the test names it."""
    long = []
    for package in ("mcp_tools", "tenancy", "idempotency", "a2a_tools"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text().splitlines())
            if lines > MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {lines}")
    assert long == []
