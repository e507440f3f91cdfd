"""A Markdown tool reference generated from the registry (``manage.py mcp_tools_reference``).

Generated, never hand-edited: a project keeps the output in its docs and a test compares the
two, so the reference cannot go stale.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_tools.authoring.factories import FactoryRegistry, ToolFactorySpec, default_factories
from mcp_tools.authoring.prompts import PromptRegistry, PromptSpec, default_prompts
from mcp_tools.authoring.registry import Registry, default_registry
from mcp_tools.authoring.resources import (
    ResourceRegistry,
    ResourceSpec,
    ResourceTemplateSpec,
    default_resources,
)
from mcp_tools.authoring.spec import ToolSpec

HEADER = (
    "# MCP tool, resource and prompt reference\n\n"
    "Generated from the registries by `python manage.py mcp_tools_reference`; do not edit "
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


def _roles(spec: Any) -> str:
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
    if spec.task_support != "forbidden":
        lines.append(
            f"- tasks: {spec.task_support} (runs as a task when the client negotiates tasks)"
        )
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


def render_factory(spec: ToolFactorySpec) -> str:
    lines = [f"## `{spec.name}`", ""]
    if spec.title:
        lines += [f"**{spec.title}** — {'read' if spec.read_only else 'write'} tool.", ""]
    lines += [
        "- kind: " + ("read-only" if spec.read_only else "write"),
        f"- policy: `{spec.policy.name}` ({_roles(spec)})",
    ]
    if spec.mirrors:
        lines.append("- mirrors route " + ", ".join(f"`{route}`" for route in spec.mirrors))
    elif spec.mirrors_no_route:
        lines.append(f"- mirrors no route ({spec.mirrors_no_route})")
    lines += [
        "- definition: built for each request from the caller's own data (an identity "
        "factory): its arguments are listed by `tools/list`, not here",
        "",
        _cell(spec.description),
        "",
        "Result (`structuredContent`):",
        "",
    ]
    lines += _fields_table(spec.result.model_json_schema(by_alias=True), with_default=False)
    return "\n".join(lines) + "\n"


def render_resource(spec: ResourceSpec | ResourceTemplateSpec) -> str:
    is_template = isinstance(spec, ResourceTemplateSpec)
    address = spec.uri_template if is_template else spec.uri  # type: ignore[union-attr]
    lines = [f"## `{spec.name}`", ""]
    if spec.title:
        lines += [f"**{spec.title}** — {'resource template' if is_template else 'resource'}.", ""]
    lines += [
        f"- {'URI template (RFC 6570)' if is_template else 'URI'}: `{address}`",
        f"- MIME type: `{spec.mime_type or 'text/plain'}`",
        f"- policy: `{spec.policy.name}` ({_roles(spec)})",
    ]
    if is_template and spec.completers:  # type: ignore[union-attr]
        names = ", ".join(f"`{n}`" for n in spec.completers)  # type: ignore[union-attr]
        lines.append(f"- completions: {names}")
    lines += ["", _cell(spec.description)]
    return "\n".join(lines) + "\n"


def render_prompt(spec: PromptSpec) -> str:
    lines = [f"## `{spec.name}`", ""]
    if spec.title:
        lines += [f"**{spec.title}** — prompt.", ""]
    lines += [f"- policy: `{spec.policy.name}` ({_roles(spec)})"]
    if spec.completers:
        lines.append("- completions: " + ", ".join(f"`{n}`" for n in spec.completers))
    lines += ["", _cell(spec.description), "", "Arguments (strings):", ""]
    if spec.arguments:
        lines += ["| name | required | notes |", "|---|---|---|"]
        lines += [
            f"| `{a.name}` | {'yes' if a.required else 'no'} | {_cell(a.description or '')} |"
            for a in spec.arguments
        ]
    else:
        lines.append("_none_")
    return "\n".join(lines) + "\n"


def _anchor(name: str) -> str:
    """The anchor of the heading ``## `name` `` as GitHub and MkDocs (Python-Markdown's toc)
    both make it: lower case, every character but word characters and ``-`` dropped."""
    return re.sub(r"[^\w-]", "", name.lower())


def render_reference(
    registry: Registry | None = None,
    *,
    prefix: str = "",
    resources: ResourceRegistry | None = None,
    prompts: PromptRegistry | None = None,
    factories: FactoryRegistry | None = None,
) -> str:
    """The whole reference for every registered tool, identity factory, resource, resource
    template and prompt whose name starts with ``prefix``."""
    # "is None", not "or": a registry of one's own that is still empty is falsy (its length).
    tools_in = default_registry if registry is None else registry
    specs = [s for s in tools_in.specs() if s.name.startswith(prefix)]
    made_by = default_factories if factories is None else factories
    made = [f for f in made_by.specs() if f.name.startswith(prefix)]
    registered = default_resources if resources is None else resources
    readable: list[ResourceSpec | ResourceTemplateSpec] = [
        r for r in registered.resources() if r.name.startswith(prefix)
    ]
    readable += [t for t in registered.templates() if t.name.startswith(prefix)]
    offered_by = default_prompts if prompts is None else prompts
    offered = [p for p in offered_by.specs() if p.name.startswith(prefix)]
    tools: list[ToolSpec | ToolFactorySpec] = sorted([*specs, *made], key=lambda t: t.name)
    sections = ["# Tools", ""]
    sections += [f"- [`{t.name}`](#{_anchor(t.name)})" for t in tools]
    sections += [""]
    sections += [render_tool(t) if isinstance(t, ToolSpec) else render_factory(t) for t in tools]
    if readable:
        sections += ["# Resources", ""]
        sections += [f"- [`{r.name}`](#{_anchor(r.name)})" for r in readable]
        sections += [""] + [render_resource(r) for r in readable]
    if offered:
        sections += ["# Prompts", ""]
        sections += [f"- [`{p.name}`](#{_anchor(p.name)})" for p in offered]
        sections += [""] + [render_prompt(p) for p in offered]
    return f"{HEADER}\n" + "\n".join(sections)
