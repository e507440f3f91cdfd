"""Bench-only settings for the shop with its REST API (tests/shop, ``storefront.settings``),
``tests/shop`` on ``PYTHONPATH``: the bench sends thousands of calls a minute from one token,
so both budgets are raised (the rate count still runs on every request)."""

from storefront.settings import *  # noqa: F403

TENANCY_API_RATE = "100000000/m"
MCP_TOOLS_RATE = "100000000/m"

# bench/instr_bench.py: time-driven work out of the instruction count (bench/steady.py).
from bench.steady import steady  # noqa: E402

globals().update(steady(("MCP_TOOLS_RATE", "TENANCY_API_RATE")))
