"""Instructions per call, counted by callgrind: the noise-free measure of what a call costs.

    .venv/bin/python bench/instr_bench.py [--calls 200] [--repeat 2] [--no-peers]
                                          [--kinds KIND ...] [--record-baseline] [--smoke]
                                          [--threads]

Timings on a shared VM move 10–30 % between bursts; the number of instructions a process
executes for the same code and inputs does not. Each kind runs in a process of its own under
``valgrind --tool=callgrind --instr-atstart=no`` (``PYTHONHASHSEED=0``), which drives the ASGI
application in process (``bench/instr_child.py``: no sockets, no HTTP server): Django's
set-up and ``--warmup`` calls run uninstrumented; then callgrind's client requests
(``CALLGRIND_START_INSTRUMENTATION`` / ``STOP``, from a small C helper built with ``gcc``
here) count exactly the ``--calls`` measured calls, every thread included (the request
pool's, a tool's worker, the call audit's writer). Instructions per call = the count / calls.
PostgreSQL runs outside valgrind (an embedded server, ``bench.harness``): what is counted is
the Python process's own work, which is what differs between the kinds.

The kinds (each answers the same token, counted by the same rate count):

- ``bare``, ``bare+rate``: bench/mcp_bench_urls.py's bare JSON view, without and with the
  per-member rate count; ``mcp-2025`` / ``mcp-2026``: ``tools/call bench_add`` on ``/mcp``
  in each era; ``tools/list``: the first page with ~10 bench tools (``bench/mcp_bench.py``'s
  requests, ``bench.mcp_bench_settings``);
- the farm's two doors: ``farm-list rest`` (``GET /api/v1/flocks/``) and ``farm-list mcp``
  (``cluck_list_flocks``), ``farm-record rest`` (``POST /api/v1/daily-entries/`` with an
  ``Idempotency-Key``) and ``farm-record mcp`` (``cluck_record_daily_entry`` with its
  ``idempotencyKey``), a fresh key each call so each executes, on the demo farm;
- the shop's two doors (``tests/shop``'s storefront, ``bench/shop_bench_settings.py``): its
  ``ModelViewSet``'s ``list`` and ``create`` (``GET``/``POST /api/v1/shop/products/``) and
  their ``drf_tool`` tools ``shop_search_products`` and ``shop_create_product``;
- ``dsm-2025`` / ``dsm-2026``: the same tool on django-stateless-mcp, mounted in the same
  project behind the same authentication and rate count (``bench/mcp_bench.py``'s);
- the peers in process: ``mcpz-2025`` / ``mcpz-2026``, django-mcpz 1.2 (in its venv,
  ``bench/peers/``), the same tool behind the same authentication and rate count.

Each kind runs ``--repeat`` times (default 2): the table gives the median and the spread
between runs (the measure is deterministic to that spread). Ratios are to ``bare+rate``, and
for a door's MCP side to its REST twin.

``--threads`` also splits each kind's count by thread (callgrind's ``--separate-threads``, a
child per kind, the threads named from the order they started): the event loop (the ASGI
handler, ``/mcp``'s async view and envelope), the request thread (the middleware chain, a REST
view), a sync tool's worker, asgiref's thread (Django's ``request_started``/``finished``) and
the call audit's writer; under an MCP kind, its difference from its REST twin, thread by thread.

``--smoke`` (run by ``./scripts/test``, tests/test_bench_smoke.py) is the gate: it counts
``mcp-2025`` and ``mcp-2026`` with the baseline's own number of calls and fails (exit 1,
saying by how much) when either grew more than 5 % over ``bench/instr_baseline.json``. A
change that means to move the count records a new baseline (``--record-baseline``) in the same
commit, saying why in the commit message.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.doors_bench import PRODUCTS, seed_shop, shop_env  # noqa: E402
from bench.farm_bench import FARM_TIME_ZONE, RATES  # noqa: E402
from bench.harness import add_smoke_option, embedded_database, seed_demo, smoke_done  # noqa: E402
from bench.mcp_bench import HEADERS, call_for  # noqa: E402
from bench.peers import venvs  # noqa: E402
from cluck.devdb import _ensure_database, _with_database  # noqa: E402

BASELINE = ROOT / "bench" / "instr_baseline.json"
GATED = ("mcp-2025", "mcp-2026")
TOLERANCE = 1.05
SMOKE_RUNS = 3
SETTINGS = "bench.mcp_bench_settings"
PEER = "django-mcpz"
GROUPS = ("cluck", "shop", "mcpz")
PROBE_C = r"""
#include <valgrind/callgrind.h>
void instr_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void instr_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS; }
"""

Request = tuple[str, str, list[list[str]], str]


@dataclass(frozen=True)
class Context:
    """What the requests need: the tokens, the demo farm's flock and day, a per-run nonce."""

    tokens: dict[str, str]  # by group
    flock: int
    day: str
    nonce: str


