"""Reading a tool error back out of a ``CallToolResult``, as a client would."""

from __future__ import annotations

import json
from typing import Any


def tool_error(result: dict[str, Any]) -> dict[str, Any]:
    """The ``{"code", "message", "data"?}`` object of an ``isError`` result.

    Errors travel only in the text block (never ``structuredContent``, which must match the
    tool's ``outputSchema``), so this parses exactly what a model or a client reads.
    """
    assert result["isError"] is True, result
    assert "structuredContent" not in result, result
    (block,) = result["content"]
    assert block["type"] == "text", result
    error: dict[str, Any] = json.loads(block["text"])["error"]
    return error
