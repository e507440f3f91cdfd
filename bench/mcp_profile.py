"""Profile (not a test): what ``/mcp`` does beyond ``bare+rate``, in CPU time per request.

    .venv/bin/python bench/mcp_profile.py [--requests 1000] [--kinds bare+rate mcp-2025 mcp-2026]
                                          [--loop-only] [--keep DIR]

Starts the bench's embedded PostgreSQL, then for each kind one uvicorn worker
(``bench.mcp_bench_settings``) under ``yappi`` with its CPU clock on every thread
(``MCP_BENCH_PROFILE``): a warm-up, the profiler reset, ``--requests`` sequential
``tools/call``s, then the profile written. CPU clocks count only the time
a thread really ran, so the figures hold on a busy machine where wall-clock samples would
not. It prints each kind's profiled CPU per request, then for each kind against the first
what it spends beyond it: by package (self time, which adds up to the difference) and by
function (inclusive time, so nested entries overlap).

Needs ``yappi`` (``pip install yappi``).
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import sys
import tempfile
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    migrate_and_seed,
    smoke_done,
    uvicorn_server,
)
from bench.mcp_bench import call_for, check  # noqa: E402


def _package(file: str) -> str:
    parts = Path(file).with_suffix("").parts
    for marker in ("site-packages", "lib"):
        if marker in parts:
            parts = parts[len(parts) - parts[::-1].index(marker) :]
            break
    else:
        if str(ROOT) in file:
            parts = Path(file).relative_to(ROOT).with_suffix("").parts
    return parts[0] if parts else file


def read_profile(path: Path) -> tuple[float, Counter[str], Counter[str]]:
    """(total self seconds, inclusive seconds by function, self seconds by package)."""
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    total = 0.0
    functions: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for (file, line, name), (_, _, self_time, inclusive, _) in stats.items():
        total += self_time
        functions[f"{name} ({Path(file).name}:{line})"] += inclusive
        packages[_package(file)] += self_time
    return total, functions, packages


async def _drive(url: str, bearer: str, kind: str, n: int) -> None:
    auth = {"Authorization": f"Bearer {bearer}"}
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=30) as http:
        for i in range(200):  # warm-up: connections, prepared statements, caches
            path, body, headers = call_for(kind, i)
            check(kind, i, await http.post(path, json=body, headers=headers))
        assert (await http.post("/bench/profile/reset")).status_code == 204
        for i in range(n):
            path, body, headers = call_for(kind, i)
            check(kind, i, await http.post(path, json=body, headers=headers))
        assert (await http.post("/bench/profile/save")).status_code == 204


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--kinds", nargs="+", default=["bare+rate", "mcp-2025", "mcp-2026"])
    parser.add_argument("--keep", type=Path, help="keep the .pstat files in this folder")
    parser.add_argument(
        "--loop-only", action="store_true", help="profile only the event loop's thread"
    )
    add_smoke_option(parser)
    options = parser.parse_args()
    if options.smoke:
        # Two kinds: the comparison's every step, one server (a yappi start-up) fewer.
        options.requests, options.top, options.kinds = 3, 3, ["bare+rate", "mcp-2026"]
    n = options.requests
    results = {}
    with tempfile.TemporaryDirectory(prefix="perf_profile_") as tmp:
        folder = options.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        with embedded_database(Path(tmp)) as database_url:
            bearer = migrate_and_seed(database_url, "bench.mcp_bench_settings")
            for kind in options.kinds:
                out = folder / f"{kind}.pstat"
                env = {
                    "DATABASE_URL": database_url,
                    "DJANGO_SETTINGS_MODULE": "bench.mcp_bench_settings",
                    "MCP_BENCH_PROFILE": str(out),
                    "MCP_BENCH_PROFILE_LOOP": "1" if options.loop_only else "",
                }
                with uvicorn_server(env) as url:
                    asyncio.run(_drive(url, bearer, kind, n))
                results[kind] = read_profile(out)
    base_kind = options.kinds[0]
    base_total, base_functions, base_packages = results[base_kind]
    threads = "the event loop's thread" if options.loop_only else "all threads"
    print(f"profiled CPU per request (yappi, CPU clock, {threads}; {n} sequential requests)")
    for kind, (total, _, _) in results.items():
        print(f"  {kind:<12}{total / n * 1e6:8.0f} µs  ({total / base_total:.2f}x {base_kind})")
    for kind in options.kinds[1:]:
        total, functions, packages = results[kind]
        print(f"\n{kind} beyond {base_kind}: {(total - base_total) / n * 1e6:+.0f} µs/request")
        print("  by package (self time):")
        grown = {p: (packages[p] - base_packages.get(p, 0)) / n for p in packages | base_packages}
        for package, extra in sorted(grown.items(), key=lambda kv: -abs(kv[1]))[:14]:
            print(f"    {extra * 1e6:+7.0f} µs  {package}")
        print("  by function (inclusive):")
        grown = {f: (functions[f] - base_functions.get(f, 0)) / n for f in functions}
        for function, extra in sorted(grown.items(), key=lambda kv: -kv[1])[: options.top]:
            print(f"    {extra * 1e6:+7.0f} µs  {function}")
    if options.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
