"""Bench-only settings: the real project plus the bench tools and comparison views."""

import os

from cluck.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "django_stateless_mcp", "bench.mcp_bench_app"]  # noqa: F405
ROOT_URLCONF = "bench.mcp_bench_urls"
# The bench sends thousands of calls from one token; the limiter still runs on every request.
MCP_TOOLS_RATE = "10000000/m"
# The peers and the bare views have no row-level security, and bench_add is measured on the
# event loop, where only a call without it runs: this bench compares the call path with it off
# (CLUCK_RLS=1 to see it on). bench/rls_bench.py measures what turning it on costs.
TENANCY_RLS = os.environ.get("CLUCK_RLS", "0") == "1"

if os.environ.get("MCP_BENCH_RATE_CACHE") == "locmem":
    # Isolates what the shared (database) rate-limit counter costs per request.
    CACHES = {**CACHES, "ratelimit": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}  # noqa: F405
    RATELIMIT_USE_CACHE = "ratelimit"

if os.environ.get("MCP_BENCH_PROFILE"):
    # bench/mcp_profile.py: a CPU-clock profile of every thread of this worker, reset after
    # the warm-up and written on request (bench/mcp_bench_urls.py, /bench/profile/*).
    import yappi

    yappi.set_clock_type("cpu")
    yappi.start(builtins=False, profile_threads=True)

# bench/instr_bench.py: time-driven work out of the instruction count (bench/steady.py).
from bench.steady import steady  # noqa: E402

globals().update(steady(("MCP_TOOLS_RATE", "TENANCY_API_RATE")))
