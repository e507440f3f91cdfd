"""Registry metadata: ``manage.py mcp_server_json`` and the server card, each validated
against the official schema (vendored in tests/mcp_tools/registry, with its source)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from mcp_tools.serving.server_card import SERVER_CARD_MEDIA_TYPE
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation

SCHEMAS = Path(__file__).resolve().parent / "registry"
CARD_PATHS = ["/mcp/server-card", "/.well-known/mcp/server-card.json"]


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_text())
    return schema


def _valid_server_json(document: Any) -> None:
    jsonschema.Draft7Validator(
        _schema("server.schema.json"), format_checker=jsonschema.FormatChecker()
    ).validate(document)


def _valid_card(document: Any) -> None:
    schema = {**_schema("server-card.schema.json"), "$ref": "#/$defs/ServerCard"}
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(
        document
    )


def _server_json(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("mcp_server_json", *args, "--output", "-", stdout=out)
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def test_server_json_is_valid_and_names_the_one_remote(settings: Any) -> None:
    settings.MCP_TOOLS_REGISTRY_NAME = "io.github.cluck/farm"
    document = _server_json("--url", "https://mcp.farm.example/mcp")
    _valid_server_json(document)
    assert document["name"] == "io.github.cluck/farm"
    (remote,) = document["remotes"]
    assert remote["type"] == "streamable-http"
    assert remote["url"] == "https://mcp.farm.example/mcp"
    assert "variables" not in remote  # the farm's /mcp carries no tenant: the bearer does


def test_a_url_per_tenant_declares_the_tenant_variable() -> None:
    document = _server_json("--url", "https://{tenant}.farm.example/mcp", "--name", "a.b/c")
    _valid_server_json(document)
    (remote,) = document["remotes"]
    assert remote["variables"]["tenant"]["isRequired"] is True
    assert "farm" in remote["variables"]["tenant"]["description"]  # TENANCY_TENANT_NOUN


def test_server_json_is_written_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "server.json"
    call_command(
        "mcp_server_json",
        "--url",
        "https://x.example/mcp",
        "--output",
        str(target),
        stdout=io.StringIO(),
    )
    _valid_server_json(json.loads(target.read_text()))


def test_server_json_needs_a_url() -> None:
    with pytest.raises(CommandError):
        call_command("mcp_server_json", "--output", "-", stdout=io.StringIO())


@pytest.mark.parametrize("path", CARD_PATHS)
def test_the_server_card_is_valid_public_json(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == SERVER_CARD_MEDIA_TYPE
    assert response["Access-Control-Allow-Origin"] == "*"
    card = json.loads(response.content)
    _valid_card(card)
    (remote,) = card["remotes"]
    assert remote["url"] == "http://testserver/mcp"
    assert "2026-07-28" in remote["supportedProtocolVersions"]


@mutation(
    "mcp_tools/serving/server_card.py",
    find="@ignores_ambient_credentials\n@require_safe",
    replace="@require_safe",
)
@pytest.mark.django_db
@pytest.mark.parametrize("path", CARD_PATHS)
def test_the_server_card_is_the_same_for_everyone_and_tenant_free(path: str) -> None:
    """A member's bearer, a bad bearer and none get the same card, which holds nothing of the
    tenant and no tool. Mutation: let the card read the ``Authorization`` header like any
    other route → the bad bearer is a 401 → red."""
    member: Any = MembershipFactory(tenant=FarmFactory(name="Sunny Acres", code="sunny-acres"))
    anonymous = Client().get(path)
    cards = [
        Client().get(path, headers={"Authorization": f"Bearer {bearer}"})
        for bearer in (bearer_for(member), "ck_pat_revoked-or-forged")
    ]
    assert [c.status_code for c in cards] == [200, 200]
    assert all(c.content == anonymous.content for c in cards)
    text = anonymous.content.decode()
    assert "Sunny Acres" not in text and "sunny-acres" not in text
    assert member.user.email not in text
    assert "tools" not in json.loads(text) and "cluck_list_" not in text


def test_the_server_card_answers_get_only(client: Client) -> None:
    assert client.post("/mcp/server-card").status_code == 405
