"""Reading a tool's published ``inputSchema``: where its strings are, a minimal valid instance,
and whether the framework generated it (a tool may hand-write its own, like the conformance
fixture ``json_schema_2020_12_tool``)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel

from mcp_tools.authoring.spec import ToolSpec

Path = tuple[str | int, ...]


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """Draft 2020-12 with format assertions (``format: date`` is checked, not just noted)."""
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def generated_schema(spec: ToolSpec) -> bool:
    """True unless the argument model overrides ``model_json_schema`` (a hand-written schema
    that the model does not enforce)."""
    override = spec.args_model.model_json_schema
    return getattr(override, "__func__", None) is BaseModel.model_json_schema.__func__  # type: ignore[attr-defined]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        schema = root.get("$defs", {})[name]
    return schema


def _options(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, root)
    if "anyOf" in schema:
        return [_resolve(option, root) for option in schema["anyOf"]]
    return [schema]


def minimal(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A small instance the schema accepts (required properties only)."""
    root = root or schema
    options = [o for o in _options(schema, root) if o.get("type") != "null"] or _options(
        schema, root
    )
    option = options[0]
    if "enum" in option:
        return option["enum"][0]
    if "const" in option:
        return option["const"]
    kind = option.get("type")
    if kind == "object":
        properties = option.get("properties", {})
        return {name: minimal(properties[name], root) for name in option.get("required", [])}
    if kind == "array":
        return [minimal(option.get("items", {}), root) for _ in range(option.get("minItems", 0))]
    if kind == "integer":
        return max(int(option.get("minimum", 1)), 1)
    if kind == "number":
        return float(option.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if option.get("format") == "date":
        return "2026-12-03"
    return "k" * max(int(option.get("minLength", 1)), 1)


def string_locations(schema: dict[str, Any]) -> Iterator[tuple[Path, Any]]:
    """Every argument path where a string is allowed, with an instance that reaches it
    (``("grades", 0, "grade")`` → ``{"grades": [{"grade": <here>, "quantity": 1}]}``).

    The value at the path is a placeholder the caller replaces."""
    root = schema

    def walk(node: dict[str, Any], path: Path) -> Iterator[Path]:
        for option in _options(node, root):
            kind = option.get("type")
            if kind == "string" or (kind is None and "enum" not in option and "$ref" not in option):
                yield path
            elif kind == "object":
                for name, child in option.get("properties", {}).items():
                    yield from walk(child, (*path, name))
            elif kind == "array":
                yield from walk(option.get("items", {}), (*path, 0))

    seen: set[Path] = set()
    for path in walk(schema, ()):
        if path and path not in seen:
            seen.add(path)
            yield path, instance_reaching(schema, path)


def instance_reaching(schema: dict[str, Any], path: Path) -> Any:
    """A minimal instance whose value at ``path`` exists (objects and one-item arrays on the
    way are filled minimally), ready for ``put``."""
    instance = minimal(schema)
    node: Any = instance
    current = schema
    for step in path:
        options = [o for o in _options(current, schema) if o.get("type") in ("object", "array")]
        option = options[0] if options else {}
        if isinstance(step, int):
            current = option.get("items", {})
            if not node:
                node.append(minimal(current, schema))
            node = node[0]
        else:
            current = option.get("properties", {}).get(step, {})
            if step not in node:
                node[step] = minimal(current, schema)
                if not isinstance(node[step], (dict, list)) and _needs_container(current, schema):
                    node[step] = [] if _is_array(current, schema) else {}
            node = node[step]
    return instance


def _is_array(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return any(o.get("type") == "array" for o in _options(schema, root))


def _needs_container(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return any(o.get("type") in ("object", "array") for o in _options(schema, root))


def put(instance: Any, path: Path, value: Any) -> Any:
    """A copy of ``instance`` with ``value`` at ``path``."""
    copied = copy.deepcopy(instance)
    node = copied
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copied
