"""Every benchmark still runs: each ``bench/*.py`` entry point, run with ``--smoke``.

A bench is a script nobody runs between measurements, so a change that breaks one (a rate
limit it hits, a date that fell out of the farm's window, a renamed helper) went unnoticed
until the next measurement. Here each runs one round of a few requests in a subprocess, its
own embedded PostgreSQL and servers included, and must exit 0 with ``SMOKE_DONE`` as its last
line, which only a bench with a smoke mode prints: a new bench without one fails here (argparse
refuses ``--smoke``, or the line is missing), as does one that runs its full length (timeout).

The runs start together, a few at a time (``CLUCK_BENCH_SMOKE_JOBS``, default 3: they wait on
PostgreSQL start-ups and migrations more than on the CPU), and each test waits for its own.
Under xdist each bench still runs once: the first worker to reach it runs it under a file lock
and leaves its result for the other (they walk the list from opposite ends).
``bench/mcp_bench.py`` also starts the peers from their venvs (``bench/peers/venvs.py``,
created once under ``var/bench-peers/``); without PyPI on first use it fails, saying why.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from bench.harness import SMOKE_DONE
from tests.mutations import mutation

ROOT = Path(__file__).resolve().parent.parent
# An entry point is a bench/*.py run as a script; the rest (settings, URLs, the harness) are
# imported by them.
ENTRY_POINTS = sorted(
    path.name
    for path in (ROOT / "bench").glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
)
# Benches with a guard of their own below (it records a mutation; a mutation run runs only it).
OWN_GUARDS = ("farm_bench.py", "instr_bench.py")
SMOKE_SECONDS = 420  # a smoke run takes under a minute alone; the slack is for a busy machine

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@dataclass(frozen=True)
class SmokeRun:
    bench: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def explain(self) -> str:
        return (
            f"bench/{self.bench} --smoke exited {self.returncode} after {self.seconds:.0f} s; "
            f"last output:\n{self.stdout[-1500:]}\nstderr:\n{self.stderr[-3000:]}"
        )


def _smoke(bench: str) -> SmokeRun:
    started = time.monotonic()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, f"bench/{bench}", "--smoke"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=SMOKE_SECONDS,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return SmokeRun(bench, -1, out, f"timed out after {SMOKE_SECONDS} s\n{err}", SMOKE_SECONDS)
    return SmokeRun(bench, done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _smoke_once(bench: str, shared: Path) -> SmokeRun:
    """``_smoke(bench)``, run by one xdist worker of the session; the others read its result
    (two runs at once doubled the load and raced on shared state such as the peers' venvs)."""
    result = shared / f"{bench}.json"
    with open(shared / f"{bench}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return SmokeRun(**json.loads(result.read_text()))
        run = _smoke(bench)
        result.write_text(json.dumps(asdict(run)))
        return run


@pytest.fixture(scope="module")
def smoke_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], SmokeRun]]:
    """``run(bench)``: the result of ``bench --smoke``; every selected bench of this module
    starts at once on first use, a few at a time, once per session across xdist workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    # xdist's workers share the parent of their base temp folders; alone, ours is private.
    shared = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.getbasetemp()
    shared = shared / "bench-smoke"
    shared.mkdir(exist_ok=True)
    mine = [item for item in request.session.items if item.path == Path(__file__)]
    selected = [item.callspec.params["bench"] for item in mine if hasattr(item, "callspec")]
    selected += [
        bench
        for bench in OWN_GUARDS
        if any(bench.removesuffix(".py") in item.name for item in mine)
    ]
    if worker and int(worker.removeprefix("gw") or 0) % 2:
        selected.reverse()
    jobs = int(os.environ.get("CLUCK_BENCH_SMOKE_JOBS", "3"))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures: dict[str, Future[SmokeRun]] = {
            bench: pool.submit(_smoke_once, bench, shared) for bench in selected
        }

        def run(bench: str) -> SmokeRun:
            if bench not in futures:
                futures[bench] = pool.submit(_smoke_once, bench, shared)
            return futures[bench].result()

        yield run


def _passed(run: SmokeRun) -> bool:
    lines = run.stdout.strip().splitlines()
    return run.returncode == 0 and bool(lines) and lines[-1] == SMOKE_DONE


def test_the_benches_are_found() -> None:
    assert {"mcp_bench.py", "farm_bench.py", "mcp_load.py"} <= set(ENTRY_POINTS)
    assert set(OWN_GUARDS) <= set(ENTRY_POINTS)


@pytest.mark.parametrize("bench", [b for b in ENTRY_POINTS if b not in OWN_GUARDS])
def test_bench_runs_in_smoke_mode(bench: str, smoke_runs: Callable[[str], SmokeRun]) -> None:
    run = smoke_runs(bench)
    assert _passed(run), run.explain()


@mutation("bench/farm_bench.py", find='"TENANCY_API_RATE": "100000000/m", ', replace="")
@mutation(
    "bench/farm_bench.py",
    find="- dt.timedelta(days=30)).isoformat()",
    replace="+ dt.timedelta(days=30)).isoformat()",
)
def test_farm_bench_runs_past_the_default_rate_and_on_a_day_the_farm_accepts(
    smoke_runs: Callable[[str], SmokeRun],
) -> None:
    """farm_bench.py stopped running twice: REST answered 429 past the default 300/m (its
    settings raised only /mcp's budget) and its fixed day fell out of the farm's window.

    Mutations, each seen red: the REST budget no longer raised (the smoke's request past the
    default budget is refused); the day recorded in the farm's future (refused).
    """
    run = smoke_runs("farm_bench.py")
    assert _passed(run), run.explain()


# The body parsed again, twenty-four times over: one more parse of bench_add's body is ~51 000
# instructions, 0.9 % of a call (bench/instr_bench.py), which the 5 % tolerance lets through;
# twenty-four (~22 %) clears the baseline's headroom (the path is ~4 % under it since the
# package layout) in every one of the smoke's runs.
@mutation(
    "mcp_tools/serving/views.py",
    find=(
        "        message = parse_bounded(request.body)\n    except _jsonrpc.EnvelopeError as exc:"
    ),
    replace=(
        "        for _ in range(24):\n"
        "            parse_bounded(request.body)\n"
        "        message = parse_bounded(request.body)\n"
        "    except _jsonrpc.EnvelopeError as exc:"
    ),
)
def test_instr_bench_smoke_fails_when_mcp_instructions_per_call_grow_past_the_baseline(
    smoke_runs: Callable[[str], SmokeRun],
) -> None:
    """The instruction-count gate: ``bench/instr_bench.py --smoke`` counts ``/mcp``'s
    instructions per call in both eras under callgrind and exits 1 past 5 % over
    ``bench/instr_baseline.json`` in each of up to three runs (the lowest is gated: load only
    adds instructions).

    Mutation, seen red: ``/mcp`` parses the request body 24 more times (the smoke fails,
    saying which era grew by how much).
    """
    run = smoke_runs("instr_bench.py")
    assert _passed(run), run.explain()
