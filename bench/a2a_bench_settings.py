"""Bench-only settings for bench/a2a_bench.py: the real project plus the bench tools."""

from cluck.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "bench.mcp_bench_app"]  # noqa: F405
# The bench sends thousands of calls from one token; the limiter still runs on every request.
MCP_TOOLS_RATE = "10000000/m"
