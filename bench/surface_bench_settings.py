"""Bench-only settings for ``bench/surface_bench.py``: the real project plus its bench tools."""

from cluck.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "bench.surface_bench_app"]  # noqa: F405
# Thousands of calls from one token; the limiter still runs on every request.
MCP_TOOLS_RATE = "10000000/m"
