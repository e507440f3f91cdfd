"""The Node stages (conformance suites, Node clients) never go missing quietly.

``scripts/ensure-node`` fails when Node, npm or a pinned package cannot be had; the tests
that need them fail; only ``CLUCK_SKIP_NODE=1`` turns both into a skip, and then the last line
of ``./scripts/test`` says so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clients import node
from tests.mutations import Edit, mutation

# What the scripts run besides bash builtins; npm and node are left out on purpose.
SHELL_TOOLS = ("bash", "env", "dirname", "grep", "cmp", "cp", "mkdir", "cat")
FAKE_UNAME = '#!/bin/sh\ncase "$1" in -s) echo Linux ;; -m) echo x86_64 ;; esac\n'


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def bare_checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout holding only ``scripts/`` (no var/node, no clients/node), and an environment
    whose PATH has the shell tools but no npm and no node (uname says linux x86_64, so the
    run gets past the platform check on any machine)."""
    scripts = tmp_path / "checkout" / "scripts"
    scripts.mkdir(parents=True)
    for name in ("ensure-node", "test"):
        shutil.copy2(node.ROOT / "scripts" / name, scripts / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in SHELL_TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    _executable(bin_dir / "uname", FAKE_UNAME)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C"}
    return scripts, env


def _run(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(script)], cwd=script.parent.parent, env=env, capture_output=True, text=True, timeout=60
    )


@mutation(
    "scripts/ensure-node",
    find='|| fail "npm not found; it is needed once, to install $1"',
    replace='|| { echo "npm not found; conformance tests will skip" >&2; exit 0; }',
)
def test_ensure_node_fails_without_npm_and_names_the_opt_out(bare_checkout) -> None:
    """Mutation: restore ``exit 0`` when npm is missing in ``scripts/ensure-node`` (the old
    "npm not found; conformance tests will skip") → red."""
    scripts, env = bare_checkout
    run = _run(scripts / "ensure-node", env)
    assert run.returncode == 1, run.stderr
    assert "npm not found" in run.stderr and "CLUCK_SKIP_NODE=1" in run.stderr, run.stderr
    assert not (scripts.parent / "var" / "node" / "runtime" / "node_modules").exists()


@mutation(
    "scripts/ensure-node",
    find=(
        'if [ "${CLUCK_SKIP_NODE:-}" = "1" ]; then\n'
        '  echo "ensure-node: skipped (CLUCK_SKIP_NODE=1); conformance and Node client tests will '
        'skip" >&2\n'
        "  exit 0\n"
        "fi\n"
    ),
    replace="",
)
def test_ensure_node_skips_only_when_told_to(bare_checkout) -> None:
    """Mutation: drop the ``CLUCK_SKIP_NODE`` branch of ``scripts/ensure-node`` → it fails
    without npm even when the developer opted out → red."""
    scripts, env = bare_checkout
    run = _run(scripts / "ensure-node", {**env, node.SKIP_ENV: "1"})
    assert run.returncode == 0, run.stderr
    assert "skipped (CLUCK_SKIP_NODE=1)" in run.stderr
    run = _run(scripts / "ensure-node", {**env, node.SKIP_ENV: "0"})
    assert run.returncode == 1, run.stderr


@mutation(
    "scripts/test", find='echo "all stages passed$skipped"', replace='echo "all stages passed"'
)
def test_scripts_test_says_on_its_last_line_that_node_stages_were_skipped(
    bare_checkout, tmp_path: Path
) -> None:
    """Mutation: print a bare ``all stages passed`` at the end of ``scripts/test`` whatever
    ``CLUCK_SKIP_NODE`` says → red.

    ``scripts/test`` runs with a stub bootstrap whose ruff, mypy, lint-imports and pytest
    pass, an mcp 1.x client venv that counts as installed, and the real ``ensure-node`` (no
    npm on PATH): opted out, every stage passes, so the last line is the success line."""
    scripts, env = bare_checkout
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for tool in ("ruff", "mypy", "lint-imports", "pytest", "mkdocs"):
        _executable(stubs / tool, "#!/bin/sh\nexit 0\n")
    (scripts / "_bootstrap.sh").write_text(
        f'cd "$(dirname "$0")/.."\nexport PATH="{stubs}:$PATH"\n'
        # The mcp 1.x client venv is "installed" (newer than a pyproject.toml that is absent).
        "PYTHON_BIN=true\nmkdir -p var/clients-mcp1 && : > var/clients-mcp1/.installed\n"
    )
    note = " (Node stages skipped: CLUCK_SKIP_NODE=1)"

    skipped = _run(scripts / "test", {**env, node.SKIP_ENV: "1"})
    last = skipped.stdout.splitlines()[-1]
    assert last == "all stages passed" + note, skipped.stdout + skipped.stderr
    assert skipped.returncode == 0

    failed = _run(scripts / "test", env)
    last = failed.stdout.splitlines()[-1]
    assert failed.returncode == 1
    assert last.startswith("FAILED stages: node 22") and note not in last, failed.stdout


@mutation(
    Edit("tests/clients/node.py", find="        pytest.fail(\n", replace="        pytest.skip(\n"),
    Edit("tests/clients/node.py", find="            pytrace=False,\n", replace=""),
)
def test_a_missing_node_client_fails_the_test_unless_opted_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Mutation: ``pytest.skip`` instead of ``pytest.fail`` in ``tests.clients.node.require``
    (what ``test_conformance`` did when Node was absent) → red."""
    # Outcomes are BaseExceptions: catch them all, or a skip would escape as a skip.
    monkeypatch.delenv(node.SKIP_ENV, raising=False)
    with pytest.raises(BaseException) as missing:
        node.require(tmp_path / "not-installed.js")
    assert missing.type is pytest.fail.Exception
    monkeypatch.setenv(node.SKIP_ENV, "1")
    with pytest.raises(BaseException) as opted_out:
        node.require(tmp_path / "not-installed.js")
    assert opted_out.type is pytest.skip.Exception
