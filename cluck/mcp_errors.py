"""How the farm's domain errors reach a model (``MCP_TOOLS_ERROR_TRANSLATOR``).

The stable code crosses deliberately (it is domain vocabulary); no HTTP status, JSON-RPC
envelope or ORM type does.
"""

from __future__ import annotations

from cluck.errors import CluckError, FieldError
from mcp_tools import ToolFailure


def translate_domain_error(exc: BaseException) -> ToolFailure | None:
    if isinstance(exc, FieldError):
        listed = "; ".join(f"{e['field']}: {e['message']} ({e['code']})" for e in exc.errors)
        return ToolFailure(
            code=exc.code, message=f"{exc.message} {listed}".strip(), data={"errors": exc.errors}
        )
    if isinstance(exc, CluckError):
        data = {key: value for key, value in exc.data.items() if not key.startswith("_")}
        return ToolFailure(code=exc.code, message=exc.message, data=data or None)
    return None
