"""Icons on tools, resources, prompts and ``serverInfo``, in both protocol revisions."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from mcp_tools import CallContext
from mcp_tools.authoring.prompts import PromptRegistry
from mcp_tools.authoring.registry import Registry
from mcp_tools.authoring.resources import ResourceRegistry
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

TOOL_ICON = {"src": "https://farm.example/icons/eggs.png", "mimeType": "image/png"}
DARK_ICON = {"src": "https://farm.example/icons/eggs-dark.svg", "sizes": ["any"], "theme": "dark"}
SERVER_ICON = {"src": "data:image/png;base64,iVBORw0KGgo=", "sizes": ["48x48"]}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def _eggs(ctx: CallContext) -> str:
    return "eggs"


def _catalogue() -> Any:
    tools, resources, prompts = Registry(), ResourceRegistry(), PromptRegistry()
    tools.tool(
        name="farm_eggs",
        read_only=True,
        mirrors_no_route="icon test",
        description="Eggs.",
        icons=[TOOL_ICON, DARK_ICON],
    )(_eggs)
    resources.resource(uri="farm://eggs", description="Eggs.", icons=[TOOL_ICON])(_eggs)
    prompts.prompt(name="farm_eggs_prompt", description="Eggs.", icons=[DARK_ICON])(_eggs)
    return build_catalogue(
        tools,
        page_size=10,
        server_name="farm",
        server_version="1",
        resources=resources,
        prompts=prompts,
        server_icons=[SERVER_ICON],
    )


def _named(definitions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [definition for definition in definitions if definition["name"] == name]
    return found


def _modern_result(client: McpClient, method: str) -> dict[str, Any]:
    response = client.modern(method, {})
    assert response.status_code == 200, response.content
    result: dict[str, Any] = response.json()["result"]
    return result


@mutation(
    "mcp_tools/authoring/spec.py",
    find='            definition["icons"] = [dict(icon) for icon in self.icons]\n',
    replace="            pass\n",
)
@pytest.mark.django_db
def test_icons_appear_in_tools_list_in_both_eras(mcp_client: Any) -> None:
    """Red if a tool's icons were left out of its definition."""
    client = mcp_client("Owner")
    with activated(_catalogue()):
        handshake = _named(client.list_tools()["result"]["tools"], "farm_eggs")
        modern = _modern_result(client, "tools/list")
    assert handshake["icons"] == [TOOL_ICON, DARK_ICON]
    assert _named(modern["tools"], "farm_eggs")["icons"] == [TOOL_ICON, DARK_ICON]
    assert modern["_meta"][SERVER_INFO]["icons"] == [SERVER_ICON]


@pytest.mark.django_db
def test_resources_prompts_and_server_info_carry_their_icons(mcp_client: Any) -> None:
    client = mcp_client("Owner")
    handshake = {"MCP-Protocol-Version": "2025-11-25"}
    with activated(_catalogue()):
        initialized = client.rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )["result"]
        resources = client.rpc("resources/list", {}, **handshake)["result"]["resources"]
        prompts = client.rpc("prompts/list", {}, **handshake)["result"]["prompts"]
        modern_prompts = _modern_result(client, "prompts/list")["prompts"]
    assert initialized["serverInfo"]["icons"] == [SERVER_ICON]
    assert _named(resources, "_eggs")["icons"] == [TOOL_ICON]
    prompt = _named(prompts, "farm_eggs_prompt")
    assert prompt["icons"] == [DARK_ICON] == _named(modern_prompts, "farm_eggs_prompt")["icons"]


@pytest.mark.parametrize(
    ("icons", "problem"),
    [
        ([{"src": "javascript:alert(1)"}], "src must be"),
        ([{"src": "https://x.example/i.png", "theme": "blue"}], "theme"),
        ([{"src": "https://x.example/i.png", "sizes": "48x48"}], "sizes"),
        ([{"src": "https://x.example/i.png", "size": ["48x48"]}], "unknown keys"),
        ({"src": "https://x.example/i.png"}, "a list"),
    ],
)
def test_a_bad_icon_is_a_start_up_error(icons: Any, problem: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=problem):
        Registry().tool(
            name="farm_eggs", read_only=True, mirrors_no_route="t", description="d", icons=icons
        )(_eggs)
    with pytest.raises(ImproperlyConfigured, match=problem):
        build_catalogue(
            Registry(), page_size=1, server_name="t", server_version="1", server_icons=icons
        )
