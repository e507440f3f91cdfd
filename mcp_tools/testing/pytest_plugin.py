"""pytest plugin (entry point ``pytest11``): fixtures for testing a project's MCP tools.

Loaded automatically once the toolkit is installed (or with ``-p mcp_tools.testing.pytest_plugin``);
needs pytest-django. Fixtures:

- ``mcp_client_for``: ``mcp_client_for(user=…, tenant=…)`` (or ``membership=…``,
  ``token=…``; ``era=…``) → an ``mcp_tools.testing.client.MCPClient``. Asks for
  ``transactional_db``:
  tools run in worker threads with their own database connections.
- ``mcp_era``: each protocol era in turn (``"2025-11-25"``, ``"2026-07-28"``); a test that
  takes it runs once per era.

With the stored call audit on (``MCP_TOOLS_AUDIT``), the rows of the session's last calls are
written before the test database is torn down: the audit writer, left to its linger, would
open a connection after pytest-django closed the pool, and the database could not be dropped.

The assertions every project should pin are plain functions of ``mcp_tools.testing.client``:
``assert_tool_invisible``, ``assert_tenant_isolated``, ``assert_replays_once``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

# The plugin is imported when pytest starts, before pytest-django sets Django up: nothing
# here may import Django models at module level, so mcp_tools.testing.client is imported in the
# fixtures.
ERAS = ("2025-11-25", "2026-07-28")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    # The session's last test: the test database goes next. A session that never loaded the
    # audit has no writer (and may have no Django settings to load it with).
    audit = sys.modules.get("mcp_tools.observability.audit")
    if nextitem is None and audit is not None:
        audit.flush()


@pytest.fixture
def mcp_client_for(transactional_db: Any) -> Callable[..., Any]:
    """``mcp_client_for(user=…, tenant=…, era=…)`` → an in-process ``MCPClient``."""
    from mcp_tools.testing.client import MCPClient

    def make(**kwargs: Any) -> MCPClient:
        return MCPClient(**kwargs)

    return make


@pytest.fixture(params=ERAS)
def mcp_era(request: pytest.FixtureRequest) -> str:
    """Each protocol era in turn."""
    era: str = request.param
    return era
