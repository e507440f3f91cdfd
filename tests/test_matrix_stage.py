"""``./scripts/test`` runs the matrix stage (issue 33), and leaving it out is never silent.

``scripts/test`` runs in a checkout holding only itself and a stub ``scripts/matrix`` that
records how it was called; its bootstrap is a stub whose ruff, mypy, lint-imports, pytest and
mkdocs pass. The real ``scripts/matrix`` (Debian roots, cells) is run by ``./scripts/test``
itself and by hand: docs/testing.md, "The matrix stage".
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.mutations import mutation

ROOT = Path(__file__).resolve().parents[1]
STAGE = "matrix (Django 6.0/6.1 on Python 3.13/3.14)"
SHELL_TOOLS = ("bash", "env", "dirname", "grep", "cat", "mkdir", "tail", "sh")


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """``scripts/test`` beside a stub ``scripts/matrix``: ``prepare`` and ``run`` append their
    name to ``var/matrix-calls``; ``prepare`` fails, saying so, when ``MATRIX_STUB_FAIL`` is
    ``prepare``, and ``run`` when it is ``run``."""
    scripts = tmp_path / "checkout" / "scripts"
    scripts.mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "test", scripts / "test")
    _executable(
        scripts / "matrix",
        '#!/bin/sh\necho "$1" >> var/matrix-calls\n'
        'if [ "$MATRIX_STUB_FAIL" = "$1" ]; then echo "stub: $1 broke"; exit 1; fi\n',
    )
    bin_dir, stubs = tmp_path / "bin", tmp_path / "stubs"
    bin_dir.mkdir()
    stubs.mkdir()
    for tool in SHELL_TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    for tool in ("ruff", "mypy", "lint-imports", "pytest", "mkdocs"):
        _executable(stubs / tool, "#!/bin/sh\nexit 0\n")
    (scripts / "_bootstrap.sh").write_text(
        f'cd "$(dirname "$0")/.."\nexport PATH="{stubs}:$PATH"\n'
        # The mcp 1.x client venv is "installed" (newer than a pyproject.toml that is absent).
        "PYTHON_BIN=true\nmkdir -p var/clients-mcp1 && : > var/clients-mcp1/.installed\n"
    )
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C"}
    return scripts, env


def _run(scripts: Path, env: dict[str, str], *args: str) -> tuple[list[str], list[str]]:
    """The output lines of ``scripts/test args`` and the stub's calls, in order."""
    done = subprocess.run(
        [str(scripts / "test"), *args],
        cwd=scripts.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    calls = scripts.parent / "var" / "matrix-calls"
    return done.stdout.splitlines(), calls.read_text().split() if calls.exists() else []


@mutation(
    "scripts/test",
    find='if [ -n "$matrix_pid" ]; then stage "matrix (Django 6.0/6.1 on Python 3.13/3.14)" '
    "matrix_stage; fi\n",
    replace="",
)
def test_the_matrix_stage_runs_the_cells_after_preparing_them(checkout) -> None:
    """Mutation: drop the matrix stage from ``scripts/test`` (prepare still starts) → red.

    A failing cell fails the run and names the stage on the last line."""
    scripts, env = checkout
    lines, calls = _run(scripts, env)
    assert calls == ["prepare", "run"], lines
    assert f"== {STAGE}" in lines and lines[-1] == "all stages passed", lines

    lines, calls = _run(scripts, {**env, "MATRIX_STUB_FAIL": "run"})
    assert lines[-1] == f"FAILED stages: {STAGE}", lines


@mutation(
    "scripts/test",
    find='    tail -40 "$matrix_log"\n    return 1\n',
    replace="    return 0\n",
)
def test_a_failed_prepare_fails_the_stage_and_shows_its_log(checkout) -> None:
    """Mutation: the stage passes when ``scripts/matrix prepare`` failed, without its log → red.

    The prepare runs in the background with its output in a log file: only the stage shows it."""
    scripts, env = checkout
    lines, calls = _run(scripts, {**env, "MATRIX_STUB_FAIL": "prepare"})
    assert calls == ["prepare"], lines
    assert "stub: prepare broke" in lines, lines
    assert lines[-1] == f"FAILED stages: {STAGE}", lines


@mutation(
    "scripts/test",
    find='  skipped="$skipped (matrix stage skipped: CLUCK_SKIP_MATRIX=1)"\n',
    replace="  :\n",
)
def test_skipping_the_matrix_is_said_on_the_last_line(checkout) -> None:
    """Mutation: ``CLUCK_SKIP_MATRIX=1`` no longer noted on the last line of ``scripts/test``
    → red. Opted out, the roots are not even prepared."""
    scripts, env = checkout
    lines, calls = _run(scripts, {**env, "CLUCK_SKIP_MATRIX": "1"})
    assert calls == [], lines
    assert f"== {STAGE}" not in lines
    assert lines[-1] == "all stages passed (matrix stage skipped: CLUCK_SKIP_MATRIX=1)", lines


@mutation(
    "scripts/test",
    find='if [ $# -eq 0 ] && [ "${CLUCK_SKIP_MATRIX:-}" != "1" ]',
    replace='if [ "${CLUCK_SKIP_MATRIX:-}" != "1" ]',
)
def test_a_run_with_arguments_has_no_matrix(checkout) -> None:
    """Mutation: ``./scripts/test tests/x`` prepares and runs the matrix too → red (a targeted
    run would build Debian roots and run three cells)."""
    scripts, env = checkout
    lines, calls = _run(scripts, env, "tests/tenancy", "-x")
    assert calls == [], lines
    assert lines[-1] == "all stages passed", lines
