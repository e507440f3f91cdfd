"""Tool arguments: validated strictly against the published ``inputSchema``.

Strings that cannot be stored (NUL, lone surrogates) are refused first, for every tool, before
any tool code runs; prompts, completions and resource URIs use the same rule.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_tools import _jsonrpc
from mcp_tools.codes import CODE_INVALID_ARGUMENTS
from mcp_tools.execution.results import error_result
from mcp_tools.registry import ToolSpec


def _summarise(exc: ValidationError) -> list[dict[str, str]]:
    summary = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        summary.append({"field": location, "code": error["type"], "message": error["msg"]})
    return summary


def _invalid(errors: list[dict[str, str]]) -> dict[str, Any]:
    listed = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return error_result(CODE_INVALID_ARGUMENTS, f"Invalid arguments: {listed}", {"errors": errors})


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> BaseModel | dict[str, Any]:
    """The validated argument model, or an ``isError`` result describing what is wrong.

    Strict: what the published ``inputSchema`` says is what is accepted. The arguments are
    validated as the JSON they arrived as, in pydantic's strict mode: no coercion (``true`` is
    not 1, ``"1"`` is not 1, ``0`` is not a date) and a date is a ``YYYY-MM-DD`` string only
    (JSON has no date type). Strings holding NUL or lone surrogates are refused first.
    """
    wire, unstorable = _jsonrpc.as_wire_json(arguments)
    if unstorable:
        return _invalid(unstorable)
    try:
        return spec.args_model.model_validate_json(_jsonrpc.dumps(wire), strict=True)
    except ValidationError as exc:
        return _invalid(_summarise(exc))
