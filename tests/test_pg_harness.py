"""The test harness's phases log (``CLUCK_TEST_PHASES_LOG``), which the guard-mutation stage
trusts instead of running each guard unmutated again (docs/testing.md)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import pg_harness
from tests.mutations import mutation


@mutation(
    "tests/pg_harness.py",
    find="path = os.environ.pop(PHASES_LOG_ENV, None)",
    replace="path = os.environ.get(PHASES_LOG_ENV)",
)
def test_a_pytest_started_by_a_test_leaves_the_phases_log_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Mutation: leave ``CLUCK_TEST_PHASES_LOG`` in the environment → a pytest that a test
    starts in the repository (``bench/call_path.py``'s, under ``test_bench_smoke``) inherits it,
    loads the harness and empties the log: the mutation stage then found 44 of 488 guards in it
    and ran the other 444 unmutated a second time → red.

    The nested run is the harness configured a second time with the environment the first one
    leaves (what a child process inherits)."""
    log = tmp_path / "phases.jsonl"
    monkeypatch.setenv(pg_harness.PHASES_LOG_ENV, str(log))
    monkeypatch.setattr(pg_harness, "_phases_log", None)
    pg_harness.pytest_configure(SimpleNamespace())  # type: ignore[arg-type]
    report = SimpleNamespace(nodeid="tests/x.py::test_x", when="call", outcome="passed", duration=1)
    pg_harness.pytest_runtest_logreport(report)  # type: ignore[arg-type]

    pg_harness.pytest_configure(SimpleNamespace())  # type: ignore[arg-type]

    phases = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [p["node"] for p in phases] == ["tests/x.py::test_x"]
