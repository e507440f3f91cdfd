"""The toolkit's migrations name no app of any project: the tenant is a swappable dependency."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.mutations import mutation
from tests.shop.harness import ROOT

APPS = ("tenancy", "idempotency", "mcp_tools")
FARM_LABEL = "cluck"


def _migration_files() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app / "migrations").glob("*.py")
        if path.name != "__init__.py"
    )


def _references(path: Path) -> list[str]:
    """App labels this migration names in code: the first item of every literal
    ``dependencies`` tuple, and the app part of every literal ``to=`` (and ``model_name``-less
    ``"app.model"`` string) passed to a field. ``swappable_dependency(settings.X)`` and
    ``to=settings.X`` are settings, not labels, and are not reported."""
    labels: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "dependencies" for target in node.targets
        ):
            for item in getattr(node.value, "elts", []):
                if isinstance(item, ast.Tuple) and isinstance(item.elts[0], ast.Constant):
                    labels.append(str(item.elts[0].value))
        elif isinstance(node, ast.keyword) and node.arg in ("to", "through"):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                labels.append(node.value.value.split(".")[0])
    return labels


def test_the_toolkit_has_migrations_to_scan() -> None:
    names = {f"{path.parent.parent.name}/{path.name}" for path in _migration_files()}
    assert {"tenancy/0001_initial.py", "tenancy/0002_rate_counter.py"} <= names
    assert "idempotency/0001_initial.py" in names


@mutation(
    "tenancy/migrations/0001_initial.py",
    find="        migrations.swappable_dependency(settings.TENANCY_MEMBERSHIP_MODEL),\n    ]",
    replace=(
        "        migrations.swappable_dependency(settings.TENANCY_MEMBERSHIP_MODEL),\n"
        '        ("cluck", "0001_initial"),\n'
        "    ]"
    ),
)
def test_no_toolkit_migration_depends_on_or_points_at_the_farm() -> None:
    """Every dependency and foreign key target of the three apps' migrations is the app itself,
    Django's, or a swappable setting (``TENANCY_TENANT_MODEL``, ``AUTH_USER_MODEL``).

    Mutation: re-add ``("cluck", "0001_initial")`` to the dependencies of
    ``tenancy/migrations/0001_initial.py`` → red (and the shop's ``migrate`` fails on a missing
    node).
    """
    allowed = {*APPS, "auth", "contenttypes"}
    found = {
        str(path.relative_to(ROOT)): sorted(set(_references(path)) - allowed)
        for path in _migration_files()
    }
    assert {path: labels for path, labels in found.items() if labels} == {}
    assert FARM_LABEL not in allowed
