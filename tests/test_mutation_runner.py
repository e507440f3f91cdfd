"""What the mutation runner's fork server keeps between guard runs must never hide a mutation.

``scripts/_mutations.py`` remembers the JSON Schemas found valid in earlier guard runs, so the
next run does not check the ~90 tool schemas again. A schema that a mutation changes, or makes
invalid, must still be checked and refused. The code under test is the source the runner
writes into its scratch copy: it is read here without importing the runner.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.mutations import Edit, Mutation, mutation

ROOT = Path(__file__).resolve().parents[1]
VALID = {"type": "object", "properties": {"n": {"type": "integer"}}, "minProperties": 1}
# The same schema but for one value of another JSON type: invalid (minProperties is a number).
INVALID = {"type": "object", "properties": {"n": {"type": "integer"}}, "minProperties": True}


def _schema_cache() -> dict[str, Any]:
    """A fresh namespace of the runner's schema cache (``SCHEMA_CACHE_SOURCE``)."""
    tree = ast.parse((ROOT / "scripts" / "_mutations.py").read_text(encoding="utf-8"))
    source = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "SCHEMA_CACHE_SOURCE" for t in node.targets)
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, "SCHEMA_CACHE_SOURCE", "exec"), namespace)
    return namespace


def _check_schema(cache: dict[str, Any]) -> Any:
    """``Draft202012Validator.check_schema`` as the fork server's children see it."""
    remembering = cache["_remembering"](Draft202012Validator.check_schema.__func__)
    return remembering.__get__(None, Draft202012Validator)


@mutation(
    "scripts/_mutations.py",
    find="key = repr((cls.__module__, cls.__qualname__, _canonical(schema)))",
    replace="key = repr((cls.__module__, cls.__qualname__))",
)
def test_a_schema_found_valid_once_spares_only_the_same_schema() -> None:
    """Mutation: key the remembered schemas by the validator alone → the invalid schema is taken
    for the valid one checked before it → not refused → red."""
    cache = _schema_cache()
    check = _check_schema(cache)
    check(VALID)
    check(VALID)
    assert len(cache["valid_schemas"]) == 1
    with pytest.raises(SchemaError):
        check(INVALID)


@mutation(
    "scripts/_mutations.py",
    find="        check(cls, schema, *args, **kwargs)\n",
    replace="        valid_schemas.add(key)\n        check(cls, schema, *args, **kwargs)\n",
)
def test_an_invalid_schema_is_refused_every_time() -> None:
    """Mutation: remember the schema before checking it → the second check of the invalid
    schema passes (a guard run after the first would not see the refusal) → red."""
    cache = _schema_cache()
    check = _check_schema(cache)
    for _ in range(2):
        with pytest.raises(SchemaError):
            check(INVALID)
    assert cache["valid_schemas"] == set()


def _runner() -> Any:
    """``scripts/_mutations.py`` as a module (importing it runs nothing)."""
    spec = importlib.util.spec_from_file_location(
        "_cluck_mutations_runner", ROOT / "scripts" / "_mutations.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@mutation(
    "scripts/_mutations.py",
    find='MIGRATE_TIME_DIRS = ("migrations", "models", "rls")',
    replace='MIGRATE_TIME_DIRS = ("migrations", "models")',
)
@mutation(
    "scripts/_mutations.py",
    find="        if MIGRATE_TIME_TEXT.search(text):\n",
    replace="        if False:\n",
)
def test_a_mutation_of_what_migrate_runs_is_never_spared_migrate(tmp_path: Path) -> None:
    """The runner skips ``migrate`` on its reused, migrated test database unless the mutation
    reaches what migrate runs there (the post_migrate handlers: row-level security, content
    types and permissions from the models, what settings and apps' ready() declare).
    Mutation: forget tenancy/rls/, or the text of the edited file (a post_migrate receiver),
    → such a mutation runs over policies the unmutated code installed, and can survive → red."""
    runner = _runner()
    files = {
        "tenancy/rls/install.py": "STATEMENTS = []\n",
        "tenancy/models.py": "x = 1\n",
        "cluck/models/flocks.py": "x = 1\n",
        "tenancy/apps.py": "x = 1\n",
        "cluck/settings.py": "x = 1\n",
        "tenancy/conf.py": "x = 1\n",
        "cluck/signals.py": "post_migrate.connect(receiver)\nx = 1\n",
        "mcp_tools/audit.py": "x = 1\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")

    def touches(path: str, replace: str = "x = 2") -> bool:
        edit = Edit(path, find="x = 1" if "x = 1" in files[path] else "[]", replace=replace)
        record = Mutation(node_id="t", index=1, count=1, edits=(edit,), line=1)
        return bool(runner.touches_migrate_time(record, tmp_path))

    for path in files:
        if path != "mcp_tools/audit.py":
            assert touches(path), path
    assert touches("mcp_tools/audit.py", replace="declare(Row, field='farm')")
    assert not touches("mcp_tools/audit.py")
