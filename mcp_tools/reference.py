"""A Markdown tool reference generated from the registry (``manage.py mcp_tools_reference``).

Generated, never hand-edited: a project keeps the output in its docs and a test compares the
two, so the reference cannot go stale.
"""

from __future__ import annotations

from typing import Any

from mcp_tools.registry import Registry, ToolSpec, default_registry

HEADER = (
    "# MCP tool reference\n\n"
    "Generated from the tool registry by `python manage.py mcp_tools_reference`; do not edit "
    "by hand (a test fails when this file is stale).\n\n"
    "**Arguments** are checked strictly against each tool's `inputSchema` (the tables below): "
    'no value is coerced into another type (`true` is not 1, `"1"` is not 1), a date is a '
    "`YYYY-MM-DD` string, and no string may contain NUL (U+0000). Anything else is "
    "`Tool.InvalidArguments` with `data.errors: [{field, code, message}]`, and nothing runs.\n\n"
    "**Errors.** A tool error is a result with `isError: true` and exactly one text block whose "
    'text is the JSON object `{"error": {"code": "<stable code>", "message": "<what to do>", '
    '"data": {...}}}` (`data` only when there is more to say, e.g. the candidates of an '
    "ambiguous name, the invalid fields, a retry hint). Errors never carry `structuredContent`: "
    "that field always matches the tool's result schema below.\n"
)


def _type_of(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_type_of(option, defs) for option in schema["anyOf"])
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(schema.get('items', {}), defs)}"
    if kind == "string" and schema.get("format") == "date":
        return "string (date, `YYYY-MM-DD`)"
    if kind == "string" and schema.get("format"):
        return f"string ({schema['format']})"
    return str(kind)


def _bounds(schema: dict[str, Any]) -> str:
    parts = []
    for key, label in (
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("maxItems", "at most items:"),
    ):
        if key in schema:
            parts.append(f"{label} {schema[key]}")
    if "pattern" in schema and schema.get("format") != "date":
        parts.append(f"pattern `{schema['pattern']}`")
    for option in schema.get("anyOf", []):
        parts.extend(p for p in [_bounds(option)] if p)
    return ", ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fields_table(schema: dict[str, Any], *, with_default: bool) -> list[str]:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    rows = ["| name | type | required | notes |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        notes = [prop.get("description", "")]
        bounds = _bounds(prop)
        if bounds:
            notes.append(f"({bounds})")
        if with_default and "default" in prop and prop["default"] is not None:
            notes.append(f"default `{prop['default']}`")
        rows.append(
            f"| `{name}` | {_cell(_type_of(prop, defs))} | {'yes' if name in required else 'no'} "
            f"| {_cell(' '.join(n for n in notes if n))} |"
        )
    return rows


def _roles(spec: ToolSpec) -> str:
    return ", ".join(role.label for role in spec.policy.admitted())


def render_tool(spec: ToolSpec) -> str:
    lines = [f"## `{spec.name}`", ""]
    if spec.title:
        lines += [f"**{spec.title}** — {'read' if spec.read_only else 'write'} tool.", ""]
    kind = "read-only" if spec.read_only else "write (idempotent: requires `idempotencyKey`)"
    lines += [f"- kind: {kind}", f"- policy: `{spec.policy.name}` ({_roles(spec)})"]
    if spec.mirrors:
        lines.append("- mirrors route " + ", ".join(f"`{route}`" for route in spec.mirrors))
    elif spec.mirrors_no_route:  # mirrors= is optional: a tool may declare neither
        lines.append(f"- mirrors no route ({spec.mirrors_no_route})")
    lines += [
        "",
        _cell(spec.description),
        "",
        "Arguments:",
        "",
    ]
    if spec.input_schema.get("properties"):
        lines += _fields_table(spec.input_schema, with_default=True)
    else:
        lines.append("_none_")
    if spec.output_schema is not None:
        lines += ["", "Result (`structuredContent`):", ""]
        lines += _fields_table(spec.output_schema, with_default=False)
    lines += ["", "Errors (`error.code`):", "", "| code | when |", "|---|---|"]
    lines += [f"| `{code}` | {_cell(when)} |" for code, when in spec.error_codes()]
    return "\n".join(lines) + "\n"


def render_reference(registry: Registry | None = None, *, prefix: str = "") -> str:
    """The whole reference for every registered tool whose name starts with ``prefix``."""
    specs = [s for s in (registry or default_registry).specs() if s.name.startswith(prefix)]
    index = [f"- [`{s.name}`](#{s.name.replace('_', '').lower()})" for s in specs]
    body = "\n".join(render_tool(spec) for spec in specs)
    return f"{HEADER}\n" + "\n".join(index) + "\n\n" + body
