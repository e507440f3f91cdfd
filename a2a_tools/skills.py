"""One descriptor set, two protocols: the prepared MCP surfaces projected to A2A skills.

For every role surface ``mcp_tools`` prepared at start-up, each visible tool that may be
projected becomes an ``AgentSkill`` (id = tool name), and the role's authenticated extended
Agent Card is serialized once. Nothing is projected that is not a registered tool, and the
skill set of a role is its ``tools/list`` set minus the tools that opt out (``a2a=False``) or
that need an MCP client capability an A2A client cannot have.

The public card (``/.well-known/agent-card.json``) carries no tenant- or role-specific skill:
per-role skills come only from ``GetExtendedAgentCard``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from a2a_tools import conf
from mcp_tools.adapter import (
    IDEMPOTENCY_KEY_ALIAS,
    Catalogue,
    ToolSpec,
    active_catalogue,
    setting,
)
from tenancy import Role
from tenancy.process import LockedTable, ProcessObject

PROTOCOL_VERSION: Final = "1.0"
PROTOCOL_BINDING: Final = "JSONRPC"
JSON_MODE: Final = "application/json"
# The A2A extension that carries each skill's JSON Schemas (skills have no schema field) and
# documents the invocation shape. Declared, never required: a client that ignores it can still
# read the skill descriptions and call them.
SKILL_SCHEMAS_EXTENSION: Final = "urn:mcp-tools:a2a:skill-schemas:v1"
BEARER_SCHEME: Final = "bearer"
# Where the write key travels: message.metadata[IDEMPOTENCY_METADATA_KEY].
IDEMPOTENCY_METADATA_KEY: Final = IDEMPOTENCY_KEY_ALIAS
_URL_SENTINEL: Final = "\x00a2a-tools-interface-url\x00"


def projectable(spec: ToolSpec) -> bool:
    """A tool becomes a skill unless it opted out or needs an MCP client capability
    (sampling, elicitation, …) that an A2A client has no way to declare."""
    return spec.a2a_skill


def _app_label(spec: ToolSpec) -> str:
    config = apps.get_containing_app_config(spec.fn.__module__)
    return config.label if config is not None else spec.fn.__module__.split(".", 1)[0]


def skill_name(spec: ToolSpec) -> str:
    if spec.title:
        return spec.title
    words = [w for w in re.split(r"[._-]+", spec.name) if w]
    return " ".join(words).capitalize() or spec.name


def skill_tags(spec: ToolSpec) -> list[str]:
    tags = [_app_label(spec), "read-only" if spec.read_only else "write"]
    if spec.destructive:
        tags.append("destructive")
    return tags


def skill_definition(spec: ToolSpec) -> dict[str, Any]:
    """The ``AgentSkill`` JSON object for ``spec``."""
    return {
        "id": spec.name,
        "name": skill_name(spec),
        "description": spec.description,
        "tags": skill_tags(spec),
        "inputModes": [JSON_MODE],
        "outputModes": [JSON_MODE],
    }


def skill_arguments_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's input schema as an A2A caller fills ``arguments``: a write's
    ``idempotencyKey`` travels in the message metadata, not among the arguments."""
    schema = copy.deepcopy(spec.input_schema)
    if not spec.read_only:
        schema.get("properties", {}).pop(IDEMPOTENCY_KEY_ALIAS, None)
        required = [r for r in schema.get("required", []) if r != IDEMPOTENCY_KEY_ALIAS]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
    return schema


def skill_schemas(spec: ToolSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "argumentsSchema": skill_arguments_schema(spec),
        "readOnly": spec.read_only,
        "idempotencyKeyRequired": not spec.read_only,
    }
    if spec.output_schema is not None:
        entry["resultSchema"] = spec.output_schema
    return entry


def _extension(specs: list[ToolSpec] | None) -> dict[str, Any]:
    extension: dict[str, Any] = {
        "uri": SKILL_SCHEMAS_EXTENSION,
        "description": (
            "Invoke a skill with SendMessage: one part whose data is "
            '{"skill": "<skill id>", "arguments": {...}}; a write skill takes '
            f"message.metadata.{IDEMPOTENCY_METADATA_KEY}. The result is the completed task's "
            "artifact (one application/json data part); a tool error is a failed task whose "
            'status message carries {"error": {"code", "message", "data"?}}. params.skills '
            "holds each skill's argumentsSchema and resultSchema (JSON Schema 2020-12); the "
            "extended card lists the caller's skills."
        ),
        "required": False,
    }
    if specs is not None:
        extension["params"] = {"skills": {spec.name: skill_schemas(spec) for spec in specs}}
    return extension


