"""Bench-only settings: the real project plus the bench tools and comparison views."""

import os

from cluck.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "django_stateless_mcp", "bench.mcp_bench_app"]  # noqa: F405
ROOT_URLCONF = "bench.mcp_bench_urls"
# The bench sends thousands of calls from one token; the limiter still runs on every request.
MCP_TOOLS_RATE = "10000000/m"

if os.environ.get("MCP_BENCH_RATE_CACHE") == "locmem":
    # Isolates what the shared (database) rate-limit counter costs per request.
    CACHES = {**CACHES, "ratelimit": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}  # noqa: F405
    RATELIMIT_USE_CACHE = "ratelimit"
