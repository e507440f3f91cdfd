"""Several server processes, one /metrics: prometheus-client's multiprocess mode.

uvicorn ``--workers 2`` (``UVICORN_WORKERS``) with ``PROMETHEUS_MULTIPROC_DIR``: each process
counts into its own files there, and /metrics — answered by whichever process accepts the
scrape — sums them.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE
from tests.mcp_tools.servers import serve
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOKEN = "multiprocess-scrape-token-0123456789"
BATCH = 16
MAX_CALLS = 480


def _processes_counting(directory: Path) -> set[str]:
    """Pids of the processes that wrote a counter (their files are ``counter_<pid>.db``)."""
    return {path.stem.rpartition("_")[2] for path in directory.glob("counter_*.db")}


def _call(url: str, bearer: str, call_id: int) -> int:
    # A fresh connection per call, so the kernel hands calls to either process.
    body = {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": "mcptest_whoami"},
    }
    response = httpx.post(
        f"{url}/mcp",
        content=json.dumps(body),
        headers={
            "Authorization": f"Bearer {bearer}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "MCP-Protocol-Version": HANDSHAKE,
            "Connection": "close",
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["isError"] is False
    return call_id


def _value(exposition: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                return float(sample.value)
    return 0.0


@mutation(
    "mcp_tools/observability/metrics.py",
    find="    if os.environ.get(MULTIPROC_ENV):\n",
    replace="    if False:\n",
)
def test_metrics_sum_the_calls_of_every_server_process(tmp_path: Path) -> None:
    """Mutation: serve ``REGISTRY`` (this process's counts) in ``metrics.exposition`` even under
    ``PROMETHEUS_MULTIPROC_DIR`` → red (the scrape sees one process's share)."""
    bearer = bearer_for(MembershipFactory.create(tenant=FarmFactory(), roles=["Admin"]))
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {
        "UVICORN_WORKERS": "2",
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "MCP_TOOLS_METRICS_TOKEN": TOKEN,
        "MCP_TOOLS_RATE": "100000/m",
    }
    with serve(env=env) as url:
        made = 0
        with ThreadPoolExecutor(max_workers=8) as pool:
            while made < MAX_CALLS:
                ids = range(made + 1, made + BATCH + 1)
                made += len(list(pool.map(lambda i: _call(url, bearer, i), ids)))
                if len(_processes_counting(directory)) >= 2 and made >= 2 * BATCH:
                    break
        assert len(_processes_counting(directory)) == 2, "one process served every call"
        refused = httpx.get(f"{url}/metrics", timeout=30)
        scrape = httpx.get(
            f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )
    assert refused.status_code == 404
    assert scrape.status_code == 200, scrape.text
    labels = {"protocol": "mcp", "tool": "mcptest_whoami", "outcome": "ok"}
    assert _value(scrape.text, "mcp_tools_calls_total", **labels) == made
    assert _value(scrape.text, "mcp_tools_call_duration_seconds_count", **labels) == made