def _security() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    schemes = {
        # A tenant member's personal access token (tenancy). tenancy.oauth's access tokens are
        # issued for /mcp only (RFC 8707), so OAuth is not a scheme of this endpoint.
        BEARER_SCHEME: {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
    }
    return schemes, [{"schemes": {BEARER_SCHEME: {"list": []}}}]


def _card(catalogue: Catalogue, specs: list[ToolSpec] | None) -> dict[str, Any]:
    name = conf.get("AGENT_NAME") or str(catalogue.server_info["name"])
    description = (
        conf.get("AGENT_DESCRIPTION")
        or setting("INSTRUCTIONS")
        or f"{name}: tenant-scoped tools, served as A2A skills."
    )
    schemes, requirements = _security()
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "supportedInterfaces": [
            {
                "url": _URL_SENTINEL,
                "protocolBinding": PROTOCOL_BINDING,
                "protocolVersion": PROTOCOL_VERSION,
            }
        ],
        "version": str(catalogue.server_info["version"]),
        "capabilities": {
            # Tool calls finish within their request: no stream or push would say more than
            # the response does.
            "streaming": False,
            "pushNotifications": False,
            "extendedAgentCard": True,
            "extensions": [_extension(specs)],
        },
        "securitySchemes": schemes,
        "securityRequirements": requirements,
        "defaultInputModes": [JSON_MODE],
        "defaultOutputModes": [JSON_MODE],
        # Always present, empty on the public card: the skills a caller may use depend on
        # who it is, and only the authenticated extended card says that.
        "skills": [skill_definition(spec) for spec in specs or []],
    }
    provider = conf.get("PROVIDER")
    if provider:
        card["provider"] = dict(provider)
    documentation = conf.get("DOCUMENTATION_URL")
    if documentation:
        card["documentationUrl"] = documentation
    return card


def _check(card: dict[str, Any], what: str) -> None:
    from a2a.types import AgentCard
    from google.protobuf.json_format import ParseDict, ParseError

    try:
        ParseDict(card, AgentCard())
    except ParseError as exc:
        raise ImproperlyConfigured(f"A2A {what} is not a valid AgentCard: {exc}") from exc


@dataclass(frozen=True)
class PreparedCard:
    """A card serialized once, around the one value that depends on the request: its URL."""

    head: bytes
    tail: bytes

    @classmethod
    def of(cls, card: dict[str, Any]) -> PreparedCard:
        text = json.dumps(card, separators=(",", ":"), ensure_ascii=False)
        head, tail = text.split(json.dumps(_URL_SENTINEL))
        return cls(head.encode(), tail.encode())

    def render(self, url: str) -> bytes:
        return self.head + json.dumps(url).encode() + self.tail


@dataclass(frozen=True)
class SkillSurface:
    """One role's skills and its prepared extended card."""

    key: Role
    skills: Mapping[str, ToolSpec]
    card: PreparedCard


@dataclass(frozen=True)
class Projection:
    catalogue: Catalogue
    public_card: PreparedCard
    surfaces: Mapping[Role, SkillSurface]

    def surface_for(self, key: object) -> SkillSurface | None:
        return self.surfaces.get(key) if isinstance(key, Role) else None


def build_projection(catalogue: Catalogue) -> Projection:
    """Project every prepared MCP surface of ``catalogue``.

    Raises:
        ImproperlyConfigured: a card would not be a valid ``AgentCard``.
    """
    public = _card(catalogue, None)
    _check(public, "public card")
    surfaces: dict[Role, SkillSurface] = {}
    for role, surface in catalogue.surfaces.items():
        specs = [spec for spec in surface.tools.values() if projectable(spec)]
        extended = _card(catalogue, specs)
        _check(extended, f"extended card for {role.label}")
        surfaces[role] = SkillSurface(
            key=role,
            skills=MappingProxyType({spec.name: spec for spec in specs}),
            card=PreparedCard.of(extended),
        )
    return Projection(
        catalogue=catalogue,
        public_card=PreparedCard.of(public),
        surfaces=MappingProxyType(surfaces),
    )


# The projection of the catalogue being served (mcp_tools.operator.process lists it).
PROJECTION: Final = ProcessObject[LockedTable[str, Projection]](
    "a2a.projection", LockedTable, kind="cache", renew=LockedTable.renew
)
_built = PROJECTION.get()


def projection() -> Projection:
    """The projection of the active MCP catalogue, built once per catalogue."""
    catalogue = active_catalogue()
    current = _built.get("current")
    if current is not None and current.catalogue is catalogue:
        return current
    with _built.lock:
        current = _built.get("current")
        if current is None or current.catalogue is not catalogue:
            current = _built["current"] = build_projection(catalogue)
        return current
