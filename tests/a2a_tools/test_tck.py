"""The A2A project's compatibility kit (``a2aproject/a2a-tck``, snapshot in shared/tools),
mandatory category, against a real uvicorn server on the demo farm.

``scripts/ensure-a2a`` copies the kit to ``var/a2a-tck/src`` and installs its dependencies in
``var/a2a-tck/venv``. Its checks run as a subprocess; the failing ones must be exactly those
of ``tck-baseline.yml`` — the checks that disagree with the v1.0 specification, each with its
reason (the specification wins). Anything else failing, or a baseline entry now passing, is red.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from tests.cluck.mcp_helpers import demo_bearer
from tests.mcp_tools.servers import ROOT, serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

TCK_DIR = ROOT / "var" / "a2a-tck"
TCK_PYTHON = TCK_DIR / "venv" / "bin" / "python"
TCK_SRC = TCK_DIR / "src"
BASELINE = Path(__file__).resolve().parent / "tck-baseline.yml"
# run_tck.py --category mandatory, as direct pytest calls (so the JSON reports are ours), in two
# passes: the authentication and security checks against the plain endpoint (they send missing
# or wrong credentials on purpose), every other check where the harness adds what the kit's
# client forgets (tck_asgi.py).
MARKERS = ["-m", "mandatory or mandatory_protocol"]
PLAIN = ["tests/mandatory/authentication", "tests/mandatory/security"]
INJECTED = ["tests/mandatory/", *(f"--ignore={path}" for path in PLAIN)]


def baseline() -> dict[str, str]:
    entries = yaml.safe_load(BASELINE.read_text()) or []
    return {entry["check"]: entry["reason"] for entry in entries}


@pytest.fixture
def tck_server(transactional_db: Any) -> Any:
    call_command("seed_demo", verbosity=0)
    env = {
        "A2A_TCK_BEARER": demo_bearer("owner@sunrise.example"),
        "MCP_TOOLS_RATE": "100000/m",
    }
    with serve("uvicorn", app="tests.a2a_tools.tck_asgi:application", env=env) as url:
        yield url, env["A2A_TCK_BEARER"]


def _run(
    selection: list[str], sut_url: str, bearer: str, report: Path
) -> tuple[list[dict[str, Any]], str]:
    # The kit's own way to send credentials (its config-aware clients add these headers).
    headers = json.dumps({"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"})
    result = subprocess.run(
        [
            str(TCK_PYTHON),
            "-m",
            "pytest",
            *selection,
            *MARKERS,
            f"--sut-url={sut_url}",
            "--test-scope=all",
            "--tb=line",
            "-q",
            "-p",
            "no:cacheprovider",
            "--json-report",
            f"--json-report-file={report}",
        ],
        cwd=TCK_SRC,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
            "TCK_LOG_LEVEL": "WARNING",
            "A2A_AUTH_HEADERS": headers,
        },
    )
    output = result.stdout + result.stderr
    assert report.exists(), output[-6000:]
    return json.loads(report.read_text())["tests"], output


def test_tck_mandatory_category_fails_only_its_baseline(
    tck_server: tuple[str, str], tmp_path: Path
) -> None:
    if not TCK_PYTHON.exists() and os.environ.get("CLUCK_SKIP_A2A_TCK") == "1":
        pytest.skip("CLUCK_SKIP_A2A_TCK=1: the A2A TCK is not installed (scripts/ensure-a2a)")
    assert TCK_PYTHON.exists(), "the A2A TCK is not installed: run scripts/ensure-a2a"
    url, bearer = tck_server
    # The kit flags loopback addresses in the public card as "internal" (it exempts localhost):
    # the card's interface URL is built from the host the kit asked for.
    url = url.replace("127.0.0.1", "localhost")
    injected, out_injected = _run(INJECTED, f"{url}/tck-injected/a2a", bearer, tmp_path / "a.json")
    plain, out_plain = _run(PLAIN, f"{url}/a2a", bearer, tmp_path / "b.json")
    output = out_injected + out_plain
    if os.environ.get("A2A_TCK_OUTPUT"):
        Path(os.environ["A2A_TCK_OUTPUT"]).write_text(output)
    tests = injected + plain
    failed = {t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")}
    passed = {t["nodeid"] for t in tests if t["outcome"] == "passed"}
    expected = baseline()
    assert passed, "the TCK ran no check"
    assert failed - set(expected) == set(), f"new TCK failures:\n{output[-6000:]}"
    assert set(expected) - failed == set(), "baseline entries that now pass (remove them)"
