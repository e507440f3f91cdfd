"""One descriptor set: how a registered tool becomes a skill, and the cards built from them."""

from __future__ import annotations

from io import StringIO
from typing import Annotated, Any

import pytest
from a2a.types import AgentCard
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from google.protobuf.json_format import ParseDict
from pydantic import BaseModel, Field

from a2a_tools.skills import (
    SKILL_SCHEMAS_EXTENSION,
    build_projection,
    projection,
    skill_definition,
)
from cluck.roles import FARM_ROLES, PRODUCTION_WRITE
from mcp_tools import CallContext
from mcp_tools.authoring.registry import Registry, default_registry
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from tests.mutations import mutation


class Done(BaseModel):
    done: bool


def _registry() -> Registry:
    registry = Registry()

    @registry.tool(
        name="acme_read_widgets",
        read_only=True,
        title="Read widgets",
        mirrors_no_route="test",
        description="Widgets, newest first.",
    )
    def read_widgets(ctx: CallContext, *, colour: str | None = None) -> Done:
        return Done(done=True)

    @registry.tool(
        name="acme.record-widget",
        policy=PRODUCTION_WRITE,
        mirrors_no_route="test",
        description="Records a widget.",
    )
    def record_widget(
        ctx: CallContext, *, count: Annotated[int, Field(ge=1)], note: str = ""
    ) -> Done:
        return Done(done=True)

    @registry.tool(
        name="acme_mcp_only",
        read_only=True,
        a2a=False,
        mirrors_no_route="test",
        description="Served over MCP only.",
    )
    def mcp_only(ctx: CallContext) -> str:
        return "mcp"

    @registry.tool(
        name="acme_needs_sampling",
        read_only=True,
        requires_client_capabilities=["sampling"],
        mirrors_no_route="test",
        description="Needs an MCP client that samples.",
    )
    def needs_sampling(ctx: CallContext) -> str:
        return "sampled"

    return registry


def _catalogue() -> Any:
    return build_catalogue(_registry(), page_size=50, server_name="acme", server_version="1.2.3")


def _skills(role: str) -> dict[str, Any]:
    surface = build_projection(_catalogue()).surfaces[FARM_ROLES[role]]
    return {name: skill_definition(spec) for name, spec in surface.skills.items()}


@mutation("a2a_tools/skills.py", find="    return spec.a2a_skill\n", replace="    return True\n")
def test_a_tool_that_opts_out_or_needs_an_mcp_capability_is_not_a_skill() -> None:
    """Mutation: make ``projectable`` return True → red."""
    assert set(_skills("Owner")) == {"acme_read_widgets", "acme.record-widget"}
    assert set(_skills("ReadOnly")) == {"acme_read_widgets"}


def test_a_skill_is_named_described_and_tagged_from_its_tool() -> None:
    skills = _skills("Owner")
    assert skills["acme_read_widgets"] == {
        "id": "acme_read_widgets",
        "name": "Read widgets",
        "description": "Widgets, newest first.",
        "tags": ["tests", "read-only"],  # the module's top package: no installed app holds it
        "inputModes": ["application/json"],
        "outputModes": ["application/json"],
    }
    write = skills["acme.record-widget"]
    assert write["name"] == "Acme record widget"
    assert write["tags"][1:] == ["write", "destructive"]


def test_the_extended_card_carries_each_skills_schemas_without_the_idempotency_key() -> None:
    card = _extended("Owner")
    (extension,) = card["capabilities"]["extensions"]
    assert extension["uri"] == SKILL_SCHEMAS_EXTENSION and extension["required"] is False
    schemas = extension["params"]["skills"]
    assert set(schemas) == {skill["id"] for skill in card["skills"]}
    write = schemas["acme.record-widget"]
    assert write["readOnly"] is False and write["idempotencyKeyRequired"] is True
    assert set(write["argumentsSchema"]["properties"]) == {"count", "note"}
    assert write["argumentsSchema"]["required"] == ["count"]
    assert "replayed" in write["resultSchema"]["properties"]
    assert "required" not in schemas["acme_read_widgets"]["argumentsSchema"]


def _extended(role: str) -> dict[str, Any]:
    import json

    surface = build_projection(_catalogue()).surfaces[FARM_ROLES[role]]
    return json.loads(surface.card.render("https://agent.example/a2a"))


def test_every_card_is_a_valid_agent_card_naming_its_interface_and_bearer_scheme() -> None:
    import json

    projected = build_projection(_catalogue())
    cards = [json.loads(projected.public_card.render("https://agent.example/a2a"))]
    cards += [
        json.loads(surface.card.render("https://agent.example/a2a"))
        for surface in projected.surfaces.values()
    ]
    for card in cards:
        ParseDict(card, AgentCard())
        assert card["name"] == "acme" and card["version"] == "1.2.3"
        assert card["supportedInterfaces"] == [
            {
                "url": "https://agent.example/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ]
        assert card["securitySchemes"] == {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
        }
        assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
        assert card["capabilities"]["streaming"] is False
        assert card["capabilities"]["pushNotifications"] is False
        assert card["capabilities"]["extendedAgentCard"] is True


def test_the_projection_follows_the_active_catalogue() -> None:
    """Built once per catalogue: the same object until another catalogue is active."""
    first = projection()
    assert projection() is first
    catalogue = _catalogue()
    with activated(catalogue):
        assert projection().catalogue is catalogue
    assert projection().catalogue is not catalogue


def test_the_a2a_flag_must_be_a_bool() -> None:
    registry = Registry()
    with pytest.raises(ImproperlyConfigured, match="a2a must be True or False"):

        @registry.tool(name="acme_x", read_only=True, a2a="no", description="x")  # type: ignore[arg-type]
        def x(ctx: CallContext) -> str:
            return "x"


def test_the_mcp_tools_command_says_which_tools_are_skills() -> None:
    """Every tool is a skill but those the summary names, each with its reason."""
    out = StringIO()
    call_command("mcp_tools", stdout=out)
    lines = out.getvalue().splitlines()
    mcp_only = {spec.name for spec in default_registry.specs() if not spec.a2a_skill}
    assert mcp_only and lines[1] == (
        f"A2A skills (a2a_tools): every tool below except {len(mcp_only)}"
    )
    named = dict(line.split(maxsplit=1) for line in lines[2 : 2 + len(mcp_only)])
    assert set(named) == mcp_only
    assert named["test_missing_capability"] == "MCP only: needs MCP client capabilities sampling"
    assert not lines[2 + len(mcp_only)]  # then the catalogue, as before
