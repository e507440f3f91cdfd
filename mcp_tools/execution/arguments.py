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


def _as_wire_json(value: Any, path: tuple[str, ...] = ()) -> tuple[Any, list[dict[str, str]]]:
    """The arguments as the JSON Schema sees them, and every string that cannot be stored.

    A number with no fractional part (``1.0``) is the integer it equals (JSON Schema's
    ``integer`` admits it), so it becomes ``1``; strings (object keys included) holding NUL or
    a lone surrogate are reported — neither survives the trip into a database (PostgreSQL
    text refuses both) or out as UTF-8, so they are refused at the boundary, for every tool,
    before any tool code runs.
    """
    problems: list[dict[str, str]] = []

    def walk(node: Any, where: tuple[str, ...]) -> Any:
        if isinstance(node, str):
            field = ".".join(where) or "(arguments)"
            if "\x00" in node:
                problems.append(
                    {
                        "field": field,
                        "code": "string_contains_nul",
                        "message": "Text may not contain the NUL character (U+0000).",
                    }
                )
            elif not _is_utf8(node):
                problems.append(
                    {
                        "field": field,
                        "code": "string_not_unicode",
                        "message": "Text must be valid Unicode (no lone surrogates).",
                    }
                )
            return node
        if isinstance(node, float) and node.is_integer():
            return int(node)
        if isinstance(node, dict):
            copied = {}
            for key, child in node.items():
                walk(key, where)
                copied[key] = walk(child, (*where, str(key)))
            return copied
        if isinstance(node, list):
            return [walk(child, (*where, str(index))) for index, child in enumerate(node)]
        return node

    # The envelope parser bounds the depth (MCP_TOOLS_MAX_JSON_DEPTH), so recursion is safe.
    normalized = walk(value, path)
    return normalized, sorted(problems, key=lambda problem: problem["field"])


def unstorable_strings(value: Any) -> list[dict[str, str]]:
    """Every string in ``value`` (object keys included) holding NUL or a lone surrogate, as
    ``{field, code, message}``: what tools refuse as ``Tool.InvalidArguments``, and prompts,
    completions and resource URIs refuse as -32602, before any application code runs."""
    return _as_wire_json(value)[1]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    wire, unstorable = _as_wire_json(arguments)
    if unstorable:
        return _invalid(unstorable)
    try:
        return spec.args_model.model_validate_json(_jsonrpc.dumps(wire), strict=True)
    except ValidationError as exc:
        return _invalid(_summarise(exc))
