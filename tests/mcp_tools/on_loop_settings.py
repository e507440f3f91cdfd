"""The farm with one concurrency slot, no wait for one, and a short deadline
(tests/mcp_tools/test_tools_on_the_loop.py)."""

from cluck.settings import *  # noqa: F403

MCP_TOOLS_MAX_CONCURRENT_CALLS = 1
MCP_TOOLS_SLOT_WAIT_SECONDS = 0
MCP_TOOLS_CALL_TIMEOUT_SECONDS = 4.0
