"""Tool arguments: validated strictly against the published ``inputSchema``.

Strings that cannot be stored (NUL, lone surrogates) are refused first, for every tool, before
any tool code runs; prompts, completions and resource URIs use the same rule.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.codes import CODE_INVALID_ARGUMENTS
from mcp_tools.execution.results import error_result
from mcp_tools.rpc import jsonrpc as _jsonrpc


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
    text = _plain_json(arguments)
    if text is None:
        wire, unstorable = _jsonrpc.as_wire_json(arguments)
        if unstorable:
            return _invalid(unstorable)
        text = _jsonrpc.dumps(wire)
    try:
        return spec.args_model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        return _invalid(_summarise(exc))


def _plain_json(arguments: dict[str, Any]) -> bytes | None:
    """The arguments' JSON when it cannot hold what ``as_wire_json`` changes or refuses, else
    ``None``: most calls skip that walk.

    A NUL is written ``\\u0000``, a lone surrogate cannot be encoded, and a number with no
    fractional part that arrived as a float (``1.0``, ``1e3``) is written ``1.0`` or
    ``1e+16``: text without any of these (a string holding one only costs the walk) is
    what the walk would have produced.
    """
    try:
        text = _jsonrpc.dumps(arguments)
    except UnicodeEncodeError:
        return None
    if b"\\u0000" in text or b".0" in text or b"e+" in text:
        return None
    return text