def _post(path: str, body: dict[str, Any], headers: dict[str, str]) -> Request:
    pairs = [[name, value] for name, value in headers.items()]
    return "POST", path, [["Content-Type", "application/json"], *pairs], json.dumps(body)


def _mcp(name: str, arguments: dict[str, Any], i: int) -> Request:
    body = {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return _post("/mcp", body, {**HEADERS, "MCP-Protocol-Version": "2025-11-25"})


def _record(ctx: Context) -> dict[str, Any]:
    return {"date": ctx.day, "totalEggs": 900, "crackedEggs": 10, "dirtyEggs": 5,
            "mortalityCount": 0}  # fmt: skip


def _key(ctx: Context, door: str, i: int) -> str:
    # The same length every call and every run (a key's bytes are hashed and stored); the
    # door's letter apart, as one member's keys are one space across REST and MCP.
    return f"{door}{ctx.nonce}{i:08d}"


def _bench_kind(kind: str) -> Callable[[Context, int], Request]:
    def build(ctx: Context, i: int) -> Request:
        path, body, headers = call_for(kind, i)
        return _post(path, body, headers)

    return build


def _farm_list_rest(ctx: Context, i: int) -> Request:
    return "GET", "/api/v1/flocks/", [], ""


def _farm_list_mcp(ctx: Context, i: int) -> Request:
    return _mcp("cluck_list_flocks", {}, i)


def _farm_record_rest(ctx: Context, i: int) -> Request:
    headers = {"Idempotency-Key": _key(ctx, "r", i)}
    return _post("/api/v1/daily-entries/", {"flockId": ctx.flock, **_record(ctx)}, headers)


def _farm_record_mcp(ctx: Context, i: int) -> Request:
    arguments = {"idempotencyKey": _key(ctx, "m", i), "flock": ctx.flock, **_record(ctx)}
    return _mcp("cluck_record_daily_entry", arguments, i)


def _shop_list_rest(ctx: Context, i: int) -> Request:
    return "GET", PRODUCTS, [], ""


def _shop_list_mcp(ctx: Context, i: int) -> Request:
    return _mcp("shop_search_products", {}, i)


def _shop_create_rest(ctx: Context, i: int) -> Request:
    product = {"name": f"P {_key(ctx, 'r', i)}", "price": "2.50"}
    return _post(PRODUCTS, product, {"Idempotency-Key": _key(ctx, "r", i)})


def _shop_create_mcp(ctx: Context, i: int) -> Request:
    product = {"name": f"P {_key(ctx, 'm', i)}", "price": "2.50"}
    return _mcp("shop_create_product", {**product, "idempotencyKey": _key(ctx, "m", i)}, i)


@dataclass(frozen=True)
class Kind:
    build: Callable[[Context, int], Request]
    group: str = "cluck"  # the project serving it: cluck, shop or mcpz (the peer's venv)
    twin: str | None = None  # the REST kind of the same operation


KINDS: dict[str, Kind] = {
    "bare": Kind(_bench_kind("bare")),
    "bare+rate": Kind(_bench_kind("bare+rate")),
    "mcp-2025": Kind(_bench_kind("mcp-2025"), twin="bare+rate"),
    "mcp-2026": Kind(_bench_kind("mcp-2026"), twin="bare+rate"),
    "tools/list": Kind(_bench_kind("list")),
    "dsm-2025": Kind(_bench_kind("dsm-2025")),
    "dsm-2026": Kind(_bench_kind("dsm-2026")),
    "farm-list rest": Kind(_farm_list_rest),
    "farm-list mcp": Kind(_farm_list_mcp, twin="farm-list rest"),
    "farm-record rest": Kind(_farm_record_rest),
    "farm-record mcp": Kind(_farm_record_mcp, twin="farm-record rest"),
    "shop-list rest": Kind(_shop_list_rest, group="shop"),
    "shop-list mcp": Kind(_shop_list_mcp, group="shop", twin="shop-list rest"),
    "shop-create rest": Kind(_shop_create_rest, group="shop"),
    "shop-create mcp": Kind(_shop_create_mcp, group="shop", twin="shop-create rest"),
    "mcpz-2025": Kind(_bench_kind("mcpz-2025"), group="mcpz"),
    "mcpz-2026": Kind(_bench_kind("mcpz-2026"), group="mcpz"),
}


def _answer_ok(kind: str, status: int, text: str) -> bool:
    """The call did its work (``text`` is the answer's start, so no JSON parse)."""
    if kind.endswith(" rest"):
        return status in (200, 201)
    if kind == "tools/list":
        return status == 200 and '"tools":[{' in text
    return status == 200 and re.search(r'"isError":\s*false', text) is not None


Group = tuple[Path, dict[str, str]]  # the child's python and environment
Segment = tuple[str, list[Request], list[Request]]  # (kind, uncounted warm-up, counted calls)


class Runner:
    """Runs the child (bench/instr_child.py) on segments of kinds, under callgrind or not."""

    def __init__(
        self, work: Path, env: dict[str, str], groups: dict[str, Group], *, threads: bool = False
    ):
        self.work, self.env, self.groups = work, env, groups
        self.threads = threads  # count each thread apart (one segment per child)
        self.by_thread: dict[str, dict[str, int]] = {}  # kind → thread role → instructions
        self.probe = work / "instr_probe.so"
        (work / "instr_probe.c").write_text(PROBE_C)
        subprocess.run(
            ["gcc", "-O1", "-shared", "-fPIC", "-o", str(self.probe), str(work / "instr_probe.c")],
            check=True,
        )
        self.runs = 0

    def run(
        self, segments: list[Segment], *, group: str, counted: bool = True
    ) -> list[tuple[int, list[tuple[int, str]]]]:
        """``(instructions counted, answers)`` of each segment, all served by one child."""
        self.runs += 1
        spec, out = self.work / f"spec{self.runs}.json", self.work / f"out{self.runs}.json"
        spec.write_text(json.dumps([{"warmup": w, "measured": m} for _, w, m in segments]))
        cg_out = self.work / f"callgrind{self.runs}.out"
        python, group_env = self.groups[group]
        env = {**self.env, **group_env}
        command = [
            str(python),
            "-c",
            "from bench.instr_child import run; run()",
            str(spec),
            str(out),
        ]
        per_thread = counted and self.threads
        if per_thread:
            assert len(segments) == 1, "callgrind dumps a thread's counts apart only at its end"
            env["INSTR_THREADS"] = "1"
        if counted:
            env["INSTR_PROBE"] = str(self.probe)
            command = [
                "valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={cg_out}", "--dump-line=no",
                *(["--separate-threads=yes"] if per_thread else []), *command,
            ]  # fmt: skip
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        kinds = [kind for kind, _, _ in segments]
        if done.returncode != 0:
            raise RuntimeError(
                f"{kinds}: the child exited {done.returncode}:\n{done.stderr[-3000:]}"
            )
        results = []
        for number, ((kind, _, _), answers) in enumerate(
            zip(segments, json.loads(out.read_text()), strict=True), start=1
        ):
            bad = [answer for answer in answers if not _answer_ok(kind, *answer)]
            if bad:
                raise RuntimeError(f"{kind}: {len(bad)} of {len(answers)} calls failed: {bad[0]}")
            if per_thread:
                events = json.loads(Path(f"{out}.threads").read_text())
                counts = _by_thread(cg_out, events)
                mine = self.by_thread.setdefault(kind, {})
                for role, counted_here in counts.items():
                    mine[role] = mine.get(role, 0) + counted_here
                count = sum(counts.values())
            else:
                # Each segment's stop dumps its counts: callgrind numbers the files from 1.
                count = _instructions(Path(f"{cg_out}.{number}")) if counted else 0
            results.append((count, [(status, text) for status, text in answers]))
        return results


def _instructions(path: Path) -> int:
    """The ``Ir`` total of a callgrind output file (its ``totals:`` line)."""
    found = re.search(r"^totals:\s+(\d+)", path.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction total in {path}")
    return int(found.group(1))


# The threads of a call, by name (``--threads``): what each does for it.
THREAD_ROLES: Final = (
    ("MainThread", "event loop"),  # the ASGI handler, an async view (/mcp), its envelope
    ("request", "request thread"),  # the middleware chain; a REST view (serving.asgi)
    ("mcp-tool", "tool worker"),  # a sync tool (execution.bounds)
    # asgiref's thread-sensitive executor: Django's request_started/finished signals under
    # serving.asgi; the whole request under Django's stock handler (django-mcpz).
    ("ThreadPoolExecutor", "asgiref thread"),
    ("mcp-audit-writer", "audit writer"),  # the call record (observability.audit)
)


def _role(name: str) -> str:
    return next((role for prefix, role in THREAD_ROLES if name.startswith(prefix)), name)


def _by_thread(cg_out: Path, events: list[list[str]]) -> dict[str, int]:
    """Instructions by thread role, from callgrind's per-thread files (``-NN``, NN its number
    for a thread: the lowest no running thread holds when it starts, replayed from ``events``).

    The main thread's counts are dumped when the segment stops, the others' when the process
    ends; instrumentation is off outside the segment, so each file holds only the segment's.
    A number that passed from an ended thread to a new one is named after the new one: the
    threads that end (the start-up checks' helper) end before the segment starts."""
    names: dict[int, str] = {}
    running: dict[str, list[int]] = {}
    for event, name in events:
        if event == "start":
            taken = {number for numbers in running.values() for number in numbers}
            number = next(n for n in range(1, len(events) + 2) if n not in taken)
            running.setdefault(name, []).append(number)
            names[number] = name  # a number's last holder: the one counted (see the docstring)
        elif running.get(name):
            running[name].pop(0)
    counts: dict[str, int] = {}
    for path in cg_out.parent.glob(f"{cg_out.name}*-*"):
        number = int(path.name.rsplit("-", 1)[1])
        role = _role(names.get(number, f"thread {number}"))
        counts[role] = counts.get(role, 0) + _instructions(path)
    return counts


def segment(ctx: Context, kind: str, calls: int, warmup: int) -> Segment:
    """``warmup`` uncounted calls of ``kind``, then ``calls`` counted ones, signed."""
    build = KINDS[kind].build
    token = ctx.tokens[KINDS[kind].group]

    def signed(i: int) -> Request:
        method, path, headers, body = build(ctx, i)
        return method, path, [["Authorization", f"Bearer {token}"], *headers], body

    return kind, [signed(i) for i in range(warmup)], [signed(warmup + i) for i in range(calls)]


def measure(
    runner: Runner, ctx: Context, kinds: list[str], calls: int, warmup: int
) -> dict[str, float]:
    """Instructions per call of each kind: one child per group (project) of kinds."""
    figures: dict[str, float] = {}
    for group in GROUPS:
        mine = [kind for kind in kinds if KINDS[kind].group == group]
        if mine:
            segments = [segment(ctx, kind, calls, warmup) for kind in mine]
            # Per thread, a child per kind: callgrind dumps threads but the main one at exit.
            runs = [[one] for one in segments] if runner.threads else [segments]
            counted = [result for run in runs for result in runner.run(run, group=group)]
            for kind, (count, _) in zip(mine, counted, strict=True):
                figures[kind] = count / calls
    return figures


def environment() -> dict[str, str]:
    """What the count depends on beside the code: the interpreter and the stack's versions."""
    names = ("Django", "mcp", "pydantic", "pydantic-core", "djangorestframework", "psycopg")
    return {
        "python": platform.python_version(),
        **{name: metadata.version(name) for name in names},
    }


def farm_day() -> str:
    """A month back: inside the farm's late-entry grace, outside the demo's submitted days."""
    return (dt.datetime.now(ZoneInfo(FARM_TIME_ZONE)).date() - dt.timedelta(days=30)).isoformat()


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def _flock(runner: Runner, token_ctx: Context) -> int:
    auth = [["Authorization", f"Bearer {token_ctx.tokens['cluck']}"]]
    request: Request = ("GET", "/api/v1/flocks/?status=Active", auth, "")
    [(_, answers)] = runner.run([("farm-list rest", [], [request])], group="cluck", counted=False)
    flocks = json.loads(answers[0][1])["items"]
    return int(next(f for f in flocks if f["name"] == "House 1 White")["id"])


def _peer(stack: ExitStack, database_url: str) -> tuple[Path, dict[str, str], str]:
    """django-mcpz's venv python, its environment and a bearer token on its seeded database."""
    python = venvs.ensure(PEER)
    module = PEER.replace("-", "_")
    _ensure_database(database_url, f"peer_{module}")
    env = {
        "DATABASE_URL": _with_database(database_url, f"peer_{module}"),
        "DJANGO_SETTINGS_MODULE": f"bench.peers.{module}.settings",
    }
    done = subprocess.run(
        [str(python), "-m", "bench.peers.project.seed"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return python, env, done.stdout.split()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="counted calls per kind and run")
    parser.add_argument("--warmup", type=int, default=30, help="uncounted calls before them")
    parser.add_argument("--repeat", type=int, default=2, help="runs per kind (the spread)")
    parser.add_argument("--no-peers", action="store_true", help="skip django-mcpz")
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), help="only these kinds")
    parser.add_argument(
        "--record-baseline", action="store_true", help=f"write {BASELINE.name} from this run"
    )
    parser.add_argument(
        "--threads",
        action="store_true",
        help="also split each kind's count by thread (event loop, request thread, tool worker…)",
    )
    add_smoke_option(parser)
    options = parser.parse_args()
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    kinds = options.kinds or list(KINDS)
    if options.smoke:
        if baseline is None:
            sys.exit(f"no baseline: record one with {Path(__file__).name} --record-baseline")
        # Up to three runs, gated on the lowest: a loaded machine only adds instructions (work
        # tied to wall time, which callgrind stretches), while a real regression raises every run.
        kinds, options.repeat = list(GATED), SMOKE_RUNS
        options.calls, options.warmup = baseline["calls"], baseline["warmup"]
    if options.no_peers:
        kinds = [kind for kind in kinds if KINDS[kind].group != "mcpz"]
    figures: dict[str, list[float]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="perf_instr_bench_") as tmp, ExitStack() as stack:
        work = Path(tmp)
        database_url = stack.enter_context(embedded_database(work))
        os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
        env, token = seed_demo(database_url, "instr")
        env = {**env, **RATES, "DJANGO_SETTINGS_MODULE": SETTINGS, "PYTHONHASHSEED": "0"}
        env["INSTR_STEADY"] = "1"  # bench/steady.py
        env["MCP_BENCH_EXTRA_TOOLS"] = "10"  # bench/mcp_bench.py's server for tools/list
        env["PYTHONPATH"] = str(ROOT)
        groups: dict[str, Group] = {
            "cluck": (Path(sys.executable), {"INSTR_APP": "cluck.asgi:application"})
        }
        tokens = {"cluck": token}
        if any(KINDS[kind].group == "shop" for kind in kinds):
            _ensure_database(database_url, "shop")
            shop_vars = shop_env(_with_database(database_url, "shop"))
            tokens["shop"] = seed_shop(shop_vars["DATABASE_URL"])
            groups["shop"] = (
                Path(sys.executable),
                {**shop_vars, "INSTR_APP": "shop.asgi:application"},
            )
        if any(KINDS[kind].group == "mcpz" for kind in kinds):
            python, peer_env, tokens["mcpz"] = _peer(stack, database_url)
            app = "bench.peers.project.asgi:application"
            groups["mcpz"] = (python, {**peer_env, "INSTR_APP": app})
        print(f"seeded ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        runner = Runner(work, env, groups, threads=options.threads)
        ctx = Context(tokens, 0, farm_day(), "")
        ctx = Context(tokens, _flock(runner, ctx), farm_day(), "")
        for repeat in range(options.repeat):
            run_ctx = Context(ctx.tokens, ctx.flock, ctx.day, secrets.token_hex(4))
            measured = measure(runner, run_ctx, kinds, options.calls, options.warmup)
            for kind, figure in measured.items():
                figures.setdefault(kind, []).append(figure)
            print(
                f"run {repeat + 1} ({time.monotonic() - started:.0f} s): "
                + ", ".join(f"{kind} {figure:,.0f}" for kind, figure in measured.items()),
                file=sys.stderr,
            )
            if options.smoke and baseline is not None and within(figures, baseline):
                break
    report(figures, options.calls, options.warmup)
    if options.threads:
        report_threads(runner.by_thread, options.calls * options.repeat)
    if options.record_baseline:
        record(figures, options.calls, options.warmup)
    if options.smoke:
        assert baseline is not None
        gate(figures, baseline)
        smoke_done()


def report_threads(by_thread: dict[str, dict[str, int]], calls: int) -> None:
    """Each kind's instructions per call by thread role (millions), and an MCP kind's
    difference from its REST twin: where the two doors' costs part."""
    # Threads that counted nothing (a connection pool's idle workers) are left out.
    seen = {role for counts in by_thread.values() for role, count in counts.items() if count}
    roles = [role for _, role in THREAD_ROLES if role in seen] + sorted(
        seen - {role for _, role in THREAD_ROLES}
    )
    print("\nby thread, millions of instructions per call (sum of all runs / calls)")
    columns = [(role, max(len(role), 10) + 2) for role in roles]
    heads = "".join(f"{role:>{width}}" for role, width in columns)
    print(f"{'kind':<24}{heads}{'total':>10}")

    def row(label: str, values: dict[str, float]) -> None:
        cells = "".join(f"{values.get(role, 0.0):>{width}.3f}" for role, width in columns)
        print(f"{label:<24}{cells}{sum(values.values()):>10.3f}")

    per_call = {
        kind: {role: count / calls / 1e6 for role, count in counts.items()}
        for kind, counts in by_thread.items()
    }
    for kind, values in per_call.items():
        row(kind, values)
        twin = KINDS[kind].twin
        if twin is not None and twin in per_call:
            rest = per_call[twin]
            apart = {role: values.get(role, 0.0) - rest.get(role, 0.0) for role in roles}
            row(f"  minus {twin}", apart)


def report(figures: dict[str, list[float]], calls: int, warmup: int) -> None:
    runs = max(len(values) for values in figures.values())
    print(
        f"instructions per call (callgrind Ir, in process, PYTHONHASHSEED=0): {calls} counted "
        f"calls per run after {warmup} uncounted, {runs} run(s) per kind; median of the runs, "
        "spread = (max - min) / median"
    )
    floor = statistics.median(figures["bare+rate"]) if "bare+rate" in figures else None
    print(f"{'kind':<18}{'instr/call':>12}{'spread':>9}{'vs bare+rate':>14}{'vs REST twin':>14}")
    for kind, values in figures.items():
        median = statistics.median(values)
        spread = (max(values) - min(values)) / median
        vs_floor = f"{median / floor:.3f}" if floor else "-"
        twin = KINDS[kind].twin
        vs_twin = "-"
        if twin is not None and twin in figures and twin != "bare+rate":
            vs_twin = f"{median / statistics.median(figures[twin]):.3f}"
        print(f"{kind:<18}{median:>12,.0f}{spread:>8.2%}{vs_floor:>14}{vs_twin:>14}")
    for era in ("2025", "2026"):
        ours, peer = f"mcp-{era}", f"mcpz-{era}"
        if ours in figures and peer in figures:
            ratio = statistics.median(figures[ours]) / statistics.median(figures[peer])
            print(f"/mcp {era} vs django-mcpz {era}: {ratio:.3f}x the instructions per call")


def record(figures: dict[str, list[float]], calls: int, warmup: int) -> None:
    data = {
        "commit": _commit(),
        "calls": calls,
        "warmup": warmup,
        "environment": environment(),
        "kinds": {kind: round(statistics.median(values)) for kind, values in figures.items()},
    }
    BASELINE.write_text(json.dumps(data, indent=2) + "\n")
    print(f"baseline written: {BASELINE.relative_to(ROOT)}")


def within(figures: dict[str, list[float]], baseline: dict[str, Any]) -> bool:
    """Every gated kind's lowest count so far is within the tolerance of the baseline."""
    return all(min(figures[kind]) <= baseline["kinds"][kind] * TOLERANCE for kind in GATED)


def gate(figures: dict[str, list[float]], baseline: dict[str, Any]) -> None:
    """Exit 1 when a gated kind's instructions per call grew past the tolerance in every run."""
    grown = []
    for kind in GATED:
        now, then = min(figures[kind]), baseline["kinds"][kind]
        print(
            f"gate {kind}: {now:,.0f} instructions per call, baseline {then:,} ({now / then:.3f}x)"
        )
        if now > then * TOLERANCE:
            grown.append(f"{kind} {now / then - 1:+.1%} ({then:,} -> {now:,.0f})")
    if grown:
        here = environment()
        differs = {
            k: (v, here.get(k)) for k, v in baseline["environment"].items() if here.get(k) != v
        }
        sys.exit(
            f"FAILED: /mcp instructions per call grew more than {TOLERANCE - 1:.0%} over "
            f"{BASELINE.relative_to(ROOT)} (commit {baseline['commit'][:12]}): {'; '.join(grown)}."
            + (f" The environment differs from the baseline's: {differs}." if differs else "")
            + " A change meant to cost this records a new baseline (--record-baseline) in the "
            "same commit, saying why."
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
