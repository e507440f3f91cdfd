"""The 2026-07-28 era's envelope: every result of that revision carries ``resultType`` and the
server info in ``_meta``; a list result also says how long it may be cached and by whom.

One function for the prepared pages (``mcp_tools.catalogue``), ``server/discover`` and every
reply of the modern era (``mcp_tools.eras.modern``). Imports nothing of ``mcp_tools``: the
catalogue, below the eras, prepares its pages with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_types import SERVER_INFO_META_KEY

# Lists vary by authorization: never shared between callers, stale at once (role changes).
LIST_TTL_MS: Final = 0
CACHE_SCOPE: Final = "private"


def modern_envelope(result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result: ``resultType`` and the server info in ``_meta`` (the one envelope:
    prepared pages, ``server/discover`` and every reply of the modern era)."""
    meta = {**result.get("_meta", {}), SERVER_INFO_META_KEY: dict(server_info)}
    return {**result, "resultType": result.get("resultType", "complete"), "_meta": meta}
